"""What continuity keeps (issue: session continuity that remembers what matters): user
constraints in any language, failed-then-fixed against still failing, approved plans,
eviction that keeps what the user decided, and the snapshot sections that show them."""

import xml.etree.ElementTree as ET

import pytest

from ctxmode.session.db import SessionDB
from ctxmode.session.events import CRITICAL, MAX_EVENTS_PER_SESSION, NORMAL, Event, StoredEvent
from ctxmode.session.extract import (
    check_key,
    covers,
    failure_detail,
    label_key,
    prompt_events,
    tool_events,
    user_constraint,
)
from ctxmode.session.failures import FIXED, STILL_FAILING
from ctxmode.session.snapshot import build_snapshot

from .support import hook_event

# --------------------------------------------------------------------------- constraints


@pytest.mark.parametrize(
    "prompt",
    [
        "不要改数据库迁移，只改服务层",  # no space anywhere
        "设置文件别动",
        "設定ファイルは変更しないでください",
        "既存のテストは書き換えないこと",
        "데이터베이스 스키마는 절대 바꾸지 마세요",
        "Bitte keine neuen Abhängigkeiten hinzufügen.",
        "Ne touche pas au module de facturation.",
        "Los nombres de las columnas deben quedar en inglés.",
        "Логи пиши только на уровне INFO",
        "Não altere a interface pública dos serviços.",
        "Don't touch the migrations.",
        "Use httpx, not requests",
    ],
)
def test_constraints_in_any_language_are_kept_verbatim(prompt):
    events = prompt_events(prompt)
    assert ("user_constraint", prompt) in [(e.type, e.data) for e in events]


@pytest.mark.parametrize(
    "prompt",
    ["给用户服务加上邮箱格式校验", "Add pagination to GET /orders", "为什么不能启动？", "Why not?"],
)
def test_requests_and_questions_are_not_constraints(prompt):
    assert user_constraint(prompt) == ""


def test_a_long_prompt_keeps_only_its_constraint_sentences():
    prompt = "Here is some background about the service. " * 10 + "Never log tokens."
    assert user_constraint(prompt) == "Never log tokens."


# --------------------------------------------------------------------------- plans


PLAN = "# Plan\n1. Add `tenant_limits` table.\n2. Load limits at startup.\n"


def test_an_approved_exit_plan_mode_keeps_the_plan_text():
    event = hook_event(
        tool="other",
        native_tool="ExitPlanMode",
        tool_input={"plan": PLAN},
        tool_response={"plan": PLAN, "isAgent": False},
    )
    pairs = [(e.type, e.data) for e in tool_events(event)]
    assert ("plan_approved", "plan approved by user") in pairs
    assert ("plan_text", PLAN.strip()) in pairs


def test_a_plan_file_named_by_the_call_is_read(tmp_path):
    plan = tmp_path / "plan.md"
    plan.write_text("- Add `deleted_at` to users\n", encoding="utf-8")
    event = hook_event(
        platform="gemini-cli",
        tool="other",
        native_tool="exit_plan_mode",
        tool_input={"plan_path": str(plan)},
        tool_response={"llmContent": "Plan approved. Switching to Default mode."},
    )
    assert ("plan_text", "- Add `deleted_at` to users") in [
        (e.type, e.data) for e in tool_events(event)
    ]


def test_a_turned_down_plan_keeps_no_plan_text():
    event = hook_event(
        tool="other",
        native_tool="ExitPlanMode",
        tool_input={"plan": PLAN},
        tool_response="The user doesn't want to proceed with this tool use.",
    )
    types = [e.type for e in tool_events(event)]
    assert "plan_rejected" in types and "plan_text" not in types


# --------------------------------------------------------------------------- checks


@pytest.mark.parametrize(
    ("passed", "failed", "fixed"),
    [
        ("pytest tests/test_users.py -q", "pytest tests/test_users.py -q", True),
        (".venv/bin/python -m pytest -q", "pytest tests/test_users.py::test_x", True),
        ("uv run pytest tests", "pytest tests/test_users.py", True),
        ("cd web && npx tsc --noEmit -p web", "npx tsc --noEmit -p web", True),
        ("ruff check src/acme/utils", "ruff check src/acme/client", False),
        ("pytest tests/test_orders.py", "pytest tests/test_users.py", False),
        ("npm test", "npm run lint", False),
        ("mypy src", "pytest src", False),
    ],
)
def test_a_passing_check_covers_the_failures_it_reruns(passed, failed, fixed):
    passed_key, failed_key = check_key(passed), check_key(failed)
    assert passed_key is not None and failed_key is not None
    assert covers(passed_key, failed_key) is fixed


def test_a_failure_label_gives_its_check():
    assert label_key("$ pytest tests/test_users.py -q") == check_key("pytest tests/test_users.py")
    assert label_key("Edit /p/a.py") == ("tool:Edit", (), ("/p/a.py",))
    assert check_key("cd src && export A=1") is None


# --------------------------------------------------------------------------- snapshot

_ids = iter(range(1, 1_000_000))


def ev(event_type: str, data: str) -> StoredEvent:
    return StoredEvent(next(_ids), "s1", event_type, "", 2, data, "", "", 0, 0, "")


def test_errors_say_still_failing_or_failed_then_fixed():
    events = [
        ev("error_tool", "$ pytest tests/test_users.py -q\nE  assert 201 == 422 in test_users"),
        ev("error_tool", "$ mypy src/billing.py\nbilling.py:41: error: Incompatible return"),
        ev("error_fixed", "$ pytest tests/test_users.py -q\npassed: $ pytest -q"),
    ]
    errors = ET.fromstring(build_snapshot(events)).find("errors")
    assert errors is not None
    lines = (errors.text or "").strip().splitlines()
    assert lines[0].startswith(f"{STILL_FAILING}: $ mypy src/billing.py")
    # What had failed goes with it, as the output said it (no test ids to name here).
    assert (
        lines[1] == f"{FIXED}: $ pytest tests/test_users.py -q → E assert 201 == 422 in test_users"
    )
    assert errors.attrib == {"failing": "1", "fixed": "1"}


def test_a_traceback_says_its_exception_and_the_frame_it_was_raised_in():
    output = (
        "Traceback (most recent call last):\n"
        '  File "/p/ledger/cli.py", line 21, in <module>\n    sys.exit(main())\n'
        '  File "/p/ledger/cli.py", line 15, in main\n    total += parse(row["amount"])\n'
        "KeyError: 'amount'\n"
    )
    data = f"$ python -m ledger.cli data.csv\n{failure_detail(output)}"
    errors = ET.fromstring(build_snapshot([ev("error_tool", data)])).find("errors")
    assert errors is not None
    first = (errors.text or "").strip().splitlines()[0]
    assert "KeyError: 'amount'" in first and "line 15, in main" in first


def test_a_compilers_diagnostics_are_each_named_by_location_and_code():
    output = "".join(
        f"ledger/report.py:{n}: error: {'A long message about types ' * 3} [{code}]\n"
        for n, code in ((20, "arg-type"), (24, "no-any-return"), (31, "return-value"),
                        (40, "attr-defined"))
    ) + "Found 4 errors in 1 file (checked 6 source files)\n"  # fmt: skip
    data = f"$ mypy ledger\n{failure_detail(output)}"
    events = [ev("error_tool", data), ev("error_fixed", "$ mypy ledger\npassed: $ mypy ledger")]
    text = ET.fromstring(build_snapshot(events)).findtext("errors") or ""
    for code in ("arg-type", "no-any-return", "return-value", "attr-defined"):
        assert f"[{code}]" in text
    assert "ledger/report.py:40 [attr-defined]" in text


def test_a_check_failing_again_after_its_fix_is_still_failing():
    events = [
        ev("error_tool", "$ pytest -q\nE  first failure here"),
        ev("error_fixed", "$ pytest -q\npassed: $ pytest -q"),
        ev("error_tool", "$ pytest -q\nE  second failure here"),
    ]
    text = ET.fromstring(build_snapshot(events)).findtext("errors") or ""
    assert f"{STILL_FAILING}: $ pytest -q" in text and FIXED not in text


def test_the_first_and_the_latest_constraints_are_shown_verbatim():
    events = [ev("user_constraint", f"约束 {i}：不要改动模块 {i}") for i in range(20)]
    events.append(ev("user_prompt", "继续"))
    text = ET.fromstring(build_snapshot(events, budget=4096)).findtext("decisions") or ""
    for i in (0, 1, 2, 15, 19):
        assert f"约束 {i}：不要改动模块 {i}" in text
    assert "约束 8：" not in text


def test_an_approved_plan_is_shown_line_by_line():
    events = [
        ev("plan_enter", "entered plan mode"),
        ev("plan_exit", "exited plan mode"),
        ev("plan_approved", "plan approved by user"),
        ev("plan_text", PLAN),
    ]
    plan = ET.fromstring(build_snapshot(events)).find("plan")
    assert plan is not None and plan.attrib["status"].startswith("approved")
    assert "1. Add `tenant_limits` table." in (plan.text or "")


def test_indexed_sources_are_named():
    events = [ev("indexed", "ctx_fetch_and_index: pydantic-migration (https://docs.x/m/)")]
    text = ET.fromstring(build_snapshot(events)).findtext("indexed") or ""
    assert "pydantic-migration (https://docs.x/m/)" in text


# --------------------------------------------------------------------------- eviction


def test_what_the_user_decided_outlives_routine_events_in_a_long_session(tmp_path):
    with SessionDB(tmp_path / "s.db") as sdb:
        sdb.add_events(
            "s1",
            [
                Event("user_prompt", "port the client to httpx"),
                Event("user_constraint", "Keep the public API unchanged."),
                Event("decision", "use AsyncClient, one pool"),
                Event("plan_text", PLAN),
                Event("error_tool", "$ pytest tests/test_client.py\nFAILED"),
                Event("indexed", "ctx_fetch_and_index: httpx-docs"),
            ],
            source_hook="test",
        )
        for n in range(3):  # ~1,600 routine calls and more
            routine = [Event("file_read", f"/p/r{n}_{i}.py") for i in range(400)]
            routine += [Event("file_edit", f"/p/e{n}_{i}.py") for i in range(200)]
            sdb.add_events("s1", routine, source_hook="test")
        sdb.add_events("s1", [Event("user_prompt", "now wire retries")], source_hook="test")
        kept = {e.type for e in sdb.events("s1")}
        assert sdb.event_count("s1") == MAX_EVENTS_PER_SESSION
    assert {"user_constraint", "decision", "plan_text", "error_tool", "indexed"} <= kept


def test_a_fixed_failure_no_longer_outranks_routine_events(tmp_path):
    with SessionDB(tmp_path / "s.db") as sdb:
        sdb.add_events("s1", [Event("error_tool", "$ pytest\nFAILED")], source_hook="t")
        ((failure_id, head),) = sdb.open_failures("s1")
        assert head == "$ pytest"
        sdb.mark_fixed([failure_id])
        assert sdb.open_failures("s1") == []
        assert sdb.events("s1")[0].priority == NORMAL > CRITICAL


def test_a_conversation_reads_back_through_the_sessions_it_continues(tmp_path):
    with SessionDB(tmp_path / "s.db") as sdb:
        sdb.add_events("a", [Event("user_constraint", "不要改迁移")], source_hook="t")
        sdb.add_events("b", [Event("resumed_from", "a")], source_hook="t")
        sdb.add_events("c", [Event("resumed_from", "b"), Event("goal", "ship")], source_hook="t")
        assert sdb.chain("c") == ["c", "b", "a"]
        assert [e.data for e in sdb.conversation_events("c")][0] == "不要改迁移"
        assert sdb.continued("a") and sdb.continued("b") and not sdb.continued("c")
