"""Gemini CLI."""

import pytest

from ctxmode.hookevent import HookDecision
from ctxmode.platforms import gemini_cli

from .support import answer, fixture, fixture_env, silent

ENV = fixture_env("gemini-cli.beforetool.shell-curl")


def _parse(fixture_id, event=None, **changes):
    payload = {**fixture(fixture_id), **changes}
    parsed = gemini_cli.parse(event or fixture_id.split(".")[1], payload, ENV)
    assert parsed is not None
    return parsed


@pytest.mark.parametrize(
    ("native", "canonical"),
    [("beforetool", "pre_tool"), ("aftertool", "post_tool"), ("precompress", "pre_compact"),
     ("sessionstart", "session_start"), ("beforeagent", "prompt_submit"), ("afteragent", "stop")],
)  # fmt: skip
def test_gemini_events_map_to_canonical_ones(native, canonical):
    assert _parse("gemini-cli.sessionstart.startup", native).event == canonical


@pytest.mark.parametrize(
    ("fixture_id", "tool"),
    [("gemini-cli.beforetool.shell-curl", "Bash"), ("gemini-cli.beforetool.read-file", "Read"),
     ("gemini-cli.beforetool.web-fetch", "WebFetch"), ("gemini-cli.aftertool.replace", "Edit")],
)  # fmt: skip
def test_gemini_tool_names_become_canonical(fixture_id, tool):
    assert _parse(fixture_id).tool == tool


def test_mcp_context_identifies_own_tools_whatever_the_name():
    for name in ("mcp__ctxmode__ctx_fetch_and_index", "fetch_and_index", "mcp_ctxmode_fetch"):
        event = _parse("gemini-cli.beforetool.mcp-own-ctx-fetch", tool_name=name)
        assert (event.tool, event.mcp_server, event.mcp_tool) == (
            "ctx",
            "ctxmode",
            "ctx_fetch_and_index",
        )


def test_mcp_context_of_another_server_is_external():
    event = _parse(
        "gemini-cli.beforetool.mcp-own-ctx-fetch",
        tool_name="search",
        mcp_context={"server_name": "brave", "tool_name": "search"},
    )
    assert (event.tool, event.mcp_server, event.mcp_tool) == ("mcp", "brave", "search")


def test_session_id_falls_back_to_the_environment():
    payload = fixture("gemini-cli.beforetool.shell-curl")
    del payload["session_id"]
    event = gemini_cli.parse("beforetool", payload, ENV)
    assert event is not None and event.session_id == ENV["GEMINI_SESSION_ID"]


def test_failed_calls_are_post_tool_failures():
    error = _parse("gemini-cli.aftertool.replace", tool_response={"error": {"message": "boom"}})
    assert (error.event, error.error) == ("post_tool_failure", "boom")
    shell = _parse(
        "gemini-cli.aftertool.shell-git-commit",
        tool_response={"llmContent": "Output: nope\nExit Code: 1", "returnDisplay": "nope"},
    )
    assert shell.event == "post_tool_failure"
    assert _parse("gemini-cli.aftertool.shell-git-commit").event == "post_tool"


def test_a_failed_shell_run_keeps_what_it_printed_without_geminis_frame():
    printed = 'ledger/report.py:16: error: Argument 1 has incompatible type "int"  [arg-type]'
    framed = (
        f"<untrusted_context>\nOutput: {printed}\nFound 1 error in 1 file\n"
        "Exit Code: 1\nProcess Group PGID: 6006\n</untrusted_context>"
    )
    for response in ({"llmContent": framed}, {"llmContent": framed, "returnDisplay": printed}):
        shell = _parse("gemini-cli.aftertool.shell-git-commit", tool_response=response)
        assert shell.error is not None
        assert shell.error.startswith(f"Exit code 1\n{printed}")
        assert "PGID" not in shell.error and "Output:" not in shell.error


def test_deny_is_the_top_level_decision():
    event = _parse("gemini-cli.beforetool.web-fetch")
    out = answer(gemini_cli.render(event, HookDecision("deny", reason="use ctx_fetch_and_index")))
    assert out == {"decision": "deny", "reason": "use ctx_fetch_and_index"}


def test_ask_becomes_a_deny():
    event = _parse("gemini-cli.beforetool.shell-curl")
    out = answer(gemini_cli.render(event, HookDecision("ask", reason="ask rule")))
    assert out["decision"] == "deny" and out["reason"].startswith("ask rule")


def test_modify_sends_only_the_changed_keys():
    event = _parse("gemini-cli.beforetool.shell-curl")
    decision = HookDecision(
        "modify", updated_input={**event.tool_input, "command": "echo 'ctx_fetch_and_index'"}
    )
    assert answer(gemini_cli.render(event, decision)) == {
        "hookSpecificOutput": {
            "hookEventName": "BeforeTool",
            "tool_input": {"command": "echo 'ctx_fetch_and_index'"},
        }
    }


def test_before_tool_context_is_dropped():
    event = _parse("gemini-cli.beforetool.read-file")
    assert silent(gemini_cli.render(event, HookDecision("context", context="nudge")))


@pytest.mark.parametrize(
    ("fixture_id", "event", "name"),
    [("gemini-cli.aftertool.replace", None, "AfterTool"),
     ("gemini-cli.sessionstart.startup", None, "SessionStart"),
     ("gemini-cli.sessionstart.startup", "beforeagent", "BeforeAgent")],
)  # fmt: skip
def test_context_channels(fixture_id, event, name):
    parsed = _parse(fixture_id, event)
    out = answer(gemini_cli.render(parsed, HookDecision("context", context="c")))
    assert out == {"hookSpecificOutput": {"hookEventName": name, "additionalContext": "c"}}


def test_precompress_prints_nothing():
    event = _parse("gemini-cli.precompress.auto")
    assert silent(gemini_cli.render(event, HookDecision("context", context="snapshot")))


def test_noop_prints_nothing():
    assert silent(gemini_cli.noop("beforetool"))
