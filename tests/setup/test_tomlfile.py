"""Codex's config.toml is edited as text: comments, order and other tables survive, and
every edit is verified by parsing the result."""

import pytest

from ctxmode.setup import setup, uninstall
from ctxmode.setup.errors import SettingsFileError
from ctxmode.setup.targets import PROXY_VARS, setting_vars
from ctxmode.setup.tomlfile import TomlText, comment_at

tomllib = pytest.importorskip("tomllib")  # Python 3.11+; 3.10 edits without verification

TRICKY = '''# header comment
notes = """
[not_a_table]
still a string
"""
paths = [
  ["a", "b"],
  [ "c" ],
]

[profiles.fast] # fast one
model = "gpt-5"
'''


@pytest.fixture
def config(project):
    path = project / ".codex" / "config.toml"
    path.parent.mkdir()
    return path


def _parsed(path):
    return tomllib.loads(path.read_text(encoding="utf-8"))


def test_the_scanner_ignores_brackets_inside_strings_and_arrays():
    doc = TomlText(TRICKY)
    assert [(t.key, t.start) for t in doc.tables] == [(("profiles", "fast"), 10)]
    keys = [s.key for _, s in doc.statements]
    assert keys == [("notes",), ("paths",), ("model",)]


FORWARDED = [*setting_vars(), *PROXY_VARS]


def test_comment_at_skips_hashes_in_strings():
    line = 'url = "http://x/#frag" # real'
    assert line[comment_at(line) :] == "# real"


def test_setup_and_uninstall_round_trip_a_tricky_file_exactly(config, project):
    config.write_text(TRICKY, encoding="utf-8")
    setup("codex", project=project)
    text = config.read_text(encoding="utf-8")
    assert text.startswith(TRICKY)
    server = _parsed(config)["mcp_servers"]["ctxmode"]
    assert server == {"command": "ctxmode", "args": ["serve"], "env_vars": FORWARDED}
    uninstall("codex", project=project)
    assert config.read_text(encoding="utf-8") == TRICKY


def test_an_existing_features_table_gets_one_line_and_loses_only_it(config, project):
    original = '[features]\nweb_search = true  # on\n\n[tui]\ntheme = "dark"\n'
    config.write_text(original, encoding="utf-8")
    setup("codex", project=project)
    text = config.read_text(encoding="utf-8")
    assert text.startswith("[features]\nweb_search = true  # on\nhooks = true\n\n[tui]")
    uninstall("codex", project=project)
    assert config.read_text(encoding="utf-8") == original


def test_a_disabled_hooks_flag_is_turned_on_and_restored_with_its_comment(config, project):
    original = "[features]\nhooks = false # I said no\n"
    config.write_text(original, encoding="utf-8")
    result = setup("codex", project=project)
    assert any("features.hooks" in w for w in result.warnings)
    assert "hooks = true # I said no" in config.read_text(encoding="utf-8")
    uninstall("codex", project=project)
    assert config.read_text(encoding="utf-8") == original


def test_an_old_server_table_is_updated_in_place_keeping_extras(config, project):
    config.write_text(
        "[mcp_servers.ctxmode]\n"
        'command = "/old/venv/bin/ctxmode"  # old\n'
        'args = ["serve"]\n'
        "startup_timeout_sec = 20\n\n"
        "[mcp_servers.ctxmode.env]\n"
        'A = "1"\n',
        encoding="utf-8",
    )
    setup("codex", project=project)
    server = _parsed(config)["mcp_servers"]["ctxmode"]
    assert server == {
        "command": "ctxmode",
        "args": ["serve"],
        "startup_timeout_sec": 20,
        "env": {"A": "1"},
        "env_vars": FORWARDED,
    }
    assert 'command = "ctxmode"  # old' in config.read_text(encoding="utf-8")
    uninstall("codex", project=project)
    assert "mcp_servers" not in _parsed(config)


def test_someone_elses_server_named_ctxmode_is_left_alone(config, project):
    original = '[mcp_servers.ctxmode]\ncommand = "uvx"\nargs = ["ctxmode", "serve"]\n'
    config.write_text(original, encoding="utf-8")
    result = setup("codex", project=project)
    assert any("left as is" in w for w in result.warnings)
    assert _parsed(config)["mcp_servers"]["ctxmode"]["command"] == "uvx"
    uninstall("codex", project=project)
    assert config.read_text(encoding="utf-8") == original


def test_an_inline_table_that_needs_changing_is_refused(config, project):
    original = 'mcp_servers = { ctxmode = { command = "/old/ctxmode", args = ["serve"] } }\n'
    config.write_text(original, encoding="utf-8")
    with pytest.raises(SettingsFileError, match="inline table"):
        setup("codex", project=project)
    assert config.read_text(encoding="utf-8") == original
    assert not (project / ".codex" / "hooks.json").exists()


def test_crlf_line_endings_are_kept(config, project):
    config.write_bytes(b'model = "o3"\r\n')
    setup("codex", project=project)
    raw = config.read_bytes()
    assert b"\r\n[mcp_servers.ctxmode]\r\n" in raw and b"\n\n" not in raw.replace(b"\r\n", b"")
    uninstall("codex", project=project)
    assert config.read_bytes() == b'model = "o3"\r\n'


def test_without_a_toml_parser_simple_files_still_round_trip(config, project, monkeypatch):
    from ctxmode.setup import tomlops

    monkeypatch.setattr(tomlops, "loads", lambda path, text: None)
    original = "[features]\nhooks = false # no\n\n[mcp_servers.other]\ncommand = 'x'\n"
    config.write_text(original, encoding="utf-8")
    setup("codex", project=project)
    assert not setup("codex", project=project).changed
    text = config.read_text(encoding="utf-8")
    assert "hooks = true # no" in text and "[mcp_servers.ctxmode]" in text
    uninstall("codex", project=project)
    assert config.read_text(encoding="utf-8") == original
