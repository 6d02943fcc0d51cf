"""What of a run reaches the agent's context, and what goes into the knowledge base.

| run                                   | returned                               | indexed     |
|---------------------------------------|----------------------------------------|-------------|
| small output                          | the output                             | nothing     |
| `intent` given, output > 5,000 bytes  | the sections matching it               | all of it   |
| output > 102,400 bytes                | its key lines (`outline`), the pointer | all of it   |
| test run, diagnostics, diff or        | the same                               | all of it   |
| traceback over 5,000 bytes, its key   |                                        |             |
| lines a quarter of it or less         |                                        |             |
| failure, output > 102,400 bytes       | the same, under ``<label>:error``      | all of it   |

"All of it": what the run printed, read back from its files when the capture's window left
part of it out, up to `INDEX_MAX_BYTES` (the answer says so first past that). The key
lines are chosen by what the output is (a test run's failures, a diff's changed lines,
compiler errors, log errors); an output of no known kind gets the pointer and a glimpse.

Non-zero exits are classified first: a shell exit 1 that printed something is grep-style
"no match", not an error; anything else is an error showing the exit code, stdout and
stderr. A timeout with output returns that output marked as partial.

How to read what was indexed is said in the caller's own syntax: a ``ctx_search(...)`` call
for an agent on MCP, a ``ctxmode search ...`` command line for the CLI (`Syntax`).
"""

import re
import shlex
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, replace
from functools import partial
from typing import TYPE_CHECKING, Literal

from ctxmode.executor import ExecResult
from ctxmode.executor.capture import Extent, measured, size
from ctxmode.outline import whole_line

if TYPE_CHECKING:  # a small output is shaped without loading the store or the digester
    from ctxmode.store import ContentStore

INTENT_MIN_BYTES = 5_000
INDEX_MIN_BYTES = 102_400
INTENT_HITS = 5
PREVIEW_CHARS = 120
INDEX_MAX_BYTES = 64 * 1024 * 1024  # the most of one output that is indexed (the ceiling)
PREVIEW_BYTES = 1024  # of each stream, in the answer about an unrecognised large output
OUTLINE_BYTES = 6 * 1024  # the key lines of a recognised output (failures, hunks, errors)
ANSWER_MAX_BYTES = INDEX_MIN_BYTES + 16 * 1024
CONDENSED_RATIO = 4  # a mid-sized output is answered by its key lines when 4x their size

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
    return (
        True,
        f"Exit code: {exit_code}{_signal(exit_code)}\n\nstdout:\n{stdout}\n\nstderr:\n{stderr}",
    )


def _signal(exit_code: int) -> str:
    """What an exit code above 128 (or below 0) says: the signal that ended the run."""
    number = -exit_code if exit_code < 0 else exit_code - 128 if 128 < exit_code < 192 else 0
    if not number:
        return ""
    import signal

    try:
        name = signal.Signals(number).name
    except ValueError:
        return f" (ended by signal {number})"
    if name == "SIGKILL":
        return " (killed by SIGKILL: out of memory, or a kill from outside the run)"
    return f" (ended by {name})"


def _intent_words(intent: str) -> list[str]:
    """The intent's words as a line may hold them: each word or its base form (``errors``
    matches ``ERROR``)."""
    from ctxmode.store.query import base_form

    words = [w for w in re.findall(r"\w+", intent.lower()) if len(w) > 2]
    return [base_form(w) or w for w in words]


def _best_line(text: str, words: list[str]) -> str:
    """The line of `text` holding the most intent words (the first non-blank one if none)."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip() and ln.strip() != "\u2026"]
    if not lines:
        return ""
    return max(lines, key=lambda ln: sum(1 for w in words if w in ln.lower()))


def _line_number(output: str, line: str, start: int | None) -> int | None:
    """The number of the line of `output` reading `line`, at or after line `start`."""
    if start is None or not line:
        return start
    at = output.find(line)
    while at >= 0:
        number = output.count("\n", 0, at) + 1
        if number >= start:
            return number
        at = output.find(line, at + 1)
    return start


_READABLE = re.compile(r"^[^\W\d]+(?:[_.-][^\W\d]+)*$")
_HEXISH = re.compile(r"^[0-9a-f]+$")


def readable_terms(terms: list[str], top: int = 20) -> list[str]:
    """The terms an agent could search for: words, not ids, hashes or numbers."""
    return [t for t in terms if _READABLE.match(t) and not _HEXISH.match(t)][:top]


def output_kind(text: str) -> str:
    """How a run's output is chunked, the same in every call: markdown when it has
    headings, else plain text."""
    return "markdown" if re.search(r"^#{1,6} \S", text[:200_000], re.M) else "plain"


def intent_view(
    store: "ContentStore",
    output: str,
    intent: str,
    label: str,
    *,
    whole: Extent | None = None,
    syntax: Syntax = "mcp",
) -> tuple[str, bool]:
    """Index `output` under `label` and list the sections matching `intent`; and whether
    any did.

    `whole`: the size of the run's output when `output` is a digest of it."""
    report = store.index_text(output, label, kind=output_kind(output))
    result = store.search(intent, limit=INTENT_HITS, source=label, exact_source=True, refresh=False)
    whole = whole or measured(output, None)
    out = [f'Indexed {report.chunks} sections from "{label}" into knowledge base.']
    if result.hits:
        out.append(
            f'{len(result.hits)} sections matched "{intent}" ({whole.lines:,} lines, '
            f"{_kb(whole.bytes)}):"
        )
        out.append("")
        words = _intent_words(intent)
        for hit in result.hits:
            line = _best_line(hit.snippet, words)
            title = hit.title if hit.title.strip() not in ("", line) else ""
            shown = f"{title[:PREVIEW_CHARS]}: {line}" if title else line
            number = _line_number(output, line, hit.start_line)
            out.append(f"  - L{number}: {whole_line(shown)}")
    else:
        out.append(
            f'No sections matched intent "{intent}" in {whole.lines:,}-line output '
            f"({_kb(whole.bytes)})."
        )
        terms = readable_terms(store.distinctive_terms(label))
        if terms:
            out += ["", "Searchable terms: " + ", ".join(terms)]
    out += ["", search_hint(label, syntax, section=True)]
    return "\n".join(out), bool(result.hits)


def pointer(store: "ContentStore", output: str, label: str, syntax: Syntax = "mcp") -> str:
    """Index a large output and say how to search it."""
    report = store.index_text(output, label, kind=output_kind(output))
    return (
        f"Indexed {report.chunks} sections ({report.code_chunks} with code) from: {label}\n"
        + search_hint(label, syntax)
    )


# --------------------------------------------------------------------------- bounds


def preview(text: str, extent: Extent, budget: int = PREVIEW_BYTES) -> str:
    """`text` as is when it is all there and small, else its digest at `budget` bytes."""
    if not extent.cut and extent.bytes <= INDEX_MIN_BYTES:
        return text
    from ctxmode.executor.digest import digest

    return digest(text, extent, budget).text


def key_lines(text: str, extent: Extent, *, logs: bool = True) -> str:
    """What the agent needs first of a large output: its outline when it is a known kind
    (test run, diff, diagnostics, traceback, log errors), else a short preview."""
    from ctxmode.outline import outline, render

    found = outline(text, logs=logs)
    if found is None:
        return ""
    return f"[{found.kind}]\n{render(found, OUTLINE_BYTES)}"


def _condensable(output: str) -> bool:
    """Whether a mid-sized output (`INTENT_MIN_BYTES` to `INDEX_MIN_BYTES`) is better
    answered by its key lines: a test run, diagnostics, a diff or a traceback whose key
    lines are at most a quarter of it (a build's three errors among forty warnings)."""
    size = _bytes(output)
    if size <= INTENT_MIN_BYTES or size > INDEX_MIN_BYTES:
        return False
    shown = key_lines(output, measured(output, None), logs=False)
    return bool(shown) and _bytes(shown) * CONDENSED_RATIO <= size


def clip(text: str, limit: int = ANSWER_MAX_BYTES) -> str:
    """`text` cut to `limit` bytes (on a line boundary where one is near), saying so."""
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= limit:
        return text
    head = data[:limit].decode("utf-8", "ignore")
    cut = head.rfind("\n", 0, len(head))
    head = head[: cut + 1] if cut > len(head) // 2 else head + "\n"
    return f"{head}[… answer cut at {size(limit)}: {size(len(data) - len(head))} more]"


def ceiling_note(left_out: int, syntax: Syntax) -> str:
    """The first line of an answer about an output indexed only in part ("" if whole)."""
    if not left_out:
        return ""
    how = (
        "write it to a file and index that with ctxmode index FILE"
        if syntax == "cli"
        else "write it to a file in the run and index that with ctx_index(path: ...)"
    )
    return (
        f"Note: the last {size(left_out)} of this output were not indexed (at most "
        f"{size(INDEX_MAX_BYTES)} of one output are); to reach them, {how}.\n\n"
    )


def _printed(name: str, extent: Extent) -> str:
    return f"{name} {size(extent.bytes)} in {extent.lines:,} line{'' if extent.lines == 1 else 's'}"


def _cut_note(result: ExecResult, *, stdout_only: bool) -> str:
    """How much a large output printed, and why the run stopped."""
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
    return f"_({why}: {printed})_"


# --------------------------------------------------------------------------- shaping


def _stream(result: ExecResult, name: str) -> tuple[str, Extent, int]:
    """All of one stream that is indexed, its extent, and the bytes beyond the ceiling."""
    text, extent = (
        (result.stdout, result.stdout_extent)
        if name == "stdout"
        else (result.stderr, result.stderr_extent)
    )
    whole = result.whole(name, INDEX_MAX_BYTES)
    if whole is not None:
        return whole[0], extent, whole[1]
    if extent.bytes > INDEX_MAX_BYTES or extent.cut:  # no file kept: the capture is all
        return text, extent, extent.omitted_bytes
    return text, extent, 0


def _answer(
    open_store: StoreOpener,
    indexed: str,
    whole: Extent,
    label: str,
    intent: str | None,
    *,
    syntax: Syntax,
) -> tuple[str, str]:
    """(what comes before the knowledge-base part, the knowledge-base part) of the answer
    about an output that is indexed: with an intent that matches, the matches alone; else
    the output's key lines, then where it was indexed."""
    with open_store() as store:
        if intent:
            view, matched = intent_view(store, indexed, intent, label, whole=whole, syntax=syntax)
            if matched:
                return "", view
        else:
            view = pointer(store, indexed, label, syntax)
    shown = key_lines(indexed, whole, logs=True)
    if not shown:  # an output of no known kind: where it is, then a glimpse of it
        return "", f"{view}\n\nIts first and last lines:\n{preview(indexed, whole)}"
    return shown, view


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
    """An output too large to show: all of it indexed (under ``<label>:error`` when the
    run `failed`), and its key lines or the sections matching `intent`.
    `both`: the answer is about stdout and stderr, else stdout only."""
    streams = [_stream(result, "stdout")]
    if both:
        streams.append(_stream(result, "stderr"))
    if both:
        # A run ctxmode stopped has no exit code of its own (the note says why it stopped;
        # the CLI exits 124 for both).
        stopped = result.timed_out or result.capped
        code = "" if stopped else f"Exit code: {result.exit_code}\n\n"
        indexed = f"{code}stdout:\n{streams[0][0]}\n\nstderr:\n{streams[1][0]}"
    else:
        indexed = streams[0][0]
    whole = Extent(sum(e.bytes for _, e, _ in streams), sum(e.lines for _, e, _ in streams))
    index_label = f"{label}:error" if failed else label
    shown, view = _answer(open_store, indexed, whole, index_label, intent, syntax=syntax)
    first = ceiling_note(sum(left for _, _, left in streams), syntax)
    note = _cut_note(result, stdout_only=not both)
    body = f"{shown.rstrip()}\n\n{note}\n\n" if shown else f"{note}\n\n"
    text = f"{first}{body}{view}"
    return Shaped(clip(text), failed, index_label, _bytes(indexed), first + view)


def _indexed_whole(
    output: str,
    label: str,
    open_store: StoreOpener,
    intent: str | None,
    *,
    failed: bool,
    syntax: Syntax,
) -> Shaped:
    """An output the run's capture holds whole, too large (or, with an intent, large
    enough) to show: indexed, with its key lines or the sections matching `intent`."""
    whole = measured(output, None)
    left_out = max(0, whole.bytes - INDEX_MAX_BYTES)
    indexed = output
    if left_out:
        indexed = output.encode("utf-8", "replace")[:INDEX_MAX_BYTES].decode("utf-8", "ignore")
        indexed = indexed[: indexed.rfind("\n") + 1] or indexed
    shown, view = _answer(open_store, indexed, whole, label, intent, syntax=syntax)
    first = ceiling_note(left_out, syntax)
    text = clip(f"{first}{shown.rstrip()}\n\n{view}" if shown else f"{first}{view}")
    return Shaped(text, failed, label, _bytes(indexed), text)


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
        if (intent and size > INTENT_MIN_BYTES) or size > INDEX_MIN_BYTES or _condensable(output):
            shaped = _indexed_whole(
                output, error_label, open_store, intent, failed=is_error, syntax=syntax
            )
            if is_error:  # the exit code first: what ran failed
                shaped = replace(shaped, text=f"Exit code: {result.exit_code}\n\n{shaped.text}")
            return shaped
        return Shaped(output, is_error)
    if out.cut:
        return large(failed=False, both=False)
    output = result.stdout or "(no output)"
    size = _bytes(output)
    if (intent and size > INTENT_MIN_BYTES) or size > INDEX_MIN_BYTES or _condensable(output):
        return _indexed_whole(output, label, open_store, intent, failed=False, syntax=syntax)
    return Shaped(output, False)
