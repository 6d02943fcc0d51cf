"""Claude Code: the reference protocol."""

from pathlib import Path

import pytest

from ctxmode.hookevent import ALLOW, RECORD, HookDecision
from ctxmode.platforms import claude_code

from .support import answer, fixture, fixture_env, silent

ENV = fixture_env("claude-code.pretooluse.shell-curl")
SESSION = "4f1c2b9e-8a7d-4e3b-9c61-2d5e7f0a1b3c"


def _parse(fixture_id, event=None, **changes):
    payload = {**fixture(fixture_id), **changes}
    return claude_code.parse(event or fixture_id.split(".")[1], payload, ENV)


def test_pretooluse_payload_becomes_a_pre_tool_event():
    event = _parse("claude-code.pretooluse.shell-curl")
    assert event is not None
    assert (event.event, event.tool, event.native_tool) == ("pre_tool", "Bash", "Bash")
    assert event.session_id == SESSION
    assert event.project_dir == Path("/home/dev/projects/acme-api")
    assert event.cwd == "/home/dev/projects/acme-api"
    assert event.transcript_path is not None and event.transcript_path.endswith(".jsonl")
    assert event.tool_input["timeout"] == 120000
    assert event.subagent is False


def test_session_id_falls_back_to_the_transcript_uuid():
    payload = fixture("claude-code.pretooluse.read")
    del payload["session_id"]
    event = claude_code.parse("pretooluse", payload, {})
    assert event is not None and event.session_id == SESSION


def test_project_dir_falls_back_to_cwd():
    event = claude_code.parse("pretooluse", fixture("claude-code.pretooluse.read"), {})
    assert event is not None and event.project_dir == Path("/home/dev/projects/acme-api")


def test_plugin_scoped_own_tool_is_ctx():
    event = _parse("claude-code.pretooluse.mcp-own-ctx-batch-execute")
    assert event is not None
    assert (event.tool, event.mcp_tool) == ("ctx", "ctx_batch_execute")


def test_external_mcp_tool_keeps_server_and_leaf():
    event = _parse("claude-code.pretooluse.mcp-external")
    assert event is not None
    assert (event.tool, event.mcp_server, event.mcp_tool) == (
        "mcp",
        "slack",
        "conversations_history",
    )


def test_failing_bash_arrives_with_its_error():
    event = _parse("claude-code.posttoolusefailure.shell-failing-test")
    assert event is not None and event.event == "post_tool_failure"
    assert event.error is not None and "test_create_user_rejects_bad_email" in event.error


@pytest.mark.parametrize(
    ("value", "source"),
    [("startup", "startup"), ("resume", "resume"), ("fork", "resume"), ("clear", "clear"),
     ("compact", "compact"), (None, "startup")],
)  # fmt: skip
def test_session_start_source(value, source):
    event = _parse("claude-code.sessionstart.startup", source=value)
    assert event is not None and (event.event, event.source) == ("session_start", source)


def test_task_tools_and_the_legacy_task_subagent_are_told_apart():
    assert _parse("claude-code.posttooluse.task-update").tool == "Task"
    event = _parse("claude-code.pretooluse.read", tool_name="Task", tool_input={"prompt": "p"})
    assert event is not None and event.tool == "Agent"


def test_calls_from_inside_a_subagent_are_marked():
    event = _parse("claude-code.pretooluse.read", agent_id="a1", agent_type="Explore")
    assert event is not None and event.subagent is True


def test_prompt_submit_carries_the_prompt():
    payload = {**fixture("claude-code.sessionstart.startup"), "prompt": "fix the bug"}
    event = claude_code.parse("userpromptsubmit", payload, ENV)
    assert event is not None and (event.event, event.prompt) == ("prompt_submit", "fix the bug")


def test_unknown_event_is_not_handled():
    assert claude_code.parse("notification", fixture("claude-code.pretooluse.read"), ENV) is None


@pytest.mark.parametrize(
    "fixture_id",
    ["vscode-copilot.pretooluse.shell-curl", "cursor.pretooluse.shell-curl"],
)
def test_vscode_and_cursor_payloads_on_a_claude_hook_pass_through(fixture_id):
    assert claude_code.parse("pretooluse", fixture(fixture_id), {}) is None


def _pre(**changes):
    event = _parse("claude-code.pretooluse.shell-curl", **changes)
    assert event is not None
    return event


def test_deny_reason_goes_to_permission_decision_reason():
    out = answer(claude_code.render(_pre(), HookDecision("deny", reason="use ctx_fetch_and_index")))
    assert out == {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "use ctx_fetch_and_index",
        }
    }


def test_ask_is_native():
    out = answer(claude_code.render(_pre(), HookDecision("ask", reason="matches ask rule")))
    assert out["hookSpecificOutput"]["permissionDecision"] == "ask"


def test_modify_sends_the_whole_input():
    decision = HookDecision("modify", updated_input={"command": "echo 'use ctx_execute'"})
    spec = answer(claude_code.render(_pre(), decision))["hookSpecificOutput"]
    assert spec["permissionDecision"] == "allow"
    assert spec["updatedInput"] == {
        "command": "echo 'use ctx_execute'",
        "description": "List open issues on psf/requests",
        "timeout": 120000,
    }


def test_context_has_no_permission_decision():
    out = answer(claude_code.render(_pre(), HookDecision("context", context="nudge")))
    assert out == {
        "hookSpecificOutput": {"hookEventName": "PreToolUse", "additionalContext": "nudge"}
    }


def test_allow_and_record_print_nothing():
    assert silent(claude_code.render(_pre(), ALLOW))
    assert silent(claude_code.render(_pre(), RECORD))


@pytest.mark.parametrize(
    ("fixture_id", "name"),
    [
        ("claude-code.posttooluse.edit", "PostToolUse"),
        ("claude-code.posttoolusefailure.shell-failing-test", "PostToolUseFailure"),
        ("claude-code.sessionstart.startup", "SessionStart"),
    ],
)
def test_context_after_the_call_names_its_event(fixture_id, name):
    event = _parse(fixture_id)
    out = answer(claude_code.render(event, HookDecision("context", context="block")))
    assert out == {"hookSpecificOutput": {"hookEventName": name, "additionalContext": "block"}}


def test_compaction_and_stop_are_never_blocked():
    compact = _parse("claude-code.precompact.auto")
    for decision in (HookDecision("deny", reason="no"), HookDecision("context", context="x")):
        assert silent(claude_code.render(compact, decision))
    stop = claude_code.parse("stop", fixture("claude-code.precompact.auto"), ENV)
    assert stop is not None and silent(claude_code.render(stop, HookDecision("deny", reason="x")))


def test_session_start_is_never_blocked():
    event = _parse("claude-code.sessionstart.startup")
    assert silent(claude_code.render(event, HookDecision("deny", reason="no")))


def test_noop_prints_nothing():
    assert silent(claude_code.noop("pretooluse"))
