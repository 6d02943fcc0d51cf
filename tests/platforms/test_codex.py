"""Codex CLI: Claude shapes, deny-first."""

import pytest

from ctxmode.hookevent import HookDecision
from ctxmode.platforms import codex

from .support import answer, fixture, silent

REDIRECT = "use ctx_fetch_and_index(url, source) instead of curl"


def _parse(fixture_id, event=None, **changes):
    parsed = codex.parse(event or fixture_id.split(".")[1], {**fixture(fixture_id), **changes}, {})
    assert parsed is not None
    return parsed


def test_codex_payload_becomes_an_event():
    event = _parse("codex.pretooluse.shell-curl")
    assert (event.event, event.tool) == ("pre_tool", "Bash")
    assert event.session_id == "019a6e2c-7b41-7d23-9f0e-4a5b6c7d8e9f"
    assert str(event.project_dir) == "/home/dev/projects/acme-api"


def test_own_mcp_tool_is_ctx():
    event = _parse("codex.pretooluse.mcp-own-ctx-execute")
    assert (event.tool, event.mcp_server, event.mcp_tool) == ("ctx", "ctxmode", "ctx_execute")


def test_apply_patch_is_an_edit_or_a_write():
    assert _parse("codex.posttooluse.apply-patch").tool == "Edit"
    patch = "*** Begin Patch\n*** Add File: src/new.py\n+x = 1\n*** End Patch\n"
    assert _parse("codex.posttooluse.apply-patch", tool_input={"command": patch}).tool == "Write"


def test_a_non_zero_exit_is_a_failed_call():
    event = _parse("codex.posttooluse.shell-failing-test")
    assert event.event == "post_tool_failure"
    assert event.error is not None and "test_create_user_rejects_bad_email" in event.error
    ok = _parse("codex.posttooluse.shell-failing-test", tool_response="Exit code: 0\nOutput:\n")
    assert ok.event == "post_tool"


def test_redirect_is_a_deny_with_the_redirect_text():
    event = _parse("codex.pretooluse.shell-curl")
    decision = HookDecision("modify", updated_input={"command": f"echo '{REDIRECT}'"})
    assert answer(codex.render(event, decision)) == {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": REDIRECT,
        }
    }


@pytest.mark.parametrize("decision", [HookDecision("ask", reason="ask rule"), HookDecision("deny")])
def test_every_block_is_a_deny_with_a_non_empty_reason(decision):
    spec = answer(codex.render(_parse("codex.pretooluse.shell-curl"), decision))
    assert spec["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert spec["hookSpecificOutput"]["permissionDecisionReason"].strip()


def test_pre_tool_nudge_is_dropped():
    event = _parse("codex.pretooluse.shell-git-status")
    assert silent(codex.render(event, HookDecision("context", context="nudge")))


def test_failed_call_context_is_answered_as_post_tool_use():
    event = _parse("codex.posttooluse.shell-failing-test")
    spec = answer(codex.render(event, HookDecision("context", context="n")))["hookSpecificOutput"]
    assert spec == {"hookEventName": "PostToolUse", "additionalContext": "n"}


def test_pre_compact_prints_nothing():
    event = _parse("codex.precompact.auto")
    assert silent(codex.render(event, HookDecision("context", context="snapshot")))


def test_session_start_and_prompt_context():
    start = _parse("codex.sessionstart.startup")
    spec = answer(codex.render(start, HookDecision("context", context="block")))
    assert spec["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    prompt = _parse("codex.sessionstart.startup", "userpromptsubmit", prompt="go")
    assert prompt.prompt == "go"
    spec = answer(codex.render(prompt, HookDecision("context", context="n")))
    assert spec["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"


def test_noop_prints_nothing():
    assert silent(codex.noop("pretooluse"))
