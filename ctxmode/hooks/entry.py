"""`ctxmode hook <platform> <event>`: the hook front door. Standard library only.

Hooks run as a whole process on every tool call of the host agent, so this path imports
only the platform adapter and the one handler it needs, and never breaks the host:
garbage stdin, a missing or locked database, any exception ends in the platform's no-op
answer (exit 0, or what the host treats as "carry on"), with the error in the log file.
"""

import json
import os
import sys
import time

from ctxmode import settings
from ctxmode.typenames import Any

HANDLERS = {
    "pre_tool": "ctxmode.hooks.pretool",
    "post_tool": "ctxmode.hooks.capture",
    "post_tool_failure": "ctxmode.hooks.capture",
    "prompt_submit": "ctxmode.hooks.capture",
    "stop": "ctxmode.hooks.turnend",
    "model_reply": "ctxmode.hooks.turnend",
    "session_end": "ctxmode.hooks.turnend",
    "pre_compact": "ctxmode.hooks.compact",
    "session_start": "ctxmode.hooks.sessionstart",
}


def _log(message: str) -> None:
    """Append to <data root>/logs/hooks.log; never raises."""
    try:
        from ctxmode.paths import data_root

        logs = data_root() / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        path = logs / "hooks.log"
        if path.exists() and path.stat().st_size > 1024 * 1024:
            os.replace(path, logs / "hooks.log.1")
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
        with path.open("a", encoding="utf-8") as handle:
            handle.write(f"{stamp} {os.getpid()} {message}\n")
    except Exception:  # noqa: BLE001 - logging must never break a hook
        pass


def read_payload(data: bytes) -> dict[str, Any]:
    """The hook's JSON payload: BOM stripped, empty or blank input as ``{}``.

    Raises:
        ValueError: not JSON, or not a JSON object.
    """
    text = data.decode("utf-8", "replace").lstrip("\ufeff").strip()
    if not text:
        return {}
    value = json.loads(text)
    if not isinstance(value, dict):
        raise ValueError("hook payload is not a JSON object")
    return value


def handle(platform: str, native_event: str, payload: dict[str, Any]) -> Any:
    """Run one hook in process: parse, decide, render. Returns a `platforms.Output`."""
    import importlib

    from ctxmode import platforms

    adapter = platforms.load(platform)
    event = adapter.parse(native_event, payload, os.environ)
    if event is None:
        return adapter.noop(native_event)
    if settings.plugin() == platform and getattr(adapter, "steps_aside", None) is not None:
        if adapter.steps_aside(event, os.environ):  # `ctxmode setup`'s hooks run instead
            return adapter.noop(native_event)
    handler = importlib.import_module(HANDLERS[event.event])
    decision = handler.handle(event)
    return adapter.render(event, decision)


def run(argv: list[str]) -> int:
    """Entry point; `argv` is ``[platform, event]``. Returns the process exit status."""
    from ctxmode import platforms

    if len(argv) != 2 or argv[0] not in platforms.PLATFORMS:  # `ctxmode hook` checks first
        sys.stderr.write(f"Usage: ctxmode hook PLATFORM EVENT ({', '.join(platforms.PLATFORMS)})\n")
        return 2
    platform, native_event = argv[0], argv[1].lower()
    try:
        data = b"" if sys.stdin is None or sys.stdin.isatty() else sys.stdin.buffer.read()
    except (OSError, ValueError):
        data = b""
    try:
        output = handle(platform, native_event, read_payload(data))
    except Exception as exc:  # noqa: BLE001 - fail open, always
        import traceback

        _log(f"{platform} {native_event}: {type(exc).__name__}: {exc}\n{traceback.format_exc()}")
        try:
            output = platforms.load(platform).noop(native_event)
        except Exception:  # noqa: BLE001
            return 0
    if output.stdout:
        sys.stdout.write(output.stdout if output.stdout.endswith("\n") else output.stdout + "\n")
        sys.stdout.flush()
    if output.stderr:
        sys.stderr.write(output.stderr if output.stderr.endswith("\n") else output.stderr + "\n")
        sys.stderr.flush()
    return int(output.exit_code)
