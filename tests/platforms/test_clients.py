"""The MCP client map: the host a server talks to, from ``clientInfo.name`` at initialize."""

import pytest

from ctxmode.platforms import PLATFORMS, descriptors, for_client
from ctxmode.server.results import structured_content

# clientInfo.name as each host sends it (upstream's client map, and what the real hosts sent
# where ctxmode ran them: Copilot CLI 1.0.102 "copilot-cli", Kimi Code 2.1.0).
KNOWN = {
    "claude-code": "claude-code",
    "gemini-cli-mcp-client": "gemini-cli",
    "Codex": "codex",
    "codex-mcp-client": "codex",
    "cursor-vscode": "cursor",
    "Visual-Studio-Code": "vscode-copilot",
    "JetBrains Client": "jetbrains-copilot",
    "IntelliJ IDEA": "jetbrains-copilot",
    "PyCharm": "jetbrains-copilot",
    "Kiro CLI": "kiro",
    "copilot-cli": "copilot-cli",
    "GitHub Copilot CLI": "copilot-cli",
    "github-copilot-cli": "copilot-cli",
    "kimi-code": "kimi",
    "Kimi Code": "kimi",
    "antigravity-client": "antigravity",
    "antigravity-cli": "antigravity-cli",
    "agy": "antigravity-cli",
    "Zed": "zed",
    "zed": "zed",
}


@pytest.mark.parametrize(("client", "platform"), sorted(KNOWN.items()))
def test_known_clients(client, platform):
    if platform not in PLATFORMS:
        pytest.skip(f"{platform} is not a platform in this build")
    assert for_client(client) == platform


def test_prefixes_need_a_separator_and_unknown_clients_are_none():
    assert for_client("gemini-cli-mcp-client/0.61") == "gemini-cli"
    assert for_client("zedonia") is None
    assert for_client("some-other-client") is None
    assert for_client("") is None and for_client(None) is None


def test_client_names_are_not_shared_between_hosts():
    seen: dict[str, str] = {}
    for host in descriptors():
        for name in host.mcp_clients:
            assert seen.setdefault(name.lower(), host.name) == host.name, name


def test_structured_content_only_for_the_client_that_parses_text():
    assert structured_content("gemini-cli-mcp-client", "45") == {}
    assert structured_content("copilot-cli", "45") is None
    assert structured_content(None, "45") is None
