"""Tool-name normalisation, MCP name parsing and cutting decisions down to a host."""

import pytest

from ctxmode.hookevent import HookDecision, HookEvent
from ctxmode.platforms.common import classify, own_leaf, reason_text, refine, split_mcp, verdict
from ctxmode.platforms.host import Host

FULL = Host("test", {})


@pytest.mark.parametrize(
    ("name", "tool", "server", "leaf"),
    [
        ("mcp__plugin_ctxmode_ctxmode__ctx_batch_execute", "ctx", "plugin_ctxmode_ctxmode",
         "ctx_batch_execute"),
        ("mcp__ctxmode__ctx_execute", "ctx", "ctxmode", "ctx_execute"),
        ("mcp__ctxmode__some_new_tool", "ctx", "ctxmode", "some_new_tool"),
        ("mcp__slack__conversations_history", "mcp", "slack", "conversations_history"),
        ("mcp__context-mode__ctx_search", "ctx", "context-mode", "ctx_search"),
        ("MCP:ctx_execute", "ctx", None, "ctx_execute"),
        ("MCP:linear_list_issues", "mcp", None, "linear_list_issues"),
        ("@ctxmode/ctx_execute", "ctx", "ctxmode", "ctx_execute"),
        ("@git/git_status", "mcp", "git", "git_status"),
        ("mcp_ctxmode_ctx_search", "ctx", "ctxmode", "ctx_search"),
        ("mcp_github_list_issues", "mcp", "github", "list_issues"),
        ("ctxmode__ctx_execute_file", "ctx", "ctxmode", "ctx_execute_file"),
        ("context-mode_ctx_search", "ctx", "context-mode", "ctx_search"),
        ("ctx_fetch_and_index", "ctx", None, "ctx_fetch_and_index"),
    ],
)  # fmt: skip
def test_mcp_names_of_every_host_are_recognised(name, tool, server, leaf):
    named = classify(name)
    assert (named.tool, named.mcp_server, named.mcp_tool) == (tool, server, leaf)
    assert named.native == name


@pytest.mark.parametrize(
    ("name", "tool"),
    [
        ("Bash", "Bash"), ("run_shell_command", "Bash"), ("run_in_terminal", "Bash"),
        ("execute_bash", "Bash"), ("shell", "Bash"), ("Shell", "Bash"), ("bash", "Bash"),
        ("exec_command", "Bash"), ("PowerShell", "Bash"),
        ("read_file", "Read"), ("read_many_files", "Read"), ("view", "Read"), ("fs_read", "Read"),
        ("grep_search", "Grep"), ("search_file_content", "Grep"), ("rg", "Grep"),
        ("web_fetch", "WebFetch"),
        ("mcp_web_fetch", "WebFetch"), ("fetch_webpage", "WebFetch"), ("webfetch", "WebFetch"),
        ("google_web_search", "WebSearch"),
        ("replace", "Edit"), ("replace_string_in_file", "Edit"), ("edit", "Edit"),
        ("write_file", "Write"), ("create_file", "Write"), ("create", "Write"),
        ("TaskUpdate", "Task"), ("todo_write", "Task"), ("manage_todo_list", "Task"),
        ("tracker_create_task", "Task"),
        ("Agent", "Agent"), ("Task", "Agent"), ("runSubagent", "Agent"), ("task", "Agent"),
        ("delegate_to_agent", "Agent"),
        ("Skill", "other"), ("list_dir", "other"),
    ],
)  # fmt: skip
def test_host_tool_names_become_canonical(name, tool):
    assert classify(name).tool == tool


def test_missing_tool_name_is_no_tool():
    assert classify(None).tool is None
    assert classify("").tool is None


def test_platform_aliases_win_over_the_shared_table():
    assert classify("Task", {"Task": "Task"}).tool == "Task"


def test_host_mcp_context_is_authoritative():
    named = classify("fetch_docs", mcp=("ctxmode", "ctx_fetch_and_index"))
    assert (named.tool, named.mcp_tool) == ("ctx", "ctx_fetch_and_index")
    named = classify("search", mcp=("brave", "search"))
    assert (named.tool, named.mcp_server, named.mcp_tool) == ("mcp", "brave", "search")


def test_own_leaf_needs_a_separator():
    assert own_leaf("xctx_search") is None
    assert own_leaf("srv.ctx_search") == "ctx_search"
    assert split_mcp("mcp__") is None
    assert split_mcp("@nothing") is None


@pytest.mark.parametrize(
    ("native", "tool_input", "tool"),
    [
        ("fs_write", {"command": "create", "path": "a"}, "Write"),
        ("fs_write", {"command": "str_replace", "path": "a"}, "Edit"),
        ("write", {"command": "append", "path": "a"}, "Edit"),
        ("write", {"filePath": "a", "content": "x"}, "Write"),
        ("apply_patch", {"command": "*** Begin Patch\n*** Add File: a.py\n+x\n*** End Patch"},
         "Write"),
        ("apply_patch", {"command": "*** Begin Patch\n*** Update File: a.py\n*** End Patch"},
         "Edit"),
    ],
)  # fmt: skip
def test_one_host_tool_for_edit_and_write_is_split_by_its_input(native, tool_input, tool):
    assert refine(classify(native).tool, native, tool_input) == tool


def _bash(command="curl -s https://example.com", **extra):
    return HookEvent(
        "claude-code",
        "pre_tool",
        "pretooluse",
        tool="Bash",
        tool_input={"command": command, "description": "d", **extra},
    )


REDIRECT = "use ctx_fetch_and_index(url) instead"


def _redirect(reason=None):
    return HookDecision(
        "modify", reason=reason, updated_input={"command": f"echo '{REDIRECT}'", "description": "d"}
    )


def test_redirect_without_rewrite_becomes_a_deny_with_the_echoed_text():
    v = verdict(_bash(), _redirect(), FULL._replace(can_modify=False))
    assert (v.kind, v.reason) == ("deny", REDIRECT)


def test_redirect_text_prefers_the_echo_over_a_generic_modify_reason():
    assert reason_text(_bash(), _redirect("Routed to the ctxmode sandbox")) == REDIRECT


def test_modify_keeps_fields_the_rewrite_left_out():
    event = _bash(timeout=120000)
    v = verdict(event, HookDecision("modify", updated_input={"command": "echo hi"}), FULL)
    assert v.kind == "modify"
    assert v.updated_input == {"command": "echo hi", "description": "d", "timeout": 120000}


def test_subagent_prompt_rewrite_passes_through_where_it_cannot_be_applied():
    event = HookEvent("codex", "pre_tool", "pretooluse", tool="Agent", tool_input={"prompt": "p"})
    decision = HookDecision("modify", updated_input={"prompt": "p + block"})
    assert verdict(event, decision, FULL._replace(can_modify=False)).kind == "allow"


def test_ask_becomes_deny_where_the_host_cannot_ask():
    v = verdict(
        _bash(),
        HookDecision("ask", reason="matches ask rule Bash(curl:*)"),
        FULL._replace(can_ask=False),
    )
    assert v.kind == "deny"
    assert v.reason.startswith("matches ask rule Bash(curl:*)")


def test_deny_always_has_a_reason():
    v = verdict(_bash(), HookDecision("deny"), FULL)
    assert v.kind == "deny" and "ctx_" in v.reason


def test_context_is_dropped_where_the_host_has_no_pre_tool_channel():
    decision = HookDecision("context", context="nudge")
    assert verdict(_bash(), decision, FULL).kind == "context"
    assert verdict(_bash(), decision, FULL._replace(pre_context=False)).kind == "allow"
    assert verdict(_bash(), HookDecision("context", context="  "), FULL).kind == "allow"
    assert verdict(_bash(), HookDecision("allow", context="nudge"), FULL).kind == "context"
