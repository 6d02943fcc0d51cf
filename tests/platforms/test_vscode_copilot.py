"""VS Code Copilot: nested and flat keys in every answer."""

from pathlib import Path

import pytest

from ctxmode.hookevent import HookDecision
from ctxmode.platforms import vscode_copilot

from .support import answer, fixture, fixture_env, silent

ENV = fixture_env("vscode-copilot.pretooluse.shell-curl")


def _parse(fixture_id, event=None, env=None, **changes):
    payload = {**fixture(fixture_id), **changes}
    parsed = vscode_copilot.parse(event or fixture_id.split(".")[1], payload, env or ENV)
    assert parsed is not None
    return parsed


@pytest.mark.parametrize(
    ("fixture_id", "tool"),
    [("vscode-copilot.pretooluse.shell-curl", "Bash"),
     ("vscode-copilot.pretooluse.read-file", "Read"),
     ("vscode-copilot.pretooluse.grep-search", "Grep"),
     ("vscode-copilot.pretooluse.fetch-webpage", "WebFetch"),
     ("vscode-copilot.posttooluse.replace-string", "Edit")],
)  # fmt: skip
def test_vscode_tool_names_become_canonical(fixture_id, tool):
    event = _parse(fixture_id)
    assert event.tool == tool
    assert event.session_id == "b3c0a7e2-61f4-4d2a-8f9e-0c1d2e3f4a5b"


def test_own_mcp_tool_is_ctx_and_others_are_external():
    own = _parse("vscode-copilot.pretooluse.mcp-own-ctx-search")
    assert (own.tool, own.mcp_server, own.mcp_tool) == ("ctx", "ctxmode", "ctx_search")
    other = _parse("vscode-copilot.pretooluse.mcp-own-ctx-search", tool_name="mcp_github_get_me")
    assert (other.tool, other.mcp_server) == ("mcp", "github")


def test_source_new_is_a_startup():
    assert _parse("vscode-copilot.sessionstart.new").source == "startup"


def test_project_is_the_payload_cwd_not_where_vscode_was_launched():
    event = _parse("vscode-copilot.pretooluse.read-file", env={"VSCODE_CWD": "/home/dev"})
    assert event.project_dir == Path("/home/dev/projects/acme-api")


def test_deny_is_nested_and_flat():
    event = _parse("vscode-copilot.pretooluse.fetch-webpage")
    out = answer(vscode_copilot.render(event, HookDecision("deny", reason="r")))
    assert out == {
        "permissionDecision": "deny",
        "permissionDecisionReason": "r",
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "r",
        },
    }


def test_modify_carries_the_full_run_in_terminal_schema_both_ways():
    event = _parse("vscode-copilot.pretooluse.shell-curl")
    decision = HookDecision("modify", updated_input={"command": "echo 'ctx_fetch_and_index'"})
    out = answer(vscode_copilot.render(event, decision))
    full = {
        "command": "echo 'ctx_fetch_and_index'",
        "explanation": "Fetch the latest VS Code release metadata",
        "isBackground": False,
    }
    assert out["hookSpecificOutput"]["updatedInput"] == full
    assert out["hookSpecificOutput"]["permissionDecision"] == "allow"
    assert (out["permissionDecision"], out["modifiedArgs"]) == ("allow", full)


def test_pre_tool_context_is_nested_only():
    event = _parse("vscode-copilot.pretooluse.read-file")
    out = answer(vscode_copilot.render(event, HookDecision("context", context="n")))
    assert out == {"hookSpecificOutput": {"hookEventName": "PreToolUse", "additionalContext": "n"}}


@pytest.mark.parametrize(
    ("fixture_id", "name"),
    [("vscode-copilot.posttooluse.replace-string", "PostToolUse"),
     ("vscode-copilot.sessionstart.new", "SessionStart")],
)  # fmt: skip
def test_context_after_the_call_is_nested_and_flat(fixture_id, name):
    out = answer(vscode_copilot.render(_parse(fixture_id), HookDecision("context", context="c")))
    assert out == {
        "additionalContext": "c",
        "hookSpecificOutput": {"hookEventName": name, "additionalContext": "c"},
    }


def test_prompt_and_pre_compact_have_no_context_channel():
    prompt = _parse("vscode-copilot.sessionstart.new", "userpromptsubmit", prompt="hi")
    assert prompt.prompt == "hi"
    assert silent(vscode_copilot.render(prompt, HookDecision("context", context="c")))
    compact = _parse("vscode-copilot.precompact.auto")
    assert silent(vscode_copilot.render(compact, HookDecision("context", context="c")))


def test_noop_prints_nothing():
    assert silent(vscode_copilot.noop("pretooluse"))
