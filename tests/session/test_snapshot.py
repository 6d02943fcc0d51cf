"""The resume snapshot (ctxmode.session.snapshot): well-formed, escaped, within budget,
most important first."""

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from ctxmode import settings
from ctxmode.session.events import StoredEvent
from ctxmode.session.snapshot import DEFAULT_BUDGET, MIN_BUDGET, build_snapshot

_ids = iter(range(1, 1_000_000))
UNSEARCHED = ("how_to_search", "last_request", "intent", "recent_user_messages", "continue_from")


def ev(event_type: str, data: str, priority: int = 2) -> StoredEvent:
    return StoredEvent(
        id=next(_ids),
        session_id="s1",
        type=event_type,
        category="",
        priority=priority,
        data=data,
        source_hook="test",
        project_dir="",
        bytes_avoided=0,
        bytes_returned=0,
        created_at="2026-05-14T10:00:00.000Z",
    )


def parse(snapshot: str) -> ET.Element:
    return ET.fromstring(snapshot)


def size(text: str) -> int:
    return len(text.encode("utf-8"))


def busy_session(n: int = 40) -> list[StoredEvent]:
    events = []
    for i in range(n):
        events += [
            ev("file_edit", f"/p/src/module_{i}.py"),
            ev("file_read", f"/p/src/module_{i}.py"),
            ev("error_tool", f"$ pytest tests/test_{i}.py\nExit code 1\nFAILED test_{i} - boom"),
            ev("decision", f"use approach number {i}, not the other one"),
            ev("git", f"commit: change {i}"),
            ev("user_prompt", f"prompt number {i}: please continue with step {i}"),
        ]
    return events


# --------------------------------------------------------------------------- format (57)


def test_the_snapshot_is_well_formed_with_its_attributes_and_how_to_search():
    root = parse(build_snapshot([ev("file_edit", "/p/a.py")], compact_count=2))
    assert root.tag == "session_resume"
    assert root.attrib["events"] == "1"
    assert root.attrib["compact_count"] == "2"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", root.attrib["generated_at"])
    assert root.find("how_to_search") is not None


def test_no_events_give_header_how_to_search_and_footer_only():
    root = parse(build_snapshot([]))
    assert root.attrib["events"] == "0"
    assert [child.tag for child in root] == ["how_to_search"]


def test_all_five_xml_specials_are_escaped_and_survive_a_round_trip():
    nasty = '</last_request><evil attr="x">Tom & Jerry\'s <b>'
    snapshot = build_snapshot([ev("user_prompt", nasty), ev("decision", f"keep {nasty}, ok")])
    assert "&amp;" in snapshot and "&lt;" in snapshot and "&gt;" in snapshot
    assert "&quot;" in snapshot and "&apos;" in snapshot
    root = parse(snapshot)
    assert root.findtext("last_request") == nasty
    assert root.find("evil") is None


def test_characters_xml_cannot_carry_are_dropped():
    snapshot = build_snapshot([ev("user_prompt", "bell\x07 nul\x00 lone\ud800 ok")])
    assert parse(snapshot).findtext("last_request") == "bell nul lone\ufffd ok"


def test_files_are_deduped_with_op_counts_and_only_the_last_ten_listed():
    events = [ev("file_read", "/p/a.py"), ev("file_edit", "/p/a.py"), ev("file_edit", "/p/a.py")]
    events += [ev("file_read", f"/p/f{i}.py") for i in range(12)]
    root = parse(build_snapshot(events, budget=8000, project_dir=Path("/p")))
    files = root.find("files")
    assert files is not None
    assert files.attrib["count"] == "13"
    lines = [ln for ln in (files.text or "").strip().splitlines() if not ln.startswith("For")]
    assert len(lines) == 10
    assert "a.py (edit×2, read×1)" in lines[0]  # changed files first
    assert "f11.py (read×1)" in lines[1]  # then the most recent reads
    assert all("f1.py" not in ln for ln in lines)  # the oldest reads fell out
    only_a = parse(build_snapshot(events[:3], project_dir=Path("/p"))).find("files")
    assert only_a is not None and "a.py (edit×2, read×1)" in (only_a.text or "")


def test_rules_decisions_and_roles_are_deduped():
    events = [ev("rule", "/p/CLAUDE.md"), ev("rule", "/p/CLAUDE.md")]
    events += [ev("decision", "use sqlite, not postgres")] * 3
    events += [ev("role", "act as a senior reviewer")] * 2
    root = parse(build_snapshot(events, budget=8000))
    for tag in ("rules", "decisions", "roles"):
        section = root.find(tag)
        assert section is not None and section.attrib["count"] == "1", tag


def test_open_tasks_come_first_and_finished_ones_follow():
    events = [
        ev("task_create", json.dumps({"subject": "Write the parser"})),
        ev("task_create", json.dumps({"subject": "Add tests"})),
        ev("task_create", json.dumps({"subject": "Dropped idea"})),
        ev("task_update", json.dumps({"taskId": "1", "status": "completed"})),
        ev("task_update", json.dumps({"taskId": "2", "status": "in_progress"})),
        ev("task_update", json.dumps({"taskId": "3", "status": "deleted"})),
        ev("task", json.dumps({"todos": [{"content": "Ship it", "status": "pending"},
                                         {"content": "Old", "status": "completed"}]})),
    ]  # fmt: skip
    section = parse(build_snapshot(events)).find("task_state")
    assert section is not None
    lines = (section.text or "").strip().splitlines()
    assert lines[:4] == [
        "[in_progress] Add tests",
        "[pending] Ship it",
        "[completed] Write the parser",
        "[completed] Old",
    ]
    assert "Dropped idea" not in (section.text or "")
    assert section.attrib["count"] == "2" and section.attrib["done"] == "2"


def test_every_section_carries_a_runnable_search_call_with_a_configurable_tool():
    events = busy_session(2) + [ev("rule", "/p/CLAUDE.md"), ev("env", "npm install")]
    root = parse(build_snapshot(events, budget=8000, search_tool="mcp__ctxmode__ctx_search"))
    searched = [c for c in root if c.tag not in UNSEARCHED]
    assert searched
    for section in searched:
        call = (section.text or "").strip().splitlines()[-1]
        match = re.fullmatch(
            r"For full details: mcp__ctxmode__ctx_search\(queries: (\[.*\]), "
            r'source: "session-events"\)',
            call,
        )
        assert match, (section.tag, call)
        queries = json.loads(match.group(1))
        assert 1 <= len(queries) <= 4 and len(set(queries)) == len(queries)
        assert all(0 < len(q) <= 80 for q in queries)


# --------------------------------------------------------------------------- budget


@pytest.mark.parametrize("budget", [MIN_BUDGET, 1024, DEFAULT_BUDGET, 4096, 10_000])
def test_the_snapshot_never_exceeds_its_budget(budget):
    snapshot = build_snapshot(busy_session(), budget=budget)
    assert size(snapshot) <= budget
    parse(snapshot)


def test_the_budget_holds_for_multibyte_text():
    events = [ev("user_prompt", "修复登录页面的错误，" * 300), ev("decision", "決定：" * 500)]
    events += [ev("file_edit", f"/p/源代码/模块_{i}.py") for i in range(30)]
    snapshot = build_snapshot(events, budget=DEFAULT_BUDGET)
    assert size(snapshot) <= DEFAULT_BUDGET
    parse(snapshot)


def test_the_default_budget_is_2_kb_and_configurable(monkeypatch):
    assert settings.snapshot_bytes() == 2048
    monkeypatch.setenv("CTXMODE_SNAPSHOT_BYTES", "4096")
    assert settings.snapshot_bytes() == 4096
    assert size(build_snapshot(busy_session())) <= 4096
    monkeypatch.setenv("CTXMODE_SNAPSHOT_BYTES", "10")
    assert settings.snapshot_bytes() == MIN_BUDGET
    monkeypatch.setenv("CTXMODE_SNAPSHOT_BYTES", "lots")
    assert settings.snapshot_bytes() == 2048


def test_the_last_prompt_always_survives_even_a_tight_budget():
    events = busy_session()
    events.append(ev("user_prompt", "最后一步：把 README 翻译成中文，并更新示例"))
    root = parse(build_snapshot(events, budget=MIN_BUDGET))
    assert root.findtext("last_request") == "最后一步：把 README 翻译成中文，并更新示例"
    assert root.find("continue_from") is not None


def test_a_long_last_prompt_is_shortened_not_dropped():
    events = [ev("user_prompt", "START " + "word " * 2000 + " END")]
    text = parse(build_snapshot(events)).findtext("last_request") or ""
    assert text.startswith("START") and text.endswith("…")


def test_important_sections_win_over_unimportant_ones_when_space_runs_out():
    events = busy_session()
    events += [ev("role", f"role {i} of many words") for i in range(30)]
    events += [ev("skill", f"skill-{i}") for i in range(30)]
    events += [ev("goal", "ship v2 without breaking v1 clients", 1)]
    root = parse(build_snapshot(events, budget=1024))
    present = {child.tag for child in root}
    assert {"last_request", "goal", "decisions"} <= present
    assert "roles" not in present and "skills" not in present


def test_the_goal_and_recent_messages_are_verbatim():
    events = [
        ev("goal", "把所有接口迁移到 v2"),
        ev("user_prompt", "第一条"),
        ev("user_prompt", "第二条"),
        ev("user_prompt", "第三条"),
    ]
    root = parse(build_snapshot(events))
    assert root.findtext("goal") == "把所有接口迁移到 v2"
    recent = root.find("recent_user_messages")
    assert recent is not None
    assert [m.text for m in recent.findall("message")] == ["第二条", "第一条"]
    assert root.findtext("last_request") == "第三条"
