"""Kiro CLI: exit 2 + stderr to block, plain text for context."""

import os
from pathlib import Path

import pytest

from ctxmode.hookevent import HookDecision
from ctxmode.platforms import Output, kiro

from .support import fixture, silent


def _parse(fixture_id, event=None, **changes):
    parsed = kiro.parse(event or fixture_id.split(".")[1], {**fixture(fixture_id), **changes}, {})
    assert parsed is not None
    return parsed


def test_session_is_the_parent_process():
    event = _parse("kiro.pretooluse.shell-safe")
    assert event.session_id == f"pid-{os.getppid()}"
    assert event.project_dir == Path("/home/dev/projects/acme-api")


@pytest.mark.parametrize(
    ("fixture_id", "changes", "tool"),
    [("kiro.pretooluse.shell-safe", {}, "Bash"), ("kiro.pretooluse.shell-curl", {}, "Bash"),
     ("kiro.pretooluse.fs-read", {}, "Read"), ("kiro.posttooluse.fs-write", {}, "Edit"),
     ("kiro.posttooluse.fs-write", {"tool_input": {"command": "create", "path": "a"}}, "Write")],
)  # fmt: skip
def test_kiro_tool_names_become_canonical(fixture_id, changes, tool):
    assert _parse(fixture_id, **changes).tool == tool


def test_mcp_tools_are_at_server_slash_tool():
    own = _parse("kiro.pretooluse.mcp-own-ctx-execute")
    assert (own.tool, own.mcp_server, own.mcp_tool) == ("ctx", "ctxmode", "ctx_execute")
    other = _parse("kiro.pretooluse.mcp-own-ctx-execute", tool_name="@git/git_status")
    assert (other.tool, other.mcp_server) == ("mcp", "git")


def test_agent_spawn_is_a_session_start():
    event = _parse("kiro.agentspawn.startup")
    assert (event.event, event.source) == ("session_start", "startup")


def test_unsuccessful_calls_are_failures():
    event = _parse("kiro.posttooluse.fs-write", tool_response={"success": False, "result": ["no"]})
    assert (event.event, event.error) == ("post_tool_failure", "no")


def test_deny_exits_2_with_the_reason_on_stderr():
    event = _parse("kiro.pretooluse.shell-curl")
    out = kiro.render(event, HookDecision("deny", reason="use ctx_fetch_and_index"))
    assert out == Output(stderr="use ctx_fetch_and_index", exit_code=2)


def test_redirect_and_ask_block_the_same_way():
    event = _parse("kiro.pretooluse.shell-curl")
    redirect = HookDecision("modify", updated_input={"command": "echo 'use ctx_execute'"})
    assert kiro.render(event, redirect) == Output(stderr="use ctx_execute", exit_code=2)
    ask = kiro.render(event, HookDecision("ask", reason="ask rule"))
    assert ask.exit_code == 2 and (ask.stderr or "").startswith("ask rule")


def test_pre_tool_context_is_impossible():
    assert silent(
        kiro.render(_parse("kiro.pretooluse.fs-read"), HookDecision("context", context="n"))
    )


def test_context_is_plain_text():
    spawn = _parse("kiro.agentspawn.startup")
    assert kiro.render(spawn, HookDecision("context", context="<block/>")) == Output(
        stdout="<block/>"
    )
    prompt = _parse("kiro.agentspawn.startup", "userpromptsubmit", prompt="hi")
    assert prompt.prompt == "hi"
    assert kiro.render(prompt, HookDecision("context", context="c")) == Output(stdout="c")


def test_post_tool_prints_nothing():
    event = _parse("kiro.posttooluse.fs-write")
    assert silent(kiro.render(event, HookDecision("context", context="c")))
    assert silent(kiro.noop("pretooluse"))
