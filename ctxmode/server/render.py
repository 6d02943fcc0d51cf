"""How search results read in the agent's context: source and lines, title, matching lines.
Nothing else: every byte here is paid for by the agent on every later turn."""

from collections.abc import Iterable, Sequence

from ctxmode.store import SearchHit, SearchResult
from ctxmode.store.query import MAX_QUERIES

OUTPUT_CAP = 40 * 1024
NOT_RUN_LISTED = 5  # queries named in the note on queries left unsearched
HEADING_CHARS = 200  # of a query echoed above its results: a pasted log is not echoed whole
TITLE_CHARS = 60  # of a hit's title path shown: its last parts, the nearest headings


def _where(hit: SearchHit) -> str:
    if hit.start_line is not None:
        return f"{hit.source}:{hit.start_line}-{hit.end_line}"
    return hit.source


def shown_title(title: str) -> str:
    """A hit's title as shown: the last parts of its path that fit `TITLE_CHARS` (at least
    the last, cut at `HEADING_CHARS`); the page title and outer headings the source
    already places are left out."""
    items = title.split(", ")
    if len(items) > 1:  # several definitions of one parent: the parent once
        parents = {i.rsplit(" > ", 1)[0] if " > " in i else "" for i in items}
        if len(parents) == 1:
            leaves = dict.fromkeys(i.rsplit(" > ", 1)[-1] for i in items)
            parent = parents.pop()
            title = (f"{parent} > " if parent else "") + ", ".join(leaves)
    parts = title.split(" > ")
    kept = [parts.pop()[:HEADING_CHARS]]
    while parts and len(parts[-1]) + 3 + sum(len(p) + 3 for p in kept) <= TITLE_CHARS + 3:
        kept.insert(0, parts.pop())
    return ("… > " if parts else "") + " > ".join(kept)


def heading(query: str) -> str:
    """A query as its section's heading: one line, cut at `HEADING_CHARS`."""
    line = " ".join(query.split())
    return line if len(line) <= HEADING_CHARS else line[: HEADING_CHARS - 1] + "…"


def render_search(results: Iterable[SearchResult], queries: Sequence[str] = ()) -> str:
    """One section per query, at most about `OUTPUT_CAP` characters and `MAX_QUERIES`
    sections in all.

    `results` may be lazy (a search per item): none is taken once a cap is reached, and
    the `queries` they answer (same order) from there on are named as not searched."""
    sections: list[str] = []
    used = 0
    taken = 0
    refreshed: set[str] = set()
    dropped: set[str] = set()
    for result in results:
        taken += 1
        refreshed.update(result.refresh.refreshed)
        dropped.update(result.refresh.dropped)
        hits = result.hits
        if not hits:
            body = "No results found."
        else:
            body = "\n\n".join(
                f"--- [{_where(h)}] ---\n"
                + (f"### {shown_title(h.title)}\n\n" if h.title else "")
                + h.snippet
                for h in hits
            )
        if result.corrections:
            fixed = ", ".join(f"{a} → {b}" for a, b in result.corrections.items())
            body = f"(also searched: {fixed})\n{body}"
        section = f"## {heading(result.query)}\n\n{body}"
        used += len(section)
        sections.append(section)
        if used > OUTPUT_CAP or taken == MAX_QUERIES:
            break
    rest = queries[taken:]
    if rest:
        sections.append(_not_run(rest))
    notes = []
    if refreshed:
        n = len(refreshed)
        notes.append(
            f"> Auto-refreshed {n} stale source{'s' if n > 1 else ''} "
            "(file changed since indexing)."
        )
    if dropped:
        notes.append(
            f"> Dropped {len(dropped)} source(s) whose file was deleted: "
            + ", ".join(sorted(dropped)[:5])
        )
    text = "\n\n---\n\n".join(sections)
    return "\n".join(notes) + ("\n\n" if notes else "") + text


def _not_run(queries: Sequence[str]) -> str:
    shown = "".join(f"\n- {heading(q)}" for q in queries[:NOT_RUN_LISTED])
    more = len(queries) - NOT_RUN_LISTED
    if more > 0:
        shown += f"\n- … and {more} more"
    n = len(queries)
    return (
        f"(reply full: {OUTPUT_CAP // 1024} KB or {MAX_QUERIES} queries; {n} more"
        f" quer{'ies' if n > 1 else 'y'} not searched, ask {'them' if n > 1 else 'it'} in"
        f" another call){shown}"
    )
