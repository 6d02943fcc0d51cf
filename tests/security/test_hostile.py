"""Hostile input: huge, deeply nested or broken text is checked, never crashed on."""

import pytest

from ctxmode.security import (
    TooComplexError,
    check_code,
    check_command,
    check_path,
    extract_shell_commands,
)

from .policies import DENY, NONE, command_policy


def test_oversized_command_is_checked_to_the_end(project):
    policy = command_policy(project, deny=["Bash(sudo *)"])
    command = "echo ok; " * 30_000 + "sudo id"
    assert check_command(policy, command).decision is DENY


def test_deeply_nested_substitutions_do_not_crash(project):
    policy = command_policy(project, deny=["Bash(sudo *)"])
    command = "echo $(" * 2_000 + "sudo id" + ")" * 2_000
    verdict = check_command(policy, command)
    assert verdict.reason is None
    assert verdict.decision is DENY


def test_deeply_nested_quoted_substitutions_do_not_exhaust_recursion(project):
    policy = command_policy(project, deny=["Bash(sudo *)"])
    command = 'echo "$(echo ' * 3_000 + "x" + ')"' * 3_000 + "; sudo rm -rf /"
    verdict = check_command(policy, command)
    assert verdict.reason is None
    assert verdict.decision is DENY


def test_deeply_nested_arrays_in_code_do_not_hide_a_shell_escape(project):
    policy = command_policy(project, deny=["Bash(sudo *)"])
    code = "os.system('sudo id')\nsubprocess.run(" + "[" * 5_000 + "]" * 5_000 + ")"
    verdict = check_code(policy, "python", code)
    assert verdict.reason is None
    assert verdict.decision is DENY


@pytest.mark.parametrize(
    "code",
    [
        "os.system(" * 20_000 + "\nos.system('sudo id')",
        "run(" * 20_000 + "os.system('sudo id')" + ")" * 20_000,
        "os.system('sudo id')\n" + "subprocess.run(`" * 20_000,
    ],
)
def test_code_too_convoluted_to_scan_falls_back_to_the_crude_deny_check(project, code):
    with pytest.raises(TooComplexError):
        extract_shell_commands("python", code)
    policy = command_policy(project, deny=["Bash(sudo *)"])
    verdict = check_code(policy, "python", code)
    assert verdict.decision is DENY
    assert "TooComplexError" in verdict.reason


def test_a_flood_of_here_documents_is_cheap_and_read_like_bash(project):
    policy = command_policy(project, deny=["Bash(sudo *)"])
    # Everything after the first line is here-document body: bash runs no sudo.
    assert check_command(policy, "cat " + "<<A " * 20_000 + "\nx\n; sudo id").decision is NONE
    assert check_command(policy, "bash " + "<<A " * 20_000 + "\nsudo id\n").decision is DENY


def test_many_wildcards_against_a_long_command_stay_linear(project):
    policy = command_policy(project, deny=["Bash(* a * a * a * a * b)"])
    assert check_command(policy, "a " * 50_000).decision is NONE


@pytest.mark.parametrize("path", ["a\0b", "x" * 100_000, "", "~", "C:", "\\\\server\\share\\.env"])
def test_odd_paths_never_raise(project, path):
    policy = command_policy(project, deny=["Read(**/.env)"])
    assert check_path(policy, path).decision in (DENY, NONE)


@pytest.mark.parametrize(
    "command",
    [
        "'unterminated",
        '"unterminated $(x',
        "`unterminated",
        "$(unterminated",
        "cat <<EOF\nno end",
        "\\",
    ],
)
def test_unterminated_syntax_is_checked_not_crashed_on(project, command):
    policy = command_policy(project, deny=["Bash(*)"])
    verdict = check_command(policy, command)
    assert verdict.reason is None
    assert verdict.decision is DENY


@pytest.mark.parametrize("size", [600 * 1024, 25 * 1024 * 1024])
def test_a_command_too_long_to_read_is_asked_about_not_read(project, size):
    """25 MB of command took half a minute and 2 GB to read: past the bound it is not
    read, and while rules are in force it is asked about, saying why."""
    from ctxmode.security.commands import CHECK_MAX_CHARS

    assert size > CHECK_MAX_CHARS
    policy = command_policy(project, deny=["Bash(sudo *)"])
    command = "echo ok; " * (size // 9)
    verdict = check_command(policy, command)
    assert verdict.decision.value == "ask"
    assert verdict.reason is not None and "characters are more than" in verdict.reason
    assert check_command(command_policy(project), command).decision is NONE  # no rules
