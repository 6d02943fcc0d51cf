"""Fail-closed mode and internal errors: deny rules still apply, work is not blocked."""

import pytest

from ctxmode.security import check_code, check_command, check_path, commands, explain_command, paths

from .policies import DENY, NONE, command_policy, policy_for, project_settings


@pytest.fixture
def lexer_bug(monkeypatch):
    """Every analysis step the checks call raises, as a bug of ours would."""

    def boom(*args, **kwargs):
        raise ValueError("lexer bug")

    monkeypatch.setattr(commands, "_parts", boom)
    monkeypatch.setattr(commands, "extract_shell_commands", boom)
    monkeypatch.setattr(paths, "_candidates", boom)


def test_fail_closed_denies_everything_when_settings_are_broken(project, monkeypatch):
    project_settings(project, raw="{not json")
    monkeypatch.setenv("CTXMODE_REQUIRE_SECURITY", "1")
    policy = policy_for(project)
    assert policy.fail_closed_engaged
    for verdict in (
        check_command(policy, "ls"),
        check_code(policy, "python", "print(1)"),
        check_path(policy, "readme.md"),
    ):
        assert verdict.decision is DENY
        assert "fail-closed" in verdict.message
        assert "unset CTXMODE_REQUIRE_SECURITY" in verdict.message


def test_upstream_require_security_variable_also_works(project, monkeypatch):
    project_settings(project, raw="{not json")
    monkeypatch.setenv("CONTEXT_MODE_REQUIRE_SECURITY", "1")
    assert check_command(policy_for(project), "ls").decision is DENY


def test_fail_closed_without_broken_files_changes_nothing(project):
    policy = command_policy(project, deny=["Bash(sudo *)"])
    strict = policy._replace(fail_closed=True)
    assert not strict.fail_closed_engaged
    assert check_command(strict, "ls").decision is NONE


def test_internal_errors_fail_open_by_default_and_closed_on_request(project, lexer_bug):
    policy = command_policy(project, deny=["Bash(sudo *)"])
    verdict = check_command(policy, "ls -la")
    assert verdict.decision is NONE
    assert "lexer bug" in verdict.reason
    assert check_path(policy, ".env").decision is NONE
    assert explain_command(policy, "ls").considered == ()
    strict = policy._replace(fail_closed=True)
    assert check_command(strict, "ls -la").decision is DENY
    assert check_code(strict, "shell", "ls -la").decision is DENY
    assert check_path(strict, ".env").decision is DENY


def test_internal_errors_still_apply_deny_rules_crudely(project, lexer_bug):
    policy = command_policy(project, deny=["Bash(rm -rf *)"])
    verdict = check_command(policy, "echo ok && (sudo rm -rf /)")
    assert (verdict.decision, verdict.matched_as) == (DENY, "rm -rf /")
    assert "lexer bug" in verdict.reason
    assert verdict.message == "Blocked by security policy: matches deny pattern Bash(rm -rf *)"
    embedded = check_code(policy, "python", "os.system('rm -rf /')")
    assert (embedded.decision, embedded.embedded) == (DENY, "rm -rf /")
