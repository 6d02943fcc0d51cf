"""Batch research: run shell commands, index everything they print, answer questions on it.

This is the core of ``ctx_batch_execute``. Commands run as shell with stderr merged into
stdout. Serially (concurrency 1) they share one time budget: once it is spent, the rest
are skipped. In parallel (up to 8 at once, order kept) each command gets the whole
timeout and one command's failure never strands the others. The combined output is
indexed as one markdown source whose sections are the commands (``# <label>``), and each
query is answered from that source only.
"""

import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from ctxmode.errors import CtxError, UsageError
from ctxmode.executor import ExecRequest, execute
from ctxmode.executor.shaping import StoreOpener

MAX_CONCURRENCY = 8
LABEL_MAX = 80
QUERY_HITS = 3
SNIPPET_CHARS = 3000
ANSWER_CAP = 80 * 1024
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


@dataclass(frozen=True)
class BatchReport:
    runs: list[CommandRun]
    document: str
    label: str
    chunk_titles: list[tuple[str, int]]
    answers: list[tuple[str, list[tuple[str, str]]]]
    terms: list[str]
    timeout_ms: float | None


def _run_one(
    project: Path, command: Command, timeout_ms: float | None, cancel: threading.Event | None
) -> CommandRun:
    try:
        result = execute(
            ExecRequest("shell", f"{command.command} 2>&1", project, timeout_ms=timeout_ms),
            cancel=cancel,
        )
    except CtxError as exc:
        return CommandRun(command.label, "", error=str(exc))
    return CommandRun(command.label, result.stdout, timed_out=result.timed_out)


def run_commands(
    project: Path,
    commands: Sequence[Command],
    *,
    timeout_ms: float | None,
    concurrency: int = 1,
    cancel: threading.Event | None = None,
) -> list[CommandRun]:
    """Run the commands; serial ones share `timeout_ms`, parallel ones each get all of it."""
    if not commands:
        raise UsageError("commands must hold at least one command")
    workers = max(1, min(int(concurrency), MAX_CONCURRENCY, len(commands)))
    if workers > 1:
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="ctxmode-batch") as pool:
            futures = [pool.submit(_run_one, project, c, timeout_ms, cancel) for c in commands]
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
        run = _run_one(project, command, remaining, cancel)
        runs.append(run)
        exhausted = run.timed_out and deadline is not None
    return runs


def _section(run: CommandRun, timeout_ms: float | None) -> str:
    if run.skipped:
        body = SKIPPED
    elif run.error is not None:
        body = f"(executor error: {run.error})"
    else:
        body = run.output if run.output.strip() else "(no output)"
        if run.timed_out:
            body = f"{body.rstrip()}\n(timed out after {timeout_ms or 0:.0f}ms)"
    return f"# {run.label}\n\n{body.rstrip()}\n"


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
) -> BatchReport:
    """Run, index under ``batch:<labels>``, and answer every query from this batch only."""
    runs = run_commands(
        project, commands, timeout_ms=timeout_ms, concurrency=concurrency, cancel=cancel
    )
    document = "\n".join(_section(r, timeout_ms) for r in runs)
    label = batch_label(commands)
    answers: list[tuple[str, list[tuple[str, str]]]] = []
    with open_store() as store:
        store.index_text(document, label, kind="markdown")
        titles = [
            (row["title"], len(row["content"].encode("utf-8")))
            for row in store.connection.execute(
                "SELECT c.title, c.content FROM chunks c JOIN sources s ON s.id = c.source_id"
                " WHERE s.label = ? ORDER BY c.ord",
                (label,),
            )
        ]
        for query in queries:
            result = store.search(
                query,
                limit=QUERY_HITS,
                source=label,
                exact_source=True,
                refresh=False,
                snippet_chars=SNIPPET_CHARS,
            )
            answers.append((query, [(h.title, h.snippet) for h in result.hits]))
        terms = store.distinctive_terms(label)
    return BatchReport(runs, document, label, titles, answers, terms, timeout_ms)


def render_batch(report: BatchReport) -> str:
    """The agent's view: what ran, what got indexed, and the answers."""
    size = len(report.document.encode("utf-8"))
    lines = report.document.count("\n")
    out = [
        f"Executed {len(report.runs)} commands ({lines} lines, {size / 1024:.1f}KB). "
        f"Indexed {len(report.chunk_titles)} sections. Searched {len(report.answers)} queries.",
        "",
        "## Indexed Sections",
        "",
        *(f"- {title} ({nbytes / 1024:.1f}KB)" for title, nbytes in report.chunk_titles),
        "",
    ]
    used = sum(len(x) for x in out)
    for query, hits in report.answers:
        if used > ANSWER_CAP:
            out.append(f'## {query}\n(output cap reached — use ctx_search(queries: ["{query}"]))\n')
            continue
        block = [f"## {query}", ""]
        if hits:
            for title, snippet in hits:
                block += [f"### {title}", snippet, ""]
        else:
            block += ["No matching sections found.", ""]
        text = "\n".join(block)
        used += len(text)
        out.append(text)
    if report.terms:
        out.append("Searchable terms for follow-up: " + ", ".join(report.terms))
    return "\n".join(out).rstrip() + "\n"


def all_timed_out(report: BatchReport) -> bool:
    """Nothing ran to any output before the budget ran out."""
    return all((r.timed_out or r.skipped) and not r.output.strip() for r in report.runs)
