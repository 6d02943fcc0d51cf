"""Small files PreToolUse leaves for the next PostToolUse of the same session.

PreToolUse knows what it decided (denied a tool, redirected curl to the sandbox) and when
the call started; only PostToolUse records events. Each marker is one JSON file under
``<root>/markers/``, named ``<session key>.<kind>.<tool>.<ns>.<pid>.json`` so parallel tool
calls never overwrite each other. A PostToolUse claims a marker by renaming it (only one
process can), turns it into an event and deletes it.

Kinds: ``rejected`` (a deny, with its reason), ``redirect`` (bytes kept out of the context
by a redirect: bash/webfetch/read), ``start`` (when a call began, for slow-call events).
``rejected`` and ``redirect`` markers are consumed by the session's next PostToolUse of any
tool (a denied call has no PostToolUse of its own); ``start`` only by the same tool.
Markers older than `STALE_SECONDS` are deleted unread.

One more file per session, ``<session key>.failing``, says that the session recorded a
failure: only then does a passing command open the database to look for the failure it
fixes (`note_failure`, `has_failures`).
"""

import json
import os
import time
from pathlib import Path

from ctxmode import paths
from ctxmode.digest import sha256_hex
from ctxmode.lazyre import LazyPattern
from ctxmode.session.events import Event

STALE_SECONDS = 3600
SLOW_CALL_MS = 5000
SUMMARY_CHARS = 200
REDIRECT_TYPES = frozenset({"bash_redirected", "webfetch_redirected", "read_redirected"})

_UNSAFE = LazyPattern(r"[^A-Za-z0-9_-]+")


def markers_dir() -> Path:
    return paths.data_root() / "markers"


def _key(session_id: str) -> str:
    return sha256_hex(session_id.encode("utf-8", "surrogatepass"))[:16]


def _tool(tool: str) -> str:
    return _UNSAFE.sub("_", tool)[:64] or "_"


def _write(session_id: str, kind: str, tool: str, body: dict[str, object]) -> Path:
    folder = markers_dir()
    folder.mkdir(parents=True, exist_ok=True)
    name = f"{_key(session_id)}.{kind}.{_tool(tool)}.{time.time_ns()}.{os.getpid()}"
    tmp = folder / f"{name}.tmp"
    tmp.write_text(json.dumps({"tool": tool, **body}, ensure_ascii=False), encoding="utf-8")
    final = folder / f"{name}.json"
    os.replace(tmp, final)
    return final


def _failing(session_id: str) -> Path:
    return markers_dir() / f"{_key(session_id)}.failing"


def note_failure(session_id: str) -> None:
    """The session recorded a failure (kept for the session's life: cheap to look at)."""
    path = _failing(session_id)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch()
    except OSError:
        pass


def has_failures(session_id: str) -> bool:
    """Whether the session ever recorded a failure (see `note_failure`)."""
    return _failing(session_id).exists()


def write_rejected(session_id: str, tool: str, reason: str) -> Path:
    """PreToolUse denied `tool`: the next PostToolUse records a ``rejected`` event.

    Call it for denials only: a modified (redirected) call was not rejected.
    """
    return _write(session_id, "rejected", tool, {"reason": reason})


def write_redirect(
    session_id: str, tool: str, redirect_type: str, bytes_avoided: int, summary: str = ""
) -> Path:
    """PreToolUse redirected `tool` (``bash_redirected``, ``webfetch_redirected``,
    ``read_redirected``); `bytes_avoided` is a measured size, or 0 when unknown."""
    from ctxmode.session.redact import redact_text

    return _write(
        session_id,
        "redirect",
        tool,
        {"type": redirect_type, "bytes": bytes_avoided, "summary": redact_text(summary)},
    )


def write_start(session_id: str, tool: str) -> Path:
    """PreToolUse saw `tool` start now (for the slow-call event of its PostToolUse)."""
    return _write(session_id, "start", tool, {"ms": int(time.time() * 1000)})


def _claim(path: Path) -> dict[str, object] | None:
    claimed = path.with_name(f"{path.name}.{os.getpid()}.claimed")
    try:
        os.rename(path, claimed)  # exactly one claimer wins
    except OSError:
        return None
    try:
        body = json.loads(claimed.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        body = None
    finally:
        try:
            claimed.unlink()
        except OSError:
            pass
    return body if isinstance(body, dict) else None


def _redirect_event(body: dict[str, object]) -> Event | None:
    kind = str(body.get("type", "")).replace("-", "_")
    if kind not in REDIRECT_TYPES:
        return None
    raw = body.get("bytes")
    # 0: the size is unknown (a curl that never ran). The redirect is still an event, but
    # it claims no bytes: stats count only what was measured.
    nbytes = raw if isinstance(raw, int) and not isinstance(raw, bool) and raw > 0 else 0
    summary = str(body.get("summary") or "")[:SUMMARY_CHARS]
    tool = str(body.get("tool", ""))
    return Event(kind, f"{tool}: {summary}" if summary else tool, bytes_avoided=nbytes)


def consume(session_id: str, tool: str, now_ms: int | None = None) -> list[Event]:
    """Claim this session's markers due at a PostToolUse of `tool`; return their events."""
    folder = markers_dir()
    prefix = _key(session_id) + "."
    try:
        entries = [e for e in os.scandir(folder) if e.name.endswith(".json")]
    except OSError:
        return []
    now = time.time() if now_ms is None else now_ms / 1000
    now_ms = int(now * 1000)
    mine: list[tuple[str, str, Path]] = []
    for entry in entries:
        parts = entry.name.split(".")
        if len(parts) != 6:
            continue
        try:
            stale = now - entry.stat().st_mtime > STALE_SECONDS
        except OSError:
            continue
        if stale:
            try:
                os.unlink(entry.path)
            except OSError:
                pass
            continue
        if entry.name.startswith(prefix):
            mine.append((parts[1], parts[2], Path(entry.path)))
    events: list[Event] = []
    started: list[int] = []
    for kind, marker_tool, path in sorted(mine, key=lambda m: int(m[2].name.split(".")[3])):
        if kind == "start" and (marker_tool != _tool(tool) or started):
            continue  # the oldest start of this tool is this call's (parallel calls: FIFO)
        body = _claim(path)
        if body is None:
            continue
        if kind == "rejected":
            reason = str(body.get("reason") or "").strip()
            events.append(Event("rejected", f"{body.get('tool', marker_tool)}: {reason}"))
        elif kind == "redirect":
            redirect = _redirect_event(body)
            if redirect is not None:
                events.append(redirect)
        elif kind == "start":
            ms = body.get("ms")
            if isinstance(ms, int):
                started.append(ms)
    if started:
        elapsed = now_ms - started[0]
        if elapsed > SLOW_CALL_MS:
            events.append(Event("tool_latency", f"{tool}: {elapsed}ms"))
    return events
