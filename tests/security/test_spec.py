"""Spec 12, items 71 and 72: the acceptance scenarios of the security policy."""

from ctxmode.security import Scope, Subject, check_code, check_command, check_path, deny_message

from .policies import ALLOW, DENY, NONE, command_policy, local_settings, policy_for, user_settings

# --------------------------------------------------------------------------- spec 12, item 71


def test_bash_deny_rule_blocks_the_command_and_a_chain_hiding_it(project):
    policy = command_policy(project, deny=["Bash(sudo *)"])
    for command in ("sudo apt install x", "echo ok && sudo rm -rf /"):
        verdict = check_command(policy, command)
        assert verdict.decision is DENY
        assert verdict.message == "Blocked by security policy: matches deny pattern Bash(sudo *)"
    assert check_command(policy, "echo ok && sudo rm -rf /").segment == "sudo rm -rf /"


def test_bash_deny_rule_blocks_shell_code_for_the_sandbox(project):
    policy = command_policy(project, deny=["Bash(sudo *)"])
    verdict = check_code(policy, "shell", "set -e\necho start\nsudo rm -rf /\n")
    assert verdict.decision is DENY
    assert verdict.subject is Subject.SHELL_CODE
    assert (
        verdict.message
        == "Blocked by security policy: shell code matches deny pattern Bash(sudo *)"
    )
    assert deny_message(verdict, surface="server") == (
        "Command blocked by security policy: matches deny pattern Bash(sudo *)"
    )


def test_bash_deny_rule_blocks_any_command_of_a_batch(project):
    policy = command_policy(project, deny=["Bash(sudo *)"])
    batch = [("list", "ls -la"), ("cleanup", "sudo rm -rf /tmp/x"), ("log", "git log")]
    verdicts = [(label, check_command(policy, command)) for label, command in batch]
    label, denied = next((label, v) for label, v in verdicts if v.denied)
    assert label == "cleanup"
    assert deny_message(denied, batch_label=label) == (
        'Blocked by security policy: batch command "cleanup" matches deny pattern Bash(sudo *)'
    )


def test_read_deny_rule_blocks_the_env_file(project):
    policy = command_policy(project, deny=["Read(.env)"])
    (project / ".env").write_text("TOKEN=x\n", encoding="utf-8")
    verdict = check_path(policy, ".env")
    assert verdict.decision is DENY
    assert verdict.message == "Blocked by security policy: file path matches Read deny pattern .env"
    assert deny_message(verdict, surface="server") == (
        "File access blocked by security policy: path matches Read deny pattern .env"
    )


def test_non_shell_code_without_shell_escapes_has_no_decision(project):
    policy = command_policy(project, deny=["Bash(sudo *)"])
    code = "print('run sudo yourself')\nimport json\n"
    assert check_code(policy, "python", code).decision is NONE


# --------------------------------------------------------------------------- spec 12, item 72


def test_project_local_deny_overrides_a_global_allow(project, home):
    user_settings(home, allow=["Bash(git:*)"])
    local_settings(project, deny=["Bash(git push *)"])
    policy = policy_for(project)
    verdict = check_command(policy, "git push origin main")
    assert verdict.decision is DENY
    assert verdict.rule.scope is Scope.LOCAL
    assert check_command(policy, "git status").decision is ALLOW


def test_global_deny_beats_a_project_local_allow(project, home):
    user_settings(home, deny=["Bash(rm -rf *)"])
    local_settings(project, allow=["Bash(rm *)"])
    verdict = check_command(policy_for(project), "rm -rf build")
    assert verdict.decision is DENY
    assert verdict.rule.scope is Scope.USER


def test_command_matching_no_rule_falls_through(project):
    policy = command_policy(project, deny=["Bash(sudo *)"], allow=["Bash(git:*)"])
    verdict = check_command(policy, "npm test")
    assert verdict.decision is NONE
    assert verdict.rule is None
    assert verdict.message is None


def test_no_settings_at_all_means_no_rules_and_no_decisions(project):
    policy = policy_for(project)
    assert not policy.has_rules
    assert not policy.broken
    assert policy.warnings == ()
    assert check_command(policy, "sudo rm -rf /").decision is NONE
    assert check_path(policy, ".env").decision is NONE
