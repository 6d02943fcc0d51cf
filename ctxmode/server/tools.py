"""One short function per ctx_* tool: check the arguments, make one core call, word the
answer. Handlers run in a worker thread; a `CtxError` becomes an error result carrying
its message (the dispatcher in `app` does that mapping once)."""

import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

from ctxmode import batch, paths, security, settings
from ctxmode.errors import CtxError, NotFoundError, UsageError
from ctxmode.executor import ExecRequest, execute, file_size
from ctxmode.executor.runtimes import normalize_language
from ctxmode.executor.shaping import INDEX_MAX_BYTES, shape
from ctxmode.server import coerce
from ctxmode.server.render import render_search
from ctxmode.server.state import ServerState
from ctxmode.store import ContentStore, SearchResult
from ctxmode.store.files import WalkOptions
from ctxmode.store.indexer import BAD_NAME, index_paths, label_for
from ctxmode.store.projects import knowledge_bases
from ctxmode.store.query import MAX_HITS

log = logging.getLogger("ctxmode.server")

DEFAULT_SEARCH_LIMIT = 3
SOURCES_NAMED = 10  # in the answer to a search on a source that does not exist
SKIPPED_NAMES_SHOWN = 10
# How long one ctx_index of a directory may run: under the shortest host tool timeout
# (Codex: 60 s). Calling again goes on where it stopped.
INDEX_BUDGET_S = 45
FILE_MAX_BYTES = INDEX_MAX_BYTES  # one file named by path: as much as one run's output
EMPTY_KB = (
    "Knowledge base is empty — no content has been indexed yet. Index first with "
    "ctx_batch_execute(commands, queries), ctx_fetch_and_index(url) or "
    "ctx_index(content, source); then ctx_search works for follow-up queries."
)


@dataclass
class Meter:
    """What one call measured besides its answer (the stats counters, `ctxmode.stats`).

    `handled`: bytes the call dealt with that would otherwise have entered the context (a
    run's output, a file processed or indexed from disk, fetched pages); the dispatcher
    counts as kept in the sandbox only what of it was not returned.
    """

    handled: int = 0
    indexed: int = 0
    cache_hits: int = 0
    cache_saved: int = 0


@dataclass(frozen=True)
class Call:
    """Who is calling (for the flood guard), the flag that cancels this call's runs, and
    the meter the handler fills."""

    caller: str
    cancel: threading.Event
    meter: Meter = field(default_factory=Meter)


def _size(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


Reply = tuple[str, bool]  # (text, is_error)
Handler = Callable[[ServerState, dict[str, Any], Call], Reply]


def _timeout(args: dict[str, Any]) -> float | None:
    # upstream's `timeout`, or `timeout_ms` as the CLI spells it
    return coerce.number(args, "timeout", low=1) or coerce.number(args, "timeout_ms", low=1)


def _check_code(state: ServerState, language: str, code: str) -> None:
    """Refuse code the host's rules deny: its commands, and the files it names."""
    security.enforce(security.check_run(state.policy(), language, code, state.project_dir))


def run_dir(state: ServerState, args: dict[str, Any]) -> Path | None:
    """The run's working directory from ``cwd`` (None: the project): a folder inside the
    project or one of its git worktrees, relative paths from the project.

    Raises:
        UsageError: not a folder, or outside the project and its worktrees.
    """
    raw = coerce.path(args, "cwd")
    if raw is None or not raw.strip():
        return None
    given = Path(raw.strip()).expanduser()
    try:
        target = (given if given.is_absolute() else state.project_dir / given).resolve()
    except RuntimeError:  # Python before 3.13 says so for a symlink loop
        raise UsageError(f"cwd is a symlink loop: {raw}") from None
    except OSError as exc:
        raise UsageError(f"cwd cannot be read: {raw} ({exc.strerror})") from None
    if not target.is_dir():
        raise UsageError(f"cwd is not a folder: {raw}")
    allowed = [state.project_dir.resolve()]
    allowed += [Path(w).resolve() for w in paths.git_worktrees(state.project_dir)]
    if not any(target == root or root in target.parents for root in allowed):
        raise UsageError(
            f"cwd must be inside the project ({state.project_dir}) or one of its git "
            f"worktrees: {raw}"
        )
    return target


def ctx_execute(state: ServerState, args: dict[str, Any], call: Call) -> Reply:
    language = normalize_language(coerce.string(args, "language", required=True) or "")
    code = coerce.string(args, "code", required=True) or ""
    _check_code(state, language, code)
    request = ExecRequest(
        language,
        code,
        state.project_dir,
        timeout_ms=_timeout(args),
        background=coerce.boolean(args, "background"),
        cwd=run_dir(state, args),
    )
    result = execute(request, registry=state.runs, cancel=call.cancel)
    shaped = shape(
        result,
        label=f"execute:{language}",
        open_store=state.store,
        intent=coerce.string(args, "intent"),
    )
    call.meter.handled = result.printed_bytes
    call.meter.indexed = shaped.indexed_bytes
    return shaped.text, shaped.is_error


def ctx_execute_file(state: ServerState, args: dict[str, Any], call: Call) -> Reply:
    path = coerce.path(args, "path", required=True) or ""
    language = normalize_language(coerce.string(args, "language", required=True) or "")
    code = coerce.string(args, "code", required=True) or ""
    policy = state.policy()
    security.enforce(security.check_path(policy, path, state.project_dir))
    security.enforce(security.check_run(policy, language, code, state.project_dir))
    request = ExecRequest(
        language, code, state.project_dir, timeout_ms=_timeout(args), file_path=path
    )
    result = execute(request, cancel=call.cancel)
    shaped = shape(
        result,
        label=f"file:{path}",
        open_store=state.store,
        intent=coerce.string(args, "intent"),
        timeout_text=f"Timed out processing {path} after {result.timeout_ms:.0f}ms",
    )
    # Without ctxmode the agent reads the file itself: its size is what stayed out.
    call.meter.handled = file_size(state.project_dir, path)
    call.meter.indexed = shaped.indexed_bytes
    return shaped.text, shaped.is_error


def ctx_batch_execute(state: ServerState, args: dict[str, Any], call: Call) -> Reply:
    raw = coerce.commands(args.get("commands"))
    if not isinstance(raw, list) or not raw:
        raise UsageError("commands must be a non-empty array of {label, command}")
    commands = []
    for item in raw:
        if not isinstance(item, dict) or not isinstance(item.get("command"), str):
            raise UsageError("each command must be {label, command} with a string command")
        commands.append(
            batch.Command(str(item.get("label") or item["command"][:40]), item["command"])
        )
    queries = coerce.strings(args, "queries") or []
    if not queries:
        raise UsageError("queries must hold at least one question")
    policy = state.policy()
    for command in commands:
        verdict = security.check_run(policy, "shell", command.command, state.project_dir)
        security.enforce(verdict, batch_label=command.label)
    timeout = _timeout(args)
    concurrency = int(coerce.number(args, "concurrency", low=1, high=8) or 1)
    scope = coerce.string(args, "query_scope") or "batch"
    if scope not in ("batch", "global"):
        raise UsageError('query_scope must be "batch" or "global"')
    report = batch.run_batch(
        state.store,
        state.project_dir,
        commands,
        queries,
        timeout_ms=timeout,
        concurrency=concurrency,
        cancel=call.cancel,
        cwd=run_dir(state, args),
        search_all=scope == "global",
    )
    call.meter.handled = sum(run.extent.bytes for run in report.runs)
    call.meter.indexed = _size(report.document)
    if timeout is not None and batch.all_timed_out(report):
        return f"Batch timed out after {timeout:.0f}ms. No output captured.", True
    return batch.render_batch(report), False


def ctx_index(state: ServerState, args: dict[str, Any], call: Call) -> Reply:
    content = coerce.string(args, "content")
    path = coerce.path(args, "path")
    source = coerce.string(args, "source")
    if not content and not path:
        raise UsageError("Either content or path must be provided")
    if not path:
        with state.store() as store:
            report = store.index_text(content or "", source or "untitled")
        call.meter.indexed = report.bytes  # it came in the arguments: already in context
        return _indexed(report.chunks, report.code_chunks, report.label), False
    security.refuse_own_data(path, state.project_dir)
    policy = state.policy()
    security.enforce(security.check_path(policy, path, state.project_dir))
    target = Path(path).expanduser()
    target = (target if target.is_absolute() else state.project_dir / target).absolute()
    with state.store() as store:
        if not target.is_dir():
            label = source or label_for(target, state.project_dir, None, None)
            report = store.index_file(
                target,
                label,
                max_bytes=FILE_MAX_BYTES,
                over=f"ctx_index reads at most {FILE_MAX_BYTES >> 20} MB of one file: split it,"
                " e.g. with ctx_execute running `split -C 32m FILE part-`, and index the parts",
                denied=security.path_deny_check(policy, state.project_dir),
            )
            call.meter.handled = call.meter.indexed = report.bytes
            return _indexed(report.chunks, report.code_chunks, report.label), False
        end = time.monotonic() + INDEX_BUDGET_S
        walk = _walk_options(state, args)
        run = index_paths(
            store,
            [str(target)],
            project=state.project_dir,
            cwd=state.project_dir,
            label=source,
            deny=security.path_deny_check(policy, state.project_dir),
            stop=lambda: call.cancel.is_set() or time.monotonic() > end,
            walk=walk,
        )
    where = label_for(target, state.project_dir, None, None)
    if run.listing_stopped:
        return (
            f"Stopped after {INDEX_BUDGET_S} s: {where} holds too many files to list in one"
            " call. Index its subdirectories one by one."
        ), True
    chunks = sum(r.chunks for r in run.indexed)
    code = sum(r.code_chunks for r in run.indexed)
    call.meter.handled = call.meter.indexed = sum(r.bytes for r in run.indexed)
    text = _indexed(chunks, code, f"{len(run.indexed)} files under {where}", source or where)
    if run.left:
        text += (
            f"\nStopped after {INDEX_BUDGET_S} s with {run.left} files left: call ctx_index"
            " again with the same path to index the rest (indexed files are not read again)."
        )
    if run.capped:
        text += (
            f"\nStopped at maxFiles {walk.max_files}: more files were left out; narrow the"
            " walk (include, exclude, extensions, maxDepth) or raise maxFiles."
        )
    if run.skipped:
        text += f"\nSkipped {len(run.skipped)} (binary, too large, unreadable or denied)."
    bad_names = [p.path for p in run.skipped if p.code == BAD_NAME]
    if bad_names:
        shown = ", ".join(bad_names[:SKIPPED_NAMES_SHOWN])
        more = len(bad_names) - SKIPPED_NAMES_SHOWN
        text += f"\nSkipped, name not valid UTF-8: {shown}" + (
            f" (+{more} more)" if more > 0 else ""
        )
    return text, False


def _walk_options(state: ServerState, args: dict[str, Any]) -> WalkOptions:
    """ctx_index's directory-walk arguments (upstream's names); the defaults are the plain
    walk. A followed symlink stays inside the project."""
    depth = coerce.number(args, "maxDepth", low=0)
    files = coerce.number(args, "maxFiles", low=1)
    return WalkOptions(
        include=coerce.strings(args, "include") or (),
        exclude=coerce.strings(args, "exclude") or (),
        max_depth=None if depth is None else int(depth),
        max_files=None if files is None else int(files),
        extensions=coerce.strings(args, "extensions"),
        respect_gitignore=coerce.boolean(args, "respectGitignore", default=True),
        follow_symlinks=coerce.boolean(args, "followSymlinks"),
        confine=state.project_dir,
    )


def _indexed(chunks: int, code: int, what: str, scope: str | None = None) -> str:
    return (
        f"Indexed {chunks} sections ({code} with code) from: {what}\n"
        f'Use ctx_search(queries: [...], source: "{scope or what}") to query it.'
    )


def ctx_search(state: ServerState, args: dict[str, Any], call: Call) -> Reply:
    queries = coerce.strings(args, "queries") or []
    if not queries and coerce.string(args, "query"):
        queries = [coerce.string(args, "query") or ""]
    queries = [q for q in queries if q.strip()]
    limit = int(coerce.number(args, "limit", low=1) or DEFAULT_SEARCH_LIMIT)
    limit = min(limit, MAX_HITS)
    source = coerce.string(args, "source")
    content_type = coerce.string(args, "contentType")
    if content_type not in (None, "code", "prose"):
        raise UsageError("contentType must be code or prose")
    timeline = coerce.string(args, "sort") == "timeline"
    others = _other_projects(state, coerce.string(args, "project"))
    if others is not None and timeline:
        raise UsageError("project scopes a relevance search; sort timeline reads this project")
    soft, hard = settings.search_max_results_after(), settings.search_block_after()
    with state.store() as store, _opened(others) as stores:
        empty = store.chunk_count() == 0 and not any(s.chunk_count() for _, s in stores)
        if empty and not timeline:  # a timeline also reads sessions and memory files
            return EMPTY_KB, True
        if not queries:
            raise UsageError("provide query or queries")
        tally = state.guard.hit(call.caller)
        count = tally.count
        if count > hard:
            by = " by all agents" if tally.shared else ""
            return (
                f"BLOCKED: {tally.calls} search calls{by} in {tally.elapsed:.0f}s. You're "
                "flooding context. STOP making individual search calls. Use "
                "ctx_batch_execute(commands, queries) for your next research step."
            ), True
        effective = 1 if count > soft else (limit if timeline else min(limit, 2))
        seen: list[Any] = []
        here = [] if others is not None and not others.here else [("", store)]

        def search(query: str) -> Any:
            result = _search_all(
                [*here, *stores], query, limit=effective, source=source, content_type=content_type
            )
            seen.append(result)
            return result

        searches = (search(q) for q in ([] if empty else queries))
        if timeline:
            results = list(searches)
        else:
            text = render_search(searches, queries)  # searched until the reply is full
            if source and not any(r.hits for r in seen):
                text = _unknown_source(store, source) + text
    if timeline:
        text = _timeline(state, queries, results, effective, only_knowledge=source is not None)
    if count >= soft:
        text += (
            f"\n\n⚠ search call #{count}/{hard} in this window. Results limited to "
            f'{effective}/query. Batch queries: ctx_search(queries: ["q1","q2"]) or use '
            "ctx_batch_execute."
        )
    return text, False


@dataclass(frozen=True)
class _Others:
    """The knowledge bases of other projects a search reads, and whether it reads this
    project's too."""

    bases: list[tuple[str, Path]]
    here: bool


def _other_projects(state: ServerState, project: str | None) -> _Others | None:
    """What ``project`` adds to a search (None: this project alone): ``global`` every
    project under the data root, an absolute directory that project alone.

    Raises:
        UsageError: neither ``global`` nor an absolute path.
        NotFoundError: that project has no knowledge base.
    """
    if project is None or not project.strip():
        return None
    project = project.strip()
    own = state.project.content_db
    if project == "global":
        bases = knowledge_bases(state.project.root)
        return _Others([(name, db) for name, db in bases if db != own], here=True)
    given = Path(project).expanduser()
    if not given.is_absolute():
        raise UsageError('project must be "global" or an absolute project directory')
    other = paths.ProjectPaths(state.project.root, paths.resolve_project(given))
    if other.content_db == own:
        return None
    if not other.content_db.exists():
        raise NotFoundError(f"no knowledge base for project {project}: nothing was indexed there")
    return _Others([(str(other.project_dir), other.content_db)], here=False)


def _open(db: Path) -> ContentStore | None:
    try:
        return ContentStore(db)
    except CtxError as exc:  # one unreadable project does not fail the search
        log.warning("cannot search %s: %s", db, exc)
        return None


@contextmanager
def _opened(others: _Others | None) -> Iterator[list[tuple[str, ContentStore]]]:
    """The other projects' knowledge bases, open for the search, closed after it."""
    opened: list[tuple[str, ContentStore]] = []
    try:
        for name, db in others.bases if others is not None else []:
            store = _open(db)
            if store is not None:
                opened.append((name, store))
        yield opened
    finally:
        for _, store in opened:
            store.close()


def _search_all(stores: list[tuple[str, ContentStore]], query: str, **kw: Any) -> SearchResult:
    """One query over several knowledge bases: the best hits of all, those of another
    project labelled ``<its directory>:<source>``. Only this project's files are
    re-checked for staleness (another project's are read as indexed)."""
    results = [(name, store.search(query, refresh=not name, **kw)) for name, store in stores]
    if len(results) == 1 and not results[0][0]:
        return results[0][1]
    hits = [
        replace(h, source=f"{name}:{h.source}") if name else h
        for name, result in results
        for h in result.hits
    ]
    hits.sort(key=lambda h: -h.score)
    first = results[0][1]
    return replace(first, hits=hits[: kw.get("limit", DEFAULT_SEARCH_LIMIT)])


def _unknown_source(store: Any, source: str) -> str:
    """The note above a search scoped to a `source` that no indexed source matches ("" when
    one does): what exists instead."""
    if store.source_labels(source, limit=1):
        return ""
    labels = store.source_labels(limit=SOURCES_NAMED)
    named = ", ".join(f'"{label}"' for label in labels)
    return (
        f'No indexed source matches source: "{source}". The latest sources: {named}. '
        "Search without source to look in all of them.\n\n"
    )


def _timeline(
    state: ServerState,
    queries: list[str],
    results: list[Any],
    limit: int,
    *,
    only_knowledge: bool,
) -> str:
    """Knowledge-base hits, session events and memory files per query, in time order
    (`ctxmode.timeline`); a source that fails is left out, never the whole answer."""
    from ctxmode import timeline

    by_query = {r.query: timeline.knowledge_items(r) for r in results}
    session_db = state.recorder.session_db
    sections = []
    for query in queries:
        groups = [by_query.get(query, [])]
        if not only_knowledge:
            groups.append(_isolated(partial(timeline.event_items, session_db, query, limit)))
            groups.append(
                _isolated(partial(timeline.memory_items, state.project_dir, query, limit))
            )
        sections.append(timeline.render(query, timeline.merge(groups, limit)))
    return "\n\n---\n\n".join(sections)


def _isolated(read: Callable[[], list[Any]]) -> list[Any]:
    """One unreadable source must not hide the others: its failure is logged, not raised."""
    try:
        return read()
    except Exception:
        log.warning("timeline source failed", exc_info=True)
        return []


def ctx_fetch_and_index(state: ServerState, args: dict[str, Any], call: Call) -> Reply:
    from ctxmode.fetch import fetch_and_index, render_report

    requests = args.get("requests")
    url = coerce.string(args, "url")
    # `requests` (a batch) wins; a lone `url` keeps upstream's single-URL wording.
    target: Any = coerce.as_array(requests) if requests is not None else url
    ttl = coerce.number(args, "ttl", low=0)
    with state.private_store() as store:  # network waits must not block other tools
        report = fetch_and_index(
            store,
            target,
            source=coerce.string(args, "source"),
            force=coerce.boolean(args, "force") or ttl == 0,
            ttl_s=None if ttl is None else ttl / 1000,
            concurrency=int(coerce.number(args, "concurrency", low=1, high=8) or 1),
            cancel=call.cancel,
        )
    fetched = [r for r in report.results if r.error is None]
    call.meter.handled = sum(r.bytes for r in fetched)
    call.meter.indexed = sum(r.bytes for r in fetched if not r.from_cache)
    call.meter.cache_hits = sum(1 for r in fetched if r.from_cache)
    call.meter.cache_saved = sum(r.bytes for r in fetched if r.from_cache)
    return render_report(report), report.all_failed


# Cancelled when the client closes stdin: a fetch only waits on the network, so nobody is
# left to wait for it (a run still finishes and is answered: its client may be reading).
UNTIL_EOF = frozenset({"ctx_fetch_and_index"})

HANDLERS: dict[str, Handler] = {
    "ctx_execute": ctx_execute,
    "ctx_execute_file": ctx_execute_file,
    "ctx_batch_execute": ctx_batch_execute,
    "ctx_index": ctx_index,
    "ctx_search": ctx_search,
    "ctx_fetch_and_index": ctx_fetch_and_index,
}


def missing(name: str) -> NotFoundError:
    return NotFoundError(f"Unknown tool: {name}")
