"""The fixture judge itself: it must reject wrong answers, not only accept right ones."""

import json

import pytest

from .fixture_support import Run, check_records, evaluate, load_fixtures, parse_events

FIXTURES = {f.id: f for f in load_fixtures()}
CURL = FIXTURES["claude-code.pretooluse.shell-curl"].expect
DENY = {
    "hookSpecificOutput": {
        "hookEventName": "PreToolUse",
        "permissionDecision": "deny",
        "permissionDecisionReason": "use ctx_fetch_and_index",
    }
}


def _run(doc: object, rc: int = 0, stderr: str = "") -> Run:
    return Run(rc, json.dumps(doc) + "\n", stderr)


def test_a_matching_wire_passes():
    assert evaluate(CURL, _run(DENY)) == ""


@pytest.mark.parametrize(
    "run",
    [
        _run({"permissionDecision": "deny", "permissionDecisionReason": "ctx_fetch_and_index"}),
        _run({**DENY, "hookSpecificOutput": {**DENY["hookSpecificOutput"],
                                             "permissionDecisionReason": "no"}}),
        _run(DENY, rc=2),
        Run(0, json.dumps(DENY) + json.dumps(DENY), ""),
        Run(0, "", ""),
    ],
    ids=["flat", "reason-missing", "exit-2", "two-documents", "silent"],
)  # fmt: skip
def test_wrong_answers_fail(run):
    assert evaluate(CURL, run)


@pytest.mark.parametrize(
    "text",
    [
        '{"kind": "git", "data": "commit"}\n{"kind": "session", "data": {"source": "x"}}\n',
        '[{"kind": "git", "data": "commit"}, {"kind": "session"}]',
        '{"data": {"events": [{"kind": "git", "data": "commit"}, {"type": "session"}]}}',
    ],
    ids=["json-lines", "array", "envelope"],
)
def test_records_are_read_from_every_event_listing(text):
    events = parse_events(text)
    assert (
        check_records([{"kind": "git", "data_contains": "commit"}, {"kind": "session"}], events)
        == ""
    )
    assert check_records([{"kind": "error"}], events)
