"""The stats report: one data structure (``--json`` and the dashboard read it) and its
plain-text rendering (``ctxmode stats`` and the ctx_stats tool print it verbatim).

Plain text on purpose: agents paste it into chat, and some MCP renderers choke on
markdown headings and task lists. Runs of the CLI (``ctxmode execute``) are counted beside
the MCP tools under ``cli:execute`` and ``cli:execute-file``, and labelled so.
"""

from pathlib import Path
from typing import Any, NamedTuple

from ctxmode import __version__, paths
from ctxmode.session.hostusage import TokenUsage
from ctxmode.session.where import read_stats_file, stats_file_for, text_field
from ctxmode.stats import collect, statusline
from ctxmode.stats import prices as price_table
from ctxmode.stats.collect import Captured, ProjectStats, Scope
from ctxmode.stats.model import Usage, fmt_bytes, fmt_count, savings, tokens, total
from ctxmode.stats.prices import Table, fmt_dollars
from ctxmode.stats.record import session_from_env
from ctxmode.stats.worth import cost, worth
from ctxmode.wording import plural

BAR_WIDTH = 32
EMPTY_STATE = (
    "No measurable activity yet: savings appear once a ctx_* tool or `ctxmode execute` "
    "keeps its first output out of the context."
)
CLI_PREFIX = "cli:"  # tools counted for the command line, not for MCP
CLI_NOTE = "cli:* rows are runs of the ctxmode CLI (ctxmode execute), not MCP tool calls."
TOKENS_NOTE = "tokens are estimates (bytes / 4)"


class Report(NamedTuple):
    project: ProjectStats | None
    project_dir: str
    knowledge_base: dict[str, Any]
    all_projects: list[ProjectStats] | None
    problems: list[str]
    # (kept in sandbox, returned, projects) from the stats files: the quick lifetime line
    everywhere: tuple[int, int, int] = (0, 0, 0)
    prices: Table | None = None  # what tokens cost (bundled table, CTXMODE_PRICES over it)


def current_session_id(session_db: Path) -> str | None:
    """The session a report calls "this session": the host's id from the environment,
    else the one the server last counted under (the stats file), else None."""
    found = session_from_env()
    if found:
        return found
    return text_field(read_stats_file(stats_file_for(session_db)), "session_id") or None


def build(
    session_db: Path,
    content_db: Path,
    project_dir: Path,
    *,
    all_projects: bool = False,
    session_id: str | None = None,
) -> Report:
    """Gather everything a report shows; never raises for unreadable data."""
    problems: list[str] = []
    sid = session_id or current_session_id(session_db)
    try:
        project = collect.read_project(session_db, sid, str(project_dir))
    except Exception as exc:  # a damaged database must not break the report
        problems.append(f"{session_db.name}: {exc}")
        project = None
    everything = None
    if all_projects:
        everything, more = collect.read_all(session_db.parent)
        problems.extend(more)
    kb = collect.knowledge_base(content_db)
    # Every other project as its stats file says, this one as its database says: the
    # whole then holds this project's figures exactly, so the part never exceeds it.
    kept, back, others = statusline.all_projects(session_db.parent, stats_file_for(session_db))
    mine = total(project.project.by_tool) if project is not None else None
    if mine is not None and mine.calls:
        kept, back, others = kept + mine.sandboxed, back + mine.returned, others + 1
    table = price_table.table()
    if table.problem:
        problems.append(f"CTXMODE_PRICES {table.problem}")
    return Report(project, str(project_dir), kb, everything, problems, (kept, back, others), table)


# ---------------------------------------------------------------------- data


def savings_data(usage: Usage) -> dict[str, Any]:
    """The kept-out figures of `usage`, as ``--json`` and the dashboard give them."""
    result = savings(usage.sandboxed, usage.returned)
    if result is None:
        return {"measured": False}
    return {
        "measured": True,
        "without_bytes": result.without,
        "with_bytes": result.with_,
        "kept_out_bytes": result.kept_out,
        "kept_out_percent": result.percent,
        "multiplier": round(result.multiplier, 1),
        "without_tokens_estimate": tokens(result.without),
        "with_tokens_estimate": tokens(result.with_),
    }


def worth_data(usage: Usage, models: dict[str, TokenUsage], prices: Table) -> dict[str, Any]:
    """What the kept-out bytes were worth, and the host's own token counts per model."""
    found = worth(usage.sandboxed, models, prices)
    price = found.price
    return {
        "kept_out_tokens_estimate": found.tokens,
        "model": found.model,
        "priced": price is not None,
        "input_usd_per_million": price.input if price else None,
        "dollars": round(found.dollars, 6) if found.dollars is not None else None,
        "price_source": price.source if price else None,
        "prices_as_of": prices.as_of,
        "models": {
            model: {**u._asdict(), "cost_usd": _rounded(cost(u, price_table.lookup(model, prices)))}
            for model, u in sorted(models.items())
        },
    }


def _rounded(value: float | None) -> float | None:
    return round(value, 6) if value is not None else None


def _scope_data(scope: Scope | None, prices: Table) -> dict[str, Any] | None:
    if scope is None:
        return None
    overall = total(scope.by_tool)
    return {
        "totals": overall._asdict(),
        "savings": savings_data(overall),
        "worth": worth_data(overall, scope.models, prices),
        "by_tool": {
            tool: {**u._asdict(), "kept_out_tokens_estimate": tokens(u.sandboxed)}
            for tool, u in sorted(scope.by_tool.items())
        },
        "captured": scope.captured._asdict(),
        "sessions": scope.sessions,
        "started_at": scope.started_at,
        "last_at": scope.last_at,
    }


def as_data(report: Report) -> dict[str, Any]:
    project = report.project
    prices = report.prices or price_table.table()
    data: dict[str, Any] = {
        "version": __version__,
        "project_dir": report.project_dir,
        "session_id": project.session_id if project else None,
        "session": _scope_data(project.session, prices) if project else None,
        "project": _scope_data(project.project, prices) if project else None,
        "knowledge_base": report.knowledge_base,
        "formula": "without = sandboxed + returned; with = max(1, returned); "
        "kept_out = 1 - with / without; worth = kept-out bytes / 4 tokens at the input "
        "price of the model that read the most tokens",
        "tokens_are_estimates": True,
        "problems": report.problems,
    }
    if report.all_projects is not None:
        rows = [
            {
                "project_dir": p.project_dir,
                "totals": total(p.project.by_tool)._asdict(),
                "savings": savings_data(total(p.project.by_tool)),
                "captured_events": p.project.captured.events,
            }
            for p in report.all_projects
        ]
        overall = total([total(p.project.by_tool) for p in report.all_projects])
        data["all_projects"] = {
            "projects": rows,
            "totals": overall._asdict(),
            "savings": savings_data(overall),
        }
    return data


# ---------------------------------------------------------------------- text


def _bar(value: int, largest: int) -> str:
    filled = 0 if largest <= 0 else max(1 if value > 0 else 0, round(value / largest * BAR_WIDTH))
    return "█" * filled + "░" * (BAR_WIDTH - filled)


def _savings_lines(usage: Usage) -> list[str]:
    result = savings(usage.sandboxed, usage.returned)
    if result is None:
        return [EMPTY_STATE]
    return [
        f"Without ctxmode  {_bar(result.without, result.without)}  {fmt_bytes(result.without):>9}"
        f"  (~{fmt_count(tokens(result.without))} tokens)",
        f"With ctxmode     {_bar(result.with_, result.without)}  {fmt_bytes(usage.returned):>9}"
        f"  (~{fmt_count(tokens(usage.returned))} tokens)",
        f"{result.percent:.1f}% kept out of the context: {fmt_bytes(result.kept_out)} stayed in "
        f"the sandbox ({result.times} more room before the host compacts).",
    ]


def _worth_lines(usage: Usage, models: dict[str, TokenUsage], prices: Table) -> list[str]:
    if savings(usage.sandboxed, usage.returned) is None and not models:
        return []
    found = worth(usage.sandboxed, models, prices)
    kept = f"~{fmt_count(found.tokens)} tokens kept out"
    if found.model is None:
        lines = []
    elif found.price is None or found.dollars is None:
        lines = [f"Worth: {kept}; no price known for {found.model} (tokens only; add one with "
                 "CTXMODE_PRICES)."]  # fmt: skip
    else:
        lines = [
            f"Worth: {kept} = {fmt_dollars(found.dollars)} at {found.model}'s input price "
            f"({fmt_dollars(found.price.input)} per million tokens, prices of {prices.as_of})."
        ]
    for model, u in sorted(models.items(), key=lambda kv: -kv[1].prompt_side):
        spent = cost(u, price_table.lookup(model, prices))
        lines.append(
            f"  {model}: {plural(u.replies, 'reply', 'replies')}, {fmt_count(u.input)} input, "
            f"{fmt_count(u.output)} output, {fmt_count(u.cache_read)} cache read, "
            f"{fmt_count(u.cache_creation)} cache write tokens (the host's count)"
            + (f", {fmt_dollars(spent)}" if spent is not None else "")
        )
    return lines


def _tool_table(by_tool: dict[str, Usage]) -> list[str]:
    if not by_tool:
        return []
    rows = sorted(by_tool.items(), key=lambda kv: (-kv[1].sandboxed, -kv[1].calls, kv[0]))
    lines = [
        f"  {'tool':<22} {'calls':>6} {'returned':>10} {'kept out':>10} {'~tokens':>8}"
        f" {'indexed':>10}",
    ]
    for tool, u in rows:
        name = tool if len(tool) <= 22 else tool[:19] + "..."
        lines.append(
            f"  {name:<22} {u.calls:>6} {fmt_bytes(u.returned):>10} "
            f"{fmt_bytes(u.sandboxed):>10} {fmt_count(tokens(u.sandboxed)):>8}"
            f" {fmt_bytes(u.indexed):>10}"
        )
    overall = total(by_tool)
    if overall.cache_hits:
        lines.append(
            f"  fetch cache: {plural(overall.cache_hits, 'hit')}, "
            f"{fmt_bytes(overall.cache_saved)} not downloaded again"
        )
    if any(tool.startswith(CLI_PREFIX) for tool in by_tool):
        lines.append(f"  {CLI_NOTE}")
    return lines


def _captured_line(captured: Captured) -> list[str]:
    if not captured.events:
        return []
    top = ", ".join(f"{cat} {n}" for cat, n in list(captured.by_category.items())[:6])
    line = (
        "Captured by hooks for continuity (not counted as savings): "
        f"{plural(captured.events, 'event')}, {fmt_bytes(captured.data_bytes)} ({top})"
    )
    if captured.redirects:
        line += f"; {plural(captured.redirects, 'tool call')} redirected to ctx_* tools"
    return [line + "."]


def _when(iso: str | None) -> str:
    return iso[:16].replace("T", " ") + " UTC" if iso else "n/a"


def render_text(report: Report) -> str:
    lines = [f"ctxmode stats: {paths.home_relative(report.project_dir)}", ""]
    prices = report.prices or price_table.table()
    project = report.project
    session = project.session if project else None
    if session is not None and session.by_tool:
        sid = project.session_id if project else ""
        lines.append(f"This session ({sid}, since {_when(session.started_at)})")
        lines.extend("  " + line for line in _savings_lines(total(session.by_tool)))
        lines.extend(
            "  " + line for line in _worth_lines(total(session.by_tool), session.models, prices)
        )
        lines.append("")
        lines.extend(_tool_table(session.by_tool))
        lines.extend(_captured_line(session.captured))
        lines.append("")
    elif project is None or not project.project.by_tool:
        lines.append(EMPTY_STATE)
        lines.append("")
    if project is not None and project.project.by_tool:
        scope = project.project
        since = _when(scope.started_at)
        sessions = plural(scope.sessions, "session")
        lines.append(f"This project, all sessions ({sessions} since {since})")
        lines.extend("  " + line for line in _savings_lines(total(scope.by_tool)))
        lines.extend(
            "  " + line for line in _worth_lines(total(scope.by_tool), scope.models, prices)
        )
        if session is None or not session.by_tool:
            lines.append("")
            lines.extend(_tool_table(scope.by_tool))
        lines.extend(_captured_line(scope.captured))
        lines.append("")
    kb = report.knowledge_base
    lines.append(
        f"Knowledge base: {plural(kb['sources'], 'source')}, {plural(kb['chunks'], 'chunk')}, "
        f"{fmt_bytes(kb['bytes'])} of text ({fmt_bytes(kb['file_bytes'])} on disk)."
    )
    if report.all_projects is not None:
        lines.append("")
        lines.extend(_all_projects_lines(report.all_projects))
    else:
        lines.extend(_everywhere_line(report.everywhere))
    lines.extend(f"Could not read {problem}" for problem in report.problems)
    lines.append("")
    lines.append(f"Percentages count measured bytes only; {TOKENS_NOTE}. ctxmode {__version__}")
    return "\n".join(lines).rstrip() + "\n"


def _everywhere_line(everywhere: tuple[int, int, int]) -> list[str]:
    sandboxed, returned, projects = everywhere
    result = savings(sandboxed, returned)
    if result is None or projects < 2:
        return []
    return [
        f"All {projects} projects: {fmt_bytes(result.kept_out)} kept out, {result.percent:.1f}% "
        "(ctxmode stats --all-projects for the table)."
    ]


def _all_projects_lines(projects: list[ProjectStats]) -> list[str]:
    overall = total([total(p.project.by_tool) for p in projects])
    lines = [f"All projects ({len(projects)})"]
    lines.extend("  " + line for line in _savings_lines(overall))
    ranked = sorted(projects, key=lambda p: -total(p.project.by_tool).sandboxed)
    for p in ranked:
        u = total(p.project.by_tool)
        result = savings(u.sandboxed, u.returned)
        pct = f"{result.percent:5.1f}%" if result else "    -"
        name = paths.home_relative(p.project_dir) or p.session_db.name
        calls = "call " if u.calls == 1 else "calls"
        lines.append(f"  {pct}  {fmt_bytes(u.sandboxed):>9} kept out  {u.calls:>5} {calls}  {name}")
    return lines
