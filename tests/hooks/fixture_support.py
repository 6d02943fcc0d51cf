"""The hook fixtures (``fixtures/*.json``, copied from the shared spec) and how to judge a
hook's answer against them: the same rules as the spec's official checker
(``check_fixtures.py``), written again here so the repository does not depend on it.

A fixture is a host payload plus ``expect``: ``wires`` (acceptable encodings, any one must
match), ``reason_contains``, ``must_be_valid_json`` and ``records`` (session events).
"""

import copy
import json
import os
import queue
import subprocess
import sys
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).parent / "fixtures"

HOST_ENV_PREFIXES = (
    "CLAUDE_", "CLAUDECODE", "CONTEXT_MODE_", "CTXMODE_", "CTX_", "GEMINI_", "QWEN_", "CODEX_",
    "CURSOR_", "VSCODE_", "IDEA_", "JETBRAINS_", "KIRO_", "COPILOT_", "OPENCODE_",
)  # fmt: skip
# Command hosts' names, then the plugin shims' (Pi/OMP extension, OpenClaw plugin).
POST_TOOL_EVENTS = ("posttooluse", "aftertool", "tool_result", "after_tool_call")
PRE_COMPACT_EVENTS = ("precompact", "precompress", "session_before_compact", "before_compaction")
IDENTITY_KEYS = (
    "session_id", "sessionId", "conversation_id", "conversationId", "transcript_path", "cwd",
    "workspace_roots",
)  # fmt: skip
SESSION_ID_KEYS = ("session_id", "sessionId", "conversation_id", "conversationId")
HOOK_TIMEOUT_S = 10.0
SERVER_WAIT_S = 15.0

_ABSENT = object()


# -- fixtures -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Fixture:
    path: Path
    data: dict[str, Any]

    @property
    def id(self) -> str:
        return str(self.data.get("id") or self.path.stem)

    @property
    def platform(self) -> str:
        return str(self.data["command"][2])

    @property
    def hook_event(self) -> str:
        return str(self.data["command"][3])

    @property
    def stdin(self) -> dict[str, Any]:
        return dict(self.data.get("stdin") or {})

    @property
    def env(self) -> dict[str, str]:
        return {str(k): str(v) for k, v in (self.data.get("env") or {}).items()}

    @property
    def preconditions(self) -> list[str]:
        return list(self.data.get("preconditions") or [])

    @property
    def expect(self) -> dict[str, Any]:
        return dict(self.data.get("expect") or {})

    @property
    def session_id(self) -> str:
        for key in SESSION_ID_KEYS:
            value = self.stdin.get(key)
            if isinstance(value, str) and value:
                return value
        return ""


def load_fixtures() -> list[Fixture]:
    return [
        Fixture(path, json.loads(path.read_text(encoding="utf-8")))
        for path in sorted(FIXTURES.glob("*.json"))
    ]


def donors(fixture: Fixture, all_fixtures: list[Fixture], events: tuple[str, ...]) -> list[Fixture]:
    """Fixtures of the same platform a precondition replays (first by id first)."""
    return [
        d
        for d in all_fixtures
        if d.platform == fixture.platform and d.hook_event in events and d.id != fixture.id
    ]


def rewrite_identity(donor: dict[str, Any], target: dict[str, Any]) -> dict[str, Any]:
    """The donor payload re-keyed to the target's session id, transcript and cwd."""
    out = copy.deepcopy(donor)
    for key in IDENTITY_KEYS:
        if key in target:
            out[key] = copy.deepcopy(target[key])
        elif key in out and key not in ("cwd", "workspace_roots"):
            del out[key]
    return out


# -- judging an answer ----------------------------------------------------------------------


@dataclass(frozen=True)
class Run:
    rc: int | None
    stdout: str
    stderr: str


def _get(doc: Any, path: str) -> Any:
    cur = doc
    for part in path.split("."):
        if not isinstance(cur, dict) or part not in cur:
            return _ABSENT
        cur = cur[part]
    return cur


def _equal(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    return type(a) is type(b) and a == b


def _falsy(value: Any) -> bool:
    return value is _ABSENT or value is None or value is False or value in ("", {}, [])


def _object(text: str) -> tuple[dict[str, Any] | None, str]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        return None, f"not JSON ({exc.msg})"
    if not isinstance(value, dict):
        return None, f"JSON {type(value).__name__}, not an object"
    return value, ""


def check_wire(wire: Mapping[str, Any], run: Run, doc: dict[str, Any], needles: list[str]) -> str:
    """ "" when the answer matches this wire, else what did not match."""
    if "exit_code" in wire and run.rc != wire["exit_code"]:
        return f"exit_code: expected {wire['exit_code']}, got {run.rc} (stderr {run.stderr!r})"
    kind = wire.get("stdout")
    if kind:
        blank = not run.stdout.strip()
        obj, why = (None, "blank") if blank else _object(run.stdout)
        if kind == "empty" and not blank:
            return "stdout: expected empty"
        if kind == "json" and obj is None:
            return f"stdout: expected a JSON object, got {why}"
        if kind == "empty_or_json" and not blank and obj is None:
            return f"stdout: expected empty or a JSON object, got {why}"
        if kind == "text" and blank:
            return "stdout: expected text, got nothing"
    for path, want in (wire.get("json_equals") or {}).items():
        got = _get(doc, path)
        if got is _ABSENT or not _equal(got, want):
            shown = "<absent>" if got is _ABSENT else repr(got)
            return f"json_equals {path}: expected {want!r}, got {shown}"
    for path in wire.get("json_present") or []:
        if _get(doc, path) is _ABSENT:
            return f"json_present {path}: absent"
    for path in wire.get("json_absent") or []:
        if _get(doc, path) is not _ABSENT:
            return f"json_absent {path}: got {_get(doc, path)!r}"
    for path, banned in (wire.get("json_not_in") or {}).items():
        got = _get(doc, path)
        if got is not _ABSENT and any(_equal(got, b) for b in banned):
            return f"json_not_in {path}: got {got!r}"
    for path in wire.get("json_falsy") or []:
        if not _falsy(_get(doc, path)):
            return f"json_falsy {path}: got {_get(doc, path)!r}"
    paths = wire.get("text_paths") or []
    if paths:
        parts = []
        for path in paths:
            value = (
                run.stdout
                if path == "<stdout>"
                else run.stderr
                if path == "<stderr>"
                else _get(doc, path)
            )
            if isinstance(value, str):
                parts.append(value)
        text = "\n".join(parts)
        for needle in needles:
            if needle not in text:
                return f"reason_contains: {needle!r} not in {paths} (got {text[:300]!r})"
    return ""


def evaluate(expect: Mapping[str, Any], run: Run) -> str:
    """ "" when the answer satisfies the fixture's expectations, else why not."""
    blank = not run.stdout.strip()
    obj, why = (None, "blank") if blank else _object(run.stdout)
    if expect.get("must_be_valid_json") and not blank and obj is None:
        return f"must_be_valid_json: stdout is {why}: {run.stdout[:300]!r}"
    needles = [str(s) for s in expect.get("reason_contains") or []]
    failures = {}
    for name, wire in (expect.get("wires") or {}).items():
        problem = check_wire(wire, run, obj or {}, needles)
        if not problem:
            return ""
        failures[name] = problem
    return (
        f"no wire matched {failures}; exit {run.rc}, stdout {run.stdout[:400]!r}, "
        f"stderr {run.stderr[:400]!r}"
    )


def parse_events(text: str) -> list[dict[str, Any]]:
    """Session events from JSON lines, a JSON array, or an envelope holding either."""
    stripped = text.strip()
    if not stripped:
        return []
    try:
        whole: Any = json.loads(stripped)
    except json.JSONDecodeError:
        whole = [json.loads(line) for line in stripped.splitlines() if line.strip()]
    # an envelope: {"data": [...]}, {"events": [...]}, {"data": {"events": [...]}}, ...
    while isinstance(whole, dict) and "kind" not in whole and "type" not in whole:
        inner = next((whole[k] for k in ("data", "events", "result") if k in whole), None)
        if not isinstance(inner, (dict, list)):
            break
        whole = inner
    if isinstance(whole, dict):
        whole = [whole]
    return [e for e in whole if isinstance(e, dict)] if isinstance(whole, list) else []


def check_records(records: list[Mapping[str, Any]], events: list[dict[str, Any]]) -> str:
    """ "" when every expected record has an event of its kind containing `data_contains`."""
    kinds = sorted({str(e.get("kind", e.get("type", ""))) for e in events})
    for record in records:
        kind, needle = record.get("kind"), record.get("data_contains")
        found = False
        for event in events:
            if event.get("kind", event.get("type")) != kind:
                continue
            data = event.get("data")
            hay = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
            if needle is None or needle in hay:
                found = True
                break
        if not found:
            return f"no {kind!r} event containing {needle!r} among {len(events)} (kinds {kinds})"
    return ""


# -- running the real hook ------------------------------------------------------------------


def ctxmode_argv(*args: str) -> list[str]:
    return [sys.executable, "-m", "ctxmode", *args]


def isolated_env(root: Path, fixture_env: Mapping[str, str]) -> dict[str, str]:
    """The host environment minus agent variables, plus the fixture's, in a private root."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(HOST_ENV_PREFIXES)}
    env.update(fixture_env)
    data, tmp, home = str(root / "data"), str(root / "tmp"), root / "home"
    env.update(
        {
            "CTXMODE_DIR": data,
            "CONTEXT_MODE_DIR": data,
            "TMPDIR": tmp,
            "TMP": tmp,
            "TEMP": tmp,
            "PWD": str(root / "cwd"),
            "HOME": str(home),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_DATA_HOME": str(home / ".local" / "share"),
            "XDG_CACHE_HOME": str(home / ".cache"),
            "XDG_STATE_HOME": str(home / ".local" / "state"),
        }
    )
    return env


def make_root(base: Path) -> Path:
    for sub in ("cwd", "data", "tmp", "home"):
        (base / sub).mkdir(parents=True, exist_ok=True)
    return base


def run_hook(fixture: Fixture, stdin: dict[str, Any], env: dict[str, str], root: Path) -> Run:
    data = json.dumps(stdin, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    proc = subprocess.run(
        ctxmode_argv("hook", fixture.platform, fixture.hook_event),
        input=data,
        capture_output=True,
        env=env,
        cwd=root / "cwd",
        timeout=HOOK_TIMEOUT_S,
    )
    return Run(
        proc.returncode,
        proc.stdout.decode("utf-8", errors="replace"),
        proc.stderr.decode("utf-8", errors="replace"),
    )


def establish(fixture: Fixture, all_fixtures: list[Fixture], root: Path) -> None:
    """Replay what ``session_has_events`` / ``snapshot_available`` need, like the checker."""
    steps: list[Fixture] = []
    pre = fixture.preconditions
    if "session_has_events" in pre or "snapshot_available" in pre:
        steps.extend(donors(fixture, all_fixtures, POST_TOOL_EVENTS)[:1])
    if "snapshot_available" in pre:
        steps.extend(donors(fixture, all_fixtures, PRE_COMPACT_EVENTS)[:1])
    for donor in steps:
        env = isolated_env(root, {**donor.env, **fixture.env})
        run = run_hook(donor, rewrite_identity(donor.stdin, fixture.stdin), env, root)
        assert run.rc == 0, f"precondition replay of {donor.id} exited {run.rc}: {run.stderr}"


class Server:
    """``ctxmode serve`` kept alive (stdin open) while one fixture's hook runs."""

    def __init__(self, env: dict[str, str], cwd: Path) -> None:
        self.proc = subprocess.Popen(
            ctxmode_argv("serve"),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            cwd=cwd,
        )
        self.lines: queue.Queue[bytes] = queue.Queue()
        self.reader = threading.Thread(target=self._drain, daemon=True)
        self.reader.start()

    def _drain(self) -> None:
        assert self.proc.stdout is not None
        for line in iter(self.proc.stdout.readline, b""):
            self.lines.put(line)
        self.lines.put(b"")

    def _send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write((json.dumps(message) + "\n").encode())
        self.proc.stdin.flush()

    def initialize(self) -> None:
        """Send ``initialize`` and wait for its answer (the server is then ready)."""
        self._send(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "ctxmode-fixture-tests", "version": "1"},
                },
            }
        )
        while True:
            line = self.lines.get(timeout=SERVER_WAIT_S)
            assert line, "ctxmode serve exited before answering initialize"
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if isinstance(message, dict) and message.get("id") == 1:
                break
        self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def stop(self) -> None:
        """Close stdin (the MCP stdio shutdown); terminate, then kill, if it lingers."""
        try:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
        except OSError:
            pass
        for step in (self.proc.terminate, self.proc.kill):
            try:
                self.proc.wait(timeout=5)
                break
            except subprocess.TimeoutExpired:
                step()
        else:
            self.proc.wait()
        self.reader.join(timeout=2)
        if self.proc.stdout is not None:
            self.proc.stdout.close()


def run_fixture(fixture: Fixture, all_fixtures: list[Fixture], root: Path) -> Run:
    """Establish the preconditions, run the hook with the fixture's payload, return its answer."""
    make_root(root)
    establish(fixture, all_fixtures, root)
    env = isolated_env(root, fixture.env)
    server = None
    if "mcp_server_ready" in fixture.preconditions:
        server = Server(env, root / "cwd")
    try:
        if server is not None:
            server.initialize()
        return run_hook(fixture, fixture.stdin, env, root)
    finally:
        if server is not None:
            server.stop()


def record_session(fixture: Fixture) -> str:
    """The session id a records query uses: the payload's, else what Kiro's adapter derives
    (``pid-<parent pid>``; the hook's parent is this test process)."""
    return fixture.session_id or f"pid-{os.getpid()}"
