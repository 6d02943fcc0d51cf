"""The recorded sessions: what the fake model makes the host do, and what must come back.

Each ``Session`` is a scratch project (``files``), a list of turns (one host invocation each:
a user prompt and the tool calls the fake model answers it with, in order), and the facts
the post-compaction injection must (``expect``, by class) and must not (``leaks``) hold.
The facts were written with the scripts, before any ctxmode output was looked at.

Paths in tool inputs use ``{project}`` (the project root) and ``{port}`` (the fake API's
port, for the curl); relative paths are relative to the host's cwd (``Session.cwd``).

A fact is a string (a substring of the injection, case and white space ignored) or a list
whose parts must all sit on one line of it; a part that is itself a list is a set of
alternatives (any one will do).
"""

from __future__ import annotations

import hashlib
import random
import re
from dataclasses import dataclass, field
from typing import Any

import ledger_project as lp
import stockroom_project as sp
import tally_project as tp
import textkit_project as tk

Fact = str | list[str | list[str]]
FIXED = ["fixed", "passing", "passed", "resolved", "now pass", "green"]
FAILING = ["still failing", "unresolved", "open failure", "failing:", "fails"]
DONE = ["completed", "done", "[x]", "✓", "✔"]
DOING = ["in_progress", "in progress", "[~]", "[>]", "doing", "active", "current"]
PENDING = ["pending", "[ ]", "todo", "to do", "not started", "open"]
CLASSES = ("files", "failures", "todos", "early", "errors_detail")
GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "Ledger Dev",
    "GIT_AUTHOR_EMAIL": "dev@example.invalid",
    "GIT_COMMITTER_NAME": "Ledger Dev",
    "GIT_COMMITTER_EMAIL": "dev@example.invalid",
}


@dataclass
class Turn:
    """One host invocation: the user's prompt and the tool calls that answer it."""

    prompt: str
    steps: list[dict[str, Any]] = field(default_factory=list)
    final: str = "Done."


@dataclass
class Session:
    name: str
    host: str
    description: str
    files: dict[str, str]
    turns: list[Turn]
    expect: dict[str, list[Fact]]
    leaks: list[Fact] = field(default_factory=list)
    secrets: list[str] = field(default_factory=list)
    cwd: str = ""  # the host's cwd, relative to the project root
    global_setup: bool = False  # ``ctxmode setup --global`` (needed when cwd is a subdir)
    summary: str = "The user and the assistant worked on the project."


# --------------------------------------------------------------------------- steps


def bash(command: str, expect: str | None = None, description: str = "Run a command") -> dict:
    """A Bash call; `expect` "ok" or "fail" is checked against the recording."""
    step: dict[str, Any] = {
        "tool": "Bash",
        "input": {"command": command, "description": description},
    }
    if expect:
        step["expect"] = expect
    return step


def read(path: str) -> dict:
    return {"tool": "Read", "input": {"file_path": path}}


def write(path: str, content: str) -> dict:
    return {"tool": "Write", "input": {"file_path": path, "content": content}}


def edit(path: str, old: str, new: str) -> dict:
    return {"tool": "Edit", "input": {"file_path": path, "old_string": old, "new_string": new}}


def grep(pattern: str, path: str | None = None, mode: str = "files_with_matches") -> dict:
    tool_input: dict[str, Any] = {"pattern": pattern, "output_mode": mode}
    if path:
        tool_input["path"] = path
    return {"tool": "Grep", "input": tool_input}


def todos(*items: tuple[str, str]) -> dict:
    """A TodoWrite call; each item (content, status)."""
    listed = [
        {"content": text, "status": status, "activeForm": text[0].upper() + text[1:] + " (working)"}
        for text, status in items
    ]
    return {"tool": "TodoWrite", "input": {"todos": listed}}


# --------------------------------------------------------------------------- checks


def source_of(call: dict[str, Any]) -> str | None:
    """A SessionStart call's source (startup, resume, compact, clear), else None."""
    payload = call.get("payload")
    if call.get("event") != "sessionstart" or not isinstance(payload, dict):
        return None
    return str(payload.get("source", ""))


SHELL = {"claude-code": "Bash", "gemini-cli": "run_shell_command"}
OTHER_TOOLS = {
    "claude-code": ("Write", "Edit", "Read", "TodoWrite", "Grep"),
    "gemini-cli": ("write_file", "replace", "read_file", "grep_search"),
}


def _post_calls(calls: list[dict[str, Any]], tool: str) -> list[dict[str, Any]]:
    events = ("posttooluse", "posttoolusefailure", "aftertool")
    return [
        c
        for c in calls
        if c["event"] in events
        and isinstance(c["payload"], dict)
        and c["payload"].get("tool_name") == tool
    ]


def outcome(call: dict[str, Any]) -> str:
    """ "ok" or "fail" for a recorded shell call: Claude Code's PostToolUseFailure; Gemini
    CLI's non-zero ``Exit Code:`` (or ``error``) inside the tool response."""
    if call["event"] == "posttoolusefailure":
        return "fail"
    response = call["payload"].get("tool_response")
    if call["event"] == "aftertool" and isinstance(response, dict):
        code = re.search(r"Exit Code: (-?\d+)", str(response.get("llmContent", "")))
        if response.get("error") or (code and code.group(1) != "0"):
            return "fail"
    return "ok"


def check_outcomes(spec: Session, calls: list[dict[str, Any]]) -> list[str]:
    """Scripted shell calls whose recorded outcome differs from the script's `expect`, and
    scripted calls that never ran (or failed)."""
    shell = SHELL[spec.host]
    wanted = [s for t in spec.turns for s in t.steps if s["tool"] == shell]
    seen = _post_calls(calls, shell)
    problems = []
    if len(seen) != len(wanted):
        problems.append(f"{len(wanted)} {shell} calls scripted, {len(seen)} recorded")
    for step, call in zip(wanted, seen, strict=False):  # a shortfall is reported above
        got = outcome(call)
        if step.get("expect") and step["expect"] != got:
            problems.append(
                f"{step['input']['command'][:60]!r}: expected {step['expect']}, got {got}"
            )
    for tool in OTHER_TOOLS[spec.host]:
        n_wanted = sum(1 for t in spec.turns for s in t.steps if s["tool"] == tool)
        n_seen = sum(1 for c in _post_calls(calls, tool) if c["event"] != "posttoolusefailure")
        if n_seen != n_wanted:
            problems.append(f"{n_wanted} {tool} calls scripted, {n_seen} succeeded")
    return problems


def _strings(value: Any) -> list[str]:
    """Every string inside `value` (keys included)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (k, *_strings(v))]
    return []


def _squash(text: str) -> str:
    return " ".join(text.split()).casefold()


def check_grounded(spec: Session, calls: list[dict[str, Any]]) -> list[str]:
    """Fact parts (not the alternative word lists) that no recorded payload holds: a
    misspelt path or test id in the script would make a fact nobody could recall."""
    seen = _squash("\n".join(_strings([c["payload"] for c in calls])))
    missing = []
    for cls, facts in spec.expect.items():
        for fact in facts:
            parts = [fact] if isinstance(fact, str) else [p for p in fact if isinstance(p, str)]
            missing += [f"{cls}: {p!r} in no payload" for p in parts if _squash(p) not in seen]
    return missing


# --------------------------------------------------------------------------- shared parts

STILL = ["still failing", "still fails", "unresolved", "not fixed"]
CALLED_FIXED = ["fixed", "resolved", "now pass"]
RESUME = Turn("Continue where we left off.", [bash("git status --short", "ok")], "Picking up.")
COMPACT = Turn("/compact")
SUMMARY = "The user and the assistant worked on the ledger package."


def planted(name: str) -> tuple[list[str], list[dict[str, Any]]]:
    """Three fake secrets for session `name` and the commands that carry them: a bearer
    token in a curl header, an AWS secret key in an export, a token in a git remote URL."""
    tag = hashlib.sha256(name.encode()).hexdigest()
    bearer, aws, ghp = (
        f"sk-test-{tag[:24]}",
        f"wJalrXUt{tag[24:44]}EXAMPLEKEY",
        f"ghp_{tag[44:64]}Zq9",
    )
    steps = [
        bash(
            f'curl -s -H "Authorization: Bearer {bearer}" http://127.0.0.1:{{port}}/v1/health',
            "ok",
            "Check the billing API is up",
        ),
        bash(
            f"export AWS_SECRET_ACCESS_KEY={aws} && python -c "
            "\"import os; print(len(os.environ['AWS_SECRET_ACCESS_KEY']))\"",
            "ok",
            "Configure the S3 export credentials",
        ),
        bash(
            f"git remote add origin https://ledger-bot:{ghp}@git.example.invalid/acme/ledger.git"
            " && git remote -v",
            "ok",
            "Add the origin remote",
        ),
    ]
    return [bearer, aws, ghp], steps


def routine(count: int, seed: int, files: list[str]) -> list[dict[str, Any]]:
    """`count` routine calls (reads, searches, ``git status``, ``ls``), reproducible by `seed`."""
    rng = random.Random(seed)
    patterns = ["def ", "Money", "import", "cents", "class ", "return", "assert"]
    steps = []
    for _ in range(count):
        roll = rng.random()
        if roll < 0.45:
            steps.append(read("{project}/" + rng.choice(files)))
        elif roll < 0.65:
            mode = rng.choice(["files_with_matches", "content"])
            steps.append(
                grep(rng.choice(patterns), "{project}/" + rng.choice(["ledger", "tests"]), mode)
            )
        elif roll < 0.80:
            steps.append(bash("git status --short", "ok", "Show the working tree status"))
        elif roll < 0.92:
            steps.append(bash(f"ls {rng.choice(['ledger', 'tests', '.'])}", "ok", "List files"))
        else:
            steps.append(bash("git log --oneline -3", "ok", "Show recent commits"))
    return steps


def _session(name: str, turns: list[Turn], **kw: Any) -> Session:
    """A session whose first turn also plants its secrets, then /compact and a resume."""
    secrets, steps = planted(name)
    first = Turn(turns[0].prompt, turns[0].steps + steps, turns[0].final)
    leaks = kw.pop("leaks", [])
    return Session(
        name=name,
        turns=[first, *turns[1:], COMPACT, RESUME],
        secrets=secrets,
        leaks=leaks,
        summary=SUMMARY,
        **kw,
    )


# --------------------------------------------------------------------------- a: many files


def a1_files_subdir() -> Session:
    """Eight new files and four edits, the host started in ``ledger/`` (global setup): paths
    relative to that subdirectory, with ``../``, and absolute."""
    p = lp
    turn1 = Turn(
        "Add CSV import, a report module and a small CLI to the ledger package. Keep money in"
        " integer cents everywhere.",
        [
            read("money.py"),
            write("csv_import.py", p.CSV_IMPORT),
            write("{project}/ledger/report.py", p.REPORT),
            write("formatting.py", p.FORMATTING),
            write("cli.py", p.CLI_SUMMARY),
            write("{project}/ledger/data/sample.csv", p.SAMPLE_CSV),
            write("../tests/test_csv_import.py", p.TEST_CSV_IMPORT),
            write("{project}/tests/test_report.py", p.TEST_REPORT),
            write("{project}/docs/usage.md", p.USAGE_DOC),
            bash("python -m pytest -q ../tests", "ok", "Run the test suite"),
            edit("money.py", *p.EDIT_MONEY_NEG),
            read("{project}/ledger/accounts.py"),
            edit("{project}/ledger/accounts.py", *p.EDIT_ACCOUNTS_NEG),
            edit("cli.py", *p.EDIT_CLI_USAGE),
            edit("../tests/test_report.py", *p.EDIT_TEST_REPORT),
            bash("python -m pytest -q ../tests", "ok", "Run the test suite"),
            bash("PYTHONPATH=.. python -m ledger.cli data/sample.csv", "ok", "Try the CLI"),
        ],
        "CSV import, report and CLI are in place.",
    )
    turn2 = Turn(
        "Also document the CLI in the README.",
        [read("../README.md"), edit("../README.md", *p.EDIT_README_CLI)],
        "README updated.",
    )
    files = [
        "ledger/csv_import.py", "ledger/report.py", "ledger/formatting.py", "ledger/cli.py",
        "ledger/data/sample.csv", "tests/test_csv_import.py", "tests/test_report.py",
        "docs/usage.md", "ledger/money.py", "ledger/accounts.py", "README.md",
    ]  # fmt: skip
    return _session(
        "a1-files-subdir",
        [turn1, turn2],
        host="claude-code",
        description=a1_files_subdir.__doc__ or "",
        files=lp.base(),
        cwd="ledger",
        global_setup=True,
        expect={"files": files},
    )


def a2_files_root() -> Session:
    """Seven new files and four edits from the project root, relative and absolute paths."""
    p = lp
    turn1 = Turn(
        "Add monthly budgets with category rules, plus a seed script and docs.",
        [
            write("ledger/budget.py", p.BUDGET),
            write("{project}/ledger/categories.py", p.CATEGORIES),
            write("ledger/rules.py", p.RULES),
            write("{project}/tests/test_budget.py", p.TEST_BUDGET),
            write("tests/test_rules.py", p.TEST_RULES),
            write("{project}/docs/budget.md", p.BUDGET_DOC),
            write("scripts/seed_budget.py", p.SEED_BUDGET),
            edit("ledger/rules.py", *p.EDIT_RULES_TRAVEL),
            read("{project}/ledger/__init__.py"),
            edit("{project}/ledger/__init__.py", *p.EDIT_INIT_EXPORTS),
            read("pyproject.toml"),
            edit("pyproject.toml", *p.EDIT_PYPROJECT_VERSION),
            bash("python -m pytest -q", "ok", "Run the test suite"),
            bash("python -m mypy ledger scripts", "ok", "Type-check"),
            bash("PYTHONPATH=. python scripts/seed_budget.py", "ok", "Run the seed script"),
        ],
        "Budgets, rules and the seed script are in place.",
    )
    turn2 = Turn(
        "Point the README at the budget docs.",
        [read("README.md"), edit("README.md", *p.EDIT_README_BUDGET)],
        "Done.",
    )
    files = [
        "ledger/budget.py", "ledger/categories.py", "ledger/rules.py", "tests/test_budget.py",
        "tests/test_rules.py", "docs/budget.md", "scripts/seed_budget.py", "ledger/__init__.py",
        "pyproject.toml", "README.md",
    ]  # fmt: skip
    return _session(
        "a2-files-root",
        [turn1, turn2],
        host="claude-code",
        description=a2_files_root.__doc__ or "",
        files=lp.base(),
        expect={"files": files},
    )


# --------------------------------------------------------------------------- b: fail, then fixed


def b1_pytest_fixed() -> Session:
    """Three real pytest failures in ledger/money.py, fixed in two rounds, suite green."""
    p = lp
    fails = [
        "tests/test_money.py::test_add_rejects_other_currency",
        "tests/test_money.py::test_split_keeps_total",
        "tests/test_money.py::test_str_pads_cents",
    ]
    turn1 = Turn(
        "The money tests fail since the last refactor. Find out why and fix ledger/money.py.",
        [
            bash("python -m pytest -q", "fail", "Run the test suite"),
            read("ledger/money.py"),
            edit("ledger/money.py", *p.FIX_SPLIT),
            bash("python -m pytest -q tests/test_money.py", "fail", "Run the money tests"),
            edit("ledger/money.py", *p.FIX_STR),
            edit("ledger/money.py", *p.FIX_ADD),
            bash("python -m pytest -q", "ok", "Run the test suite"),
            bash("git diff --stat", "ok", "Show the change"),
        ],
        "All three failures are fixed; the suite passes.",
    )
    turn2 = Turn(
        "Commit it.",
        [bash('git add -A && git commit -qm "money: fix split, padding, currency check"', "ok")],
        "Committed.",
    )
    return _session(
        "b1-pytest-fixed",
        [turn1, turn2],
        host="claude-code",
        description=b1_pytest_fixed.__doc__ or "",
        files=lp.with_bugs(p.BUG_SPLIT, p.BUG_STR, p.BUG_ADD),
        expect={"files": ["ledger/money.py"], "failures": [[f, FIXED] for f in fails]},
        leaks=[[f, STILL] for f in fails],
    )


def b2_mypy_fixed() -> Session:
    """Three mypy errors in ledger/report.py ([return-value], [arg-type], [attr-defined]),
    fixed in two rounds until mypy is clean."""
    p = lp
    turn1 = Turn(
        "Get mypy clean on the ledger package; CI runs `python -m mypy ledger`.",
        [
            bash("python -m mypy ledger", "fail", "Type-check the package"),
            read("ledger/report.py"),
            edit("ledger/report.py", *p.FIX_RETURN_VALUE),
            bash("python -m mypy ledger", "fail", "Type-check the package"),
            edit("ledger/report.py", *p.FIX_ARG_TYPE),
            edit("ledger/report.py", *p.FIX_ATTR_DEFINED),
            bash("python -m mypy ledger", "ok", "Type-check the package"),
            bash("python -m pytest -q", "ok", "Run the test suite"),
        ],
        "mypy is clean.",
    )
    codes = ["return-value", "arg-type", "attr-defined"]
    return _session(
        "b2-mypy-fixed",
        [turn1],
        host="claude-code",
        description=b2_mypy_fixed.__doc__ or "",
        files=lp.base() | {"ledger/report.py": p.REPORT_MYPY_BUGS},
        expect={
            "files": ["ledger/report.py"],
            "failures": [["ledger/report.py", c] for c in codes] + [[c, FIXED] for c in codes],
        },
        leaks=[[c, STILL] for c in codes],
    )


# --------------------------------------------------------------------------- c: still failing


def c1_pytest_still_failing() -> Session:
    """Two pytest failures: one fixed, the other (a refund test) still failing at compaction
    after a wrong fix."""
    p = lp
    fixed = "tests/test_money.py::test_parse_single_digit_cents"
    open_ = "tests/test_accounts.py::test_refund_reduces_balance"
    turn1 = Turn(
        "Two tests are red on main. Fix them.",
        [
            bash("python -m pytest -q", "fail", "Run the test suite"),
            read("ledger/money.py"),
            edit("ledger/money.py", *p.FIX_PARSE),
            bash("python -m pytest -q tests/test_money.py", "ok", "Run the money tests"),
            read("ledger/accounts.py"),
            edit("ledger/accounts.py", *p.WRONG_FIX_REFUND),
            bash("python -m pytest -q tests/test_accounts.py", "fail", "Run the account tests"),
        ],
        "The parse test is fixed; the refund test still fails.",
    )
    turn2 = Turn(
        "Keep going on the refund test.",
        [
            bash(f"python -m pytest -q {open_}", "fail", "Run the refund test"),
            grep("refund", "{project}/ledger", "content"),
        ],
        "The refund test still fails: assert 2500 == 1500.",
    )
    return _session(
        "c1-pytest-still-failing",
        [turn1, turn2],
        host="claude-code",
        description=c1_pytest_still_failing.__doc__ or "",
        files=lp.with_bugs(p.BUG_PARSE, p.BUG_REFUND),
        expect={
            "files": ["ledger/money.py", "ledger/accounts.py"],
            "failures": [[fixed, FIXED], open_],
            "errors_detail": ["assert 2500 == 1500"],
        },
        leaks=[[open_, CALLED_FIXED], [fixed, STILL]],
    )


def c2_cli_still_failing() -> Session:
    """A mypy [arg-type] error fixed, then the CLI still crashing (KeyError: 'amount') at
    compaction after a wrong fix."""
    p = lp
    command = "python -m ledger.cli data/sample.csv"
    turn1 = Turn(
        f"Make `{command}` print the balance, and keep mypy clean.",
        [
            bash("python -m mypy ledger", "fail", "Type-check the package"),
            read("ledger/report.py"),
            edit("ledger/report.py", *p.FIX_ARG_TYPE),
            bash("python -m mypy ledger", "ok", "Type-check the package"),
            bash(command, "fail", "Run the CLI"),
            read("ledger/cli.py"),
            edit("ledger/cli.py", *p.WRONG_FIX_CLI),
            bash(command, "fail", "Run the CLI"),
        ],
        "mypy is clean; the CLI still fails with KeyError: 'amount'.",
    )
    return _session(
        "c2-cli-still-failing",
        [turn1],
        host="claude-code",
        description=c2_cli_still_failing.__doc__ or "",
        files=lp.base()
        | {
            "ledger/report.py": p.REPORT_ARG_TYPE_BUG,
            "ledger/cli.py": p.CLI_BALANCE_KEYERROR,
            "data/sample.csv": p.SAMPLE_CSV_CAPITALISED,
        },
        expect={
            "files": ["ledger/report.py", "ledger/cli.py"],
            "failures": [["ledger/report.py", "arg-type"], ["arg-type", FIXED], command],
            "errors_detail": ["KeyError: 'amount'"],
        },
        leaks=[["arg-type", STILL], ["KeyError", CALLED_FIXED]],
    )


# --------------------------------------------------------------------------- d: todo lists


def d1_todos() -> Session:
    """A TodoWrite list created and updated four times; at compaction two items are
    completed, one in progress, two pending."""
    p = lp
    t1, t2, t3 = (
        "Add Money.split helper",
        "Write tests for Money.split",
        "Document split in docs/usage.md",
    )
    t4, t5 = "Tag release 0.2.0", "Check the CHANGELOG wording"
    turn1 = Turn(
        "Plan the 0.2.0 release and start on it; keep a todo list as you go.",
        [
            todos((t1, "in_progress"), (t2, "pending"), (t3, "pending"), (t4, "pending")),
            read("ledger/money.py"),
            edit("ledger/money.py", *p.ADD_SPLIT),
            todos((t1, "completed"), (t2, "in_progress"), (t3, "pending"), (t4, "pending")),
            write("tests/test_split.py", p.TEST_SPLIT),
            bash("python -m pytest -q", "ok", "Run the test suite"),
            todos((t1, "completed"), (t2, "completed"), (t3, "in_progress"), (t4, "pending")),
            write("docs/usage.md", p.USAGE_SPLIT_DOC),
        ],
        "Split is in with tests; docs are under way.",
    )
    turn2 = Turn(
        "Also add a CHANGELOG check to the list.",
        [
            todos(
                (t1, "completed"),
                (t2, "completed"),
                (t3, "in_progress"),
                (t4, "pending"),
                (t5, "pending"),
            ),  # fmt: skip
            read("README.md"),
        ],
        "Added.",
    )
    return _session(
        "d1-todos",
        [turn1, turn2],
        host="claude-code",
        description=d1_todos.__doc__ or "",
        files=lp.with_bugs(p.NO_SPLIT, p.NO_SPLIT_TEST),
        expect={
            "files": ["ledger/money.py", "tests/test_split.py", "docs/usage.md"],
            "todos": [[t1, DONE], [t2, DONE], [t3, DOING], [t4, PENDING], [t5, PENDING]],
        },
        leaks=[[t1, ["pending", "in_progress", "in progress"]], [t2, ["pending"]]],
    )


def d2_todos_failfix() -> Session:
    """A todo list next to a pytest failure that gets fixed; one item left in progress."""
    p = lp
    t1, t2 = "Fix failing test_str_pads_cents", "Add currency validation to Account.post"
    t3 = "Write CHANGELOG entry for 0.1.1"
    test = "tests/test_money.py::test_str_pads_cents"
    turn1 = Turn(
        "Fix the failing money test, then add currency validation to Account.post. Track the"
        " work in a todo list.",
        [
            todos((t1, "in_progress"), (t2, "pending"), (t3, "pending")),
            bash("python -m pytest -q", "fail", "Run the test suite"),
            read("ledger/money.py"),
            edit("ledger/money.py", *p.FIX_STR),
            bash("python -m pytest -q", "ok", "Run the test suite"),
            todos((t1, "completed"), (t2, "in_progress"), (t3, "pending")),
            read("ledger/accounts.py"),
            edit("ledger/accounts.py", *p.EDIT_POST_VALIDATION),
            write("tests/test_post_validation.py", p.TEST_POST_VALIDATION),
            bash("python -m pytest -q", "ok", "Run the test suite"),
        ],
        "The test is fixed and validation is in; docs for it are next.",
    )
    return _session(
        "d2-todos-failfix",
        [turn1],
        host="claude-code",
        description=d2_todos_failfix.__doc__ or "",
        files=lp.with_bugs(p.BUG_STR),
        expect={
            "files": ["ledger/money.py", "ledger/accounts.py", "tests/test_post_validation.py"],
            "failures": [[test, FIXED]],
            "todos": [[t1, DONE], [t2, DOING], [t3, PENDING]],
        },
        leaks=[[test, STILL], [t1, ["pending", "in_progress", "in progress"]]],
    )


# --------------------------------------------------------------------------- e: long sessions


def e1_long_sqlite() -> Session:
    """An early decision (sqlite, not postgres) and an early test failure fixed at once,
    then about 270 routine calls over three more prompts."""
    p = lp
    test = "tests/test_store.py::test_roundtrip_keeps_entries"
    decision = "use sqlite, not postgres"
    files = [
        "ledger/money.py", "ledger/accounts.py", "ledger/store.py", "tests/test_money.py",
        "tests/test_accounts.py", "tests/test_store.py", "pyproject.toml", "README.md",
    ]  # fmt: skip
    turn1 = Turn(
        "Add persistence for accounts. Decision: use sqlite, not postgres. It must run"
        " without a database server.",
        [
            read("ledger/accounts.py"),
            write("ledger/store.py", p.STORE_SWAPPED),
            write("tests/test_store.py", p.TEST_STORE),
            bash("python -m pytest -q tests/test_store.py", "fail", "Run the store test"),
            edit("ledger/store.py", *p.FIX_STORE),
            bash("python -m pytest -q", "ok", "Run the test suite"),
        ],
        "Accounts persist in sqlite.",
    )
    turns = [
        turn1,
        Turn("Now review the codebase for anything worth cleaning up.", routine(90, 101, files)),
        Turn("Look through the tests and the git history as well.", routine(90, 102, files)),
        Turn("One more pass over the modules, please.", routine(90, 103, files)),
    ]
    return _session(
        "e1-long-sqlite",
        turns,
        host="claude-code",
        description=e1_long_sqlite.__doc__ or "",
        files=lp.base(),
        expect={
            "files": ["ledger/store.py", "tests/test_store.py"],
            "early": [[test, FIXED], decision],
        },
        leaks=[[test, STILL]],
    )


def e2_long_argparse() -> Session:
    """An early decision (argparse, no click) and an early CLI test failure fixed at once,
    then about 240 routine calls over three more prompts."""
    p = lp
    test = "tests/test_cli.py::test_main_prints_balance"
    files = [
        "ledger/money.py", "ledger/accounts.py", "ledger/cli.py", "tests/test_money.py",
        "tests/test_accounts.py", "tests/test_cli.py", "pyproject.toml",
    ]  # fmt: skip
    turn1 = Turn(
        "Add a command line entry point that prints the balance of a CSV file. Keep the CLI"
        " on argparse, do not add click as a dependency.",
        [
            write("ledger/cli.py", p.CLI_ARGPARSE_CENTS),
            write("tests/test_cli.py", p.TEST_CLI),
            bash("python -m pytest -q tests/test_cli.py", "fail", "Run the CLI test"),
            edit("ledger/cli.py", *p.FIX_CLI_PRINT),
            bash("python -m pytest -q", "ok", "Run the test suite"),
        ],
        "The CLI prints the balance.",
    )
    turns = [
        turn1,
        Turn("Read through the package and note anything odd.", routine(80, 201, files)),
        Turn("Check the test files and the repository state.", routine(80, 202, files)),
        Turn("Final sweep over everything, then stop.", routine(80, 203, files)),
    ]
    return _session(
        "e2-long-argparse",
        turns,
        host="claude-code",
        description=e2_long_argparse.__doc__ or "",
        files=lp.base(),
        expect={
            "files": ["ledger/cli.py", "tests/test_cli.py"],
            "early": [[test, FIXED], "keep the cli on argparse", "do not add click"],
        },
        leaks=[[test, STILL]],
    )


# --------------------------------------------------------------------------- g: Gemini CLI


def g_shell(command: str, expect: str | None = None, description: str = "Run a command") -> dict:
    step: dict[str, Any] = {
        "tool": "run_shell_command",
        "input": {"command": command, "description": description},
    }
    if expect:
        step["expect"] = expect
    return step


def g_read(path: str, compress: bool = False) -> dict:
    """A read_file call; `compress` makes the fake report an over-full context after it."""
    step: dict[str, Any] = {"tool": "read_file", "input": {"file_path": path}}
    return step | ({"compress": True} if compress else {})


def g_write(path: str, content: str) -> dict:
    return {"tool": "write_file", "input": {"file_path": path, "content": content}}


def g_replace(path: str, old: str, new: str) -> dict:
    tool_input = {
        "file_path": path,
        "instruction": "Apply the fix",
        "old_string": old,
        "new_string": new,
    }
    return {"tool": "replace", "input": tool_input}


def g_grep(pattern: str, path: str) -> dict:
    return {"tool": "grep_search", "input": {"pattern": pattern, "dir_path": path}}


def _gemini_session(name: str, turns: list[Turn], **kw: Any) -> Session:
    """A Gemini session: the secrets planted in the first turn, two resumed turns at the end
    (Gemini CLI compresses inside a turn, on its own; the scripts make it do so in the
    second turn)."""
    secrets, steps = planted(name)
    shell = [
        g_shell(s["input"]["command"], s.get("expect"), s["input"]["description"]) for s in steps
    ]
    first = Turn(turns[0].prompt, turns[0].steps + shell, turns[0].final)
    resumes = [
        Turn("Continue where we left off.", [g_shell("git status --short", "ok")], "Picking up."),
        Turn("Anything else left?", [g_shell("git log --oneline -3", "ok")], "That is all."),
    ]
    return Session(
        name=name,
        host="gemini-cli",
        turns=[first, *turns[1:], *resumes],
        secrets=secrets,
        summary=SUMMARY,
        **kw,
    )


def g1_gemini_fixed() -> Session:
    """Gemini CLI: two pytest failures fixed, five files written, the history compressed in
    the second turn, then two resumes."""
    p = lp
    fails = [
        "tests/test_money.py::test_split_keeps_total",
        "tests/test_money.py::test_str_pads_cents",
    ]
    turn1 = Turn(
        "The money tests are failing. Fix ledger/money.py, then add a report module.",
        [
            g_shell("python -m pytest -q", "fail", "Run the test suite"),
            g_read("ledger/money.py"),
            g_replace("{project}/ledger/money.py", *p.FIX_SPLIT),
            g_shell("python -m pytest -q tests/test_money.py", "fail", "Run the money tests"),
            g_replace("{project}/ledger/money.py", *p.FIX_STR),
            g_shell("python -m pytest -q", "ok", "Run the test suite"),
            g_write("{project}/ledger/formatting.py", p.FORMATTING),
            g_write("{project}/ledger/report.py", p.REPORT),
            g_write("{project}/tests/test_report.py", p.TEST_REPORT),
            g_write("{project}/docs/usage.md", p.USAGE_DOC),
            g_shell("python -m pytest -q", "ok", "Run the test suite"),
        ],
        "Fixed both failures; the report module is in.",
    )
    turn2 = Turn(
        "Now tidy up the README.",
        [
            g_read("README.md", compress=True),
            g_replace("{project}/README.md", *p.EDIT_README_CLI),
            g_shell("git status --short", "ok"),
        ],
        "README updated.",
    )
    files = [
        "ledger/money.py", "ledger/formatting.py", "ledger/report.py", "tests/test_report.py",
        "docs/usage.md", "README.md",
    ]  # fmt: skip
    return _gemini_session(
        "g1-gemini-fixed",
        [turn1, turn2],
        description=g1_gemini_fixed.__doc__ or "",
        files=lp.with_bugs(p.BUG_SPLIT, p.BUG_STR),
        expect={"files": files, "failures": [[f, FIXED] for f in fails]},
        leaks=[[f, STILL] for f in fails],
    )


def g2_gemini_still_failing() -> Session:
    """Gemini CLI: a mypy [arg-type] error fixed, a refund test still failing at
    compression after a wrong fix, then two resumes."""
    p = lp
    open_ = "tests/test_accounts.py::test_refund_reduces_balance"
    turn1 = Turn(
        "Get mypy clean and the test suite green.",
        [
            g_shell("python -m mypy ledger", "fail", "Type-check the package"),
            g_read("ledger/report.py"),
            g_replace("{project}/ledger/report.py", *p.FIX_ARG_TYPE),
            g_shell("python -m mypy ledger", "ok", "Type-check the package"),
            g_shell("python -m pytest -q", "fail", "Run the test suite"),
            g_read("ledger/accounts.py"),
            g_replace("{project}/ledger/accounts.py", *p.WRONG_FIX_REFUND),
            g_shell("python -m pytest -q", "fail", "Run the test suite"),
        ],
        "mypy is clean; the refund test still fails.",
    )
    turn2 = Turn(
        "Keep going on the refund test.",
        [
            g_read("tests/test_accounts.py", compress=True),
            g_shell(f"python -m pytest -q {open_}", "fail", "Run the refund test"),
            g_grep("refund", "{project}/ledger"),
        ],
        "The refund test still fails: assert 2500 == 1500.",
    )
    return _gemini_session(
        "g2-gemini-still-failing",
        [turn1, turn2],
        description=g2_gemini_still_failing.__doc__ or "",
        files=lp.with_bugs(p.BUG_REFUND) | {"ledger/report.py": p.REPORT_ARG_TYPE_BUG},
        expect={
            "files": ["ledger/report.py", "ledger/accounts.py"],
            "failures": [["ledger/report.py", "arg-type"], ["arg-type", FIXED], open_],
            "errors_detail": ["assert 2500 == 1500"],
        },
        leaks=[["arg-type", STILL], [open_, CALLED_FIXED]],
    )


# --------------------------------------------------------------------------- h-k: held out
# Written after the a-g sessions were tuned on, and recorded without looking at any ctxmode
# output for them: all four are held-out (digit 2).


def h2_node_tests_subdir() -> Session:
    """JavaScript, node's built-in test runner: three failing tests in a workspace package
    fixed one at a time, then a new module with tests, an export, docs and a version bump;
    the host started in ``packages/textkit`` (global setup)."""
    t = tk
    slug = ["slugify strips punctuation", "slugify collapses repeated separators"]
    trunc = "truncate stays within the limit"
    turn1 = Turn(
        "`node --test` is red in the textkit package. Fix the failing tests one at a time.",
        [
            bash("node --test", "fail", "Run the package tests"),
            read("src/slug.js"),
            edit("src/slug.js", *t.FIX_PUNCTUATION),
            bash("node --test test/slug.test.js", "fail", "Run the slug tests"),
            edit("src/slug.js", *t.FIX_COLLAPSE),
            bash("node --test test/slug.test.js", "ok", "Run the slug tests"),
            bash("node --test", "fail", "Run the package tests"),
            read("{project}/packages/textkit/src/truncate.js"),
            edit("src/truncate.js", *t.FIX_TRUNCATE),
            bash("node --test", "ok", "Run the package tests"),
        ],
        "All three tests pass now: punctuation, separators and the truncate limit.",
    )
    turn2 = Turn(
        "Add a word-wrap helper with tests, export it, document the package at the workspace"
        " level and bump the version to 0.4.0.",
        [
            write("src/wrap.js", t.WRAP),
            write("test/wrap.test.js", t.TEST_WRAP),
            read("src/index.js"),
            edit("src/index.js", *t.EDIT_INDEX_WRAP),
            bash("node --test", "ok", "Run the package tests"),
            bash(
                "node -e \"console.log(Object.keys(require('./src')).join(','))\"",
                "ok",
                "Check the exports",
            ),
            write("../../docs/textkit.md", t.DOCS),
            read("{project}/packages/textkit/README.md"),
            edit("{project}/packages/textkit/README.md", *t.EDIT_README_WRAP),
            read("package.json"),
            edit("package.json", *t.EDIT_PACKAGE_VERSION),
        ],
        "wrap() is in, exported and documented; textkit is at 0.4.0.",
    )
    files = [
        "packages/textkit/src/slug.js", "packages/textkit/src/truncate.js",
        "packages/textkit/src/wrap.js", "packages/textkit/test/wrap.test.js",
        "packages/textkit/src/index.js", "docs/textkit.md", "packages/textkit/README.md",
        "packages/textkit/package.json",
    ]  # fmt: skip
    fails = [*slug, trunc]
    return _session(
        "h2-node-tests-subdir",
        [turn1, turn2],
        host="claude-code",
        description=h2_node_tests_subdir.__doc__ or "",
        files=tk.base(),
        cwd="packages/textkit",
        global_setup=True,
        expect={"files": files, "failures": [[f, FIXED] for f in fails]},
        leaks=[[f, STILL] for f in fails],
    )


def i2_todos_cargo_open() -> Session:
    """Rust: a TodoWrite list kept over three prompts while a duration parser is added; a
    cargo build error (E0308) fixed, a cargo test failure still open after a wrong fix."""
    t = tp
    t1, t2 = "Add parse_duration in src/duration.rs", "Unit-test parse_duration"
    t3, t4 = "Accept durations in the tally CLI", "Document the duration syntax in README"
    t5 = "Reject durations over 24h"
    open_ = "duration::tests::parses_hours_and_minutes"
    turn1 = Turn(
        'Add a parse_duration function to the tally crate ("1h30m" -> 5400 seconds) with'
        " tests, then use it in the CLI. Keep a todo list.",
        [
            todos((t1, "in_progress"), (t2, "pending"), (t3, "pending"), (t4, "pending")),
            read("src/lib.rs"),
            write("src/duration.rs", t.DURATION),
            edit("src/lib.rs", *t.EDIT_LIB_MOD),
            bash("cargo build --offline", "fail", "Build the crate"),
            edit("src/duration.rs", *t.FIX_E0308),
            bash("cargo build --offline", "ok", "Build the crate"),
            todos((t1, "completed"), (t2, "in_progress"), (t3, "pending"), (t4, "pending")),
            edit("src/duration.rs", *t.ADD_TESTS),
            bash("cargo test --offline", "fail", "Run the tests"),
            edit("src/duration.rs", *t.WRONG_FIX_DIGITS),
            bash("cargo test --offline duration", "fail", "Run the duration tests"),
        ],
        "parse_duration builds; parses_hours_and_minutes still fails.",
    )
    turn2 = Turn(
        "Leave the test for a moment and write the README section. Also put rejecting"
        " durations over 24h on the list.",
        [
            todos(
                (t1, "completed"),
                (t2, "in_progress"),
                (t3, "pending"),
                (t4, "in_progress"),
                (t5, "pending"),
            ),  # fmt: skip
            read("README.md"),
            edit("README.md", *t.EDIT_README_DURATIONS),
            todos(
                (t1, "completed"),
                (t2, "in_progress"),
                (t3, "pending"),
                (t4, "completed"),
                (t5, "pending"),
            ),  # fmt: skip
        ],
        "README documents the syntax.",
    )
    turn3 = Turn(
        "Back to the failing test.",
        [
            bash(f"cargo test --offline {open_}", "fail", "Run the failing test"),
            grep("value \\* 60", "{project}/src", "content"),
        ],
        "parses_hours_and_minutes still fails: left Some(1860), right Some(5400).",
    )
    return _session(
        "i2-todos-cargo-open",
        [turn1, turn2, turn3],
        host="claude-code",
        description=i2_todos_cargo_open.__doc__ or "",
        files=tp.base(),
        expect={
            "files": ["src/duration.rs", "src/lib.rs", "README.md"],
            "failures": [["src/duration.rs", "E0308"], ["E0308", FIXED], open_],
            "todos": [[t1, DONE], [t2, DOING], [t3, PENDING], [t4, DONE], [t5, PENDING]],
            "errors_detail": ["1h30m should be 5400 seconds"],
        },
        leaks=[
            [open_, CALLED_FIXED],
            ["E0308", STILL],
            [t1, ["pending", "in_progress", "in progress"]],
            [t4, ["pending", "in_progress", "in progress"]],
        ],
    )


def j2_long_jsonl_export() -> Session:
    """An early decision (JSON Lines, standard library only), an early pytest failure and
    mypy [union-attr] errors fixed at the start of the second prompt, then 400 routine
    calls over four more prompts."""
    p = lp
    test = "tests/test_export.py::test_export_rejects_unknown_account"
    files = [
        "ledger/money.py", "ledger/accounts.py", "ledger/export.py", "tests/test_money.py",
        "tests/test_accounts.py", "tests/test_export.py", "pyproject.toml",
    ]  # fmt: skip
    turn1 = Turn(
        "Add an export of an account's entries. Decision: export as JSON Lines, not CSV, and"
        " use only the standard library.",
        [
            read("ledger/accounts.py"),
            write("ledger/export.py", p.EXPORT_UNGUARDED),
            write("tests/test_export.py", p.TEST_EXPORT),
            bash("python -m pytest -q tests/test_export.py", "fail", "Run the export tests"),
            bash("python -m mypy ledger", "fail", "Type-check the package"),
        ],
        "The export is written; an unknown account is not handled yet (one test, mypy).",
    )
    turn2 = Turn(
        "Fix that first, then review the package for anything worth cleaning up.",
        [
            edit("ledger/export.py", *p.FIX_EXPORT_GUARD),
            bash("python -m mypy ledger", "ok", "Type-check the package"),
            bash("python -m pytest -q", "ok", "Run the test suite"),
            *routine(100, 301, files),
        ],
        "Fixed; nothing else stands out.",
    )
    turns = [
        turn1,
        turn2,
        Turn("Go through the tests and the git history too.", routine(100, 302, files)),
        Turn("Have another look at the modules.", routine(100, 303, files)),
        Turn("One last sweep, then stop.", routine(100, 304, files)),
    ]
    return _session(
        "j2-long-jsonl-export",
        turns,
        host="claude-code",
        description=j2_long_jsonl_export.__doc__ or "",
        files=lp.base(),
        expect={
            "files": ["ledger/export.py", "tests/test_export.py"],
            "early": [
                [test, FIXED],
                ["union-attr", FIXED],
                "export as json lines, not csv",
                "use only the standard library",
            ],
        },
        leaks=[[test, STILL], ["union-attr", STILL]],
    )


def k2_gemini_unittest_fixed() -> Session:
    """Gemini CLI, unittest: two failures and an error fixed over two runs, then a report
    module, its test and edits to three files; the history compressed in the second turn."""
    s = sp
    fails = [
        "tests.test_inventory.InventoryTest.test_unknown_sku_counts_as_zero",
        "tests.test_inventory.InventoryTest.test_remove_more_than_stock_raises",
        "tests.test_pricing.PricingTest.test_bulk_discount_at_ten",
    ]
    turn1 = Turn(
        "`python -m unittest` is red in stockroom. Make it green.",
        [
            g_shell("python -m unittest", "fail", "Run the unit tests"),
            g_read("stockroom/inventory.py"),
            g_replace("{project}/stockroom/inventory.py", *s.FIX_QUANTITY),
            g_replace("{project}/stockroom/inventory.py", *s.FIX_REMOVE),
            g_shell("python -m unittest tests.test_inventory", "ok", "Run the inventory tests"),
            g_shell("python -m unittest", "fail", "Run the unit tests"),
            g_read("stockroom/pricing.py"),
            g_replace("{project}/stockroom/pricing.py", *s.FIX_BULK),
            g_shell("python -m unittest", "ok", "Run the unit tests"),
        ],
        "All three are fixed; the suite passes.",
    )
    turn2 = Turn(
        "Add a CSV stock report, export it from the package and describe it in the README.",
        [
            g_read("README.md", compress=True),
            g_write("{project}/stockroom/report.py", s.REPORT),
            g_write("{project}/tests/test_report.py", s.TEST_REPORT),
            g_replace("{project}/stockroom/__init__.py", *s.EDIT_INIT_EXPORTS),
            g_replace("{project}/README.md", *s.EDIT_README_REPORT),
            g_shell("python -m unittest", "ok", "Run the unit tests"),
        ],
        "The report is in.",
    )
    files = [
        "stockroom/inventory.py", "stockroom/pricing.py", "stockroom/report.py",
        "tests/test_report.py", "stockroom/__init__.py", "README.md",
    ]  # fmt: skip
    return _gemini_session(
        "k2-gemini-unittest-fixed",
        [turn1, turn2],
        description=k2_gemini_unittest_fixed.__doc__ or "",
        files=sp.base(),
        expect={"files": files, "failures": [[f, FIXED] for f in fails]},
        leaks=[[f, STILL] for f in fails],
    )


SESSIONS: list[Session] = [
    a1_files_subdir(),
    a2_files_root(),
    b1_pytest_fixed(),
    b2_mypy_fixed(),
    c1_pytest_still_failing(),
    c2_cli_still_failing(),
    d1_todos(),
    d2_todos_failfix(),
    e1_long_sqlite(),
    e2_long_argparse(),
    g1_gemini_fixed(),
    g2_gemini_still_failing(),
    h2_node_tests_subdir(),
    i2_todos_cargo_open(),
    j2_long_jsonl_export(),
    k2_gemini_unittest_fixed(),
]
