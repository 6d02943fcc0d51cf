"""Cursor: always a JSON object, the model reads agent_message."""

from pathlib import Path

import pytest

from ctxmode.hookevent import ALLOW, RECORD, HookDecision
from ctxmode.platforms import cursor

from .support import answer, fixture


def _parse(fixture_id, event=None, env=None, **changes):
    payload = {**fixture(fixture_id), **changes}
    parsed = cursor.parse(event or fixture_id.split(".")[1], payload, env or {})
    assert parsed is not None
    return parsed


def test_cursor_payload_becomes_an_event():
    event = _parse("cursor.pretooluse.shell-curl")
    assert (event.event, event.tool, event.native_tool) == ("pre_tool", "Bash", "Shell")
    assert event.session_id == "c1a2b3d4-e5f6-4789-a0b1-c2d3e4f5a6b7"
    assert event.project_dir == Path("/home/dev/projects/acme-api")


def test_project_is_the_first_workspace_root_even_from_a_subdirectory():
    event = _parse("cursor.pretooluse.shell-safe", cwd="/home/dev/projects/acme-api/src")
    assert event.project_dir == Path("/home/dev/projects/acme-api")
    assert event.cwd == "/home/dev/projects/acme-api/src"


def test_mcp_tools_without_a_server_segment():
    event = _parse("cursor.pretooluse.mcp-own-ctx-execute")
    assert (event.tool, event.mcp_tool) == ("ctx", "ctx_execute")
    other = _parse("cursor.pretooluse.mcp-own-ctx-execute", tool_name="MCP:list_issues")
    assert (other.tool, other.mcp_tool) == ("mcp", "list_issues")


def test_post_tool_output_and_errors():
    event = _parse("cursor.posttooluse.shell-git-commit")
    assert event.event == "post_tool"
    assert isinstance(event.tool_response, str) and "rate limiter" in event.tool_response
    failed = _parse("cursor.posttooluse.shell-git-commit", error_message="exit 1: nothing added")
    assert (failed.event, failed.error) == ("post_tool_failure", "exit 1: nothing added")


def test_shell_execution_hooks_are_bash_calls():
    payload = {**fixture("cursor.pretooluse.shell-curl"), "command": "curl https://x.dev"}
    event = cursor.parse("beforeshellexecution", payload, {})
    assert event is not None
    assert (event.event, event.tool, event.tool_input) == (
        "pre_tool",
        "Bash",
        {"command": "curl https://x.dev"},
    )


def test_session_id_from_the_trace_id_when_missing():
    payload = fixture("cursor.stop.completed")
    del payload["conversation_id"]
    event = cursor.parse("stop", payload, {"CURSOR_TRACE_ID": "trace-1"})
    assert event is not None and event.session_id == "trace-1"


def test_deny_tells_the_model_in_agent_message():
    event = _parse("cursor.pretooluse.shell-curl")
    out = answer(cursor.render(event, HookDecision("deny", reason="use ctx_fetch_and_index")))
    assert out == {
        "permission": "deny",
        "agent_message": "use ctx_fetch_and_index",
        "user_message": "use ctx_fetch_and_index",
    }


def test_redirect_is_a_deny():
    event = _parse("cursor.pretooluse.shell-curl")
    decision = HookDecision("modify", updated_input={"command": "echo 'use ctx_fetch_and_index'"})
    out = answer(cursor.render(event, decision))
    assert (out["permission"], out["agent_message"]) == ("deny", "use ctx_fetch_and_index")


def test_subagent_prompt_rewrite_is_updated_input_without_a_permission():
    event = _parse("cursor.pretooluse.shell-curl", tool_name="Task", tool_input={"prompt": "p"})
    out = answer(cursor.render(event, HookDecision("modify", updated_input={"prompt": "p2"})))
    assert out == {"updated_input": {"prompt": "p2"}}


def test_ask_and_context():
    event = _parse("cursor.pretooluse.shell-safe")
    assert answer(cursor.render(event, HookDecision("ask", reason="r")))["permission"] == "ask"
    out = answer(cursor.render(event, HookDecision("context", context="n")))
    assert out == {"agent_message": "n"}


@pytest.mark.parametrize("decision", [ALLOW, RECORD])
def test_no_opinion_is_an_empty_object(decision):
    assert answer(cursor.render(_parse("cursor.pretooluse.shell-safe"), decision)) == {}
    assert answer(cursor.render(_parse("cursor.posttooluse.shell-git-commit"), decision)) == {}


def test_session_start_context_and_stop():
    start = _parse("cursor.sessionstart.startup")
    out = answer(cursor.render(start, HookDecision("context", context="block")))
    assert out == {"additional_context": "block"}
    stop = _parse("cursor.stop.completed")
    assert answer(cursor.render(stop, HookDecision("context", context="go on"))) == {}


def test_prompt_submission_continues():
    event = _parse("cursor.sessionstart.startup", "beforesubmitprompt", prompt="hi")
    assert event.prompt == "hi"
    assert answer(cursor.render(event, HookDecision("deny", reason="r"))) == {"continue": True}


def test_noop_is_never_empty():
    assert answer(cursor.noop("pretooluse")) == {}
    assert answer(cursor.noop("beforesubmitprompt")) == {"continue": True}
