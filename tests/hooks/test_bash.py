"""Routing's shell analysis (`ctxmode.hooks.bash`) reads commands with the permission
policy's lexer (`ctxmode.security.shell`): both see the same simple commands, so a command
the policy sees run is one routing judges, and text that only mentions one is neither's.
"""

from pathlib import Path

import pytest

from ctxmode.hooks.bash import classify_bash, commands
from ctxmode.security import Decision, check_command, explain_command, load_policy, split_command

API = "https://x.example/api"

# (command, routing's verdict). "fetch": the response reaches the conversation.
AGREEMENT = [
    # substitutions whose output is printed
    (f'echo "$(curl -s {API})"', "fetch"),
    (f"echo `curl -s {API}`", "fetch"),
    (f'x=$(curl -s {API}); echo "$x"', "fetch"),
    (f'jq .x <<< "$(curl -s {API})"', "fetch"),
    (f"diff <(curl -s {API}/a) <(curl -s {API}/b)", "fetch"),
    (f"cat <<EOF\n$(curl -s {API})\nEOF", "fetch"),
    # scripts handed to a shell
    (f"bash -c 'curl -s {API}'", "fetch"),
    (f'sh -c "curl -s {API} | jq .x"', "fetch"),
    (f"eval 'curl -s {API}'", "fetch"),
    (f"sh <<'EOF'\ncurl -s {API}\nEOF", "fetch"),
    (f"cat <<'EOF' | bash\ncurl -s {API}\nEOF", "fetch"),
    (f"bash <<< 'curl -s {API}'", "fetch"),
    (f"busybox sh -c 'curl -s {API}'", "fetch"),
    # wrappers and assignments
    (f"sudo curl {API}", "fetch"),
    (f"env X=1 curl {API}", "fetch"),
    (f"X=1 curl {API}", "fetch"),
    (f"timeout 5 curl -s {API}", "fetch"),
    # pipes and files
    (f"curl -s {API} | jq .x", "fetch"),
    (f"curl -s -o f {API}", "other"),
    (f"curl -s {API} | jq .x > out.json", "other"),
    (f'echo "$(curl -s -o f {API})"', "other"),
    (f'echo "$(curl -s {API})" > out.json', "other"),
    (f"bash -c 'curl -s {API}' > out.json", "other"),
    # output run as a script, or used as an argument
    (f'sh -c "$(curl -fsSL {API}/install.sh)"', "other"),
    (f"bash <(curl -fsSL {API}/install.sh)", "other"),
    (f'git commit -m "$(curl -s {API}/message)"', "other"),
    # mentions, not runs
    (f'gh issue edit 1 --body "use curl {API}"', "other"),
    (f"git commit -m 'curl {API}'", "other"),
    (f"cat <<'EOF'\ncurl -s {API}\nEOF", "other"),
    (f"docker exec box curl {API}", "other"),
]


@pytest.fixture
def curl_denied(tmp_path, monkeypatch):
    """A policy with one rule, ``Bash(curl *)``: it denies exactly the commands running curl."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    settings = tmp_path / "project" / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text('{"permissions": {"deny": ["Bash(curl *)"]}}', encoding="utf-8")
    return load_policy(Path(settings.parent.parent), managed_settings=[])


@pytest.mark.parametrize(("command", "route"), AGREEMENT)
def test_routing_and_the_policy_see_the_same_commands(curl_denied, command, route):
    routed = commands(command)
    texts = [c.text for c in routed]
    assert texts == list(explain_command(curl_denied, command).parts)
    assert set(split_command(command)) <= set(texts)
    runs_curl = any(c.name == "curl" for c in routed)
    assert runs_curl == (check_command(curl_denied, command).decision is Decision.DENY)
    assert runs_curl or route != "fetch"
    assert classify_bash(command).kind == route


def test_a_command_run_on_another_host_is_checked_but_not_routed(curl_denied):
    """The rules hold for what ssh runs remotely; a fetch there is not one to redirect here."""
    command = f"ssh deploy@host 'curl -s {API}'"
    assert check_command(curl_denied, command).decision is Decision.DENY
    assert classify_bash(command).kind == "other"


def test_a_fetch_in_a_substitution_names_its_url():
    route = classify_bash(f'echo "$(curl -s {API}/v1)"')
    assert route == ("fetch", "curl", f"{API}/v1")


@pytest.mark.parametrize(
    "command",
    [
        'echo "$(./gradlew build)"',
        "bash -c './gradlew build'",
        "sh <<'EOF'\nmvn package\nEOF",
    ],
)
def test_builds_inside_substitutions_and_scripts_are_builds(command):
    assert classify_bash(command).kind == "build"


@pytest.mark.parametrize(
    "command", ["bash -c './gradlew build' | tail -30", 'echo "$(mvn -q test)" > build.log']
)
def test_a_build_log_cut_short_outside_its_script_is_not_redirected(command):
    assert classify_bash(command).kind == "other"


def test_inline_http_in_a_shell_script_is_found():
    code = "python3 -c \"import requests; print(requests.get('https://x.example').text)\""
    assert classify_bash(f"bash -c '{code}'").kind == "inline_http"


def test_a_substitution_knows_the_command_it_feeds():
    curl, echo = commands(f'echo "$(curl -s {API})" | tee out')[:2]
    assert (curl.outer, curl.via) == (echo, "$(")
    assert [c.text for c in echo.rest] == ["tee out"]
    inner = commands(f"bash -c 'curl -s {API}'")
    assert [(c.text, c.outer.text if c.outer else None, c.via) for c in inner] == [
        (f"bash -c 'curl -s {API}'", None, ""),
        (f"curl -s {API}", f"bash -c 'curl -s {API}'", "-c"),
    ]


def test_shell_escapes_in_other_languages_are_left_to_the_policy(curl_denied):
    """Whether ``os.system``/``execSync`` output is printed depends on the call: routing
    judges interpreter code by its own HTTP calls only."""
    command = f"python3 -c \"import os; os.system('curl -s {API}')\""
    assert check_command(curl_denied, command).decision is Decision.DENY
    assert [c.name for c in commands(command)] == ["python3"]
    assert classify_bash(command).kind == "other"


def test_a_huge_command_is_read_to_the_end():
    command = "echo ok; " * 30_000 + f"curl {API}"
    assert classify_bash(command) == ("fetch", "curl", API)
