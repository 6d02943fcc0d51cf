"""Antigravity CLI (agy): its own payload, deny/ask only. Antigravity (IDE) and Zed: MCP only."""

import pytest

from ctxmode.hookevent import HookDecision
from ctxmode.platforms import antigravity, antigravity_cli, zed

from .support import answer, fixture, silent


def _parse(fixture_id, event=None, **changes):
    payload = {**fixture(fixture_id), **changes}
    parsed = antigravity_cli.parse(event or fixture_id.split(".")[1], payload, {})
    assert parsed is not None
    return parsed


def test_agy_payload():
    event = _parse("antigravity-cli.pretooluse.run-command-curl")
    assert (event.tool, event.native_tool) == ("Bash", "run_command")
    assert event.command == "curl -s https://pypi.org/pypi/fastapi/json"
    assert event.tool_input["CommandLine"] == event.command  # agy's own arguments kept
    assert event.session_id == "b1f4e0c2-7d3a-4e59-9c1b-2a6f8d0e4c37"
    assert str(event.project_dir) == "/home/dev/projects/acme-api"
    url = _parse("antigravity-cli.pretooluse.read-url-content")
    assert (url.tool, url.urls) == ("WebFetch", ("https://docs.python.org/3/library/asyncio.html",))
    write = _parse("antigravity-cli.posttooluse.write-to-file")
    assert (write.tool, write.paths) == ("Write", ("/home/dev/projects/acme-api/notes.txt",))


def test_agy_project_from_the_workspace_and_failures():
    event = _parse(
        "antigravity-cli.posttooluse.write-to-file",
        workspace={"current_dir": "/w/other"},
        error="permission denied",
    )
    assert str(event.project_dir) == "/w/other"
    assert (event.event, event.error) == ("post_tool_failure", "permission denied")
    nameless = _parse("antigravity-cli.pretooluse.run-command-safe", conversationId=None)
    assert nameless.session_id.startswith("pid-")


def test_agy_answers_deny_or_ask_and_nothing_else():
    event = _parse("antigravity-cli.pretooluse.run-command-curl")
    redirect = HookDecision("modify", reason="use ctx", updated_input={"CommandLine": "echo"})
    assert answer(antigravity_cli.render(event, redirect)) == {
        "decision": "deny",
        "reason": "use ctx",
    }
    assert answer(antigravity_cli.render(event, HookDecision("ask", reason="sure?"))) == {
        "decision": "ask",
        "reason": "sure?",
    }
    assert silent(antigravity_cli.render(event, HookDecision()))
    assert silent(antigravity_cli.render(event, HookDecision("context", context="tip")))
    post = _parse("antigravity-cli.posttooluse.write-to-file")
    assert silent(antigravity_cli.render(post, HookDecision("context", context="x")))


@pytest.mark.parametrize("module", [antigravity, zed])
def test_mcp_only_hosts_have_no_hook_events(module):
    assert module.HOST.events == {}
    assert module.parse("pretooluse", {"tool_name": "Bash"}, {}) is None
    assert silent(module.noop("pretooluse"))
    assert module.HOST.mcp_clients
