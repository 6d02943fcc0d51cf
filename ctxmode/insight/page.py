"""The dashboard page: one self-contained HTML document rendered from `data.gather`'s dict.

Self-contained on purpose: inline CSS, inline SVG, no script at all and a
Content-Security-Policy that forbids loading anything, so the page opens from ``file://``
with no network and leaks nothing. Every text taken from the data is escaped.
"""

from datetime import date, timedelta
from pathlib import PureWindowsPath
from typing import Any

from ctxmode.insight.charts import Bar, Column, Segment, columns, esc, hbars
from ctxmode.stats.model import fmt_bytes, fmt_count
from ctxmode.stats.prices import fmt_dollars
from ctxmode.stats.report import EMPTY_STATE

MAX_DAYS = 120
CSP = "default-src 'none'; style-src 'unsafe-inline'"

_CSS = """
:root{color-scheme:light dark;--bg:#fff;--fg:#1f2328;--muted:#59636e;--line:#d1d9e0;
--card:#f6f8fa;--kept:#1a7f37;--ret:#bc4c00;--bar:#0969da}
@media (prefers-color-scheme:dark){:root{--bg:#0d1117;--fg:#e6edf3;--muted:#9198a1;
--line:#3d444d;--card:#151b23;--kept:#3fb950;--ret:#f0883e;--bar:#4493f8}}
body{margin:0 auto;max-width:960px;padding:24px;background:var(--bg);color:var(--fg);
font:14px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif}
h1{font-size:22px;margin:0}h2{font-size:16px;margin:28px 0 8px}
.muted,footer{color:var(--muted)}footer{margin-top:32px;font-size:12px}
.cards{display:flex;flex-wrap:wrap;gap:12px;margin:16px 0}
.card{background:var(--card);border:1px solid var(--line);border-radius:6px;padding:8px 14px}
.card b{display:block;font-size:20px}
.headline{font-size:18px}.headline b{font-size:28px;color:var(--kept)}
svg{display:block;max-width:100%}svg text{fill:var(--fg);font-size:12px}
svg .axis,svg .empty{fill:var(--muted)}svg .grid{stroke:var(--line)}
.kept{fill:var(--kept)}.ret{fill:var(--ret)}.bar{fill:var(--bar)}
.sw{display:inline-block;width:10px;height:10px;border-radius:2px;margin:0 4px 0 12px}
.sw.kept{background:var(--kept)}.sw.ret{background:var(--ret)}
table{border-collapse:collapse;margin-top:12px;width:100%}
th,td{padding:4px 8px;border-bottom:1px solid var(--line);text-align:right}
th:first-child,td:first-child{text-align:left;word-break:break-all}
.problems{color:var(--ret)}
"""


def _calls(n: int) -> str:
    return "1 call" if n == 1 else f"{fmt_count(n)} calls"


def _day_columns(daily: list[dict[str, Any]]) -> tuple[list[Column], int]:
    """One column per calendar day from the first to the last recorded (gaps at zero),
    at most the last `MAX_DAYS`; also how many days were left out."""
    if not daily:
        return [], 0
    by_day = {row["day"]: row for row in daily}
    first, last = date.fromisoformat(daily[0]["day"]), date.fromisoformat(daily[-1]["day"])
    span = (last - first).days + 1
    start = max(first, last - timedelta(days=MAX_DAYS - 1))
    cols = []
    day = start
    while day <= last:
        row = by_day.get(day.isoformat(), {})
        kept, returned = int(row.get("sandboxed", 0)), int(row.get("returned", 0))
        tip = (
            f"{day.isoformat()}: {fmt_bytes(kept)} kept in the sandbox, "
            f"{fmt_bytes(returned)} returned, {_calls(int(row.get('calls', 0)))}"
        )
        cols.append(
            Column(day.strftime("%m-%d"), (Segment("kept", kept), Segment("ret", returned)), tip)
        )
        day += timedelta(days=1)
    return cols, span - len(cols)


def _headline(savings: dict[str, Any]) -> str:
    if not savings.get("measured"):
        return f'<p class="headline">{esc(EMPTY_STATE)}</p>'
    return (
        f'<p class="headline"><b>{savings["kept_out_percent"]:.1f}%</b> kept out of the context: '
        f"{esc(fmt_bytes(savings['kept_out_bytes']))} stayed in the sandbox.</p>"
        f'<p class="muted">Without ctxmode {esc(fmt_bytes(savings["without_bytes"]))} '
        f"(~{esc(fmt_count(savings['without_tokens_estimate']))} tokens), with ctxmode "
        f"{esc(fmt_bytes(savings['with_bytes']))} "
        f"(~{esc(fmt_count(savings['with_tokens_estimate']))} tokens): "
        f"{savings['multiplier']:.1f}x more room before the host compacts.</p>"
    )


def _worth(worth: dict[str, Any]) -> str:
    """What the kept-out tokens were worth at the model in use's input price."""
    model = worth.get("model")
    if not model:
        return ""
    kept = f"~{fmt_count(worth['kept_out_tokens_estimate'])} tokens kept out"
    if worth.get("dollars") is None:
        text = f"{kept}; no price known for {model} (tokens only)."
    else:
        text = (
            f"{kept} = {fmt_dollars(worth['dollars'])} at {model}'s input price "
            f"({fmt_dollars(worth['input_usd_per_million'])} per million tokens, prices of "
            f"{worth['prices_as_of']})."
        )
    return f'<p class="muted">Worth: {esc(text)}</p>'


def _savings_section(data: dict[str, Any]) -> str:
    cols, left_out = _day_columns(data["daily"])
    chart = columns(
        "savings-over-time",
        "Bytes kept in the sandbox and bytes returned to the agent, per day (UTC)",
        cols,
        empty="No measured tool calls yet",
        axis_text=fmt_bytes,
    )
    more = (
        f" Showing the last {MAX_DAYS} days; {left_out} earlier days are in the totals."
        if left_out
        else ""
    )
    return (
        "<section><h2>Savings over time</h2>"
        + _headline(data["savings"])
        + _worth(data.get("worth") or {})
        + '<p class="muted"><span class="sw kept"></span>kept in the sandbox'
        '<span class="sw ret"></span>returned to the agent</p>'
        + chart
        + f'<p class="muted">Per UTC day; {esc(data["notes"]["daily"])}.{esc(more)}</p></section>'
    )


def _tool_section(tools: list[dict[str, Any]]) -> str:
    bars = [
        Bar(
            t["tool"],
            (Segment("kept", t["sandboxed"]), Segment("ret", t["returned"])),
            f"{fmt_bytes(t['sandboxed'])} kept / {fmt_bytes(t['returned'])} returned",
            f"{t['tool']}: {_calls(t['calls'])}",
        )
        for t in tools
    ]
    chart = hbars(
        "per-tool",
        "Bytes kept out and returned, per ctx tool",
        bars,
        empty="No ctx tool calls recorded yet",
        label_width=170,
        value_width=210,
    )
    if not tools:
        return f"<section><h2>Per tool</h2>{chart}</section>"
    rows = "".join(
        f"<tr><td>{esc(t['tool'])}</td><td>{t['calls']:,}</td>"
        + "".join(
            f'<td title="{t[key]:,} bytes">{esc(fmt_bytes(t[key]))}</td>'
            for key in ("returned", "sandboxed", "indexed")
        )
        + f"<td>{_percent(t['savings'])}</td></tr>"
        for t in tools
    )
    table = (
        '<table data-table="per-tool"><thead><tr><th>tool</th><th>calls</th><th>returned</th>'
        "<th>kept out</th><th>indexed</th><th>kept out %</th></tr></thead>"
        f"<tbody>{rows}</tbody></table>"
    )
    return f"<section><h2>Per tool</h2>{chart}{table}</section>"


def _percent(savings: dict[str, Any]) -> str:
    return f"{savings['kept_out_percent']:.1f}%" if savings.get("measured") else "-"


def _category_section(categories: list[dict[str, Any]]) -> str:
    bars = [
        Bar(
            c["category"],
            (Segment("bar", c["events"]),),
            f"{c['events']:,}",
            f"{c['category']}: {c['events']:,} events",
        )
        for c in categories
    ]
    chart = hbars(
        "events-by-category",
        "Session events captured by hooks, per category",
        bars,
        empty="No session events captured yet",
    )
    return (
        "<section><h2>Events by category</h2>"
        '<p class="muted">Recorded by hooks for session continuity; not counted as savings.</p>'
        f"{chart}</section>"
    )


def _is_absolute(path: str) -> bool:
    """A path that says where it is by itself, so no project name goes before it: POSIX
    absolute, home-relative (``~``), or Windows absolute: a drive letter and a root
    (``C:/…``, ``C:\\…``) or a UNC share (``//server/share/…``)."""
    return path.startswith(("/", "\\", "~")) or PureWindowsPath(path).is_absolute()


def _file_label(row: dict[str, Any], all_projects: bool) -> str:
    path = str(row["path"])
    if all_projects and row["project_dir"] and not _is_absolute(path):
        return f"{str(row['project_dir']).rstrip('/').rsplit('/', 1)[-1]}: {path}"
    return path


def _files_section(files: list[dict[str, Any]], all_projects: bool) -> str:
    bars = [
        Bar(
            _file_label(f, all_projects),
            (Segment("bar", f["events"]),),
            f"{f['events']:,}",
            f"{_file_label(f, all_projects)}: read, edited or written {f['events']:,} times",
        )
        for f in files
    ]
    chart = hbars(
        "top-files",
        "The most-touched file" if len(files) == 1 else f"The {len(files)} most-touched files",
        bars,
        empty="No file reads or edits captured yet",
        label_width=380,
        value_width=60,
        keep_end=True,
    )
    return f"<section><h2>Most-touched files</h2>{chart}</section>"


def _header(data: dict[str, Any]) -> str:
    kb = data["knowledge_base"]
    if data["scope"] == "all_projects":
        scope = f"All projects ({len(data['projects'])})"
    else:
        scope = data["projects"][0] if data["projects"] else data["project_dir"]
    cards = [
        ("projects", fmt_count(len(data["projects"]))),
        ("sessions", fmt_count(data["sessions"])),
        ("tool calls", fmt_count(data["totals"]["calls"])),
        ("knowledge base", f"{fmt_count(kb['sources'])} sources"),
    ]
    card_html = "".join(f'<div class="card"><b>{esc(v)}</b>{esc(k)}</div>' for k, v in cards)
    projects = ""
    if data["scope"] == "all_projects" and data["projects"]:
        items = "".join(f"<li>{esc(p)}</li>" for p in data["projects"])
        projects = f"<details><summary>Projects</summary><ul>{items}</ul></details>"
    return (
        f'<header><h1>ctxmode insight</h1><p class="muted">{esc(scope)}</p>'
        f'<div class="cards">{card_html}</div>'
        f'<p class="muted">Knowledge base: {kb["sources"]:,} sources, {kb["chunks"]:,} chunks, '
        f"{esc(fmt_bytes(kb['bytes']))} of text ({esc(fmt_bytes(kb['file_bytes']))} on disk).</p>"
        f"{projects}</header>"
    )


def render(data: dict[str, Any]) -> str:
    """The dashboard as one HTML document."""
    problems = ""
    if data["problems"]:
        items = "".join(f"<li>Could not read {esc(p)}</li>" for p in data["problems"])
        problems = f'<section class="problems"><h2>Problems</h2><ul>{items}</ul></section>'
    generated = str(data["generated_at"]).replace("T", " ").removesuffix("Z") + " UTC"
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>ctxmode insight</title><style>{_CSS}</style></head><body>"
        + _header(data)
        + "<main>"
        + _savings_section(data)
        + _tool_section(data["by_tool"])
        + _category_section(data["events_by_category"])
        + _files_section(data["top_files"], data["scope"] == "all_projects")
        + problems
        + "</main><footer>Percentages count measured bytes only; "
        f"{esc(data['notes']['tokens'])}. ctxmode {esc(data['version'])}, "
        f"generated {esc(generated)}.</footer></body></html>\n"
    )
