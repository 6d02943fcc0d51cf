"""Where rules come from, and settings files that are broken or change (settings)."""

import json
import os
from pathlib import Path

import pytest

from ctxmode.security import Scope, SourceStatus, check_command, settings, settings_sources

from .policies import (
    DENY,
    NONE,
    local_settings,
    policy_for,
    project_settings,
    user_settings,
    write_settings,
)

# --------------------------------------------------------------------------- where rules come from


def test_rules_come_from_local_project_and_user_settings_in_that_order(project, home):
    user = user_settings(home, deny=["Bash(u *)"])
    proj = project_settings(project, deny=["Bash(p *)"])
    local = local_settings(project, deny=["Bash(l *)"])
    policy = policy_for(project)
    assert [(r.raw, r.scope, r.source) for r in policy.rules] == [
        ("Bash(l *)", Scope.LOCAL, local),
        ("Bash(p *)", Scope.PROJECT, proj),
        ("Bash(u *)", Scope.USER, user),
    ]
    assert all(s.status is SourceStatus.LOADED for s in policy.sources)


def test_rule_origin_names_the_file_and_the_list(project):
    path = project_settings(project, allow=["Bash(ls *)"], deny=["Bash(a *)", "Bash(b *)"])
    verdict = check_command(policy_for(project), "b now")
    assert verdict.rule.origin == f"project settings {path} permissions.deny[1]"


def test_claude_config_dir_relocates_the_user_settings(project, tmp_path, monkeypatch, home):
    user_settings(home, deny=["Bash(from-home *)"])
    elsewhere = write_settings(tmp_path / "cfg" / "settings.json", deny=["Bash(from-cfg *)"])
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(elsewhere.parent))
    policy = policy_for(project)
    assert check_command(policy, "from-cfg x").decision is DENY
    assert check_command(policy, "from-home x").decision is NONE


@pytest.mark.parametrize("value", ["~/alt-claude", "~\\alt-claude"])
def test_claude_config_dir_with_a_tilde_is_expanded_against_home(project, monkeypatch, home, value):
    write_settings(home / "alt-claude" / "settings.json", deny=["Bash(tilde *)"])
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", value)
    assert check_command(policy_for(project), "tilde x").decision is DENY


def test_claude_config_dir_of_just_a_tilde_is_home(project, monkeypatch, home):
    write_settings(home / "settings.json", deny=["Bash(bare *)"])
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", "~")
    assert check_command(policy_for(project), "bare x").decision is DENY


@pytest.mark.parametrize("value", ["", "   "])
def test_empty_claude_config_dir_means_the_default(project, monkeypatch, home, value):
    user_settings(home, deny=["Bash(default *)"])
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", value)
    assert check_command(policy_for(project), "default x").decision is DENY


def test_relative_claude_config_dir_is_made_absolute(project, tmp_path, monkeypatch):
    write_settings(tmp_path / "rel" / "settings.json", deny=["Bash(rel *)"])
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", "rel")
    assert check_command(policy_for(project), "rel x").decision is DENY


def test_other_platforms_settings_are_honoured_in_addition_to_claudes(project, home):
    user_settings(home, deny=["Bash(claude-denied *)"])
    write_settings(home / ".gemini" / "settings.json", deny=["Bash(gemini-denied *)"])
    policy = policy_for(project, platform="gemini-cli")
    assert check_command(policy, "gemini-denied x").rule.scope is Scope.PLATFORM
    assert check_command(policy, "claude-denied x").decision is DENY
    # Claude Code itself reads no other platform's file.
    assert (
        check_command(policy_for(project, platform="claude-code"), "gemini-denied x").decision
        is NONE
    )


def test_platform_comes_from_the_environment_when_not_given(project, home, monkeypatch):
    write_settings(home / ".cursor" / "settings.json", deny=["Bash(cursor-denied *)"])
    monkeypatch.setenv("CTXMODE_PLATFORM", "cursor")
    assert check_command(policy_for(project), "cursor-denied x").decision is DENY


def test_platform_config_roots_honour_their_variables(project, tmp_path, monkeypatch):
    write_settings(tmp_path / "codex-home" / "settings.json", deny=["Bash(codex-denied *)"])
    write_settings(tmp_path / "xdg" / "opencode" / "settings.json", deny=["Bash(oc-denied *)"])
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex-home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    assert check_command(policy_for(project, platform="codex"), "codex-denied x").decision is DENY
    assert check_command(policy_for(project, platform="opencode"), "oc-denied x").decision is DENY


def test_explicit_global_settings_replace_the_user_files(project, tmp_path, home):
    user_settings(home, deny=["Bash(claude-denied *)"])
    codex = write_settings(tmp_path / "codex" / "settings.json", deny=["Bash(codex-denied *)"])
    policy = policy_for(project, global_settings=codex)
    assert check_command(policy, "codex-denied x").rule.scope is Scope.GLOBAL
    assert check_command(policy, "claude-denied x").decision is NONE


def test_unknown_platform_is_warned_about(project, home):
    user_settings(home, deny=["Bash(x *)"])
    policy = policy_for(project, platform="no-such-agent")
    assert any("no-such-agent" in w for w in policy.warnings)
    assert check_command(policy, "x y").decision is DENY


def test_managed_settings_come_first(project, tmp_path):
    managed = write_settings(tmp_path / "etc" / "managed-settings.json", deny=["Bash(curl *)"])
    project_settings(project, deny=["Bash(curl *)"])
    verdict = check_command(policy_for(project, managed_settings=[managed]), "curl x")
    assert verdict.rule.scope is Scope.MANAGED


def test_default_sources_include_the_os_managed_settings(project):
    sources = settings_sources(project)
    assert sources[0][1] is Scope.MANAGED
    assert sources[0][0].name == "managed-settings.json"
    assert [scope for _, scope in sources][-3:] == [Scope.LOCAL, Scope.PROJECT, Scope.USER]


# --------------------------------------------------------------------------- broken settings


def test_malformed_settings_file_is_reported_and_skipped(project, home):
    bad = project_settings(project, raw='{"permissions": {"deny": ["Bash(sudo *)",]')
    user_settings(home, deny=["Bash(rm *)"])
    policy = policy_for(project)
    source = next(s for s in policy.sources if s.path == bad)
    assert source.status is SourceStatus.INVALID
    assert policy.broken
    assert any(str(bad) in w and "malformed JSON" in w for w in policy.warnings)
    assert check_command(policy, "rm x").decision is DENY
    assert check_command(policy, "sudo x").decision is NONE


@pytest.mark.parametrize(
    ("raw", "status"),
    [
        ("[1, 2]", SourceStatus.INVALID),
        ('{"permissions": ["Bash(x)"]}', SourceStatus.INVALID),
        ("", SourceStatus.LOADED),
        ('{"model": "x"}', SourceStatus.LOADED),
        ("[" * 100_000, SourceStatus.INVALID),
    ],
)
def test_odd_settings_files_never_raise(project, raw, status):
    path = project_settings(project, raw=raw)
    policy = policy_for(project)
    assert next(s for s in policy.sources if s.path == path).status is status
    assert check_command(policy, "ls").decision is NONE


def test_unreadable_settings_file_is_reported(project):
    (project / ".claude" / "settings.json").mkdir(parents=True)
    policy = policy_for(project)
    source = next(s for s in policy.sources if s.scope is Scope.PROJECT)
    assert source.status is SourceStatus.UNREADABLE
    assert policy.warnings


def test_non_utf8_and_oversized_settings_are_skipped(project, home, monkeypatch):
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.json").write_bytes(b'{"permissions": "\xff"}')
    user_settings(home, deny=["Bash(x *)"])
    monkeypatch.setattr(settings, "MAX_SETTINGS_BYTES", 10)
    policy = policy_for(project)
    assert [s.status for s in policy.sources if s.path.name == "settings.json"] == [
        SourceStatus.INVALID,
        SourceStatus.INVALID,
    ]


def test_utf8_bom_is_accepted(project):
    path = project / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps({"permissions": {"deny": ["Bash(x)"]}}).encode())
    assert check_command(policy_for(project), "x").decision is DENY


def test_bad_entries_are_warned_about_and_the_rest_kept(project):
    raw = json.dumps(
        {
            "permissions": {
                "deny": ["Bash(ok *)", 42, "Bash()", "not a rule!", "WebFetch"],
                "allow": "x",
            }
        }
    )
    project_settings(project, raw=raw)
    policy = policy_for(project)
    assert [r.raw for r in policy.rules] == ["Bash(ok *)", "WebFetch"]
    assert policy.rules_for("WebFetch")[0].specifier is None
    assert len(policy.warnings) == 4


def test_specifier_keeps_inner_parentheses(project):
    project_settings(project, deny=["Bash(echo (foo))"])
    assert policy_for(project).rules[0].specifier == "echo (foo)"


def test_no_home_directory_gives_an_empty_policy_that_fails_closed(project, monkeypatch):
    project_settings(project, deny=["Bash(x *)"])

    def no_home():
        raise RuntimeError("Could not determine home directory.")

    monkeypatch.setattr(Path, "home", no_home)
    policy = policy_for(project)
    assert policy.broken
    assert "home directory" in policy.warnings[0]
    assert check_command(policy, "x y").decision is NONE
    strict = policy_for(project, fail_closed=True)
    assert check_command(strict, "x y").decision is DENY


def test_settings_changes_are_seen_without_clearing_the_cache(project):
    project_settings(project, deny=["Bash(a *)"])
    assert check_command(policy_for(project), "a x").decision is DENY
    path = project_settings(project, deny=["Bash(bb *)"])
    os.utime(path, ns=(1, 1))
    policy = policy_for(project)
    assert check_command(policy, "a x").decision is NONE
    assert check_command(policy, "bb x").decision is DENY


def test_a_cached_policy_follows_its_settings_files(project):
    """The server's cache reads the rules again once a file they came from changes, or a
    file that was missing appears; until then it answers without reading anything."""
    cache = settings.PolicyCache(project)
    first = cache.get()
    assert cache.get() is first  # nothing changed: the same policy
    project_settings(project, deny=["Bash(rm:*)"])  # a file that was missing
    second = cache.get()
    assert check_command(second, "rm -rf build").decision is DENY
    project_settings(project, deny=["Bash(git push:*)"])  # the same file, rewritten
    third = cache.get()
    assert check_command(third, "rm -rf build").decision is NONE
    assert check_command(third, "git push origin main").decision is DENY
