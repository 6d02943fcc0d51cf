"""Shell escapes in code of other languages, and check_code (code, commands)."""

import pytest

from ctxmode.security import Subject, check_code, deny_message, extract_shell_commands

from .policies import ALLOW, ASK, DENY, NONE, command_policy


@pytest.mark.parametrize(
    ("language", "code", "commands"),
    [
        ("python", 'import os\nos.system("sudo rm -rf /")', ("sudo rm -rf /",)),
        ("python", 'subprocess.run(["rm", "-rf", path], check=True)', ("rm -rf $ARG",)),
        ("python", 'subprocess.run("ls | wc", shell=True)', ("ls | wc",)),
        ("python", "subprocess.check_output(['bash', '-c', 'sudo id'])", ("bash -c 'sudo id'",)),
        ("python", "asyncio.run(main())\nsubprocess.Popen(args)", ()),
        ("javascript", 'require("child_process").execSync("sudo id")', ("sudo id",)),
        ("javascript", 'spawn("rm", ["-rf", dir], {stdio: "inherit"})', ("rm -rf $ARG",)),
        ("typescript", "exec(`git log ${ref}`, cb)", ("git log ${ref}",)),
        ("javascript", "await $`sudo ls`", ("sudo ls",)),
        (
            "ruby",
            'system("sudo id")\nx = `whoami`\ny = %x(uptime)',
            ("sudo id", "whoami", "uptime"),
        ),
        ("ruby", 'system "ls", "-la"', ("ls -la",)),
        ("go", 'exec.Command("rm", "-rf", dir)', ("rm -rf $ARG",)),
        ("go", 'exec.CommandContext(ctx, "sudo", "ls")', ("sudo ls",)),
        ("php", '<?php shell_exec("sudo ls"); $o->exec("x"); echo `id`;', ("sudo ls", "id")),
        ("rust", 'Command::new("rm").arg("-rf").args(&["/a", "/b"])', ("rm -rf /a /b",)),
        ("perl", 'system("sudo id"); my $x = qx{whoami};', ("sudo id", "whoami")),
        ("r", 'system2("rm", c("-rf", "/"))', ("rm -rf /",)),
        ("elixir", 'System.cmd("rm", ["-rf", "/"])', ("rm -rf /",)),
        ("csharp", 'Process.Start("rm", "-rf /");', ("rm -rf /",)),
        ("cobol", 'CALL "SYSTEM" USING "sudo id"', ()),
    ],
)
def test_extract_shell_commands(language, code, commands):
    assert extract_shell_commands(language, code) == commands


@pytest.mark.parametrize(
    ("language", "code"),
    [
        ("python", "import os\nos.system('sudo rm -rf /')"),
        ("python", "import subprocess\nsubprocess.run(['sudo', 'rm', '-rf', '/'])"),
        ("python", "import subprocess\nsubprocess.run(['bash', '-c', 'echo x; sudo id'])"),
        ("javascript", "require('child_process').exec('ls && sudo id')"),
        ("ruby", "puts `sudo id`"),
        ("go", 'exec.Command("sudo", "id").Run()'),
        ("php", "<?php system('sudo id');"),
        ("rust", 'Command::new("sudo").arg("id").status()'),
    ],
)
def test_embedded_shell_command_is_denied_with_its_text(project, language, code):
    policy = command_policy(project, deny=["Bash(sudo *)"])
    verdict = check_code(policy, language, code)
    assert verdict.decision is DENY
    assert verdict.subject is Subject.EMBEDDED
    assert verdict.embedded in verdict.message
    assert deny_message(verdict, surface="server").startswith(
        'Command blocked by security policy: embedded shell command "'
    )


def test_embedded_command_message_matches_upstream_wording(project):
    policy = command_policy(project, deny=["Bash(sudo *)"])
    verdict = check_code(policy, "python", "import os\nos.system('sudo id')")
    assert deny_message(verdict, surface="server") == (
        'Command blocked by security policy: embedded shell command "sudo id" '
        "matches deny pattern Bash(sudo *)"
    )


def test_embedded_commands_ask_but_never_allow(project):
    policy = command_policy(project, ask=["Bash(git push *)"], allow=["Bash(ls *)"])
    assert check_code(policy, "python", "os.system('git push origin')").decision is ASK
    assert check_code(policy, "python", "os.system('ls -la')").decision is NONE


@pytest.mark.parametrize("language", ["shell", "bash", "sh", "zsh", "SHELL"])
def test_shell_languages_are_checked_as_commands(project, language):
    policy = command_policy(project, deny=["Bash(sudo *)"], allow=["Bash(ls *)"])
    assert check_code(policy, language, "ls -la\nsudo id").decision is DENY
    assert check_code(policy, language, "ls -la").decision is ALLOW
