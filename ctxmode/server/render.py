"""How search results read in the agent's context: source and lines, title, matching lines.
Nothing else: every byte here is paid for by the agent on every later turn."""

from ctxmode.store import SearchHit, SearchResult

OUTPUT_CAP = 40 * 1024


def _where(hit: SearchHit) -> str:
    if hit.start_line is not None:
        return f"{hit.source}:{hit.start_line}-{hit.end_line}"
    return hit.source


def render_search(results: list[SearchResult]) -> str:
    """One section per query, at most `OUTPUT_CAP` characters in all."""
    sections: list[str] = []
    used = 0
    refreshed: set[str] = set()
    dropped: set[str] = set()
    for result in results:
        refreshed.update(result.refresh.refreshed)
        dropped.update(result.refresh.dropped)
        if used > OUTPUT_CAP:
            sections.append(f"## {result.query}\n(output cap reached)")
            continue
        hits = result.hits
        if not hits:
            body = "No results found."
        else:
            body = "\n\n".join(f"--- [{_where(h)}] ---\n### {h.title}\n\n{h.snippet}" for h in hits)
        if result.corrections:
            fixed = ", ".join(f"{a} → {b}" for a, b in result.corrections.items())
            body = f"(also searched: {fixed})\n{body}"
        section = f"## {result.query}\n\n{body}"
        used += len(section)
        sections.append(section)
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
