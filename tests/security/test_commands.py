"""Bash(...) rules on shell commands: the decision table, chain splitting (commands, shell)."""

import sys

import pytest

from ctxmode.security import check_command, split_command

from .policies import ALLOW, ASK, DENY, NONE, command_policy

COMMAND_CASES = [
    # (deny, ask, allow, command, expected)
    # spec 12 item 73: glob semantics
    (["Bash(ls *)"], [], [], "ls -la", DENY),
    (["Bash(ls *)"], [], [], "lsof -i", NONE),
    (["Bash(ls*)"], [], [], "lsof -i", DENY),
    (["Bash(ls*)"], [], [], "ls -la", DENY),
    (["Bash(tree:*)"], [], [], "tree", DENY),
    (["Bash(tree:*)"], [], [], "tree -a", DENY),
    (["Bash(tree:*)"], [], [], "treemap", NONE),
    (["Bash(sudo *)"], [], [], "sudo apt install", DENY),
    (["Bash(sudo *)"], [], [], "sudoedit /etc/hosts", NONE),
    (["Bash(rm -rf /*)"], [], [], "rm -rf /etc", DENY),
    (["Bash(rm -rf /*)"], [], [], "rm -rf ./build", NONE),
    (["Bash(* commit *)"], [], [], "git commit -m x", DENY),
    (["Bash(git push)"], [], [], "git push", DENY),
    (["Bash(git push)"], [], [], "git push origin", NONE),
    (["Bash(echo (foo))"], [], [], "echo (foo)", NONE),  # parentheses split the segment
    (["Bash(npm run test:*)"], [], [], "npm run test --watch", DENY),
    (["Bash(npm run test:*)"], [], [], "npm run test:unit", NONE),
    (["Bash(curl http://x.test/:*)"], [], [], "curl http://x.test/ -o f", DENY),
    (["Bash"], [], [], "anything at all", DENY),
    (["Bash(*)"], [], [], "anything at all", DENY),
    (["Bash(sudo *)"], [], [], "", NONE),
    # a lone trailing " *" is optional (Claude Code)
    (["Bash(sudo *)"], [], [], "sudo", DENY),
    # chains, pipes, background, newlines
    (["Bash(sudo *)"], [], [], "echo a; sudo b", DENY),
    (["Bash(sudo *)"], [], [], "false || sudo b", DENY),
    (["Bash(sudo *)"], [], [], "cat x | sudo tee /etc/x", DENY),
    (["Bash(sudo *)"], [], [], "cat x |& sudo tee /etc/x", DENY),
    (["Bash(sudo *)"], [], [], "sleep 1 & sudo id", DENY),
    (["Bash(sudo *)"], [], [], "ls\nsudo rm -rf /etc", DENY),
    (["Bash(sudo *)"], [], [], "ls\r\nsudo rm -rf /etc", DENY),
    # quotes and escapes keep text together
    (["Bash(sudo *)"], [], [], "echo 'a && sudo b'", NONE),
    (["Bash(sudo *)"], [], [], 'echo "a; sudo b"', NONE),
    (["Bash(sudo *)"], [], [], "echo a \\; sudo b", NONE),
    (["Bash(sudo *)"], [], [], "echo hi # ; sudo rm", NONE),
    (["Bash(sudo *)"], [], [], "'sudo' rm -rf /", DENY),
    (["Bash(sudo *)"], [], [], "\\sudo rm -rf /", DENY),
    (["Bash(sudo *)"], [], [], "s\\\nudo_not_split", NONE),
    # substitutions are commands too
    (["Bash(sudo *)"], [], [], "echo $(sudo id)", DENY),
    (["Bash(sudo *)"], [], [], "echo `sudo id`", DENY),
    (["Bash(sudo *)"], [], [], 'echo "today: $(sudo date)"', DENY),
    (["Bash(sudo *)"], [], [], "echo '$(sudo date)'", NONE),
    (["Bash(sudo *)"], [], [], "echo $(echo $(sudo id))", DENY),
    (["Bash(sudo *)"], [], [], "echo $(( $(sudo id) + 1 ))", DENY),
    (["Bash(sudo *)"], [], [], "diff <(ls) <(sudo ls /root)", DENY),
    (["Bash(sudo *)"], [], [], "(cd /tmp && sudo rm x)", DENY),
    (["Bash(sudo *)"], [], [], "{ sudo rm x; }", DENY),
    (["Bash(sudo *)"], [], [], "if true; then sudo rm x; fi", DENY),
    (["Bash(sudo *)"], [], [], "for f in *; do sudo rm $f; done", DENY),
    (["Bash(sudo *)"], [], [], "! sudo true", DENY),
    # here-documents: data unless a shell reads them; unquoted ones expand $(...)
    (["Bash(sudo *)"], [], [], "cat <<EOF\nsudo rm x\nEOF", NONE),
    (["Bash(sudo *)"], [], [], "cat <<EOF\n$(sudo rm x)\nEOF", DENY),
    (["Bash(sudo *)"], [], [], "cat <<'EOF'\n$(sudo rm x)\nEOF", NONE),
    (["Bash(sudo *)"], [], [], "bash <<EOF\nsudo rm x\nEOF", DENY),
    (["Bash(sudo *)"], [], [], "cat <<EOF | sh\nsudo rm x\nEOF", DENY),
    (["Bash(sudo *)"], [], [], "cat <<-EOF\n\tsudo rm x\n\tEOF\necho done", NONE),
    # wrappers, assignments, redirections, paths
    (["Bash(rm -rf *)"], [], [], "sudo rm -rf /", DENY),
    (["Bash(rm -rf *)"], [], [], "sudo -u root rm -rf /", DENY),
    (["Bash(rm -rf *)"], [], [], "timeout 5 nice -n 10 rm -rf /", DENY),
    (["Bash(rm -rf *)"], [], [], "FOO=1 BAR='a b' rm -rf /", DENY),
    (["Bash(rm -rf *)"], [], [], "env -i PATH=/bin rm -rf /", DENY),
    (["Bash(rm -rf *)"], [], [], "nohup rm -rf / >/dev/null 2>&1", DENY),
    (["Bash(rm -rf *)"], [], [], ">/dev/null rm -rf /", DENY),
    (["Bash(rm -rf *)"], [], [], "/bin/rm -rf /", DENY),
    (["Bash(rm -rf *)"], [], [], "find . -name '*.o' | xargs rm -rf", DENY),
    (["Bash(sudo *)"], [], [], "command -v sudo", NONE),
    # scripts handed to another interpreter
    (["Bash(sudo *)"], [], [], "bash -c 'sudo rm -rf /'", DENY),
    (["Bash(sudo *)"], [], [], 'sh -lc "echo hi; sudo id"', DENY),
    (["Bash(sudo *)"], [], [], "su -c 'sudo id' root", DENY),
    (["Bash(sudo *)"], [], [], "eval 'sudo id'", DENY),
    (["Bash(sudo *)"], [], [], "env -S 'sudo id'", DENY),
    (["Bash(sudo *)"], [], [], "watch -n 5 'df -h; sudo id'", DENY),
    (["Bash(sudo *)"], [], [], "bash -c bash -c 'sudo id'", NONE),  # bash runs "bash" only
    (["Bash(rm *)"], [], [], "find . -name x -exec rm -f {} \\;", DENY),
    (["Bash(sudo *)"], [], [], "python3 -c \"import os; os.system('sudo id')\"", DENY),
    (["Bash(sudo *)"], [], [], 'node -e \'require("child_process").execSync("sudo id")\'', DENY),
    # ask and allow
    ([], ["Bash(git push *)"], ["Bash(git:*)"], "git push origin", ASK),
    ([], ["Bash(git push *)"], ["Bash(git:*)"], "git status", ALLOW),
    ([], ["Bash(git push *)"], ["Bash(git:*)"], "git status && git push", ASK),
    (["Bash(git push --force*)"], ["Bash(git push *)"], [], "git push --force", DENY),
    ([], [], ["Bash(git:*)"], "git status && rm -rf x", NONE),
    ([], [], ["Bash(git:*)", "Bash(grep *)"], "git log | grep fix", ALLOW),
    ([], [], ["Bash(ls *)"], "ls > listing.txt", NONE),
    ([], [], ["Bash(ls *)"], "ls >/dev/null 2>&1", ALLOW),
    ([], [], ["Bash(echo *)"], "echo $(rm -rf x)", NONE),
    ([], [], ["Bash(echo *)"], "echo $((1 + 2))", ALLOW),
    ([], [], ["Bash(npm test)"], "FOO=1 npm test", NONE),
]


@pytest.mark.parametrize(("deny", "ask", "allow", "command", "expected"), COMMAND_CASES)
def test_command_decision_table(project, deny, ask, allow, command, expected):
    policy = command_policy(project, deny=deny, ask=ask, allow=allow)
    verdict = check_command(policy, command)
    assert verdict.decision is expected, (command, verdict)
    assert (verdict.rule is None) == (expected is NONE)


@pytest.mark.parametrize(
    ("command", "segments"),
    [
        ("echo hello && sudo rm -rf /", ("echo hello", "sudo rm -rf /")),
        ("a || b; c | d |& e & f", ("a", "b", "c", "d", "e", "f")),
        ("echo 'x && y' \"p; q\"", ("echo 'x && y' \"p; q\"",)),
        ("ls\nwc -l", ("ls", "wc -l")),
        ("echo $(date)", ("date", "echo $(date)")),
        ("ls 2>&1 >/dev/null", ("ls 2>&1 >/dev/null",)),
        ("echo a &>log && echo b", ("echo a &>log", "echo b")),
        ("echo a >| out", ("echo a >| out",)),
        ("echo a \\\n  b", ("echo a b",)),
        ("if x; then y; else z; fi", ("x", "y", "z")),
        ("   ", ()),
        ("# only a comment", ()),
    ],
)
def test_split_command(command, segments):
    assert split_command(command) == segments


def test_case_insensitive_commands_on_windows(project):
    policy = command_policy(project, deny=["Bash(Remove-Item *)"])
    exact = policy._replace(case_insensitive_commands=False)
    folded = policy._replace(case_insensitive_commands=True)
    assert check_command(exact, "remove-item x").decision is NONE
    assert check_command(folded, "remove-item x").decision is DENY
    assert policy.case_insensitive_commands is (sys.platform == "win32")
