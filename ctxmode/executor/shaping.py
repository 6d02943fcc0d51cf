"""What of a run reaches the agent's context, and what goes into the knowledge base.

| run                                   | returned                         | indexed            |
|---------------------------------------|----------------------------------|--------------------|
| small output                          | the output                       | nothing            |
| `intent` given, output > 5,000 bytes  | matching section titles + terms  | output, plain text |
| exit 0, output > 102,400 bytes        | a pointer to search it           | stdout, markdown   |
| failure, output > 102,400 bytes       | sections matching error words    | output, plain text |

Non-zero exits are classified first: a shell exit 1 that printed something is grep-style
"no match", not an error; anything else is an error showing the exit code, stdout and
stderr. A timeout with output returns that output marked as partial.

How to read what was indexed is said in the caller's own syntax: a ``ctx_search(...)`` call
for an agent on MCP, a ``ctxmode search ...`` command line for the CLI (`Syntax`).
"""

import shlex
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Literal

from ctxmode.executor import ExecResult
from ctxmode.executor.capture import Extent, measured, size
from ctxmode.executor.deadline import Deadline

if TYPE_CHECKING:  # a small output is shaped without loading the store or the digester
    from ctxmode.executor.digest import Digest
    from ctxmode.store import ContentStore

INTENT_MIN_BYTES = 5_000
INDEX_MIN_BYTES = 102_400
INTENT_HITS = 5
PREVIEW_CHARS = 120
ERROR_INTENT = "errors failures exceptions"
INDEX_MAX_BYTES = 2 * 1024 * 1024  # the most of one output that is indexed
INDEX_BYTES_PER_S = 512 * 1024  # what indexing is assumed to manage on a busy machine
PREVIEW_BYTES = 4096  # of each stream, in the answer about an output too large to show
ANSWER_MAX_BYTES = INDEX_MIN_BYTES + 16 * 1024

# A fresh store (closed after use) or a shared one (a context that leaves it open).
StoreOpener = Callable[[], AbstractContextManager["ContentStore"]]
Syntax = Literal["mcp", "cli"]


@dataclass(frozen=True)
class Shaped:
    """The text for the agent, whether it reports an error, and what was indexed.

    `view`: the part of `text` about the knowledge base (what was indexed, what matched,
    how to search it), for a caller that showed the output itself as it streamed."""

    text: str
    is_error: bool
    indexed_label: str | None = None
    indexed_bytes: int = 0
    view: str | None = None


def search_hint(label: str, syntax: Syntax, *, section: bool = False) -> str:
    """How to read what was indexed under `label`: a tool call or a command line."""
    if syntax == "cli":
        what = "Read any section" if section else "Search it"
        return f"{what}: ctxmode search QUERY --source {shlex.quote(label)}"
    if section:
        return f'Use ctx_search(queries: [...], source: "{label}") to read any section.'
    return (
        f'Use ctx_search(queries: ["..."]) to query this content. '
        f'Use source: "{label}" to scope results.'
    )


def _bytes(text: str) -> int:
    return len(text.encode("utf-8", "replace"))


def _kb(n: int) -> str:
    return f"{n / 1024:.1f}KB"


def classify(language: str, exit_code: int, stdout: str, stderr: str) -> tuple[bool, str]:
    """(is_error, text) for a finished run that exited non-zero."""
    if language == "shell" and exit_code == 1 and stdout.strip():
        return False, stdout
    return True, f"Exit code: {exit_code}\n\nstdout:\n{stdout}\n\nstderr:\n{stderr}"


def _best_line(text: str, words: list[str]) -> str:
    """The line of `text` holding the most intent words (the first non-blank one if none)."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip() and ln.strip() != "\u2026"]
    if not lines:
        return ""
    return max(lines, key=lambda ln: sum(1 for w in words if w in ln.lower()))


def intent_view(
    store: "ContentStore",
    output: str,
    intent: str,
    label: str,
    *,
    whole: Extent | None = None,
    syntax: Syntax = "mcp",
) -> str:
    """Index `output` under `label` (plain text) and list the sections matching `intent`.

    `whole`: the size of the run's output when `output` is a digest of it."""
    report = store.index_text(output, label, kind="plain")
    result = store.search(intent, limit=INTENT_HITS, source=label, exact_source=True, refresh=False)
    terms = store.distinctive_terms(label)
    whole = whole or measured(output, None)
    out = [f'Indexed {report.chunks} sections from "{label}" into knowledge base.']
    if result.hits:
        out.append(
            f'{len(result.hits)} sections matched "{intent}" ({whole.lines} lines, '
            f"{_kb(whole.bytes)}):"
        )
        out.append("")
        words = [w for w in intent.lower().split() if len(w) > 2]
        out.extend(
            f"  - {hit.title[:PREVIEW_CHARS]}: {_best_line(hit.snippet, words)[:PREVIEW_CHARS]}"
            for hit in result.hits
        )
    else:
        out.append(
            f'No sections matched intent "{intent}" in {whole.lines}-line output '
            f"({_kb(whole.bytes)})."
        )
    if terms:
        out += ["", "Searchable terms: " + ", ".join(terms)]
    out += ["", search_hint(label, syntax, section=True)]
    return "\n".join(out)


def pointer(store: "ContentStore", output: str, label: str, syntax: Syntax = "mcp") -> str:
    """Index a large successful output (markdown) and say how to search it."""
    report = store.index_text(output, label, kind="markdown")
    return (
        f"Indexed {report.chunks} sections ({report.code_chunks} with code) from: {label}\n"
        + search_hint(label, syntax)
    )


# --------------------------------------------------------------------------- bounds


def index_budget(deadline: Deadline | None) -> int:
    """How many bytes of one output to index: the most, or what the call's time allows."""
    if deadline is None:
        return INDEX_MAX_BYTES
    return int(min(INDEX_MAX_BYTES, deadline.for_after_run() * INDEX_BYTES_PER_S))


def preview(text: str, extent: Extent) -> str:
    """`text` as is when it is all there and small, else its digest at `PREVIEW_BYTES`."""
    if not extent.cut and extent.bytes <= INDEX_MIN_BYTES:
        return text
    from ctxmode.executor.digest import digest

    return digest(text, extent, PREVIEW_BYTES).text


def clip(text: str, limit: int = ANSWER_MAX_BYTES) -> str:
    """`text` cut to `limit` bytes (on a line boundary where one is near), saying so."""
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= limit:
        return text
    head = data[:limit].decode("utf-8", "ignore")
    cut = head.rfind("\n", 0, len(head))
    head = head[: cut + 1] if cut > len(head) // 2 else head + "\n"
    return f"{head}[… answer cut at {size(limit)}: {size(len(data) - len(head))} more]"


def _index_note(digests: "list[Digest]", extents: list[Extent], budget: int) -> str:
    """A line saying how what was indexed differs from what the run printed ("" if not)."""
    if all(d.whole for d in digests):
        return ""
    what = []
    if any(d.collapsed for d in digests):
        what.append("repeated lines collapsed")
    left_out = sum(d.omitted_bytes for d in digests)
    if left_out:
        what.append(f"{size(left_out)} in the middle left out")
        if budget < INDEX_MAX_BYTES and left_out > sum(e.omitted_bytes for e in extents):
            what[-1] += " (the call's time limit)"
    indexed = sum(_bytes(d.text) for d in digests)
    whole = sum(e.bytes for e in extents)
    return f"\nIndexed {size(indexed)} of {size(whole)}: {', '.join(what)}."


def _printed(name: str, extent: Extent) -> str:
    return f"{name} {size(extent.bytes)} in {extent.lines:,} line{'' if extent.lines == 1 else 's'}"


def _cut_note(result: ExecResult, *, stdout_only: bool) -> str:
    """What a cut output's answer leaves out, and why the run stopped."""
    out, err = result.stdout_extent, result.stderr_extent
    parts = [_printed("stdout", out)]
    if err.bytes and not stdout_only:
        parts.append(_printed("stderr", err))
    printed = "; ".join(parts)
    if result.backgrounded:
        why = f"process backgrounded after {result.timeout_ms:.0f}ms — still running"
    elif result.timed_out:
        why = f"timed out after {result.timeout_ms:.0f}ms — partial output"
    elif result.capped:
        why = "output capped — process killed"
    else:
        why = "output too large to show"
    return f"_({why}: {printed}; its first and last lines are shown above, repeats collapsed)_"


# --------------------------------------------------------------------------- shaping


def _large(
    result: ExecResult,
    *,
    label: str,
    open_store: StoreOpener,
    intent: str | None,
    failed: bool,
    both: bool,
    syntax: Syntax,
) -> Shaped:
    """An output too large to show: its first and last lines, a note of what was left out,
    and a bounded digest of it indexed (under ``<label>:error`` when the run `failed`).
    `both`: the answer shows stdout and stderr, else stdout only."""
    budget = index_budget(result.deadline)
    streams = [(result.stdout, result.stdout_extent)]
    if both:
        streams.append((result.stderr, result.stderr_extent))
    share = budget // max(1, sum(1 for _, e in streams if e.bytes))
    from ctxmode.executor.digest import digest

    digests = [digest(text, extent, share) for text, extent in streams]
    previews = [preview(text, extent) for text, extent in streams]
    if both:
        # A run ctxmode stopped has no exit code of its own (the note says why it stopped;
        # the CLI exits 124 for both).
        stopped = result.timed_out or result.capped
        code = "" if stopped else f"Exit code: {result.exit_code}\n\n"
        shown = f"{code}stdout:\n{previews[0]}\n\nstderr:\n{previews[1]}"
        indexed = f"{code}stdout:\n{digests[0].text}\n\nstderr:\n{digests[1].text}"
    else:
        shown, indexed = previews[0], digests[0].text
    extents = [extent for _, extent in streams]
    whole = Extent(sum(e.bytes for e in extents), sum(e.lines for e in extents))
    index_label = f"{label}:error" if failed else label
    with open_store() as store:
        if intent or failed:
            view = intent_view(
                store, indexed, intent or ERROR_INTENT, index_label, whole=whole, syntax=syntax
            )
        else:
            view = pointer(store, indexed, label, syntax)
    note = _cut_note(result, stdout_only=not both)
    view += _index_note(digests, extents, budget)
    text = f"{shown.rstrip()}\n\n{note}\n\n{view}"
    return Shaped(clip(text), failed, index_label, _bytes(indexed), view)


def _indexable(output: str, deadline: Deadline | None) -> tuple[str, str]:
    """What to index of a whole (not cut) output, and the note saying how it differs."""
    budget = index_budget(deadline)
    extent = measured(output, None)
    from ctxmode.executor.digest import digest

    found = digest(output, extent, budget)
    return found.text, _index_note([found], [extent], budget)


def shape(
    result: ExecResult,
    *,
    label: str,
    open_store: StoreOpener,
    intent: str | None = None,
    timeout_text: str | None = None,
    syntax: Syntax = "mcp",
) -> Shaped:
    """The agent's view of `result`; large output goes to the store under `label`.

    `timeout_text` replaces the timeout messages (execute_file names its file there).
    Whatever the run printed, the answer is at most `ANSWER_MAX_BYTES`. `syntax`: how the
    answer tells the caller to search what was indexed.
    """
    intent = (intent or "").strip() or None
    ms = f"{result.timeout_ms:.0f}ms"
    out, err = result.stdout_extent, result.stderr_extent
    large = partial(
        _large, result, label=label, open_store=open_store, intent=intent, syntax=syntax
    )
    if result.timed_out:
        if timeout_text is not None:
            return Shaped(timeout_text, True)
        if result.stdout.strip():
            if out.cut or out.bytes > INDEX_MIN_BYTES or err.cut:
                return large(failed=False, both=err.cut)
            note = (
                f"_(process backgrounded after {ms} — still running)_"
                if result.backgrounded
                else f"_(timed out after {ms} — partial output shown above)_"
            )
            return Shaped(f"{result.stdout}\n\n{note}", False)
        stderr = preview(result.stderr, err)
        return Shaped(clip(f"Execution timed out after {ms}\n\nstderr:\n{stderr}"), True)
    if result.exit_code != 0:
        is_error, output = classify(result.language, result.exit_code, result.stdout, result.stderr)
        if out.cut or (err.cut and is_error):
            return large(failed=is_error, both=is_error)
        size = _bytes(output)
        error_label = f"{label}:error" if is_error else label
        if (intent and size > INTENT_MIN_BYTES) or size > INDEX_MIN_BYTES:
            indexed, note = _indexable(output, result.deadline)
            with open_store() as store:
                text = intent_view(
                    store,
                    indexed,
                    intent or ERROR_INTENT,
                    error_label,
                    whole=measured(output, None),
                    syntax=syntax,
                )
            text = clip(text + note)
            return Shaped(text, is_error, error_label, _bytes(indexed), text)
        return Shaped(output, is_error)
    if out.cut:
        return large(failed=False, both=False)
    output = result.stdout or "(no output)"
    size = _bytes(output)
    if (intent and size > INTENT_MIN_BYTES) or size > INDEX_MIN_BYTES:
        indexed, note = _indexable(output, result.deadline)
        with open_store() as store:
            if intent and size > INTENT_MIN_BYTES:
                view = intent_view(
                    store, indexed, intent, label, whole=measured(output, None), syntax=syntax
                )
            else:
                view = pointer(store, indexed, label, syntax)
        text = clip(view + note)
        return Shaped(text, False, label, _bytes(indexed), text)
    return Shaped(output, False)
