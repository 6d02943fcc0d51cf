"""The platform adapters alone, against every fixture: each fixture's payload parses (or is an
event the adapter leaves alone, answered by its no-op), and the decision its ``expect``
describes, rendered by the adapter, matches one of its wires. This pins the wire format
independently of the routing and session handlers.
"""

from typing import Any

import pytest

from ctxmode import platforms
from ctxmode.hookevent import ALLOW, RECORD, HookDecision, HookEvent

from .fixture_support import Fixture, Run, evaluate, load_fixtures

ALL = load_fixtures()


def _text(fixture: Fixture) -> str:
    needles = " ".join(str(s) for s in fixture.expect.get("reason_contains") or [])
    return f"ctxmode: use the ctx tools. {needles}".strip()


def decisions_for(fixture: Fixture, event: HookEvent) -> list[HookDecision]:
    """Every decision a handler may legitimately return for this fixture's expectation."""
    text = _text(fixture)
    kind = fixture.expect["decision"]
    if kind == "redirect":  # the router's redirect: a rewrite to an echo, or a plain deny
        echo = f"echo '{text}'"
        return [
            HookDecision(
                "modify", reason=text, updated_input={**event.tool_input, "command": echo}
            ),
            HookDecision("modify", updated_input={**event.tool_input, "command": echo}),
            HookDecision("deny", reason=text),
        ]
    if kind == "deny":
        return [HookDecision("deny", reason=text)]
    if kind == "context":
        return [HookDecision("context", context=text)]
    if kind == "record":
        return [RECORD, ALLOW]
    return [ALLOW]


def _as_run(output: Any) -> Run:
    stdout = output.stdout or ""
    return Run(output.exit_code, stdout + "\n" if stdout else "", output.stderr or "")


@pytest.mark.parametrize("fixture", ALL, ids=[f.id for f in ALL])
def test_adapter_renders_the_expected_decision_as_a_fixture_wire(fixture: Fixture) -> None:
    adapter = platforms.load(fixture.platform)
    event = adapter.parse(fixture.hook_event, fixture.stdin, fixture.env)
    if event is None:  # an event the adapter leaves alone: its no-op is the whole answer
        assert fixture.expect["decision"] == "allow"
        problem = evaluate(fixture.expect, _as_run(adapter.noop(fixture.hook_event)))
        assert not problem, problem
        return
    assert event.platform == fixture.platform
    for decision in decisions_for(fixture, event):
        problem = evaluate(fixture.expect, _as_run(adapter.render(event, decision)))
        assert not problem, f"{decision}: {problem}"


@pytest.mark.parametrize("fixture", ALL, ids=[f.id for f in ALL])
def test_adapter_noop_is_a_passthrough_exit_0(fixture: Fixture) -> None:
    output = platforms.load(fixture.platform).noop(fixture.hook_event)
    assert output.exit_code == 0
    assert output.stderr is None
