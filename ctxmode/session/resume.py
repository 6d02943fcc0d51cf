"""Which conversation a session resumed under a new id continues.

Claude Code's ``--resume``/``--continue`` and Gemini CLI's ``--resume latest`` may start the
old conversation under a new session id, so SessionStart (source ``resume``) finds no events
of its own. The evidence, most certain first:

1. the transcript the host passes: its file name (Claude Code names it ``<session id>.jsonl``,
   Gemini CLI ``session-<time>-<first 8 hex of the id>.json``) and its lines' ``sessionId``
   fields (a resumed Claude transcript starts with the old conversation's lines, Gemini
   writes on in the old chat file): the most recently active session of this project named
   there;
2. with no transcript to read (not written yet), or one naming no other session: the
   project's most recent unfinished session of the same host, one with work recorded that
   no other session continues yet.

A transcript that names only sessions this project never recorded is another conversation:
nothing is injected rather than a guess. Only a resume asks; a fresh start never does.
"""

import re
from collections.abc import Collection

from ctxmode.hookevent import HookEvent
from ctxmode.session.db import RETENTION_DAYS, SessionDB, now_iso

HEAD_BYTES = 256 * 1024
TAIL_BYTES = 64 * 1024
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_SESSION_FIELD = re.compile(rb'"(?:sessionId|session_id)"\s*:\s*"([^"\\]{1,200})"')
_SHORT_ID = re.compile(r"-([0-9a-fA-F]{8})\.jsonl?$")


class Evidence:
    """What a transcript says about the conversation it holds."""

    def __init__(self, ids: list[str], short_ids: list[str], readable: bool) -> None:
        self.ids = ids  # full session ids, the file name's first
        self.short_ids = short_ids  # id prefixes from the file name
        self.readable = readable


def transcript_evidence(path: str | None) -> Evidence:
    """The session ids a transcript names (its file name, then its content's head and tail)."""
    if not path:
        return Evidence([], [], False)
    name = path.replace("\\", "/").rsplit("/", 1)[-1]
    ids = _UUID.findall(name)
    short = _SHORT_ID.search(name)
    shorts = [short.group(1).lower()] if short and not ids else []
    try:
        with open(path, "rb") as handle:
            head = handle.read(HEAD_BYTES)
            handle.seek(0, 2)
            size = handle.tell()
            tail = b""
            if size > HEAD_BYTES:
                handle.seek(max(HEAD_BYTES, size - TAIL_BYTES))
                tail = handle.read(TAIL_BYTES)
    except OSError:
        return Evidence(ids, shorts, False)
    for found in _SESSION_FIELD.findall(head + b"\n" + tail):
        value = found.decode("utf-8", "replace")
        if value not in ids:
            ids.append(value)
    return Evidence(ids, shorts, True)


def continued_session(
    sdb: SessionDB, event: HookEvent, session_id: str, no_work: Collection[str]
) -> tuple[str | None, str]:
    """(the session `session_id` continues, how it was recognised); None when unknown.
    `no_work`: event types that record no work (a session with only these is not one)."""
    evidence = transcript_evidence(event.transcript_path)
    others = [i for i in evidence.ids if i != session_id]
    known = sdb.known_sessions(others)
    for short in evidence.short_ids:
        if session_id.lower().startswith(short):
            continue
        matches = [s for s in sdb.sessions_starting_with(short) if s != session_id]
        if len(matches) == 1:
            known.append(matches[0])
        others.append(short)
    if known:
        return sdb.known_sessions(known)[0], "named by its transcript"
    if others:
        return None, "its transcript names a conversation this project never recorded"
    latest = latest_unfinished(sdb, session_id, event.platform, no_work)
    if latest is not None:
        return latest, "the project's most recent unfinished session"
    return None, "no earlier session to continue"


def latest_unfinished(
    sdb: SessionDB, session_id: str, platform: str, no_work: Collection[str]
) -> str | None:
    """The most recently active session of `platform` (other than `session_id`) with work
    recorded, active within the retention period, that no other session continues."""
    cutoff = now_iso(-RETENTION_DAYS * 86_400)
    for meta in sdb.sessions():
        if meta.session_id == session_id or (meta.platform and meta.platform != platform):
            continue
        if (meta.last_event_at or meta.started_at) < cutoff:
            break
        if sdb.continued(meta.session_id) or not sdb.has_work(meta.session_id, no_work):
            continue
        return meta.session_id
    return None
