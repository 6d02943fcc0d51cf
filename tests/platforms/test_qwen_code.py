"""Qwen Code: the Claude protocol with Gemini tool names."""

from pathlib import Path

import pytest

from ctxmode.hookevent import HookDecision
from ctxmode.platforms import qwen_code

from .support import answer, fixture, fixture_env, silent

ENV = fixture_env("qwen-code.pretooluse.shell-curl")


def _parse(fixture_id, **changes):
    event = qwen_code.parse(fixture_id.split(".")[1], {**fixture(fixture_id), **changes}, ENV)
    assert event is not None
    return event


@pytest.mark.parametrize(
    ("fixture_id", "tool"),
    [
        ("qwen-code.pretooluse.shell-curl", "Bash"),
        ("qwen-code.pretooluse.read-file", "Read"),
        ("qwen-code.pretooluse.web-fetch", "WebFetch"),
        ("qwen-code.posttooluse.edit", "Edit"),
    ],
)
def test_qwen_tool_names_become_canonical(fixture_id, tool):
    event = _parse(fixture_id)
    assert event.tool == tool
    assert event.session_id == "a7c9e1f3-5b2d-4e6f-8a0c-1d3e5f7a9b2c"
    assert event.project_dir == Path("/home/dev/projects/acme-api")


def test_own_mcp_tool_is_ctx():
    event = _parse("qwen-code.pretooluse.shell-curl", tool_name="mcp__ctxmode__ctx_search")
    assert (event.tool, event.mcp_tool) == ("ctx", "ctx_search")


def test_submitted_prompt_is_the_user_text():
    payload = {
        **fixture("qwen-code.sessionstart.startup"),
        "prompt": "tool result",
        "submitted_prompt": "fix it",
    }
    event = qwen_code.parse("userpromptsubmit", payload, ENV)
    assert event is not None and event.prompt == "fix it"


def test_pre_tool_nudge_is_dropped():
    event = _parse("qwen-code.pretooluse.read-file")
    assert silent(qwen_code.render(event, HookDecision("context", context="nudge")))


def test_a_redirect_is_a_deny_with_its_reason():
    # Qwen Code 0.15 never applies a PreToolUse updatedInput: the call would run unchanged.
    event = _parse("qwen-code.pretooluse.shell-curl")
    decision = HookDecision("modify", updated_input={"command": "echo 'use ctx_fetch_and_index'"})
    spec = answer(qwen_code.render(event, decision))["hookSpecificOutput"]
    assert spec["permissionDecision"] == "deny"
    assert "ctx_fetch_and_index" in spec["permissionDecisionReason"]
    assert "updatedInput" not in spec


def test_deny_is_native_and_ask_is_a_deny_that_says_so():
    # An "ask" blocks the call like a deny (the user is not asked).
    event = _parse("qwen-code.pretooluse.web-fetch")
    spec = answer(qwen_code.render(event, HookDecision("deny", reason="r")))["hookSpecificOutput"]
    assert (spec["permissionDecision"], spec["permissionDecisionReason"]) == ("deny", "r")
    spec = answer(qwen_code.render(event, HookDecision("ask", reason="r")))["hookSpecificOutput"]
    assert spec["permissionDecision"] == "deny"
    assert (
        spec["permissionDecisionReason"].startswith("r") and spec["permissionDecisionReason"] != "r"
    )


def test_prompt_context_is_delivered():
    # The routing block goes with the first prompt: Qwen drops SessionStart answers.
    payload = {**fixture("qwen-code.sessionstart.startup"), "prompt": "fix it"}
    event = qwen_code.parse("userpromptsubmit", payload, ENV)
    assert event is not None
    spec = answer(qwen_code.render(event, HookDecision("context", context="routing")))
    assert spec == {
        "hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "routing"}
    }


def test_post_tool_context_is_delivered():
    event = _parse("qwen-code.posttooluse.edit")
    spec = answer(qwen_code.render(event, HookDecision("context", context="n")))
    assert spec == {
        "hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "n"}
    }


def test_noop_prints_nothing():
    assert silent(qwen_code.noop("pretooluse"))
