"""Batch research: run shell commands, index everything they print, answer questions on it.

This is the core of ``ctx_batch_execute``. Commands run as shell with stderr merged into
stdout. Serially (concurrency 1) they share one time budget: once it is spent, the rest
are skipped. In parallel (up to 8 at once, order kept) each command gets the whole
timeout and one command's failure never strands the others. The combined output is
indexed as one markdown source whose sections are the commands (``# <label>``), and each
query is answered from that source only.

Bounds: each command's output is captured with a head and a tail in memory (see
`ctxmode.executor.capture`) and read back whole from the run's files when that window was
not enough; what is indexed is at most `shaping.INDEX_MAX_BYTES` in all, shared out so that
small outputs stay whole and larger ones are digested. The answer shows each recognised
output's key lines (`ctxmode.outline`), lists at most `MAX_TITLES` section titles
and is cut at `ANSWER_MAX_BYTES`.
"""

import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path

from ctxmode.errors import CtxError, UsageError
from ctxmode.executor import ExecRequest, execute
from ctxmode.executor.capture import Extent, measured, size
from ctxmode.executor.digest import digest
from ctxmode.executor.shaping import (
    INDEX_MAX_BYTES,
    StoreOpener,
    ceiling_note,
    clip,
    readable_terms,
)
from ctxmode.outline import outline, render
from ctxmode.store.query import MAX_QUERIES

MAX_CONCURRENCY = 8
LABEL_MAX = 80
QUERY_HITS = 3
SNIPPET_CHARS = 1500
OUTLINE_BYTES = 9 * 1024  # the key lines of all recognised outputs of a batch
OUTLINE_MIN = 2048  # of one output
MAX_TITLES = 12
ANSWER_CAP = 80 * 1024
ANSWER_MAX_BYTES = ANSWER_CAP + 16 * 1024
MAX_CUT_SHOWN = 5  # commands whose cut output gets a preview in the answer
PREVIEW_BYTES = 1024  # of a command's output too large to keep whole
SKIPPED = "(skipped — batch timeout exceeded)"


@dataclass(frozen=True)
class Command:
    label: str
    command: str


@dataclass(frozen=True)
class CommandRun:
    label: str
    output: str
    timed_out: bool = False
    skipped: bool = False
    error: str | None = None
    printed: Extent | None = None  # all it printed (`output` may be cut); None: `output`
    capped: bool = False
    exit_code: int = 0
    left_out: int = 0  # bytes beyond the indexing ceiling

    @property
    def extent(self) -> Extent:
        return measured(self.output, self.printed)


@dataclass(frozen=True)
class BatchReport:
    runs: list[CommandRun]
    document: str
    label: str
    chunk_titles: list[tuple[str, int]]
    answers: list[tuple[str, list[tuple[str, str]]]]
    terms: list[str]
    timeout_ms: float | None
    # Commands whose output was not indexed whole: (label, what was cut, a preview).
    cut: list[tuple[str, str, str]] = field(default_factory=list)
    not_searched: int = 0  # queries beyond `MAX_QUERIES`


def _run_one(
    project: Path,
    command: Command,
    timeout_ms: float | None,
    cancel: threading.Event | None,
    cwd: Path | None = None,
) -> CommandRun:
    try:
        result = execute(
            ExecRequest(
                "shell", f"{command.command} 2>&1", project, timeout_ms=timeout_ms, cwd=cwd
            ),
            cancel=cancel,
        )
    except CtxError as exc:
        return CommandRun(command.label, "", error=str(exc))
    whole = result.whole("stdout", INDEX_MAX_BYTES)  # all of it, when the capture is cut
    return CommandRun(
        command.label,
        result.stdout if whole is None else whole[0],
        timed_out=result.timed_out,
        # read whole: nothing of it is left out but what is beyond the ceiling
        printed=result.stdout_extent
        if whole is None
        else replace(result.stdout_extent, omitted_bytes=0, omitted_lines=0),
        capped=result.capped,
        exit_code=result.exit_code,
        left_out=0 if whole is None else whole[1],
    )


def run_commands(
    project: Path,
    commands: Sequence[Command],
    *,
    timeout_ms: float | None,
    concurrency: int = 1,
    cancel: threading.Event | None = None,
    cwd: Path | None = None,
) -> list[CommandRun]:
    """Run the commands (in `cwd`, default the project); serial ones share `timeout_ms`,
    parallel ones each get all of it."""
    if not commands:
        raise UsageError("commands must hold at least one command")
    workers = max(1, min(int(concurrency), MAX_CONCURRENCY, len(commands)))
    if workers > 1:
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="ctxmode-batch") as pool:
            futures = [pool.submit(_run_one, project, c, timeout_ms, cancel, cwd) for c in commands]
            return [f.result() for f in futures]
    runs: list[CommandRun] = []
    deadline = None if timeout_ms is None else time.monotonic() + timeout_ms / 1000
    exhausted = False
    for command in commands:
        remaining = None if deadline is None else (deadline - time.monotonic()) * 1000
        if exhausted or (remaining is not None and remaining <= 0):
            exhausted = True
            runs.append(CommandRun(command.label, "", skipped=True))
            continue
        run = _run_one(project, command, remaining, cancel, cwd)
        runs.append(run)
        exhausted = run.timed_out and deadline is not None
    return runs


def _section(run: CommandRun, timeout_ms: float | None, output: str) -> str:
    if run.skipped:
        body = SKIPPED
    elif run.error is not None:
        body = f"(executor error: {run.error})"
    else:
        body = output if output.strip() else "(no output)"
        if run.timed_out:
            body = f"{body.rstrip()}\n(timed out after {timeout_ms or 0:.0f}ms)"
        elif run.capped:
            body = f"{body.rstrip()}\n(output capped — process killed)"
    return f"# {run.label}\n\n{body.rstrip()}\n"


def _shares(sizes: list[int], budget: int) -> list[int]:
    """`budget` split so that what fits its share stays whole and the rest share the rest."""
    shares = [0] * len(sizes)
    left = budget
    for done, i in enumerate(sorted(range(len(sizes)), key=sizes.__getitem__)):
        shares[i] = min(sizes[i], left // (len(sizes) - done))
        left -= shares[i]
    return shares


def _bounded(runs: list[CommandRun], budget: int) -> tuple[list[str], list[tuple[str, str, str]]]:
    """Each run's output as indexed (within `budget` in all), and what was cut of which."""
    outputs: list[str] = []
    cut: list[tuple[str, str, str]] = []
    for run, share in zip(runs, _shares([r.extent.bytes for r in runs], budget), strict=True):
        found = digest(run.output, run.extent, max(share, PREVIEW_BYTES))
        outputs.append(found.text)
        if found.whole:
            continue
        what = ["repeated lines collapsed"] if found.collapsed else []
        if found.omitted_bytes:
            what.append(f"{size(found.omitted_bytes)} in the middle left out")
        note = (
            f"printed {size(run.extent.bytes)} in {run.extent.lines:,} lines; indexed "
            f"{size(len(found.text.encode('utf-8', 'replace')))} of it ({', '.join(what)})"
        )
        cut.append((run.label, note, digest(run.output, run.extent, PREVIEW_BYTES).text))
    return outputs, cut


def batch_label(commands: Sequence[Command]) -> str:
    return ("batch:" + ",".join(c.label for c in commands))[:LABEL_MAX]


def run_batch(
    open_store: StoreOpener,
    project: Path,
    commands: Sequence[Command],
    queries: Sequence[str],
    *,
    timeout_ms: float | None = None,
    concurrency: int = 1,
    cancel: threading.Event | None = None,
    cwd: Path | None = None,
    search_all: bool = False,
) -> BatchReport:
    """Run (in `cwd`, default the project), index under ``batch:<labels>``, and answer every
    query from this batch only, or from the whole knowledge base with `search_all`."""
    runs = run_commands(
        project,
        commands,
        timeout_ms=timeout_ms,
        concurrency=concurrency,
        cancel=cancel,
        cwd=cwd,
    )
    outputs, cut = _bounded(runs, INDEX_MAX_BYTES)
    document = "\n".join(
        _section(r, timeout_ms, output) for r, output in zip(runs, outputs, strict=True)
    )
    label = batch_label(commands)
    answers: list[tuple[str, list[tuple[str, str]]]] = []
    with open_store() as store:
        store.index_text(document, label, kind="markdown")  # sections: the commands
        titles = [
            (row["title"], len(row["content"].encode("utf-8")))
            for row in store.connection.execute(
                "SELECT c.title, c.content FROM chunks c JOIN sources s ON s.id = c.source_id"
                " WHERE s.label = ? ORDER BY c.ord",
                (label,),
            )
        ]
        for query in queries[:MAX_QUERIES]:
            result = store.search(
                query,
                limit=QUERY_HITS,
                source=None if search_all else label,
                exact_source=not search_all,
                refresh=search_all,
                snippet_chars=SNIPPET_CHARS,
            )
            answers.append(
                (
                    query,
                    [
                        (h.title if h.source == label else f"{h.source}: {h.title}", h.snippet)
                        for h in result.hits
                    ],
                )
            )
        terms = readable_terms(store.distinctive_terms(label))
    return BatchReport(
        runs,
        document,
        label,
        titles,
        answers,
        terms,
        timeout_ms,
        cut,
        max(0, len(queries) - MAX_QUERIES),
    )


def _key_lines(runs: list[CommandRun]) -> list[tuple[CommandRun, str]]:
    """Each recognised output's outline (test run, diff, diagnostics, traceback, log
    errors) within `OUTLINE_BYTES` in all: the agent's first need of the batch."""
    found = []
    for run in runs:
        if run.skipped or run.error is not None or not run.output.strip():
            continue
        shape = outline(run.output, logs=run.extent.lines > 100)
        if shape is not None and (shape.items or shape.counts):
            found.append((run, shape))
    if not found:
        return []
    # the smaller outlines whole, what they leave to the larger ones
    wants = [len(render(shape, OUTLINE_BYTES).encode("utf-8")) + 64 for _, shape in found]
    shares = _shares(wants, max(OUTLINE_BYTES, OUTLINE_MIN * len(found)))
    return [
        (run, f"[{shape.kind}]\n" + render(shape, share))
        for (run, shape), share in zip(found, shares, strict=True)
    ]


def _status(run: CommandRun) -> str:
    if run.timed_out:
        return "timed out"
    if run.capped:
        return "output capped"
    return f"exit {run.exit_code}"


def _plain(line: str) -> str:
    """A line as the key lines would show it: stripped, without pytest's ``E`` margin, a
    short-summary line by its test id alone (``FAILED id - message...``)."""
    line = line.strip()
    if line.startswith("E ") or line == "E":
        line = line[1:].strip()
    if line.startswith(("FAILED ", "ERROR ", "SUBFAILED")) and " - " in line:
        line = line.split(" - ", 1)[0]
    return line


def _novel(snippet: str, shown: set[str]) -> str:
    """`snippet` unless the answer already shows most of its lines ("" then): an answer
    that repeats the key lines costs the agent bytes and tells it nothing."""
    lines = [_plain(ln) for ln in snippet.splitlines()]
    lines = [ln for ln in lines if ln and ln != "…" and set(ln) - set("_=-~^?+ ")]
    if not lines:
        return ""
    seen = sum(1 for ln in lines if ln in shown)
    return "" if seen >= 0.5 * len(lines) else snippet


def render_batch(report: BatchReport) -> str:
    """The agent's view: what ran, the key lines of what it printed, what got indexed,
    and the answers (bounded in bytes)."""
    printed = sum(r.extent.bytes for r in report.runs)
    lines = sum(r.extent.lines for r in report.runs)
    left_out = sum(r.left_out for r in report.runs)
    titles = report.chunk_titles[:MAX_TITLES]
    more = len(report.chunk_titles) - len(titles)
    out = [
        ceiling_note(left_out, "mcp").rstrip(),
        f"Executed {len(report.runs)} commands ({lines:,} lines, {size(printed)}). "
        f"Indexed {len(report.chunk_titles)} sections. Searched {len(report.answers)} queries.",
        "",
    ]
    out = out[1:] if not left_out else out
    shown: set[str] = set()
    for run, text in _key_lines(report.runs):
        out += [f"## {run.label} ({_status(run)})", "", text, ""]
        shown.update(_plain(ln) for ln in text.splitlines())
    out += [
        "## Indexed Sections",
        "",
        *(f"- {title} ({nbytes / 1024:.1f}KB)" for title, nbytes in titles),
        *([f'- … and {more} more (ctx_search with source: "{report.label}")'] if more else []),
        "",
    ]
    for label, note, preview in report.cut[:MAX_CUT_SHOWN]:
        out += [f"## {label}: output too large to index whole", "", note + ":", preview, ""]
    if len(report.cut) > MAX_CUT_SHOWN:
        out += [f"(and {len(report.cut) - MAX_CUT_SHOWN} more commands cut the same way)", ""]
    used = sum(len(x) for x in out)
    for query, hits in report.answers:
        if used > ANSWER_CAP:
            out.append(f'## {query}\n(output cap reached — use ctx_search(queries: ["{query}"]))\n')
            continue
        block = [f"## {query}", ""]
        novel = [(title, _novel(snippet, shown)) for title, snippet in hits]
        for title, snippet in novel:
            if snippet:
                block += [*([f"### {title}"] if title else []), snippet, ""]
                shown.update(_plain(ln) for ln in snippet.splitlines())
        if not hits:
            block += ["No matching sections found.", ""]
        elif not any(snippet for _, snippet in novel):
            block += ["(its matches are the key lines shown above)", ""]
        text = "\n".join(block)
        used += len(text)
        out.append(text)
    if report.not_searched:
        out.append(
            f"({report.not_searched} more queries not searched: {MAX_QUERIES} a call at most;"
            f' ask them with ctx_search(queries: [...], source: "{report.label}"))\n'
        )
    if report.terms:
        out.append("Searchable terms for follow-up: " + ", ".join(report.terms))
    return clip("\n".join(out).rstrip() + "\n", ANSWER_MAX_BYTES)


def all_timed_out(report: BatchReport) -> bool:
    """Nothing ran to any output before the budget ran out."""
    return all((r.timed_out or r.skipped) and not r.output.strip() for r in report.runs)
