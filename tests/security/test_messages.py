"""Explanations and deny messages (messages, explain_command, explain_path)."""

import pytest

from ctxmode.errors import ExitCode, PolicyDeniedError
from ctxmode.security import (
    Scope,
    check_command,
    check_path,
    enforce,
    explain_command,
    explain_path,
)

from .policies import DENY, command_policy, policy_for, project_settings, user_settings


def test_explain_command_lists_every_rule_and_what_decided(project, home):
    user = user_settings(home, allow=["Bash(git:*)"])
    proj = project_settings(project, deny=["Bash(sudo *)"], ask=["Bash(git push *)"])
    explanation = explain_command(policy_for(project), "git push && sudo id")
    assert explanation.parts == ("git push", "sudo id")
    assert explanation.verdict.decision is DENY
    assert explanation.decided_by.source == proj
    assert [(m.rule.raw, m.rule.source, m.matched) for m in explanation.considered] == [
        ("Bash(sudo *)", proj, ("sudo id",)),
        ("Bash(git push *)", proj, ("git push",)),
        ("Bash(git:*)", user, ("git push",)),
    ]
    assert {s.scope for s in explanation.sources} == {Scope.LOCAL, Scope.PROJECT, Scope.USER}


def test_explain_path_shows_resolved_forms(project, tmp_path):
    (project / "link").symlink_to(tmp_path, target_is_directory=True)
    policy = command_policy(project, deny=["Read(**/.env)"])
    explanation = explain_path(policy, "link/.env")
    assert explanation.parts == (f"{project}/link/.env", f"{tmp_path}/.env")
    assert explanation.verdict.decision is DENY
    assert explanation.considered[0].matched[0] == f"{project}/link/.env"


def test_verdict_reports_the_reading_that_matched(project):
    policy = command_policy(project, deny=["Bash(rm -rf *)"])
    verdict = check_command(policy, "ls; sudo timeout 5 rm -rf /")
    assert verdict.segment == "sudo timeout 5 rm -rf /"
    assert verdict.matched_as == "rm -rf /"


def test_enforce_raises_policy_denied_with_the_server_message(project):
    policy = command_policy(project, deny=["Bash(sudo *)"])
    enforce(check_command(policy, "ls"))
    with pytest.raises(PolicyDeniedError) as info:
        enforce(check_command(policy, "sudo ls"))
    assert (
        str(info.value) == "Command blocked by security policy: matches deny pattern Bash(sudo *)"
    )
    assert info.value.exit_code is ExitCode.DENIED


def test_bare_read_rule_message_names_the_rule(project):
    policy = command_policy(project, deny=["Read"])
    assert check_path(policy, "x").message == (
        "Blocked by security policy: file path matches Read deny pattern Read"
    )
