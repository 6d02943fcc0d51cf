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
"""

from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass

from ctxmode.executor import ExecResult
from ctxmode.store import ContentStore

INTENT_MIN_BYTES = 5_000
INDEX_MIN_BYTES = 102_400
INTENT_HITS = 5
PREVIEW_CHARS = 120
ERROR_INTENT = "errors failures exceptions"

# A fresh store (closed after use) or a shared one (a context that leaves it open).
StoreOpener = Callable[[], AbstractContextManager[ContentStore]]


@dataclass(frozen=True)
class Shaped:
    """The text for the agent, whether it reports an error, and what was indexed."""

    text: str
    is_error: bool
    indexed_label: str | None = None
    indexed_bytes: int = 0


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


def intent_view(store: ContentStore, output: str, intent: str, label: str) -> str:
    """Index `output` under `label` (plain text) and list the sections matching `intent`."""
    report = store.index_text(output, label, kind="plain")
    result = store.search(intent, limit=INTENT_HITS, source=label, exact_source=True, refresh=False)
    terms = store.distinctive_terms(label)
    lines = output.count("\n") + (0 if output.endswith("\n") else 1)
    out = [f'Indexed {report.chunks} sections from "{label}" into knowledge base.']
    if result.hits:
        out.append(
            f'{len(result.hits)} sections matched "{intent}" ({lines} lines, '
            f"{_kb(_bytes(output))}):"
        )
        out.append("")
        words = [w for w in intent.lower().split() if len(w) > 2]
        out.extend(
            f"  - {hit.title}: {_best_line(hit.snippet, words)[:PREVIEW_CHARS]}"
            for hit in result.hits
        )
    else:
        out.append(
            f'No sections matched intent "{intent}" in {lines}-line output ({_kb(_bytes(output))}).'
        )
    if terms:
        out += ["", "Searchable terms: " + ", ".join(terms)]
    out += ["", f'Use ctx_search(queries: [...], source: "{label}") to read any section.']
    return "\n".join(out)


def pointer(store: ContentStore, output: str, label: str) -> str:
    """Index a large successful output (markdown) and say how to search it."""
    report = store.index_text(output, label, kind="markdown")
    return (
        f"Indexed {report.chunks} sections ({report.code_chunks} with code) from: {label}\n"
        f'Use ctx_search(queries: ["..."]) to query this content. '
        f'Use source: "{label}" to scope results.'
    )


def shape(
    result: ExecResult,
    *,
    label: str,
    open_store: StoreOpener,
    intent: str | None = None,
    timeout_text: str | None = None,
) -> Shaped:
    """The agent's view of `result`; large output goes to the store under `label`.

    `timeout_text` replaces the timeout messages (execute_file names its file there).
    """
    intent = (intent or "").strip() or None
    ms = f"{result.timeout_ms:.0f}ms"
    if result.timed_out:
        if timeout_text is not None:
            return Shaped(timeout_text, True)
        if result.stdout.strip():
            note = (
                f"_(process backgrounded after {ms} — still running)_"
                if result.backgrounded
                else f"_(timed out after {ms} — partial output shown above)_"
            )
            return Shaped(f"{result.stdout}\n\n{note}", False)
        return Shaped(f"Execution timed out after {ms}\n\nstderr:\n{result.stderr}", True)
    if result.exit_code != 0:
        is_error, output = classify(result.language, result.exit_code, result.stdout, result.stderr)
        size = _bytes(output)
        error_label = f"{label}:error" if is_error else label
        if intent and size > INTENT_MIN_BYTES:
            with open_store() as store:
                text = intent_view(store, output, intent, error_label)
            return Shaped(text, is_error, error_label, size)
        if size > INDEX_MIN_BYTES:
            with open_store() as store:
                text = intent_view(store, output, ERROR_INTENT, error_label)
            return Shaped(text, is_error, error_label, size)
        return Shaped(output, is_error)
    output = result.stdout or "(no output)"
    size = _bytes(output)
    if intent and size > INTENT_MIN_BYTES:
        with open_store() as store:
            return Shaped(intent_view(store, output, intent, label), False, label, size)
    if size > INDEX_MIN_BYTES:
        with open_store() as store:
            return Shaped(pointer(store, output, label), False, label, size)
    return Shaped(output, False)
