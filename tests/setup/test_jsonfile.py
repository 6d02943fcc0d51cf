"""JSON settings: the file's own style survives, bad shapes are refused untouched, and
ctxmode's entries are found by content whatever the host did to the file."""

import json
import os
import stat

import pytest

from ctxmode.setup import engine, setup, uninstall
from ctxmode.setup.errors import SettingsFileError, SetupConflictError

USER = {
    "permissions": {"allow": ["Bash(git:*)"]},
    "hooks": {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "my-guard.sh"}]}
        ]
    },
}


@pytest.fixture
def settings(project):
    path = project / ".claude" / "settings.json"
    path.parent.mkdir()
    return path


def _hooks(path):
    return json.loads(path.read_text(encoding="utf-8"))["hooks"]


_STYLED = [
    json.dumps(USER, indent=4) + "\n",
    json.dumps(USER, indent="\t") + "\n",
    json.dumps(USER, indent=2).replace("\n", "\r\n") + "\r\n",
    "\ufeff" + json.dumps(USER, indent=2),
    json.dumps(USER, separators=(",", ":")),
    json.dumps(USER),
    '{\n  "z": 1.0, "a": [1,2, 3],\n  "caf\\u00e9": "\\/x",\n\n  "hooks": {}\n}',
]


@pytest.mark.parametrize("text", _STYLED, ids=["4", "tab", "crlf", "bom", "compact", "flat", "odd"])
def test_setup_then_uninstall_gives_the_file_back_byte_for_byte(settings, project, text):
    settings.write_bytes(text.encode("utf-8"))
    setup("claude-code", project=project)
    written = settings.read_bytes().decode("utf-8")
    assert json.loads(written.lstrip("\ufeff"))["hooks"]["SessionStart"]
    assert written.startswith(text[:8])  # the user's keys stay first, as they were
    uninstall("claude-code", project=project)
    assert settings.read_bytes() == text.encode("utf-8")


@pytest.mark.parametrize(("indent", "newline"), [(4, "\n"), ("\t", "\n"), (2, "\r\n")])
def test_setup_writes_its_entries_in_the_files_own_indentation(settings, project, indent, newline):
    text = json.dumps(USER, indent=indent).replace("\n", newline) + newline
    settings.write_bytes(text.encode("utf-8"))
    setup("claude-code", project=project)
    written = settings.read_bytes().decode("utf-8")
    unit = indent if isinstance(indent, str) else " " * indent
    assert f'{newline}{unit}{unit}"SessionStart": [{newline}{unit * 3}{{{newline}' in written
    assert written.count("\r\n") == (written.count("\n") if newline == "\r\n" else 0)


def test_a_compact_file_gets_compact_entries(settings, project):
    settings.write_text('{"permissions":{"allow":[]}}', encoding="utf-8")
    setup("claude-code", project=project)
    written = settings.read_text(encoding="utf-8")
    assert "\n" not in written and written.startswith('{"permissions":{"allow":[]},"hooks":{')


_VSCODE_MCP = """{
  // Servers for this workspace
  "servers": {
    /* the team's linter */
    "lint": {
      "command": "lint-mcp",
      "args": ["--stdio",], // trailing comma on purpose
    },
  },
  "inputs": [],
}
"""


def test_vscode_jsonc_keeps_comments_and_trailing_commas_and_comes_back_intact(project):
    mcp = project / ".vscode" / "mcp.json"
    mcp.parent.mkdir()
    mcp.write_text(_VSCODE_MCP, encoding="utf-8")
    setup("vscode-copilot", project=project)
    written = mcp.read_text(encoding="utf-8")
    for kept in ("// Servers for this workspace", "/* the team's linter */", '["--stdio",]'):
        assert kept in written
    assert '    "ctxmode": {\n      "type": "stdio",' in written
    assert written.endswith('      ]\n    },\n  },\n  "inputs": [],\n}\n')  # its trailing commas
    assert not setup("vscode-copilot", project=project).changed
    uninstall("vscode-copilot", project=project)
    assert mcp.read_text(encoding="utf-8") == _VSCODE_MCP


@pytest.mark.parametrize("name", ["opencode.json", "opencode.jsonc"])
def test_opencode_config_with_comments_is_edited_in_place(project, name):
    config = project / name
    text = '{\n  "$schema": "https://opencode.ai/config.json",\n  // my model\n  "model": "x"\n}\n'
    config.write_text(text, encoding="utf-8")
    setup("opencode", project=project)
    written = config.read_text(encoding="utf-8")
    assert "// my model" in written and '"ctxmode": {' in written
    uninstall("opencode", project=project)
    assert config.read_text(encoding="utf-8") == text


def test_gemini_settings_with_block_comments_survive_setup_and_uninstall(project):
    settings = project / ".gemini" / "settings.json"
    settings.parent.mkdir()
    text = '/* project settings */\n{\n  "ui": {"theme": "dark"}, /* why */\n}\n'
    settings.write_text(text, encoding="utf-8")
    setup("gemini-cli", project=project)
    written = settings.read_text(encoding="utf-8")
    assert written.startswith("/* project settings */\n{") and "/* why */" in written
    uninstall("gemini-cli", project=project)
    assert settings.read_text(encoding="utf-8") == text


def test_a_blank_file_is_given_back_blank(settings, project):
    settings.write_text("\n\n", encoding="utf-8")
    setup("claude-code", project=project)
    uninstall("claude-code", project=project)
    assert settings.read_text(encoding="utf-8") == "\n\n"


def test_a_file_setup_created_is_removed_by_uninstall(project):
    setup("claude-code", project=project)
    uninstall("claude-code", project=project)
    assert not (project / ".claude").exists() and not (project / ".mcp.json").exists()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("[1, 2]", "not an object"),
        ('{"hooks": "none"}', "hooks is a str"),
        ('{"hooks": {"PreToolUse": {"matcher": "x"}}}', "hooks.PreToolUse is a dict"),
    ],
)
def test_unexpected_shapes_are_refused_untouched(settings, project, content, message):
    settings.write_text(content, encoding="utf-8")
    with pytest.raises(SettingsFileError, match=message):
        setup("claude-code", project=project)
    assert settings.read_text(encoding="utf-8") == content
    assert not (project / ".mcp.json").exists()


def test_an_empty_file_counts_as_an_empty_object(settings, project):
    settings.write_text("", encoding="utf-8")
    setup("claude-code", project=project)
    assert "SessionStart" in _hooks(settings)


def test_a_user_server_named_ctxmode_is_left_alone(project):
    mcp = project / ".mcp.json"
    mine = {"mcpServers": {"ctxmode": {"command": "uvx", "args": ["ctxmode", "serve"]}}}
    mcp.write_text(json.dumps(mine), encoding="utf-8")
    result = setup("claude-code", project=project)
    assert any("left as is" in w for w in result.warnings)
    assert json.loads(mcp.read_text(encoding="utf-8")) == mine
    uninstall("claude-code", project=project)
    assert json.loads(mcp.read_text(encoding="utf-8")) == mine


def test_an_old_versioned_server_path_is_replaced_and_extra_keys_kept(project):
    mcp = project / ".mcp.json"
    old = {
        "command": "/home/u/.venvs/ctxmode-0.1/bin/ctxmode",
        "args": ["serve"],
        "env": {"A": "1"},
    }
    mcp.write_text(json.dumps({"mcpServers": {"ctxmode": old}}), encoding="utf-8")
    setup("claude-code", project=project)
    server = json.loads(mcp.read_text(encoding="utf-8"))["mcpServers"]["ctxmode"]
    assert server == {"command": "ctxmode", "args": ["serve"], "env": {"A": "1"}}


def test_stale_hooks_from_an_old_command_are_replaced_not_duplicated(settings, project):
    stale = {
        "hooks": {
            "PreToolUse": [
                {
                    "matcher": "Bash",
                    "hooks": [
                        {
                            "type": "command",
                            "command": "/old/venv/bin/ctxmode hook claude-code pretooluse",
                        }
                    ],
                }
            ],
            "Notification": [
                {"hooks": [{"type": "command", "command": "ctxmode hook claude-code notification"}]}
            ],
        }
    }
    settings.write_text(json.dumps(stale), encoding="utf-8")
    setup("claude-code", project=project)
    hooks = _hooks(settings)
    commands = [h["command"] for g in hooks["PreToolUse"] for h in g["hooks"]]
    assert commands == ["ctxmode hook claude-code pretooluse"] * 2
    assert "Notification" not in hooks


def test_a_host_tweaking_our_timeout_is_not_reverted(settings, project):
    setup("claude-code", project=project)
    data = json.loads(settings.read_text(encoding="utf-8"))
    data["hooks"]["PostToolUse"][0]["hooks"][0]["timeout"] = 99
    settings.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    assert not setup("claude-code", project=project).changed


def test_a_user_handler_added_to_our_group_survives_uninstall(settings, project):
    setup("claude-code", project=project)
    data = json.loads(settings.read_text(encoding="utf-8"))
    group = data["hooks"]["SessionStart"][0]
    group["hooks"].append({"type": "command", "command": "echo hi"})
    settings.write_text(json.dumps(data), encoding="utf-8")
    uninstall("claude-code", project=project)
    assert _hooks(settings) == {
        "SessionStart": [{"hooks": [{"type": "command", "command": "echo hi"}]}]
    }


def test_uninstall_without_a_record_still_removes_entries_by_content(settings, project):
    settings.write_text(json.dumps(USER), encoding="utf-8")
    result = setup("claude-code", project=project)
    result.record_path.unlink()
    uninstall("claude-code", project=project)
    assert json.loads(settings.read_text(encoding="utf-8")) == USER
    assert json.loads((project / ".mcp.json").read_text(encoding="utf-8")) == {}


def test_upstream_context_mode_and_duplicate_servers_are_reported(settings, project):
    upstream = {
        "hooks": {
            "PreToolUse": [
                {
                    "matcher": "Bash",
                    "hooks": [
                        {"type": "command", "command": "context-mode hook claude-code pretooluse"}
                    ],
                }
            ]
        }
    }
    settings.write_text(json.dumps(upstream), encoding="utf-8")
    (project / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"ctx": {"command": "ctxmode", "args": ["serve"]}}}),
        encoding="utf-8",
    )
    warnings = setup("claude-code", project=project).warnings
    assert any("upstream context-mode" in w for w in warnings)
    assert any("also registered as MCP server 'ctx'" in w for w in warnings)


def test_writes_go_through_symlinks_and_keep_the_file_mode(project, home):
    real = home / "dotfiles" / "claude.json"
    real.parent.mkdir()
    real.write_text('{"numStartups": 3}', encoding="utf-8")
    real.chmod(0o600)
    (home / ".claude.json").symlink_to(real)
    setup("claude-code", project=None)
    assert (home / ".claude.json").is_symlink()
    assert json.loads(real.read_text(encoding="utf-8"))["numStartups"] == 3
    assert "ctxmode" in json.loads(real.read_text(encoding="utf-8"))["mcpServers"]
    assert stat.S_IMODE(os.stat(real).st_mode) == 0o600


def test_a_file_changed_between_read_and_write_is_not_overwritten(settings):
    settings.write_text("{}", encoding="utf-8")
    edit = engine._Edit(settings, before="{}", after='{"a": 1}')
    settings.write_text('{"host": "wrote this"}', encoding="utf-8")
    with pytest.raises(SetupConflictError, match="changed while"):
        engine._apply([edit])
    assert settings.read_text(encoding="utf-8") == '{"host": "wrote this"}'
