"""`ctx_search(sort: "timeline")`: what the project remembers about a topic, in time order.

Three sources, each read on its own so one failing never hides the others:

* the knowledge base (the relevance search's hits, dated when they were indexed);
* the session events of every session of the project (files, decisions, errors, tasks,
  prompts...), matched on the query's words and ranked by how many they contain;
* memory files the agent keeps with the project or the user: every platform's, as its
  descriptor names them (``CLAUDE.md``, ``AGENTS.md``, ``GEMINI.md``, ``QWEN.md``,
  ``.github/copilot-instructions.md``, and the user-level ones under ``CLAUDE_CONFIG_DIR``,
  ``CODEX_HOME``, ``GEMINI_CLI_HOME``), dated by their modification time; at most one
  passage per file.

Each source gives its best `limit` items; the merged list keeps the `limit` most recent
and shows them oldest first, so the story reads forwards. (Upstream sorted first and cut
after, so a low limit showed only the oldest items.)
"""

import re
import time
from collections.abc import Iterable
from pathlib import Path
from typing import NamedTuple

from ctxmode.store import SearchResult

MAX_MEMORY_BYTES = 1_000_000
MIN_TERM = 3
BEFORE, AFTER = 200, 500
EVENT_SCAN = 2000  # most recent events looked at per query

_WORD = re.compile(r"[\w-]+", re.UNICODE)


class Item(NamedTuple):
    when: str  # ISO-8601 UTC, sortable as text
    origin: str  # "knowledge base" | "session" | "memory"
    where: str
    title: str
    text: str


def terms(query: str) -> list[str]:
    """The query's words worth matching (three characters or more), lower case."""
    return list(dict.fromkeys(w.lower() for w in _WORD.findall(query) if len(w) >= MIN_TERM))


def knowledge_items(result: SearchResult) -> list[Item]:
    return [
        Item(
            hit.indexed_at or "",
            "knowledge base",
            f"{hit.source}:{hit.start_line}-{hit.end_line}"
            if hit.start_line is not None
            else hit.source,
            hit.title,
            hit.snippet,
        )
        for hit in result.hits
    ]


def event_items(session_db: Path, query: str, limit: int) -> list[Item]:
    """The project's session events that contain the most of the query's words."""
    words = terms(query)
    if not words or not session_db.exists():
        return []
    from ctxmode.dbfiles import open_readonly

    con = open_readonly(session_db)
    try:
        rows = con.execute(
            "SELECT session_id, type, category, data, created_at FROM session_events"
            " ORDER BY id DESC LIMIT ?",
            (EVENT_SCAN,),
        ).fetchall()
    finally:
        con.close()
    scored = []
    for row in rows:
        haystack = f"{row['category']} {row['type']} {row['data']}".lower()
        score = sum(1 for w in words if w in haystack)
        if score:
            scored.append((score, row))
    scored.sort(key=lambda pair: (pair[0], pair[1]["created_at"]), reverse=True)
    best = sorted(scored[:limit], key=lambda pair: pair[1]["created_at"])
    return [
        Item(
            row["created_at"],
            "session",
            f"session {row['session_id']}",
            f"[{row['category']}] {row['type']}",
            row["data"],
        )
        for _, row in best
    ]


def _memory_candidates(project_dir: Path, home: Path) -> Iterable[tuple[str, Path]]:
    """Every platform's memory files (its descriptor's, config variables such as
    ``CLAUDE_CONFIG_DIR`` or ``CODEX_HOME`` honoured), each file once, the project's first
    (labelled by their path under the project, the others under the home directory)."""
    import os

    from ctxmode.platforms import descriptors
    from ctxmode.platforms.host import memory_files

    env = {**os.environ, "HOME": str(home)}
    found = dict.fromkeys(p for h in descriptors() for p in memory_files(h, project_dir, env))
    root, user = project_dir.resolve(), home.resolve()
    placed = []
    for path in found:
        real = path.resolve()
        inside = real.is_relative_to(root)
        base = root if inside else user
        label = real.relative_to(base).as_posix() if real.is_relative_to(base) else str(path)
        placed.append((not inside, f"{'project' if inside else 'user'}/{label}", path))
    for _, label, path in sorted(placed, key=lambda item: item[0]):
        yield label, path


def _passage(text: str, at: int) -> str:
    """The paragraph around position `at`, at most `BEFORE` characters before it and
    `AFTER` after (a memory file's other paragraphs are other topics)."""
    start = text.rfind("\n\n", 0, at)
    end = text.find("\n\n", at)
    start = max(0 if start < 0 else start + 2, at - BEFORE)
    end = min(len(text) if end < 0 else end, at + AFTER)
    return text[start:end].strip()


def memory_items(project_dir: Path, query: str, limit: int, home: Path | None = None) -> list[Item]:
    """One passage per memory file that mentions a query word (a whole word)."""
    words = terms(query)
    if not words:
        return []
    pattern = re.compile(r"\b(?:" + "|".join(re.escape(w) for w in words) + r")\b", re.I)
    found: list[Item] = []
    for label, path in _memory_candidates(project_dir, home or Path.home()):
        try:
            info = path.stat()
            if not path.is_file() or info.st_size > MAX_MEMORY_BYTES:
                continue
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        match = pattern.search(text)
        if match is None:
            continue
        when = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(info.st_mtime))
        found.append(
            Item(when, "memory", label, f"[memory] {label}", _passage(text, match.start()))
        )
        if len(found) >= limit:
            break
    return found


def merge(groups: Iterable[list[Item]], limit: int) -> list[Item]:
    """The `limit` most recent items of all groups, oldest first."""
    items = [item for group in groups for item in group]
    items.sort(key=lambda item: item.when or "")
    return items[-limit:] if limit > 0 else []


def render(query: str, items: list[Item]) -> str:
    if not items:
        return f"## {query}\n\nNo results found."
    blocks = [
        f"--- [{item.when[:16].replace('T', ' ')} · {item.origin} · {item.where}] ---\n"
        f"### {item.title}\n\n{item.text}"
        for item in items
    ]
    return f"## {query}\n\n" + "\n\n".join(blocks)
