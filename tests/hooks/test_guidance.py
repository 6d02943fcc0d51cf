"""Every model-facing text of the hooks (`ctxmode.hooks.guidance`): the routing block's
budget and content per platform, the redirect wording contract (ADR-0003), nudge sizes,
tool naming and the ``CTXMODE_INJECT`` switch.
"""

import shlex

import pytest

from ctxmode.hooks import guidance
from ctxmode.platforms import PLATFORMS

ALL_PLATFORMS = sorted({*PLATFORMS, "antigravity", "zed", "pi", "openclaw", "kilo", "unknown"})
BLOCK_BUDGET = 2048
NUDGE_BUDGET = 400


def _redirects(platform: str) -> dict[str, str]:
    return {
        "curl": guidance.fetch_redirect(platform, "curl", "https://example.com/a?b=1"),
        "curl without url": guidance.fetch_redirect(platform, "wget", None),
        "inline http": guidance.inline_http_redirect(platform),
        "build": guidance.build_redirect(platform, "gradlew", './gradlew build -P"x"'),
        "webfetch": guidance.webfetch_redirect(platform, ["https://example.com"]),
        "webfetch, no url": guidance.webfetch_redirect(platform, []),
        "webfetch, urls": guidance.webfetch_redirect(platform, ["https://a.example", "https://b"]),
    }


def _nudges(platform: str) -> dict[str, str]:
    return {
        "read": guidance.read_nudge(platform),
        "large read": guidance.large_read_nudge(platform, "/p/logs/app.log", 3_500_000),
        "grep": guidance.grep_nudge(platform),
        "bash": guidance.bash_nudge(platform),
        "mcp": guidance.mcp_nudge(platform),
    }


@pytest.mark.parametrize("platform", ALL_PLATFORMS)
@pytest.mark.parametrize("subagent", [False, True])
def test_the_routing_block_fits_in_2_kb(platform, subagent):
    block = guidance.routing_block(platform, subagent=subagent)
    assert 0 < len(block.encode("utf-8")) <= BLOCK_BUDGET


@pytest.mark.parametrize("platform", ALL_PLATFORMS)
def test_the_routing_block_and_a_nudge_together_fit_in_2_kb(platform):
    """Session start may add one piece of guidance to the block; both stay in budget."""
    longest = max(len(t.encode("utf-8")) for t in _nudges(platform).values())
    assert len(guidance.routing_block(platform).encode("utf-8")) + longest <= BLOCK_BUDGET


@pytest.mark.parametrize("platform", ALL_PLATFORMS)
def test_the_routing_block_names_every_sandbox_tool(platform):
    block = guidance.routing_block(platform)
    assert block.startswith("<context_window_protection>")
    assert block.endswith("</context_window_protection>")
    for tool in guidance.SANDBOX_TOOLS:
        assert f"- {tool}(" in block


@pytest.mark.parametrize(
    ("platform", "full"),
    [
        ("claude-code", "mcp__ctxmode__<name>"),
        ("qwen-code", "mcp__ctxmode__<name>"),
        ("kiro", "@ctxmode/<name>"),
    ],
)
def test_the_routing_block_says_how_the_host_names_the_tools(platform, full):
    assert f"named {full}" in guidance.routing_block(platform)


def test_claude_code_gets_a_tool_search_bootstrap_for_deferred_tools():
    block = guidance.routing_block("claude-code", subagent=True)
    names = ",".join(f"mcp__ctxmode__{t}" for t in guidance.SANDBOX_TOOLS)
    assert f'ToolSearch(query: "select:{names}")' in block
    assert "ToolSearch" not in guidance.routing_block("cursor")


def test_server_tools_match_the_servers_catalogue():
    from ctxmode.server.catalog import TOOLS

    assert set(guidance.SERVER_TOOLS) == {t.name for t in TOOLS}


def test_operator_commands_appear_only_in_the_main_session_and_once_served(monkeypatch):
    assert '"ctx stats" → ctx_stats' in guidance.routing_block("claude-code")
    monkeypatch.setattr(guidance, "SERVER_TOOLS", guidance.SANDBOX_TOOLS)
    assert "ctx stats" not in guidance.routing_block("claude-code")
    monkeypatch.undo()
    assert "ctx stats" not in guidance.routing_block("claude-code", subagent=True)


def test_the_subagent_block_leaves_out_the_artifact_rule():
    assert "artifacts" in guidance.routing_block("claude-code")
    assert "artifacts" not in guidance.routing_block("claude-code", subagent=True)


@pytest.mark.parametrize("var", ["CTXMODE_INJECT", "CONTEXT_MODE_INJECT"])
def test_inject_off_empties_the_routing_block(monkeypatch, var):
    monkeypatch.setenv(var, " Off ")
    assert guidance.routing_block("claude-code") == ""
    assert guidance.routing_block("claude-code", subagent=True) == ""


def test_inject_on_or_unset_keeps_it(monkeypatch):
    assert guidance.routing_block("claude-code")
    monkeypatch.setenv("CTXMODE_INJECT", "on")
    assert guidance.routing_block("claude-code")


@pytest.mark.parametrize("platform", ["claude-code", "cursor", "kiro", "gemini-cli"])
def test_redirects_follow_the_wording_contract(platform):
    """ADR-0003: 'redirected to <ctx tool>' first, full network access said plainly, the
    next call last; never 'blocked', which is kept for security-policy denials."""
    for case, text in _redirects(platform).items():
        assert text.startswith("redirected to ctx_"), case
        assert "full network access" in text, case
        assert "blocked" not in text.lower(), case
        last = text.rsplit(". ", 1)[-1]
        assert "ctx_" in last and "(" in last, case


def test_fetch_redirects_say_not_to_fall_back_to_curl():
    assert "do not retry with curl or wget" in _redirects("cursor")["curl"]
    assert "Do NOT use curl" in _redirects("cursor")["webfetch"]


def test_redirect_arguments_are_quoted_for_the_call_they_suggest():
    build = guidance.build_redirect("cursor", "gradlew", './gradlew build -P"x"')
    assert 'code: "./gradlew build -P\\"x\\" 2>&1 | tail -30"' in build
    fetch = guidance.fetch_redirect("cursor", "curl", 'https://e.com/"q"')
    assert 'url: "https://e.com/\\"q\\""' in fetch


@pytest.mark.parametrize("platform", ["claude-code", "cursor"])
def test_nudges_are_short_and_name_the_tool_to_use(platform):
    expected = {
        "read": "ctx_execute_file",
        "large read": "ctx_execute_file",
        "grep": "ctx_execute",
        "bash": "ctx_batch_execute",
        "mcp": "ctx_execute",
    }
    for case, text in _nudges(platform).items():
        assert len(text.encode("utf-8")) <= NUDGE_BUDGET, case
        assert expected[case] in text, case
        assert "blocked" not in text.lower(), case


def test_the_large_read_nudge_gives_name_and_size():
    text = guidance.large_read_nudge("cursor", "/p/logs/app.log", 3_500_000)
    assert "app.log is 3.3 MB" in text
    assert "59.6 KB" in guidance.large_read_nudge("cursor", "a", 61_000)


@pytest.mark.parametrize(
    ("platform", "name"),
    [
        ("claude-code", "mcp__ctxmode__ctx_search"),
        ("qwen-code", "mcp__ctxmode__ctx_search"),
        ("kiro", "@ctxmode/ctx_search"),
        ("cursor", "ctx_search"),
        ("codex", "ctx_search"),
        ("unknown", "ctx_search"),
    ],
)
def test_tool_names_per_platform(platform, name):
    assert guidance.tool_name(platform, "ctx_search") == name
    mention = guidance.mention(platform, "ctx_search")
    assert mention == ("ctx_search" if name == "ctx_search" else f"ctx_search ({name})")


@pytest.mark.parametrize(
    "text", ["plain", 'it\'s "quoted" $HOME `x` \\ end', "line\nbreak", "-n leading dash"]
)
def test_echo_command_prints_the_text_unchanged(text):
    assert shlex.split(guidance.echo_command(text)) == ["echo", text]


def test_powershell_echo_doubles_single_quotes():
    assert guidance.echo_command("it's", powershell=True) == "echo 'it''s'"


def test_ask_reason_names_rule_and_scope():
    reason = guidance.ask_reason("Bash(git push:*)", "project")
    assert reason == (
        "ctxmode: this matches the ask rule Bash(git push:*) in your project settings; "
        "confirm to run it."
    )
