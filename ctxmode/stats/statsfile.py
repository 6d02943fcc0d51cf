"""The project's stats file, ``<root>/sessions/<hash><suffix>.stats.json``: a copy of the
session database's counters that status bars read without opening SQLite (see
`ctxmode.stats.record` for when the server rewrites it). Always rebuilt from the database,
so the file and the record never drift; a turn-end hook rebuilds it too when it adds the
host's token counts. Standard library only (the hook path).
"""

import json
import os
import threading
from pathlib import Path
from typing import Any

from ctxmode.session import modelusage
from ctxmode.session.db import HOOK_BUSY_TIMEOUT_MS, SessionDB, now_iso
from ctxmode.session.hostusage import TokenUsage
from ctxmode.session.where import read_stats_file, stats_file_for, text_field
from ctxmode.stats.model import Usage, total

STATS_FILE_VERSION = 1


def usage_json(usage: Usage) -> dict[str, int]:
    return dict(usage._asdict())


def models_json(found: dict[str, TokenUsage]) -> dict[str, dict[str, int]]:
    return {model: dict(tokens._asdict()) for model, tokens in sorted(found.items())}


def write_stats_file(path: Path, payload: dict[str, Any]) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        tmp.write_text(json.dumps(payload, ensure_ascii=False), encoding="utf-8")
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def snapshot(sdb: SessionDB, session_id: str, project_dir: str) -> dict[str, Any]:
    """The stats file's content, built from the database."""
    session = sdb.usage(session_id)
    project = sdb.usage()
    con = sdb.connection
    return {
        "ctxmode_stats": STATS_FILE_VERSION,
        "project_dir": project_dir,
        "session_id": session_id,
        "updated_at": now_iso(),
        "session": usage_json(total(session)),
        "project": usage_json(total(project)),
        "by_tool": {tool: usage_json(u) for tool, u in session.items()},
        "session_models": models_json(modelusage.read(con, session_id)),
        "project_models": models_json(modelusage.read(con)),
    }


def refresh(session_db: Path, session_id: str) -> None:
    """Rebuild an existing stats file (a project whose server never ran has none: a turn
    end alone does not make an idle project look used)."""
    path = stats_file_for(session_db)
    found = read_stats_file(path)
    if not found:
        return
    sid = text_field(found, "session_id") or session_id
    with SessionDB(session_db, busy_timeout_ms=HOOK_BUSY_TIMEOUT_MS) as sdb:
        write_stats_file(path, snapshot(sdb, sid, text_field(found, "project_dir")))
