"""GitHub Copilot CLI: camelCase payloads and flat answers (checked against 1.0.102)."""

import json
from pathlib import Path

from ctxmode.hookevent import HookDecision
from ctxmode.platforms import claude_code, copilot_cli

from .support import answer, fixture, fixture_env, silent

CURL = "copilot-cli.pretooluse.shell-curl"
ENV = fixture_env(CURL)


def _parse(fixture_id, event=None, **changes):
    payload = {**fixture(fixture_id), **changes}
    parsed = copilot_cli.parse(event or fixture_id.split(".")[1], payload, ENV)
    assert parsed is not None
    return parsed


def test_camel_case_payload():
    event = _parse(CURL)
    assert (event.event, event.tool, event.native_tool) == ("pre_tool", "Bash", "bash")
    assert event.session_id == "7c0e3d52-91ab-4f6e-b2d4-5a8c1e9f3b70"
    assert event.project_dir == Path("/home/dev/projects/acme-api")
    assert event.command and event.command.startswith("curl -s https://pypi.org")


def test_mcp_tools_are_server_dash_tool():
    own = _parse(CURL, toolName="ctxmode-ctx_search", toolArgs={"queries": ["x"]})
    assert (own.tool, own.mcp_server, own.mcp_tool) == ("ctx", "ctxmode", "ctx_search")
    other = _parse(CURL, toolName="github-mcp-server-get_issue", toolArgs={})
    assert (other.tool, other.mcp_server, other.mcp_tool) == (
        "mcp",
        "github-mcp-server",
        "get_issue",
    )
    for name, tool in (("view", "Read"), ("create", "Write"), ("edit", "Edit"), ("task", "Agent")):
        assert _parse(CURL, toolName=name, toolArgs={}).tool == tool


def test_a_shell_command_that_exits_non_zero_is_a_failed_call():
    failed = _parse("copilot-cli.posttooluse.shell-failing-test")
    assert failed.event == "post_tool_failure"
    assert failed.error and "exit code 1>" in failed.error
    text = "ok\n<shellId: 0 completed with exit code 0>"
    ok = {"resultType": "success", "textResultForLlm": text}
    assert _parse("copilot-cli.posttooluse.shell-failing-test", toolResult=ok).event == "post_tool"
    refused = {"resultType": "failure", "textResultForLlm": "no such file"}
    event = _parse("copilot-cli.posttooluse.create", toolResult=refused)
    assert (event.event, event.error) == ("post_tool_failure", "no such file")


def test_events_of_the_cli():
    assert _parse("copilot-cli.userpromptsubmitted.prompt").prompt == (
        "Add email validation to the user endpoint"
    )
    assert _parse("copilot-cli.sessionstart.new").source == "startup"
    assert _parse("copilot-cli.sessionstart.resume").source == "resume"
    assert _parse("copilot-cli.precompact.manual").event == "pre_compact"
    assert copilot_cli.parse("sessionend", fixture("copilot-cli.sessionstart.new"), ENV) is None


def test_redirect_is_modified_args_and_deny_is_flat():
    event = _parse(CURL)
    redirect = HookDecision("modify", reason="use ctx", updated_input={"command": "echo use"})
    out = answer(copilot_cli.render(event, redirect))
    assert out == {
        "permissionDecision": "allow",
        "modifiedArgs": {"command": "echo use", "description": "Fetch FastAPI package metadata"},
    }
    denied = answer(copilot_cli.render(event, HookDecision("deny", reason="blocked")))
    assert denied == {"permissionDecision": "deny", "permissionDecisionReason": "blocked"}
    nudge = answer(copilot_cli.render(event, HookDecision("context", context="tip")))
    assert nudge == {"additionalContext": "tip"}
    assert silent(copilot_cli.render(event, HookDecision()))


def test_context_goes_where_the_cli_reads_it():
    for fid in (
        "copilot-cli.sessionstart.new",
        "copilot-cli.userpromptsubmitted.prompt",
        "copilot-cli.posttooluse.create",
    ):
        out = copilot_cli.render(_parse(fid), HookDecision("context", context="snap"))
        assert answer(out) == {"additionalContext": "snap"}
    compact = _parse("copilot-cli.precompact.manual")
    assert silent(copilot_cli.render(compact, HookDecision("context", context="snap")))
    assert silent(copilot_cli.noop("pretooluse"))


def test_claude_code_hooks_pass_copilot_cli_calls_through():
    """Copilot CLI also runs .claude/settings.json hooks, with its VS Code-style payload."""
    payload = {
        "hook_event_name": "PreToolUse",
        "session_id": "7c0e3d52-91ab-4f6e-b2d4-5a8c1e9f3b70",
        "timestamp": "2026-12-01T20:53:49.059Z",
        "cwd": "/home/dev/projects/acme-api",
        "tool_name": "Bash",
        "tool_input": {"command": "curl https://example.com"},
    }
    assert claude_code.parse("pretooluse", payload, {"COPILOT_CLI": "1"}) is None
    assert claude_code.parse("pretooluse", payload, {}) is not None
    assert json.dumps(payload)  # the payload itself is left as it was
