"""What comes back after a compaction, through the real ``ctxmode hook claude-code …``
subprocesses a host runs: one test per way a long real session lost what it needed (an
item cut in the middle, an error that did not say what failed, a TodoWrite list, the
early facts of a long session, files edited from a subdirectory cwd), and the whole
injection, routing block included, within 4 KB."""

import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from ctxmode.session.db import SessionDB
from ctxmode.session.events import Event
from ctxmode.session.failures import FIXED, STILL_FAILING
from ctxmode.session.where import session_db_path

SESSION = "5d2c7a10-0b1e-4c55-9f3a-6e8d1f2a3b4c"
HOOK_TIMEOUT_S = 60  # generous for a busy machine; not a performance bound
INJECTION_BYTES = 4096
ROUTING_TAG = "<context_window_protection>"


class Host:
    """A Claude Code project whose hook calls are real ``ctxmode hook`` subprocesses."""

    def __init__(self, root: Path) -> None:
        self.project = root / "project"
        self.project.mkdir(parents=True)
        (self.project / ".git").mkdir()
        # ctxmode registered for the project: the routing block goes in with the snapshot.
        mcp = {"mcpServers": {"ctxmode": {"command": "ctxmode", "args": ["serve"]}}}
        (self.project / ".mcp.json").write_text(json.dumps(mcp), encoding="utf-8")
        home = root / "home"
        home.mkdir()
        drop = ("CLAUDE", "CTXMODE_", "CODEX_", "GEMINI_", "XDG_", "CONTEXT_MODE_")
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
        self.env |= {
            "HOME": str(home),
            "CTXMODE_DIR": str(root / "data"),
            "CLAUDE_PROJECT_DIR": str(self.project),
        }
        self.transcript = home / f"{SESSION}.jsonl"
        self.transcript.write_text("", encoding="utf-8")

    def hook(self, event: str, payload: dict[str, Any], cwd: Path | None = None) -> str:
        """Run one hook; its additionalContext ("" when none)."""
        name = {
            "sessionstart": "SessionStart",
            "userpromptsubmit": "UserPromptSubmit",
            "posttooluse": "PostToolUse",
            "posttoolusefailure": "PostToolUseFailure",
            "precompact": "PreCompact",
        }[event]
        stdin = {
            "session_id": SESSION,
            "transcript_path": str(self.transcript),
            "cwd": str(cwd or self.project),
            "hook_event_name": name,
            **payload,
        }
        proc = subprocess.run(
            [sys.executable, "-m", "ctxmode", "hook", "claude-code", event],
            input=json.dumps(stdin).encode(),
            capture_output=True,
            env=self.env,
            cwd=cwd or self.project,
            timeout=HOOK_TIMEOUT_S,
        )
        assert proc.returncode == 0, proc.stderr.decode()
        out = proc.stdout.decode()
        answer = json.loads(out) if out.strip() else {}
        return str((answer.get("hookSpecificOutput") or {}).get("additionalContext") or "")

    def start(self) -> None:
        self.hook("sessionstart", {"source": "startup"})

    def prompt(self, text: str) -> None:
        self.hook("userpromptsubmit", {"prompt": text})

    def tool(self, name: str, tool_input: dict[str, Any], response: Any = "", **kw: Any) -> None:
        self.hook("posttooluse", {"tool_name": name, "tool_input": tool_input,
                                  "tool_response": response}, **kw)  # fmt: skip

    def bash(self, command: str, output: str, *, failed: bool = False) -> None:
        tool_input = {"command": command}
        if failed:
            self.hook("posttoolusefailure", {"tool_name": "Bash", "tool_input": tool_input,
                                             "error": f"Exit code 1\n{output}"})  # fmt: skip
        else:
            self.tool("Bash", tool_input, {"stdout": output, "stderr": "", "interrupted": False})

    def compact(self) -> str:
        """PreCompact, then the SessionStart(compact) that follows: what is injected."""
        self.hook("precompact", {"trigger": "auto", "custom_instructions": ""})
        return self.hook("sessionstart", {"source": "compact"})


def snapshot_of(context: str) -> ET.Element:
    found = re.search(r"<session_resume.*</session_resume>", context, re.S)
    assert found, context
    return ET.fromstring(found.group(0))


def section(context: str, tag: str) -> list[str]:
    node = snapshot_of(context).find(tag)
    assert node is not None, context
    return [line for line in (node.text or "").strip().splitlines() if line]


def within_budget(context: str) -> None:
    assert ROUTING_TAG in context  # the routing block comes back after compaction
    assert len(context.encode("utf-8")) <= INJECTION_BYTES


@pytest.fixture
def host(tmp_path: Path) -> Host:
    h = Host(tmp_path)
    h.start()
    return h


PYTEST_FAIL = """\
..F.F
=================================== FAILURES ===================================
____________________________ test_split_evenly ____________________________

    def test_split_evenly():
>       assert Money(100).split(3) == [Money(34), Money(33), Money(33)]
E       AssertionError: assert [Money(33), Money(33), Money(33)] == [Money(34), Money(33), Money(33)]

tests/test_money.py:12: AssertionError
____________________________ test_parse_negative ____________________________

    def test_parse_negative():
>       assert parse("-1.50") == Money(-150)
E       ValueError: invalid literal for int() with base 10: '-1'

tests/test_money.py:20: ValueError
=========================== short test summary info ============================
FAILED tests/test_money.py::test_split_evenly - AssertionError: assert [Money(33), Money(33...
FAILED tests/test_money.py::test_parse_negative - ValueError: invalid literal for int() wi...
2 failed, 3 passed in 0.05s
"""  # noqa: E501

MYPY_FAIL = """\
ledger/store.py:41: error: Argument 1 to "save" has incompatible type "str"; expected "Account"  [arg-type]
ledger/store.py:57: error: Missing return statement  [return]
Found 2 errors in 1 file (checked 6 source files)
"""  # noqa: E501


def test_every_file_item_is_whole_or_left_out(host):
    deep = "services/billing/adapters/outbound/persistence/sqlalchemy/repositories"
    paths = [f"{deep}/account_repository_{i:02d}.py" for i in range(14)]
    for rel in paths:
        host.tool("Write", {"file_path": str(host.project / rel), "content": "x = 1\n"})
    context = host.compact()
    within_budget(context)
    shown = section(context, "files")
    listed = [line for line in shown if not line.startswith("For full details")]
    assert listed
    for line in listed:
        path = line.split(" (")[0]
        assert "…" not in path or path.startswith("…/")  # a shortened path keeps its end whole
        assert path.endswith(".py"), line
        assert any(rel.endswith(path.lstrip("…/")) for rel in paths), line


def test_errors_name_the_failing_tests_and_the_compiler_codes(host):
    host.prompt("Fix Money.split so the cents add up.")
    host.bash("python -m pytest -q tests/test_money.py", PYTEST_FAIL, failed=True)
    host.bash("mypy ledger", MYPY_FAIL, failed=True)
    host.bash("python -m pytest -q tests/test_money.py::test_split_evenly", "1 passed in 0.01s")
    context = host.compact()
    within_budget(context)
    errors = "\n".join(section(context, "errors"))
    assert f"{FIXED}" in errors and "test_split_evenly" in errors
    assert "test_parse_negative" in errors and STILL_FAILING in errors
    assert "ValueError: invalid literal" in errors, errors
    assert "[arg-type]" in errors and 'incompatible type "str"' in errors
    fixed_line = next(line for line in errors.splitlines() if "test_split_evenly" in line)
    assert FIXED in fixed_line and "test_parse_negative" not in fixed_line


def test_a_todowrite_list_comes_back_open_items_first(host):
    old = [{"content": "Add Money.split helper", "status": "in_progress", "activeForm": "Adding"}]
    new = [
        {"content": "Add Money.split helper", "status": "completed", "activeForm": "Adding"},
        {"content": "Document split in docs/usage.md", "status": "in_progress", "activeForm": "D"},
        {"content": "Tag release 0.2.0", "status": "pending", "activeForm": "Tagging"},
    ]
    # The list as the response states it (oldTodos/newTodos), the input naming none.
    host.tool("TodoWrite", {}, {"oldTodos": old, "newTodos": new})
    context = host.compact()
    within_budget(context)
    assert section(context, "task_state")[:3] == [
        "[in_progress] Document split in docs/usage.md",
        "[pending] Tag release 0.2.0",
        "[completed] Add Money.split helper",
    ]


def test_an_early_failure_and_its_fix_outlive_a_long_routine_session(host):
    host.prompt("Add persistence. Decision: use sqlite, not postgres.")
    host.bash("python -m pytest -q tests/test_money.py", PYTEST_FAIL, failed=True)
    host.bash("python -m pytest -q tests/test_money.py", "5 passed in 0.04s")
    # Then a long stretch of routine reads and searches (written straight to the session
    # database: what is under test is what the compaction keeps, not how reads are recorded).
    db = session_db_path(host.project, Path(host.env["CTXMODE_DIR"]), remember=False)
    with SessionDB(db) as sdb:
        routine = [
            Event("file_read", str(host.project / f"pkg/module_{i % 40}.py")) for i in range(900)
        ]
        sdb.add_events(SESSION, routine, source_hook="post_tool", platform="claude-code")
    host.tool("Read", {"file_path": str(host.project / "README.md")}, "")
    context = host.compact()
    within_budget(context)
    errors = "\n".join(section(context, "errors"))
    assert "test_split_evenly" in errors and FIXED in errors
    assert "sqlite, not postgres" in context


def test_files_edited_from_a_package_cwd_are_shown_from_the_project_root(host):
    pkg = host.project / "ledger"
    pkg.mkdir()
    host.tool("Write", {"file_path": str(pkg / "csv_import.py"), "content": "x = 1\n"}, cwd=pkg)
    host.tool("Edit", {"file_path": "money.py", "old_string": "a", "new_string": "b"}, cwd=pkg)
    host.bash("cd ledger && git status", "nothing to commit")
    context = host.compact()
    within_budget(context)
    paths = [line.split(" (")[0] for line in section(context, "files")]
    assert "ledger/csv_import.py" in paths
    assert "ledger/money.py" in paths


NODE_TAP_FAIL = """\
TAP version 13
# Subtest: slugify lowercases and joins words
ok 1 - slugify lowercases and joins words
  ---
  duration_ms: 5.76
  ...
# Subtest: slugify strips punctuation
not ok 2 - slugify strips punctuation
  ---
  duration_ms: 1.78
  failureType: 'testCodeFailure'
  error: |-
    Expected values to be strictly equal:
    + 'hello,-world!'
    - 'hello-world'
  code: 'ERR_ASSERTION'
  ...
# Subtest: truncate stays within the limit
not ok 3 - truncate stays within the limit
  ---
  duration_ms: 1.02
  error: |-
    Expected values to be strictly equal:

    6 !== 5
  ...
1..3
# tests 3
# suites 0
# pass 1
# fail 2
# cancelled 0
# skipped 0
# todo 0
# duration_ms 585.80
"""

UNITTEST_FAIL = """\
F.E
======================================================================
ERROR: test_unknown_sku (tests.test_inventory.InventoryTest.test_unknown_sku)
Unknown SKUs count as zero
----------------------------------------------------------------------
Traceback (most recent call last):
  File "{project}/tests/test_inventory.py", line 9, in test_unknown_sku
    self.assertEqual(count("nope"), 0)
KeyError: 'nope'

======================================================================
FAIL: test_bulk_discount (tests.test_pricing.PricingTest.test_bulk_discount)
----------------------------------------------------------------------
Traceback (most recent call last):
  File "{project}/tests/test_pricing.py", line 11, in test_bulk_discount
    self.assertEqual(line_total(100, 10), 900)
AssertionError: 1000 != 900

----------------------------------------------------------------------
Ran 3 tests in 0.001s

FAILED (failures=1, errors=1)
"""

CARGO_BUILD_FAIL = """\
   Compiling tally v0.1.0 ({project})
error[E0308]: mismatched types
  --> src/duration.rs:12:20
   |
12 |     let secs: u64 = "zero";
   |               ---   ^^^^^^ expected `u64`, found `&str`

For more information about this error, try `rustc --explain E0308`.
error: could not compile `tally` (lib) due to 1 previous error
"""

CARGO_TEST_FAIL = """\
   Compiling tally v0.1.0 ({project})
    Finished `test` profile [unoptimized + debuginfo] target(s) in 0.52s
     Running unittests src/lib.rs (target/debug/deps/tally-1a2b3c)

running 2 tests
test duration::tests::parses_minutes ... ok
test duration::tests::parses_hours_and_minutes ... FAILED

failures:

---- duration::tests::parses_hours_and_minutes stdout ----

thread 'duration::tests::parses_hours_and_minutes' panicked at src/duration.rs:40:9:
assertion `left == right` failed: 1h30m should be 5400 seconds
  left: Some(1860)
 right: Some(5400)
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace


failures:
    duration::tests::parses_hours_and_minutes

test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s
"""


def test_node_test_failures_are_named_and_followed_to_their_fix(host):
    host.bash("node --test", NODE_TAP_FAIL, failed=True)
    fixed_one = NODE_TAP_FAIL.replace("not ok 3", "ok 3").replace("# fail 2", "# fail 1")
    host.bash("node --test", fixed_one, failed=True)
    errors = "\n".join(section(host.compact(), "errors"))
    still = next(line for line in errors.splitlines() if STILL_FAILING in line)
    assert "slugify strips punctuation" in still and "truncate" not in still
    fixed = next(line for line in errors.splitlines() if FIXED in line)
    assert "truncate stays within the limit" in fixed


def test_unittest_failures_are_named_with_paths_relative_to_the_project(host):
    output = UNITTEST_FAIL.replace("{project}", str(host.project))
    host.bash("python -m unittest", output, failed=True)
    context = host.compact()
    within_budget(context)
    errors = "\n".join(section(context, "errors"))
    assert "tests.test_inventory.InventoryTest.test_unknown_sku" in errors
    assert "tests.test_pricing.PricingTest.test_bulk_discount" in errors
    assert str(host.project) not in context  # the project's own paths, relative
    host.bash("python -m unittest", "...\nRan 3 tests in 0.001s\n\nOK\n")
    errors = "\n".join(section(host.compact(), "errors"))
    assert FIXED in errors and "tests.test_pricing.PricingTest.test_bulk_discount" in errors


def test_a_compile_error_is_named_by_file_and_code_and_a_later_build_fixes_it(host):
    host.bash("cargo build --offline", CARGO_BUILD_FAIL.replace("{project}", "."), failed=True)
    host.bash("cargo test --offline", CARGO_TEST_FAIL.replace("{project}", "."), failed=True)
    host.bash("cargo build --offline", "    Finished `dev` profile in 0.3s\n")
    errors = "\n".join(section(host.compact(), "errors"))
    fixed = next(line for line in errors.splitlines() if "cargo build" in line)
    assert FIXED in fixed and "src/duration.rs:12:20" in fixed and "E0308" in fixed
    still = next(line for line in errors.splitlines() if "cargo test" in line)
    assert STILL_FAILING in still and "duration::tests::parses_hours_and_minutes" in still
    assert "1h30m should be 5400 seconds" in still  # the panic's message, not where it was
    assert "0 ignored" not in still and "finished in" not in still


def test_a_diagnostic_fixed_between_two_failing_runs_is_said_fixed(host):
    host.bash("mypy ledger", MYPY_FAIL, failed=True)
    one_left = "\n".join(line for line in MYPY_FAIL.splitlines() if "[arg-type]" not in line)
    host.bash("mypy ledger", one_left.replace("2 errors", "1 error"), failed=True)
    errors = "\n".join(section(host.compact(), "errors"))
    still = next(line for line in errors.splitlines() if STILL_FAILING in line)
    fixed = next(line for line in errors.splitlines() if FIXED in line)
    assert "[return]" in still and "[arg-type]" not in still
    assert "ledger/store.py:41 [arg-type]" in fixed
