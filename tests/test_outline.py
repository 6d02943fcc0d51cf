"""What an output is and its key lines, on the real output of real runners (pytest,
unittest, mypy, node:test, cargo test run here as subprocesses) and on the documented
formats of the runners a test machine may lack (jest, vitest, go test, tsc, rustc, eslint)."""

import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ctxmode.outline import LINE_MAX, outline, render, whole_line

BUGGY_PY = textwrap.dedent(
    """
    import unittest

    def total(xs):
        return sum(xs) + 1

    class TotalTests(unittest.TestCase):
        def test_empty(self):
            self.assertEqual(total([]), 0, "an empty list sums to zero")

        def test_pair(self):
            self.assertEqual(total([2, 3]), 5)

        def test_fine(self):
            self.assertTrue(True)

        def test_raises(self):
            {}["missing-key"]

    def test_plain_assert():
        assert total([1]) == 1, "one element is itself"
    """
)


def _run(argv: list[str], cwd: Path) -> str:
    proc = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=120)
    return proc.stdout + proc.stderr


def _tests_file(tmp_path: Path) -> Path:
    (tmp_path / "test_total.py").write_text(BUGGY_PY)
    return tmp_path


def test_pytest_count_line_and_every_failure_with_its_assertion(tmp_path):
    text = _run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], _tests_file(tmp_path)
    )
    found = outline(text)
    assert found is not None and found.kind == "pytest"
    assert found.counts and "4 failed, 1 passed" in found.counts[0]
    shown = render(found, 4000)
    for test in (
        "TotalTests::test_empty",
        "TotalTests::test_pair",
        "TotalTests::test_raises",
        "test_total.py::test_plain_assert",
    ):
        assert test in shown
    assert "an empty list sums to zero" in shown
    assert "KeyError: 'missing-key'" in shown
    assert "one element is itself" in shown
    assert "test_total.py:" in shown  # where it failed


def test_unittest_failures_show_the_exception_before_the_frame(tmp_path):
    text = _run([sys.executable, "-m", "unittest", "test_total"], _tests_file(tmp_path))
    found = outline(text)
    assert found is not None and found.kind == "unittest"
    assert any(c.startswith("Ran 4 tests") for c in found.counts)
    assert any("FAILED (failures=2, errors=1)" in c for c in found.counts)
    by_header = {item.header: item.details for item in found.items}
    empty = by_header["FAIL: test_empty (test_total.TotalTests.test_empty)"]
    assert empty[0].startswith("AssertionError: 1 != 0")
    assert any(d.startswith('File "') and "in test_empty" in d for d in empty)
    assert by_header["ERROR: test_raises (test_total.TotalTests.test_raises)"][0].startswith(
        "KeyError"
    )


def test_mypy_errors_with_code_and_location(tmp_path):
    (tmp_path / "typed.py").write_text("def f(x: int) -> str:\n    return x\n\n\ny: int = 'text'\n")
    mypy = Path(sys.executable).with_name("mypy")
    if not mypy.exists():
        pytest.skip("mypy is not installed")
    text = _run([str(mypy), "--no-incremental", "typed.py"], tmp_path)
    found = outline(text)
    assert found is not None
    shown = render(found, 2000)
    assert "typed.py:2: error: Incompatible return value type" in shown
    assert "[return-value]" in shown and "[assignment]" in shown
    assert "Found 2 errors in 1 file" in shown


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
@pytest.mark.parametrize("reporter", ["tap", "spec"])
def test_node_test_failures_with_their_assertion(tmp_path, reporter):
    (tmp_path / "a.test.mjs").write_text(
        "import test from 'node:test';\nimport assert from 'node:assert/strict';\n"
        "test('adds numbers', () => { assert.equal(1 + 1, 3); });\n"
        "test('passes', () => {});\n"
        "test.describe('suite', () => { test('inner fails', () => {"
        " assert.deepEqual({a: 1}, {a: 2}); }); });\n"
        "test('throws', () => { throw new TypeError('bad thing happened'); });\n"
    )
    text = _run(["node", "--test", f"--test-reporter={reporter}"], tmp_path)
    found = outline(text)
    assert found is not None and found.kind == "node:test"
    assert "fail 3" in found.counts[0]
    shown = render(found, 3000)
    for name in ("adds numbers", "inner fails", "throws"):
        assert name in shown
    assert "2 !== 3" in shown and "bad thing happened" in shown
    assert "node:internal" not in shown  # the runner's own frames are noise


@pytest.mark.skipif(shutil.which("cargo") is None, reason="cargo is not installed")
def test_cargo_test_failures_with_their_panic(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "Cargo.toml").write_text(
        '[package]\nname = "demo"\nversion = "0.1.0"\nedition = "2021"\n'
    )
    (tmp_path / "src" / "lib.rs").write_text(
        "pub fn add(a: i32, b: i32) -> i32 { a + b + 1 }\n"
        "#[cfg(test)]\nmod tests {\n    use super::*;\n"
        "    #[test] fn adds() { assert_eq!(add(1, 2), 3); }\n"
        "    #[test] fn ok() { assert!(true); }\n}\n"
    )
    text = _run(["cargo", "test", "-q", "--offline"], tmp_path)
    found = outline(text)
    assert found is not None and found.kind == "cargo test"
    assert any("1 passed; 1 failed" in c for c in found.counts)
    shown = render(found, 2000)
    assert "FAILED tests::adds" in shown and "left: 4" in shown and "right: 3" in shown


GO_TEST = """=== RUN   TestAdd
    add_test.go:9: Add(1, 2) = 4; want 3
--- FAIL: TestAdd (0.00s)
=== RUN   TestSub
--- PASS: TestSub (0.00s)
FAIL
FAIL\texample.com/calc\t0.002s
"""

JEST = """ FAIL  src/sum.test.js
  ● math › adds two numbers

    expect(received).toBe(expected) // Object.is equality

    Expected: 3
    Received: 4

      2 | test('adds two numbers', () => {
    > 3 |   expect(sum(1, 2)).toBe(3);
        |                     ^
      4 | });

      at Object.toBe (src/sum.test.js:3:21)

Test Suites: 1 failed, 1 total
Tests:       1 failed, 2 passed, 3 total
"""

VITEST = """ ❯ src/sum.test.ts (2 tests | 1 failed) 4ms
   × math > adds two numbers 3ms

⎯⎯⎯⎯⎯⎯⎯ Failed Tests 1 ⎯⎯⎯⎯⎯⎯⎯

 FAIL  src/sum.test.ts > math > adds two numbers
AssertionError: expected 4 to be 3 // Object.is equality
 ❯ src/sum.test.ts:5:22

 Test Files  1 failed (1)
      Tests  1 failed | 1 passed (2)
"""

TSC = """src/app.ts(3,7): error TS2322: Type 'string' is not assignable to type 'number'.
src/app.ts(9,1): error TS2304: Cannot find name 'undefinedThing'.

Found 2 errors in the same file, starting at: src/app.ts:3
"""

RUSTC = """error[E0308]: mismatched types
 --> src/main.rs:4:18
  |
4 |     let x: i32 = "five";
  |            ---   ^^^^^^ expected `i32`, found `&str`

error: could not compile `demo` (bin "demo") due to 1 previous error
"""

ESLINT = """
/home/dev/app/src/index.js
  3:7   error  'unused' is assigned a value but never used  no-unused-vars
  9:12  error  'fetchData' is not defined                   no-undef

✖ 2 problems (2 errors, 0 warnings)
"""


@pytest.mark.parametrize(
    ("text", "kind", "needed"),
    [
        (
            GO_TEST,
            "go test",
            ["--- FAIL: TestAdd", "Add(1, 2) = 4; want 3", "FAIL\texample.com/calc"],
        ),
        (
            JEST,
            "jest",
            [
                "math › adds two numbers",
                "Expected: 3",
                "Received: 4",
                "Tests:       1 failed, 2 passed, 3 total",
                "src/sum.test.js:3:21",
            ],
        ),
        (
            VITEST,
            "vitest",
            ["math > adds two numbers", "expected 4 to be 3", "Tests  1 failed | 1 passed (2)"],
        ),
        (
            TSC,
            "tsc",
            ["src/app.ts(3,7): error TS2322", "src/app.ts(9,1): error TS2304", "Found 2 errors"],
        ),
        (
            RUSTC,
            "compiler",
            ["error[E0308]: mismatched types", "--> src/main.rs:4:18", "could not compile"],
        ),
        (
            ESLINT,
            "compiler",
            [
                "/home/dev/app/src/index.js 3:7   error  'unused'",
                "no-undef",
                "✖ 2 problems (2 errors, 0 warnings)",
            ],
        ),
    ],
)
def test_documented_formats(text, kind, needed):
    found = outline(text)
    assert found is not None and found.kind == kind
    shown = render(found, 3000)
    for fact in needed:
        assert fact in shown


def test_a_diff_shows_every_changed_line_by_hunk(tmp_path):
    repo = tmp_path
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    lines = [f"line {i}\n" for i in range(200)]
    (repo / "f.txt").write_text("".join(lines))
    subprocess.run(["git", "add", "."], cwd=repo, check=True)
    subprocess.run(
        ["git", "-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qm", "x"],
        cwd=repo,
        check=True,
    )
    lines[10] = "line ten changed\n"
    lines[150] = "line 150 changed\n"
    (repo / "f.txt").write_text("".join(lines))
    text = _run(["git", "diff"], repo)
    found = outline(text)
    assert found is not None and found.kind == "diff" and len(found.items) == 2
    shown = render(found, 1000)
    for fact in ("-line 10", "+line ten changed", "-line 150", "+line 150 changed"):
        assert fact in shown
    assert "f.txt @@ -8,7 +8,7 @@" in shown


def test_log_errors_grouped_by_kind_with_their_first_line():
    lines = [f"2026-01-01T00:00:{i % 60:02d} INFO req={i:08x} ok" for i in range(5000)]
    lines[1234] = "2026-01-01T00:00:01 ERROR db: connection refused to 10.0.0.5:5432"
    lines[3000] = "2026-01-01T00:00:02 ERROR db: connection refused to 10.0.0.6:5432"
    lines[4000] = "2026-01-01T00:00:03 FATAL worker 7 out of memory"
    found = outline("\n".join(lines))
    assert found is not None and found.kind == "log"
    shown = render(found, 1000)
    assert "line 1235: 2026-01-01T00:00:01 ERROR db: connection refused" in shown
    assert "(2 lines of this kind)" in shown
    assert "FATAL worker 7 out of memory" in shown


def test_items_are_whole_or_counted_never_cut():
    text = (
        "".join(
            f"FAILED tests/test_x.py::test_{i} - AssertionError: {'x' * 50}\n" for i in range(200)
        )
        + "200 failed in 1.00s\n"
    )
    found = outline(text)
    assert found is not None
    shown = render(found, 2000)
    assert len(shown.encode()) <= 2000
    assert shown.startswith("200 failed in 1.00s")
    for line in shown.splitlines()[1:-1]:
        assert line.startswith(("FAILED tests/test_x.py::test_", "  AssertionError: "))
        assert not line.startswith("FAILED") or line.rstrip().endswith(tuple("0123456789"))
    assert shown.splitlines()[-1].startswith("[… ") and "more failures not shown" in shown


def test_a_very_long_line_says_how_much_of_it_is_left_out():
    line = "E" * (LINE_MAX * 3)
    shown = whole_line(line)
    assert shown.startswith("E" * LINE_MAX) and f"{LINE_MAX * 2} more bytes of this line" in shown


def test_plain_output_is_no_known_kind():
    assert outline("hello\nworld\n" * 100) is None


def test_unittest_failures_with_a_docstring_summary_are_listed(tmp_path):
    """unittest prints a test's docstring summary between its header and the dashes; such
    failures were left out of the outline."""
    (tmp_path / "test_doc.py").write_text(
        textwrap.dedent(
            '''
            import unittest

            class Described(unittest.TestCase):
                def test_summed(self):
                    """Make sure the sum is right"""
                    self.assertEqual(1 + 1, 3)

                def test_plain(self):
                    self.assertEqual("a", "b")
            '''
        )
    )
    text = _run([sys.executable, "-m", "unittest", "test_doc"], tmp_path)
    found = outline(text)
    assert found is not None and found.kind == "unittest"
    by_header = {item.header: item.details for item in found.items}
    assert set(by_header) == {
        "FAIL: test_summed (test_doc.Described.test_summed)",
        "FAIL: test_plain (test_doc.Described.test_plain)",
    }
    assert by_header["FAIL: test_summed (test_doc.Described.test_summed)"][0] == (
        "AssertionError: 2 != 3"
    )


def test_a_failure_shows_its_exception_then_where_it_failed():
    """An item's first lines are what failed and where; a long comparison under it is what
    the byte cap trims first."""
    text = (
        "=" * 70
        + "\nFAIL: test_long (pkg.tests.T.test_long)\n"
        + "-" * 70
        + "\nTraceback (most recent call last):\n"
        '  File "/src/pkg/tests.py", line 12, in test_long\n'
        "    self.assertEqual(actual, expected)\n"
        "AssertionError: Lists differ: [1, 2] != [1, 3]\n\n"
        + "".join(f"detail line {i} " + "x" * 60 + "\n" for i in range(8))
        + "\n"
        + "-" * 70
        + "\nRan 3 tests in 0.001s\n\nFAILED (failures=1)\n"
    )
    found = outline(text)
    assert found is not None
    details = found.items[0].details
    assert details[0] == "AssertionError: Lists differ: [1, 2] != [1, 3]"
    assert details[1] == 'File "/src/pkg/tests.py", line 12, in test_long'
    shown = render(found, 10_000)
    assert 'File "/src/pkg/tests.py", line 12' in shown
    assert "more lines]" in shown  # the comparison's tail is counted, not shown
