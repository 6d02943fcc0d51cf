"""Everything the dashboard shows, gathered into one JSON-ready dict.

The page, the server's ``/data.json`` and ``ctxmode insight --json`` all come from this
one dict, so what a person sees and what a script reads cannot disagree. Totals and the
kept-out figure come from `ctxmode.stats` (the one formula); this module only adds the
views the text report has no room for: per day, per event category, per file.

Gathering never fails on bad data: a database that cannot be read is skipped and named in
``problems``.
"""

import sqlite3
import time
from collections import Counter
from pathlib import Path
from typing import Any

from ctxmode import __version__, paths
from ctxmode.insight import read
from ctxmode.session.hostusage import TokenUsage
from ctxmode.session.where import sessions_dir, worktree_suffix
from ctxmode.stats import collect
from ctxmode.stats.model import Usage, total
from ctxmode.stats.prices import table as price_table
from ctxmode.stats.report import TOKENS_NOTE, savings_data, worth_data

TOP_FILES = 15
DAILY_NOTE = (
    "every ctx tool call counts on the UTC day it was made, calls of sessions deleted since"
    " included"
)
# Added when a database predates the per-day history (see `read.activity`).
DAILY_NOTE_APPROXIMATE = (
    "databases of older ctxmode versions record a tool's counters per session only, so"
    " theirs show on the UTC day they were last updated, and those of deleted sessions on"
    " one day"
)


def display_path(path: str, project_dir: str, home: str | None = None) -> str:
    """A recorded file path as people read it: relative to its project when inside it,
    else with the home directory as ``~``."""
    text = paths.normalize_path(path.strip())
    project = paths.normalize_path(project_dir) if project_dir else ""
    if project and project != "/" and text.startswith(project + "/"):
        return text[len(project) + 1 :]
    return paths.home_relative(text, home)


def _knowledge_base(root: Path, project_dir: Path, all_projects: bool) -> dict[str, int]:
    if not all_projects:
        return collect.knowledge_base(paths.ProjectPaths(root, project_dir).content_db)
    summed: Counter[str] = Counter()
    try:
        dbs = sorted(p for p in (root / "content").glob("*.db") if p.is_file())
    except OSError:
        dbs = []
    for db in dbs:
        summed.update(collect.knowledge_base(db))
    return {key: summed[key] for key in ("sources", "chunks", "bytes", "file_bytes")}


def gather(
    project_dir: Path, *, all_projects: bool = False, root: Path | None = None
) -> dict[str, Any]:
    """The dashboard's data: one project (`project_dir`) or every project under the root."""
    root = paths.data_root() if root is None else root
    if all_projects:
        dbs = collect.session_dbs(sessions_dir(root))
    else:
        suffix = worktree_suffix(root, project_dir, remember=False)  # looking writes nothing
        dbs = [paths.ProjectPaths(root, project_dir).session_db(suffix)]
    problems: list[str] = []
    projects: list[str] = []
    sessions = 0
    by_tool: dict[str, Usage] = {}
    models: dict[str, TokenUsage] = {}
    daily: dict[str, Usage] = {}
    categories: Counter[str] = Counter()
    files: Counter[tuple[str, str]] = Counter()
    exact_days = True
    for db in dbs:
        try:
            stats = collect.read_project(db, None, "" if all_projects else str(project_dir))
            found = read.activity(db)
        except (sqlite3.Error, OSError) as exc:
            problems.append(f"{db.name}: {exc}")
            continue
        if stats is None:
            continue
        projects.append(paths.home_relative(stats.project_dir) if stats.project_dir else db.name)
        scope = stats.project
        sessions += scope.sessions
        for tool, usage in scope.by_tool.items():
            by_tool[tool] = by_tool.get(tool, Usage()).plus(usage)
        for model, tokens in scope.models.items():
            models[model] = models.get(model, TokenUsage()).plus(tokens)
        for day, usage in found.daily.items():
            daily[day] = daily.get(day, Usage()).plus(usage)
        exact_days = exact_days and (found.exact_days or not found.daily)
        categories.update(scope.captured.by_category)
        for (event_project, path), count in found.files.items():
            owner = event_project or stats.project_dir
            files[(owner, display_path(path, owner))] += count
    overall = total(by_tool)
    tools = sorted(by_tool.items(), key=lambda kv: (-kv[1].sandboxed, -kv[1].calls, kv[0]))
    return {
        "version": __version__,
        "generated_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "scope": "all_projects" if all_projects else "project",
        "project_dir": str(project_dir),
        "projects": sorted(projects)
        or ([] if all_projects else [paths.home_relative(str(project_dir))]),
        "sessions": sessions,
        "knowledge_base": _knowledge_base(root, project_dir, all_projects),
        "totals": overall._asdict(),
        "savings": savings_data(overall),
        "worth": worth_data(overall, models, price_table()),
        "daily": [{"day": day, **daily[day]._asdict()} for day in sorted(daily)],
        "by_tool": [
            {"tool": tool, **usage._asdict(), "savings": savings_data(usage)}
            for tool, usage in tools
        ],
        "events_by_category": [
            {"category": name, "events": count}
            for name, count in sorted(categories.items(), key=lambda kv: (-kv[1], kv[0]))
        ],
        "top_files": [
            {"path": path, "project_dir": paths.home_relative(owner), "events": count}
            for (owner, path), count in sorted(files.items(), key=lambda kv: (-kv[1], kv[0]))[
                :TOP_FILES
            ]
        ],
        "problems": problems,
        "notes": {
            "tokens": TOKENS_NOTE,
            "daily": DAILY_NOTE if exact_days else f"{DAILY_NOTE}; {DAILY_NOTE_APPROXIMATE}",
        },
    }
