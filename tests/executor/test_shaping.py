"""What of a run reaches the agent, and what goes into the knowledge base
(spec §12 items 11-13; §1.1 result mapping, §1.12, §2.8, §2.9)."""

from pathlib import Path

import pytest

from ctxmode.executor import ExecResult
from ctxmode.executor.shaping import INDEX_MIN_BYTES, INTENT_MIN_BYTES, classify, shape
from ctxmode.store import ContentStore


@pytest.fixture
def kb(tmp_path) -> Path:
    return tmp_path / "kb.db"


def shaped(result: ExecResult, kb: Path, label: str | None = None, **kw):
    return shape(
        result,
        label=label or f"execute:{result.language}",
        open_store=lambda: ContentStore(kb),
        **kw,
    )


def made(language="python", stdout="", stderr="", exit_code=0, **kw) -> ExecResult:
    return ExecResult(language, language, stdout, stderr, exit_code, 30_000.0, 1.0, **kw)


def sources(kb: Path) -> list[str]:
    if not kb.exists():
        return []
    with ContentStore(kb) as store:
        return [s.label for s in store.sources()]


# ------------------------------------------------------------------ classification


def error_text(code: int, stdout: str, stderr: str) -> str:
    return f"Exit code: {code}\n\nstdout:\n{stdout}\n\nstderr:\n{stderr}"


def test_shell_exit_1_with_stdout_is_a_soft_failure(run):
    result = run("shell", "echo 'partial match'\nexit 1")
    assert result.exit_code == 1
    assert classify("shell", result.exit_code, result.stdout, result.stderr) == (
        False,
        "partial match\n",
    )


@pytest.mark.parametrize(
    ("language", "code", "exit_code"),
    [
        ("shell", "exit 1", 1),
        ("shell", "echo '   '\necho oops >&2\nexit 1", 1),
        ("shell", "echo some output\nexit 2", 2),
        ("shell", "ctxmode_no_such_command_xyz", 127),
        ("python", "print('printed first')\nraise SystemExit(1)", 1),
        ("python", "raise ValueError('boom')", 1),
        ("python", "import sys\nsys.exit(42)", 42),
    ],
)
def test_other_non_zero_exits_are_errors_with_code_stdout_and_stderr(
    run, kb, language, code, exit_code
):
    result = run(language, code)
    assert result.exit_code == exit_code
    is_error, text = classify(language, result.exit_code, result.stdout, result.stderr)
    assert is_error is True
    assert text == error_text(exit_code, result.stdout, result.stderr)
    view = shaped(result, kb)
    assert view.is_error is True and view.text == text and view.indexed_label is None


def test_command_not_found_explains_itself_in_stderr(run):
    result = run("shell", "ctxmode_no_such_command_xyz")
    _, text = classify("shell", result.exit_code, result.stdout, result.stderr)
    assert text.startswith("Exit code: 127\n\nstdout:\n")
    assert "ctxmode_no_such_command_xyz" in text and "not found" in text


def test_soft_failure_is_returned_verbatim_and_not_an_error(run, kb):
    result = run("shell", "grep -c needle /dev/null || echo 'no needle found'; exit 1")
    view = shaped(result, kb)
    assert view.is_error is False
    assert view.text == result.stdout


# ------------------------------------------------------------------ sizes


def test_small_output_is_returned_unchanged_and_nothing_is_indexed(run, kb):
    result = run("python", "print('small and useful')")
    view = shaped(result, kb)
    assert view.text == "small and useful\n"
    assert view.is_error is False and view.indexed_label is None
    assert sources(kb) == []


def test_empty_output_reads_no_output(run, kb):
    view = shaped(run("python", "pass"), kb)
    assert view.text == "(no output)" and view.is_error is False


def test_large_successful_output_becomes_a_pointer_and_is_searchable(run, kb):
    code = (
        "for section in range(40):\n"
        "    print(f'## Section {section}')\n"
        "    for i in range(30):\n"
        "        print(f'record {section}-{i} status nominal payload ' + 'x' * 60)\n"
        "print('## Finale')\nprint('the quokka checksum is 4242')\n"
    )
    result = run("python", code)
    assert len(result.stdout.encode()) > INDEX_MIN_BYTES
    view = shaped(result, kb)
    assert view.is_error is False
    assert view.indexed_label == "execute:python"
    assert view.indexed_bytes == len(result.stdout.encode())
    assert view.text.startswith("Indexed ")
    assert "from: execute:python" in view.text
    assert 'source: "execute:python"' in view.text
    assert "record 20-1 " not in view.text and len(view.text) < 2000  # a glimpse, not the run
    with ContentStore(kb) as store:
        hits = store.search("quokka checksum", source="execute:python", exact_source=True).hits
    assert hits and "4242" in hits[0].snippet
    assert hits[0].source == "execute:python"


def test_output_just_under_the_index_threshold_is_returned_inline(kb):
    stdout = "y" * (INDEX_MIN_BYTES - 1)
    view = shaped(made(stdout=stdout), kb)
    assert view.text == stdout and view.indexed_label is None


def intent_output() -> str:
    services = ["billing", "inventory", "shipping", "payments", "catalogue", "ledger"]
    blocks = [
        f"worker {i} started for {services[i % 6]}\nworker {i} processed {i * 10} jobs\n"
        f"worker {i} idle\n"
        for i in range(120)
    ]
    blocks.insert(
        30,
        "database connection refused on port 5432\nretrying database connection\n"
        "database connection pool exhausted\n",
    )
    return "\n".join(blocks)


def test_intent_over_5kb_returns_the_matches_alone_never_the_full_output(kb):
    stdout = intent_output()
    assert len(stdout.encode()) > INTENT_MIN_BYTES
    view = shaped(made(stdout=stdout), kb, intent="database connection")
    assert view.is_error is False
    assert view.indexed_label == "execute:python"
    assert "sections matched" in view.text
    assert "database connection refused on port 5432" in view.text
    assert "Searchable terms:" not in view.text  # it matched: no raw head, tail or terms
    assert "worker 119" not in view.text and "worker 0 started" not in view.text
    assert len(view.text) < 600
    assert sources(kb) == ["execute:python"]


def test_intent_that_matches_nothing_says_so(kb):
    view = shaped(made(stdout=intent_output()), kb, intent="zeppelin")
    assert 'No sections matched intent "zeppelin"' in view.text
    terms = view.text.split("Searchable terms: ")[1].split("\n")[0].split(", ")
    assert "billing" in terms and not any(ch.isdigit() for t in terms for ch in t)


def test_intent_on_small_output_returns_it_verbatim(kb):
    view = shaped(made(stdout="tiny\n"), kb, intent="anything")
    assert view.text == "tiny\n" and view.indexed_label is None


def test_blank_intent_is_no_intent(kb):
    stdout = intent_output()
    view = shaped(made(stdout=stdout), kb, intent="   ")
    assert view.text == stdout and view.indexed_label is None


def test_failing_run_with_intent_is_indexed_under_an_error_label(kb):
    stdout = intent_output()
    view = shaped(made(stdout=stdout, stderr="fatal", exit_code=3), kb, intent="database")
    assert view.is_error is True
    assert view.indexed_label == "execute:python:error"
    assert "database connection refused on port 5432" in view.text
    assert "worker 119 processed 1190 jobs" not in view.text


def test_large_failing_output_searches_for_errors_instead_of_pointing(kb):
    lines = [f"test case {i} passed" for i in range(6000)]
    lines[4000] = "test case 4000 FAILED with exceptions: AssertionError expected 1 got 2"
    view = shaped(made(stdout="\n".join(lines), exit_code=1), kb)
    assert view.is_error is True
    assert view.indexed_label == "execute:python:error"
    assert "test case 4000" in view.text
    assert "test case 10 passed" not in view.text


def test_execute_file_labels_use_the_path_as_given(kb):
    view = shaped(made(stdout="z" * (INDEX_MIN_BYTES + 10)), kb, label="file:logs/app.log")
    assert view.indexed_label == "file:logs/app.log"
    assert "from: file:logs/app.log" in view.text


# ------------------------------------------------------------------ timeouts


def test_timeout_with_output_is_partial_not_an_error(kb):
    view = shaped(made(stdout="halfway\n", exit_code=1, timed_out=True), kb)
    assert view.is_error is False
    assert view.text == "halfway\n\n\n_(timed out after 30000ms — partial output shown above)_"


def test_backgrounded_run_says_it_is_still_running(kb):
    view = shaped(made(stdout="started\n", timed_out=True, backgrounded=True), kb)
    assert view.is_error is False
    assert "_(process backgrounded after 30000ms — still running)_" in view.text


def test_timeout_with_whitespace_only_output_is_an_error(kb):
    view = shaped(made(stdout="  \n", stderr="slow", exit_code=1, timed_out=True), kb)
    assert view.is_error is True
    assert view.text == "Execution timed out after 30000ms\n\nstderr:\nslow"


def test_timeout_text_replaces_the_timeout_messages(kb):
    view = shaped(
        made(stdout="halfway\n", exit_code=1, timed_out=True),
        kb,
        timeout_text="Timed out processing app.log after 30000ms",
    )
    assert view.is_error is True
    assert view.text == "Timed out processing app.log after 30000ms"


def build_output(warnings: int) -> str:
    """A compiler's output: `warnings` warnings around two errors (rustc's format)."""
    lines = []
    for i in range(warnings):
        lines += [
            f"warning: unused variable: `unused_{i}`",
            f"  --> src/lib.rs:{i + 1}:30",
            "   |",
            f"{i + 1:>3} | pub fn helper_{i}(x: i64) -> i64 {{ let unused_{i} = x; x }}",
            "   |                              ^^^^^^^^ help: prefix it with an underscore",
            "",
        ]
        if i == warnings // 2:
            lines += ["error[E0308]: mismatched types", "  --> src/lib.rs:10:48", ""]
    lines += [
        "error[E0425]: cannot find value `sum` in this scope",
        "  --> src/lib.rs:24:37",
        "",
        "error: could not compile `ledger` (lib) due to 2 previous errors",
    ]
    return "\n".join(lines) + "\n"


def test_a_mid_sized_build_output_is_answered_by_its_errors(kb):
    """Two errors among forty warnings: the errors with their locations, the exit code,
    not 10 KB of warnings; all of it indexed."""
    stdout = build_output(40)
    assert INTENT_MIN_BYTES < len(stdout.encode()) < INDEX_MIN_BYTES
    view = shaped(made("shell", stdout=stdout, exit_code=101), kb)
    assert view.is_error is True
    assert view.text.startswith("Exit code: 101\n")
    for needed in (
        "error[E0308]: mismatched types",
        "src/lib.rs:10:48",
        "error[E0425]: cannot find value `sum` in this scope",
        "src/lib.rs:24:37",
        "could not compile `ledger`",
    ):
        assert needed in view.text
    assert "unused_7" not in view.text
    assert len(view.text.encode()) * 4 < len(stdout.encode())
    assert sources(kb) == ["execute:shell:error"]


def test_a_mid_sized_output_of_no_known_kind_is_returned_whole(kb):
    stdout = "".join(f"row {i}: all good here\n" for i in range(400))
    assert len(stdout.encode()) > INTENT_MIN_BYTES
    view = shaped(made("shell", stdout=stdout), kb)
    assert view.text == stdout and view.indexed_label is None


def test_a_build_with_few_warnings_is_returned_whole(kb):
    """Key lines that are most of the output save nothing: the output as printed."""
    stdout = build_output(0)
    view = shaped(made("shell", stdout=stdout, exit_code=101), kb)
    assert "stdout:\n" + stdout in view.text and view.indexed_label is None


@pytest.mark.parametrize(
    ("code", "said"),
    [
        (137, "Exit code: 137 (killed by SIGKILL: out of memory"),
        (143, "Exit code: 143 (ended by SIGTERM)"),
        (2, "Exit code: 2\n"),
    ],
)
def test_an_exit_by_signal_says_which(kb, code, said):
    """A run the kernel's OOM killer ended reads as more than a bare 137."""
    view = shaped(made("python", stdout="partial\n", exit_code=code), kb)
    assert view.is_error and view.text.startswith(said)
