"""Permission rules from host settings, applied to commands, code and paths (ctxmode.security)."""

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ctxmode import security
from ctxmode.errors import ExitCode, PolicyDeniedError
from ctxmode.security import (
    Decision,
    Scope,
    SourceStatus,
    Subject,
    check_code,
    check_command,
    check_path,
    deny_message,
    enforce,
    explain_command,
    explain_path,
    extract_shell_commands,
    load_policy,
    path_deny_check,
    settings_sources,
    split_command,
)

DENY, ASK, ALLOW, NONE = Decision.DENY, Decision.ASK, Decision.ALLOW, Decision.NONE


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch):
    """A fake home; no host config-dir variables; no settings parsed by an earlier test."""
    fake = tmp_path / "home"
    fake.mkdir()
    monkeypatch.setenv("HOME", str(fake))
    for var in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME", "XDG_CONFIG_HOME"):
        monkeypatch.delenv(var, raising=False)
    security.clear_cache()
    return fake


@pytest.fixture
def project(tmp_path):
    path = tmp_path / "project"
    path.mkdir()
    return path


def write_settings(path: Path, *, deny=(), ask=(), allow=(), raw: str | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if raw is None:
        raw = json.dumps(
            {"permissions": {"deny": list(deny), "ask": list(ask), "allow": list(allow)}}
        )
    path.write_text(raw, encoding="utf-8")
    return path


def project_settings(project: Path, **rules) -> Path:
    return write_settings(project / ".claude" / "settings.json", **rules)


def local_settings(project: Path, **rules) -> Path:
    return write_settings(project / ".claude" / "settings.local.json", **rules)


def user_settings(home: Path, **rules) -> Path:
    return write_settings(home / ".claude" / "settings.json", **rules)


def policy_for(project: Path, **kwargs):
    """The project's policy without the machine's real managed-settings files."""
    kwargs.setdefault("managed_settings", [])
    return load_policy(project, **kwargs)


def command_policy(project: Path, *, deny=(), ask=(), allow=()):
    project_settings(project, deny=deny, ask=ask, allow=allow)
    return policy_for(project)


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


# --------------------------------------------------------------------------- the decision table

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


# --------------------------------------------------------------------------- shell escapes in code


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


# --------------------------------------------------------------------------- file paths

PATH_CASES = [
    # (rule, path, expected); paths are relative to the project unless absolute
    ("Read(.env)", ".env", DENY),
    ("Read(.env)", "./.env", DENY),
    ("Read(.env)", "src/.env", NONE),
    ("Read(.env)", ".env.example", NONE),
    ("Read(.env)", "sub/../.env", DENY),
    ("Read(./.env)", ".env", DENY),
    ("Read(*.env)", "prod.env", DENY),
    ("Read(*.env)", "config/prod.env", NONE),
    ("Read(**/.env)", ".env", DENY),
    ("Read(**/.env)", "deep/nested/.env", DENY),
    ("Read(**/.env)", "deep/nested/.envrc", NONE),
    ("Read(**/*credentials*)", "a/b/aws-credentials.json", DENY),
    ("Read(**/*credentials*)", "credentials", DENY),
    ("Read(secrets/**)", "secrets/key.pem", DENY),
    ("Read(secrets/**)", "secrets/deep/key.pem", DENY),
    ("Read(secrets/**)", "not-secrets/key.pem", NONE),
    ("Read(secrets/)", "secrets/key.pem", DENY),
    ("Read(secrets)", "secrets/key.pem", DENY),  # a directory covers its contents
    ("Read(src/*.key)", "src/a.key", DENY),
    ("Read(src/*.key)", "src/sub/a.key", NONE),
    ("Read(src/?.key)", "src/a.key", DENY),
    ("Read(src/?.key)", "src/ab.key", NONE),
    ("Read(/config/**)", "config/app.yml", DENY),  # settings-root relative (Claude Code)
    ("Read", "any/file.txt", DENY),
    # Windows-style paths and globs
    ("Read(**/.env)", "config\\.env", DENY),
    ("Read(**/.env)", "C:\\Users\\me\\proj\\.env", DENY),
    ("Read(config\\*.yml)", "config/app.yml", DENY),
    ("Read(C:\\secrets\\**)", "C:\\secrets\\key", DENY),
]


@pytest.mark.parametrize(("rule", "path", "expected"), PATH_CASES)
def test_path_decision_table(project, rule, path, expected):
    policy = command_policy(project, deny=[rule])
    verdict = check_path(policy, path)
    assert verdict.decision is expected, (rule, path, verdict)


def test_absolute_deny_glob_is_not_bypassed_by_dotdot(project, tmp_path):
    secret = tmp_path / "outside" / "id_rsa"
    secret.parent.mkdir()
    secret.write_text("key", encoding="utf-8")
    policy = command_policy(project, deny=[f"Read(/{secret.parent}/**)"])
    assert check_path(policy, secret).decision is DENY
    assert check_path(policy, "../outside/id_rsa").decision is DENY
    assert check_path(policy, "a/b/../../../outside/id_rsa").decision is DENY
    assert check_path(policy, f"{project}/../outside/id_rsa").decision is DENY


def test_upstream_single_slash_absolute_glob_still_matches(project, tmp_path):
    secret = tmp_path / "outside" / "id_rsa"
    policy = command_policy(project, deny=[f"Read({secret.parent}/**)"])
    assert check_path(policy, "../outside/id_rsa").decision is DENY


def test_symlink_to_a_denied_file_is_denied(project, tmp_path):
    secret = tmp_path / "outside" / "secret.txt"
    secret.parent.mkdir()
    secret.write_text("s", encoding="utf-8")
    (project / "innocent.txt").symlink_to(secret)
    policy = command_policy(project, deny=[f"Read(/{secret})"])
    verdict = check_path(policy, "innocent.txt")
    assert verdict.decision is DENY
    assert verdict.segment == str(secret)


def test_symlink_to_the_env_file_is_denied_by_a_relative_rule(project):
    (project / ".env").write_text("TOKEN=x", encoding="utf-8")
    (project / "notes.txt").symlink_to(project / ".env")
    policy = command_policy(project, deny=["Read(.env)"])
    assert check_path(policy, "notes.txt").decision is DENY


def test_symlinked_directory_into_a_denied_tree_is_denied(project, tmp_path):
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "key").write_text("k", encoding="utf-8")
    (project / "data").symlink_to(vault, target_is_directory=True)
    policy = command_policy(project, deny=[f"Read(/{vault}/**)"])
    assert check_path(policy, "data/key").decision is DENY
    assert check_path(policy, "data/not-yet-created").decision is DENY


def test_symlink_then_dotdot_follows_the_real_path(project, tmp_path):
    real_parent = tmp_path / "real"
    (real_parent / "inner").mkdir(parents=True)
    (real_parent / "secret").write_text("s", encoding="utf-8")
    (project / "link").symlink_to(real_parent / "inner", target_is_directory=True)
    policy = command_policy(project, deny=[f"Read(/{real_parent}/secret)"])
    # The kernel resolves link/.. to real/, not to the project: so must we.
    assert check_path(policy, "link/../secret").decision is DENY


def test_deny_rule_on_a_symlinked_project_dir_matches_real_paths(project, tmp_path):
    alias = tmp_path / "alias"
    alias.symlink_to(project, target_is_directory=True)
    (project / ".env").write_text("x", encoding="utf-8")
    project_settings(project, deny=["Read(.env)"])
    policy = policy_for(alias)
    assert check_path(policy, project / ".env").decision is DENY
    assert check_path(policy, alias / ".env").decision is DENY


def test_home_anchored_rule(project, home):
    policy = command_policy(project, deny=["Read(~/.ssh/**)"])
    assert check_path(policy, home / ".ssh" / "id_ed25519").decision is DENY
    assert check_path(policy, "~/.ssh/id_ed25519").decision is DENY
    assert check_path(policy, home / "notes.txt").decision is NONE


def test_case_insensitive_paths_on_case_insensitive_file_systems(project):
    policy = command_policy(project, deny=["Read(Secret.txt)"])
    exact = dataclasses.replace(policy, case_insensitive_paths=False)
    folded = dataclasses.replace(policy, case_insensitive_paths=True)
    assert check_path(exact, "SECRET.TXT").decision is NONE
    assert check_path(folded, "SECRET.TXT").decision is DENY
    assert policy.case_insensitive_paths is (sys.platform in ("darwin", "win32"))


def test_case_insensitive_commands_on_windows(project):
    policy = command_policy(project, deny=["Bash(Remove-Item *)"])
    exact = dataclasses.replace(policy, case_insensitive_commands=False)
    folded = dataclasses.replace(policy, case_insensitive_commands=True)
    assert check_command(exact, "remove-item x").decision is NONE
    assert check_command(folded, "remove-item x").decision is DENY
    assert policy.case_insensitive_commands is (sys.platform == "win32")


def test_read_ask_and_allow_rules(project):
    policy = command_policy(project, ask=["Read(logs/**)"], allow=["Read(docs/**)"])
    assert check_path(policy, "logs/app.log").decision is ASK
    assert check_path(policy, "docs/index.md").decision is ALLOW
    assert check_path(policy, "src/main.py").decision is NONE


def test_paths_resolve_against_an_explicit_project_dir(project, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    policy = command_policy(project, deny=["Read(.env)"])
    assert check_path(policy, ".env", other).decision is NONE
    assert check_path(policy, "../project/.env", other).decision is DENY


def test_path_deny_check_fits_the_store_hook(project):
    policy = command_policy(project, deny=["Read(**/.env)"])
    denied = path_deny_check(policy)
    assert denied(str(project / "a" / ".env")) is True
    assert denied(str(project / "a" / "readme.md")) is False


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
    monkeypatch.setattr(security, "MAX_SETTINGS_BYTES", 10)
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
    strict = dataclasses.replace(policy, fail_closed=True)
    assert not strict.fail_closed_engaged
    assert check_command(strict, "ls").decision is NONE


def test_internal_errors_fail_open_by_default_and_closed_on_request(project, monkeypatch):
    policy = command_policy(project, deny=["Bash(sudo *)"])

    def boom(*args, **kwargs):
        raise ValueError("lexer bug")

    monkeypatch.setattr(security, "_parts", boom)
    monkeypatch.setattr(security, "extract_shell_commands", boom)
    monkeypatch.setattr(security, "_candidates", boom)
    verdict = check_command(policy, "ls -la")
    assert verdict.decision is NONE
    assert "lexer bug" in verdict.reason
    assert check_path(policy, ".env").decision is NONE
    assert explain_command(policy, "ls").considered == ()
    strict = dataclasses.replace(policy, fail_closed=True)
    assert check_command(strict, "ls -la").decision is DENY
    assert check_code(strict, "shell", "ls -la").decision is DENY
    assert check_path(strict, ".env").decision is DENY


def test_internal_errors_still_apply_deny_rules_crudely(project, monkeypatch):
    policy = command_policy(project, deny=["Bash(rm -rf *)"])

    def boom(*args, **kwargs):
        raise ValueError("lexer bug")

    monkeypatch.setattr(security, "_parts", boom)
    monkeypatch.setattr(security, "extract_shell_commands", boom)
    verdict = check_command(policy, "echo ok && (sudo rm -rf /)")
    assert (verdict.decision, verdict.matched_as) == (DENY, "rm -rf /")
    assert "lexer bug" in verdict.reason
    assert verdict.message == "Blocked by security policy: matches deny pattern Bash(rm -rf *)"
    embedded = check_code(policy, "python", "os.system('rm -rf /')")
    assert (embedded.decision, embedded.embedded) == (DENY, "rm -rf /")


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


# --------------------------------------------------------------------------- explanations, messages


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


# --------------------------------------------------------------------------- hostile input


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
    with pytest.raises(security.TooComplexError):
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


# --------------------------------------------------------------------------- import cost


def test_importing_security_loads_nothing_heavy():
    probe = (
        "import sys, ctxmode.security\n"
        "heavy = {'typer', 'rich', 'mcp', 'pydantic', 'psutil', 'platformdirs'}\n"
        "front = ('ctxmode.cli', 'ctxmode.server')\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy or m.startswith(front)))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, encoding="utf-8", check=True
    )
    assert out.stdout.strip() == "[]"
