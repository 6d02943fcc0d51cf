"""`ctxmode statusline`: one line for a host's status bar, from the stats files alone.

Status bars run their command every few hundred milliseconds, so this path imports no
Typer, Rich or SQLite: it reads the project's stats file (rewritten by the server after
every call, see `ctxmode.stats.record`) and sums every project's file for the all-projects
figure. No server needs to run. The numbers are the same formula as ``ctxmode stats``.

Hosts such as Claude Code pipe a JSON object on stdin (``session_id``, ``cwd``,
``workspace.project_dir``); it is used when present and ignored when not.
"""

import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ctxmode import settings
from ctxmode.stats.model import fmt_bytes, savings

if TYPE_CHECKING:
    from ctxmode.session.hostusage import TokenUsage

BRAND = "ctxmode"


STDIN_WAIT_S = 0.2


def _stdin_text(stream: Any) -> str:
    """What the host piped, without waiting on a stdin it leaves open: a status bar that
    blocks on its command freezes."""
    if sys.platform == "win32":
        import threading

        box: list[str] = []
        reader = threading.Thread(target=lambda: box.append(stream.read()), daemon=True)
        reader.start()
        reader.join(STDIN_WAIT_S)
        return box[0] if box else ""
    import select

    chunks: list[bytes] = []
    fd = stream.fileno()
    while select.select([fd], [], [], STDIN_WAIT_S)[0]:
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks).decode("utf-8", "replace")


def _stdin_payload() -> dict[str, Any]:
    stream = sys.stdin
    if stream is None or stream.closed or stream.isatty():
        return {}
    try:
        data = json.loads(_stdin_text(stream) or "{}")
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _project_dir(payload: dict[str, Any]) -> Path | None:
    workspace = payload.get("workspace")
    for value in (
        workspace.get("project_dir") if isinstance(workspace, dict) else None,
        payload.get("cwd"),
    ):
        if isinstance(value, str) and value:
            return Path(value)
    from ctxmode import paths
    from ctxmode.errors import CtxError

    try:
        return paths.resolve_project()
    except CtxError:
        return None


def _pair(totals: Any) -> tuple[int, int]:
    if not isinstance(totals, dict):
        return 0, 0
    sandboxed, returned = totals.get("sandboxed", 0), totals.get("returned", 0)
    ok = all(isinstance(v, int) and not isinstance(v, bool) for v in (sandboxed, returned))
    return (sandboxed, returned) if ok else (0, 0)


def all_projects(sessions: Path, exclude: Path | None = None) -> tuple[int, int, int]:
    """(kept in sandbox, returned, projects) summed over every project's stats file but
    `exclude`."""
    from ctxmode.session.where import read_stats_file

    sandboxed = returned = projects = 0
    for path in sessions.glob("*.stats.json") if sessions.is_dir() else []:
        data = {} if path == exclude else read_stats_file(path)
        if data:
            kept, back = _pair(data.get("project"))
            sandboxed, returned, projects = sandboxed + kept, returned + back, projects + 1
    return sandboxed, returned, projects


def line(payload: dict[str, Any], root: Path | None = None) -> str:
    """The status text (no colour)."""
    from ctxmode import paths
    from ctxmode.session import where

    root = paths.data_root() if root is None else root
    everything = all_projects(where.sessions_dir(root))
    mine: dict[str, Any] = {}
    project = _project_dir(payload)
    if project is not None:
        db = where.session_db_path(project, root, remember=False)
        mine = where.read_stats_file(where.stats_file_for(db))
    parts: list[str] = []
    if mine:
        sid = payload.get("session_id")
        same = not isinstance(sid, str) or not sid or sid == mine.get("session_id")
        scope, label = ("session", "this session") if same else ("project", "this project")
        result = savings(*_pair(mine.get(scope)))
        if result is not None:
            parts.append(f"{result.percent:.1f}% kept out")
            parts.append(f"{fmt_bytes(result.kept_out)} {label}")
            parts.extend(_worth(result.kept_out, mine.get(f"{scope}_models")))
    total = savings(everything[0], everything[1])
    if total is not None:
        parts.append(f"{fmt_bytes(total.kept_out)} all projects")
    if not parts:
        parts.append("no measured activity yet")
    return f"{BRAND}  ●  " + "  ·  ".join(parts)


def _models(data: Any) -> "dict[str, TokenUsage]":
    from ctxmode.session.hostusage import TokenUsage

    found: dict[str, TokenUsage] = {}
    for model, row in data.items() if isinstance(data, dict) else ():
        if isinstance(row, dict):
            values = [row.get(f, 0) for f in TokenUsage._fields]
            if all(isinstance(v, int) and not isinstance(v, bool) for v in values):
                found[str(model)] = TokenUsage(*values)
    return found


def _worth(kept_out: int, data: Any) -> list[str]:
    """``≈ $0.42 at claude-sonnet-4-5`` (or the tokens, for a model without a price); nothing
    before the host has reported a model."""
    from ctxmode.stats.model import fmt_count
    from ctxmode.stats.prices import fmt_dollars, table
    from ctxmode.stats.worth import worth

    found = worth(kept_out, _models(data), table())
    if found.model is None:
        return []
    if found.dollars is None:
        return [f"~{fmt_count(found.tokens)} tokens ({found.model}, no price)"]
    return [f"≈ {fmt_dollars(found.dollars)} at {found.model}"]


def _colour(text: str) -> str:
    if not sys.stdout.isatty() or settings.no_color():
        return text
    head, _, rest = text.partition("  ●  ")
    return f"\033[1;36m{head}\033[0m  \033[32m●\033[0m  {rest}"


def run() -> int:
    """Print the line; never fails (a status bar shows stderr to nobody)."""
    try:
        text = line(_stdin_payload())
    except Exception:  # a broken data dir must not spam the status bar
        text = f"{BRAND}  ●  stats unavailable"
    sys.stdout.write(_colour(text) + "\n")
    sys.stdout.flush()
    return 0
