"""The pre-tool router (`ctxmode.hooks.pretool.handle`): redirects, nudges and their throttle,
security decisions, sub-agents and the shell analysis behind them (spec 5.4-5.9, items
63-73). Decisions are checked in process against a real data root (the autouse
``CTXMODE_DIR``), real marker files and real settings files under a private HOME.
"""

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from ctxmode import readiness
from ctxmode.hookevent import HookDecision, HookEvent
from ctxmode.hooks import pretool
from ctxmode.hooks.bash import classify_bash, commands, is_bounded
from ctxmode.hooks.throttle import Throttle, session_key
from ctxmode.paths import data_root
from ctxmode.platforms import descriptors
from ctxmode.platforms.normalise import normalise


@pytest.fixture(autouse=True)
def _private_home(tmp_path, monkeypatch):
    """No real ~/.claude rules, no host variables that change naming or settings."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for var in ("CLAUDE_CONFIG_DIR", "XDG_CONFIG_HOME", "CODEX_HOME", "GEMINI_CLI_HOME"):
        monkeypatch.delenv(var, raising=False)
    return home


@pytest.fixture
def project(tmp_path) -> Path:
    path = tmp_path / "proj"
    path.mkdir()
    return path


@pytest.fixture
def server():
    """A live ctxmode server, as far as hooks can tell: a readiness marker for this pid."""
    marker = readiness.write_marker(data_root(), Path.cwd())
    yield marker
    readiness.remove_marker(marker)


def event(
    tool: str | None,
    tool_input: dict[str, Any] | None = None,
    *,
    platform: str = "claude-code",
    session: str = "s-1",
    project: Path | None = None,
    subagent: bool = False,
    raw: dict[str, Any] | None = None,
    mcp_tool: str | None = None,
) -> HookEvent:
    return normalise(
        HookEvent(
            platform=platform,
            event="pre_tool",
            native_event="pretooluse",
            session_id=session,
            project_dir=project,
            tool=tool,
            native_tool=tool,
            tool_input=tool_input or {},
            mcp_tool=mcp_tool,
            subagent=subagent,
            raw=raw or {},
        )
    )


def bash(command: str, **kw: Any) -> HookDecision:
    return pretool.handle(event("Bash", {"command": command, "description": "d"}, **kw))


def settings(directory: Path, **lists: list[str]) -> None:
    (directory / ".claude").mkdir(parents=True, exist_ok=True)
    body = {"permissions": lists}
    (directory / ".claude" / "settings.json").write_text(json.dumps(body), encoding="utf-8")


# -- redirects (spec items 63-66) ----------------------------------------------------------

FETCH_REDIRECTED = [
    "curl https://example.com",
    "curl -s 'https://api.github.com/repos/psf/requests/issues?state=open&per_page=100'",
    "wget https://example.org/y",
    "wget -qO- https://raw.githubusercontent.com/psf/requests/main/HISTORY.md | head -200",
    "curl -s -o - https://example.com",
    "curl -s -o /dev/stdout https://example.com",
    "curl -o file.txt https://example.com",
    "curl -s --verbose -o f https://example.com",
    "curl -sv -o f https://example.com",
    "curl -s -D - -o f https://example.com",
    "echo ok && curl https://example.com",
    "curl -s -o a https://example.com && curl https://example.org",
    "sudo curl https://example.com",
    "X=1 timeout 5 curl https://example.com",
    "/usr/bin/curl https://example.com",
    "echo $(curl -s https://example.com)",
    "cat urls.txt | xargs curl -s",
    "curl -s https://example.com | jq .",
    "curl -s https://example.com 2>/dev/null",
]
FETCH_PASSES = [
    "curl -sLo file https://example.com",
    "curl -s --output f https://example.com",
    "curl -s -o f https://example.com",
    "wget -q -O f https://example.com",
    "wget -q https://example.com/file.tgz",
    "curl -s https://example.com > f",
    "curl -s https://example.com >> f",
    "curl -s https://example.com | jq . > out.json",
    "curl -sSL -o /tmp/ruff.tar.gz https://github.com/astral-sh/ruff/releases/x.tar.gz",
    "curl -s -o /dev/null -w '%{http_code}' https://example.com",
    "curl -fsSL https://example.com/install.sh | sh",
    "curl -sL https://example.com/a.tgz | tar xz",
]
INLINE_HTTP = [
    "node -e \"fetch('https://example.com').then(r => r.text()).then(console.log)\"",
    "python3 -c \"import requests; print(requests.get('https://example.com').text)\"",
    "python3 - <<'EOF'\nimport requests\nprint(requests.get('https://example.com').json())\nEOF",
]
BUILDS = [
    "./gradlew build --console=plain",
    "gradle test",
    "mvn package",
    "./mvnw verify",
    "sbt compile",
    "cd app && ./gradlew build",
]
BOUNDED = [
    "git status",
    "git status --short",
    "pwd",
    "mkdir -p a/b",
    "node --version",
    "python -V",
    "ls",
    "ls -la src",
    "cp a b",
    "mv a b",
    "rm -rf build",
    "ln -s a b",
    "git log -5 --oneline",
    "git diff --stat",
    "which python",
    "echo hi",
    "curl --version",
    "./gradlew --version",
    "ls gradle",
]
UNBOUNDED = [
    "ls -R",
    "ls -laR src",
    "cp -rv a b",
    "cp -r -v a b",
    "rm -v x",
    "ln -sv a b",
    "mv a b --verbose",
    "git status | head",
    "git status; find /",
    "git status && find /",
    "pwd > f",
    "mkdir x $(cat big)",
    "git status\nfind /",
    "git log",
    "find . -name '*.py' -not -path './.venv/*' -exec grep -n 'import requests' {} +",
    "cat big.log",
    # mentions, not runs: quoted text, other commands' arguments, substrings
    'gh issue edit 1 --body "use curl https://example.com"',
    "git commit -m 'curl https://example.com'",
    "docker exec box curl https://example.com",
    "cat gradle-wrapper-config",
    "grep -rn 'requests.get(' src",
    "cat <<'EOF' > fetch.py\nimport requests\nrequests.get('https://example.com')\nEOF",
    # a build whose log is already cut short is the redirect's own suggestion
    "./gradlew build 2>&1 | tail -30",
    "mvn -q test > build.log",
]


@pytest.mark.parametrize("command", FETCH_REDIRECTED)
def test_curl_and_wget_printing_a_response_are_redirected_to_fetch_and_index(command, server):
    decision = bash(command)
    assert decision.kind == "modify"
    assert decision.reason is not None
    assert decision.reason.startswith("redirected to ctx_fetch_and_index")
    assert decision.updated_input is not None
    assert decision.updated_input["command"].startswith("echo ")
    assert "ctx_fetch_and_index" in decision.updated_input["command"]


@pytest.mark.parametrize("command", FETCH_PASSES)
def test_silent_downloads_to_a_file_or_unpacker_pass_without_a_redirect(command, server):
    decision = bash(command)
    assert decision.kind in ("allow", "context")
    assert decision.updated_input is None


@pytest.mark.parametrize("command", INLINE_HTTP)
def test_inline_http_in_an_interpreter_is_redirected_to_execute(command, server):
    decision = bash(command)
    assert decision.kind == "modify"
    assert decision.reason is not None
    assert decision.reason.startswith("redirected to ctx_execute")


@pytest.mark.parametrize("command", BUILDS)
def test_build_tools_are_redirected_with_the_command_to_run(command, server):
    decision = bash(command)
    assert decision.kind == "modify"
    assert decision.reason is not None
    assert decision.reason.startswith("redirected to ctx_execute")
    assert "2>&1 | tail -30" in decision.reason
    assert command.split("&&")[-1].strip() in decision.reason


@pytest.mark.parametrize("command", BOUNDED)
def test_structurally_bounded_commands_pass_silently(command, server):
    assert bash(command) == HookDecision()


@pytest.mark.parametrize("command", UNBOUNDED)
def test_other_commands_get_the_bash_nudge(command, server):
    decision = bash(command)
    assert decision.kind == "context"
    assert decision.context is not None
    assert "ctx_batch_execute" in decision.context


def test_redirect_keeps_every_other_field_of_the_input(server):
    payload = {"command": "curl https://example.com", "description": "d", "timeout": 120000}
    decision = pretool.handle(event("Bash", payload))
    assert decision.updated_input is not None
    assert decision.updated_input["description"] == "d"
    assert decision.updated_input["timeout"] == 120000
    assert decision.updated_input.keys() == payload.keys()


def test_redirect_echo_prints_the_reason_verbatim(server):
    decision = bash("curl 'https://example.com/?q=it'\"'\"'s'")
    assert decision.updated_input is not None
    proc = subprocess.run(
        ["sh", "-c", decision.updated_input["command"]],
        capture_output=True,
        text=True,
        encoding="utf-8",
        check=True,
    )
    assert proc.stdout.rstrip("\n") == decision.reason


def test_redirect_names_the_url_of_the_command(server):
    decision = bash("curl -s 'https://pypi.org/pypi/fastapi/json'")
    assert decision.reason is not None
    assert 'url: "https://pypi.org/pypi/fastapi/json"' in decision.reason


def test_codex_cmd_payloads_are_redirected_in_their_own_field(server):
    decision = pretool.handle(event("Bash", {"cmd": "curl https://example.com"}, platform="codex"))
    assert decision.kind == "modify"
    assert decision.updated_input is not None
    assert decision.updated_input["cmd"].startswith("echo ")
    assert "command" not in decision.updated_input
    argv = {"command": ["bash", "-lc", "curl https://example.com"]}
    decision = pretool.handle(event("Bash", argv, platform="codex"))
    assert decision.kind == "modify"
    assert decision.updated_input is not None
    assert decision.updated_input["command"][0] == "echo"


def test_powershell_fetches_are_redirected_with_a_powershell_echo(server):
    ps = event("Bash", {"command": "iwr https://example.com/x"})
    ps = ps._replace(native_tool="PowerShell")
    decision = pretool.handle(ps)
    assert decision.kind == "modify"
    assert decision.updated_input is not None
    assert decision.updated_input["command"].startswith("echo 'redirected to ")
    for command in ("Invoke-WebRequest https://example.com -OutFile a.html", "curl.exe --version"):
        assert classify_bash(command).kind != "fetch"
    assert classify_bash("Invoke-RestMethod https://example.com").kind == "fetch"
    assert classify_bash("gradlew.bat build").kind == "build"


@pytest.mark.parametrize("command", ["curl https://example.com", "gradle test", INLINE_HTTP[1]])
def test_without_a_running_server_redirects_pass_through(command):
    assert bash(command) == HookDecision()


def test_a_dead_servers_marker_is_ignored_and_removed():
    folder = readiness.markers_dir(data_root())
    folder.mkdir(parents=True)
    dead = folder / "999999999.json"
    dead.write_text("{}", encoding="utf-8")
    assert bash("curl https://example.com") == HookDecision()
    assert not dead.exists()


def test_webfetch_is_redirected_with_its_url(server):
    url = "https://docs.python.org/3/library/asyncio-task.html"
    decision = pretool.handle(event("WebFetch", {"url": url, "prompt": "Summarize"}))
    assert decision.kind == "deny"
    assert decision.reason is not None
    assert decision.reason.startswith("redirected to ctx_fetch_and_index")
    for part in (url, "ctx_search", "Do NOT use curl", "full network access"):
        assert part in decision.reason
    assert "blocked" not in decision.reason.lower()


def test_webfetch_of_several_urls_suggests_one_batched_fetch(server):
    urls = ["https://a.example/x", "https://b.example/y"]
    decision = pretool.handle(event("WebFetch", {"urls": urls}, platform="vscode-copilot"))
    assert decision.reason is not None
    assert 'requests: [{url: "https://a.example/x"}, {url: "https://b.example/y"}]' in (
        decision.reason
    )


def test_webfetch_passes_without_a_running_server():
    assert pretool.handle(event("WebFetch", {"url": "https://example.com"})) == HookDecision()


def test_redirects_name_the_hosts_full_tool_name_where_known(server):
    claude = bash("curl https://example.com")
    kiro = bash("curl https://example.com", platform="kiro")
    cursor = bash("curl https://example.com", platform="cursor")
    assert claude.reason is not None and kiro.reason is not None and cursor.reason is not None
    assert "(mcp__ctxmode__ctx_fetch_and_index)" in claude.reason
    assert "(@ctxmode/ctx_fetch_and_index)" in kiro.reason
    assert cursor.reason.startswith("redirected to ctx_fetch_and_index: ")


# -- sub-agents without ctx tools -----------------------------------------------------------


@pytest.mark.parametrize("agent_type", ["Explore", "Plan", "my-reviewer", None])
def test_a_subagent_without_ctx_tools_is_neither_redirected_nor_nudged(server, agent_type):
    raw = {"agent_id": "a1", "agent_type": agent_type}
    assert bash("curl https://example.com", subagent=True, raw=raw) == HookDecision()
    assert bash("find / -name x", subagent=True, raw=raw) == HookDecision()
    fetch = event("WebFetch", {"url": "https://example.com"}, subagent=True, raw=raw)
    assert pretool.handle(fetch) == HookDecision()
    read = event("Read", {"file_path": "/x"}, subagent=True, raw=raw)
    assert pretool.handle(read) == HookDecision()


def test_a_general_purpose_subagent_is_redirected_like_the_main_agent(server):
    raw = {"agent_id": "a1", "agent_type": "general-purpose"}
    assert bash("curl https://example.com", subagent=True, raw=raw).kind == "modify"


# -- nudges and their throttle (items 67-69) -----------------------------------------------


def test_read_grep_and_bash_nudges_show_once_per_session_each():
    read = event("Read", {"file_path": "/home/dev/projects/acme-api/logs/app.log"})
    grep = event("Grep", {"pattern": "x"})
    first = pretool.handle(read)
    assert first.kind == "context"
    assert first.context is not None and "ctx_execute_file" in first.context
    assert pretool.handle(read) == HookDecision()
    grep_first = pretool.handle(grep)
    assert grep_first.kind == "context"
    assert grep_first.context is not None and "ctx_execute" in grep_first.context
    assert pretool.handle(grep) == HookDecision()
    assert bash("find /").kind == "context"
    assert bash("find / -name y") == HookDecision()


def test_a_new_session_sees_the_nudges_again():
    read = {"file_path": "/a/b.py"}
    assert pretool.handle(event("Read", read, session="one")).kind == "context"
    assert pretool.handle(event("Read", read, session="one")) == HookDecision()
    assert pretool.handle(event("Read", read, session="two")).kind == "context"


def test_without_a_session_id_the_throttle_is_per_project(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    grep = {"pattern": "x"}
    assert pretool.handle(event("Grep", grep, session="", project=a)).kind == "context"
    assert pretool.handle(event("Grep", grep, session="", project=a)) == HookDecision()
    assert pretool.handle(event("Grep", grep, session="", project=b)).kind == "context"


def test_a_large_file_read_gets_its_size_once_per_file(tmp_path):
    big, other = tmp_path / "big.log", tmp_path / "other.log"
    big.write_bytes(b"x" * 60_000)
    other.write_bytes(b"y" * 2_000_000)
    first = pretool.handle(event("Read", {"file_path": str(big)}))
    assert first.kind == "context"
    assert first.context is not None and "big.log is 58.6 KB" in first.context
    assert pretool.handle(event("Read", {"file_path": str(big)})) == HookDecision()
    second = pretool.handle(event("Read", {"file_path": str(other)}))
    assert second.context is not None and "other.log is 1.9 MB" in second.context
    small = tmp_path / "small.py"
    small.write_text("x = 1\n", encoding="utf-8")
    assert pretool.handle(event("Read", {"file_path": str(small)})) == HookDecision()


def _mcp_calls(n: int, **kw: Any) -> list[int]:
    fired = []
    for i in range(1, n + 1):
        decision = pretool.handle(
            event("mcp", {"limit": 200}, mcp_tool="conversations_history", **kw)
        )
        if decision.kind == "context":
            fired.append(i)
    return fired


def test_external_mcp_tools_are_nudged_on_calls_1_11_21():
    assert _mcp_calls(25) == [1, 11, 21]


@pytest.mark.parametrize(("value", "fired"), [("3", [1, 4, 7]), ("1", [1, 2, 3, 4, 5, 6, 7])])
def test_the_external_mcp_cadence_follows_the_env(monkeypatch, value, fired):
    monkeypatch.setenv("CTXMODE_EXTERNAL_MCP_NUDGE_EVERY", value)
    assert _mcp_calls(7) == fired


@pytest.mark.parametrize(
    "leaf", ["ctx_search", "ctx_execute", "ctx_fetch_and_index", "ctx_batch_execute"]
)
def test_own_ctx_tools_are_never_nudged(leaf):
    args = {"queries": ["x"], "language": "python", "code": "print(1)", "commands": []}
    for _ in range(12):
        assert pretool.handle(event("ctx", args, mcp_tool=leaf)) == HookDecision()


@pytest.mark.parametrize("platform", [h.name for h in descriptors() if not h.pre_context])
def test_hosts_without_pre_tool_context_keep_the_nudge_for_later(platform):
    assert pretool.handle(event("Grep", {"pattern": "x"}, platform=platform)) == HookDecision()
    assert pretool.handle(event("Grep", {"pattern": "x"})).kind == "context"


def test_once_markers_are_shared_by_concurrent_hook_processes():
    throttle = Throttle(data_root(), "s-race")
    results: list[bool] = []
    threads = [
        threading.Thread(target=lambda: results.append(throttle.once("x"))) for _ in range(16)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results.count(True) == 1


def test_every_counts_calls_across_processes():
    throttle = Throttle(data_root(), "s-count")
    results: list[bool] = []
    threads = [
        threading.Thread(target=lambda: results.append(throttle.every("m", 10))) for _ in range(30)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results.count(True) == 3


def test_throttle_fails_quiet_for_once_and_loud_for_every(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("", encoding="utf-8")
    throttle = Throttle(blocker, "s-x")  # <file>/guidance cannot be created
    assert throttle.once("read") is False
    assert throttle.every("external-mcp", 10) is True


def test_session_keys_are_safe_directory_names(tmp_path):
    assert session_key("4f1c2b9e-8a7d", None) == "s-4f1c2b9e-8a7d"
    for hostile in ("../../etc", "a/b", "..", "x" * 200, "über"):
        key = session_key(hostile, None)
        assert "/" not in key and key.startswith("s-") and len(key) < 70
    assert session_key("", tmp_path).startswith("p-")
    assert session_key("", None).startswith("ppid-")


def test_new_sessions_sweep_week_old_marker_directories():
    root = data_root()
    old = root / "guidance" / "s-old"
    old.mkdir(parents=True)
    os.utime(old, (0, 0))
    assert Throttle(root, "s-new").once("read")
    assert not old.exists()


# -- security first (items 71-72) ----------------------------------------------------------


def test_a_deny_rule_blocks_bash_in_a_chain(project, server):
    settings(project, deny=["Bash(sudo *)"])
    for command in ("sudo rm -rf /", "echo ok && sudo rm -rf /"):
        decision = bash(command, project=project)
        assert decision == HookDecision(
            "deny", reason="Blocked by security policy: matches deny pattern Bash(sudo *)"
        )


def test_security_applies_without_a_server_and_with_injection_off(project, monkeypatch):
    settings(project, deny=["Bash(sudo *)"])
    monkeypatch.setenv("CTXMODE_INJECT", "off")
    assert bash("sudo ls", project=project).kind == "deny"


def test_a_deny_rule_wins_over_a_redirect(project, server):
    settings(project, deny=["Bash(curl:*)"])
    decision = bash("curl https://example.com", project=project)
    assert decision.kind == "deny"
    assert decision.reason is not None and decision.reason.startswith("Blocked by security")


def test_an_ask_rule_asks_and_names_the_rule(project):
    settings(project, ask=["Bash(git push:*)"])
    decision = bash("git push origin main", project=project)
    assert decision.kind == "ask"
    assert decision.reason is not None and "Bash(git push:*)" in decision.reason


def test_a_project_deny_overrides_a_global_allow(project, _private_home):
    settings(_private_home, allow=["Bash(sudo *)"])
    settings(project, deny=["Bash(sudo *)"])
    assert bash("sudo ls", project=project).kind == "deny"


def test_no_matching_rule_falls_through_to_routing(project, server):
    settings(project, deny=["Bash(sudo *)"], allow=["Bash(curl:*)"])
    assert bash("curl https://example.com", project=project).kind == "modify"
    assert bash("git status", project=project) == HookDecision()


def test_own_tools_are_checked_against_the_rules(project):
    settings(project, deny=["Bash(sudo *)", "Read(.env)"])

    def own(leaf: str, **args: Any) -> HookDecision:
        return pretool.handle(event("ctx", args, mcp_tool=leaf, project=project))

    shell = own("ctx_execute", language="shell", code="sudo ls")
    assert shell.reason == (
        "Blocked by security policy: shell code matches deny pattern Bash(sudo *)"
    )
    embedded = own("ctx_execute", language="python", code="import os\nos.system('sudo ls')")
    assert embedded.kind == "deny"
    assert own("ctx_execute", language="python", code="print(1)") == HookDecision()
    batch = own(
        "ctx_batch_execute",
        commands=[{"label": "ok", "command": "ls"}, {"label": "root", "command": "sudo id"}],
        queries=["x"],
    )
    assert batch.reason == (
        'Blocked by security policy: batch command "root" matches deny pattern Bash(sudo *)'
    )
    env_file = own("ctx_execute_file", path=".env", language="python", code="print(1)")
    assert env_file.reason == (
        "Blocked by security policy: file path matches Read deny pattern .env"
    )
    assert own("ctx_index", path=str(project / ".env")).kind == "deny"
    assert own("ctx_search", queries=["sudo"]) == HookDecision()


def test_own_tools_are_checked_for_denied_files_they_name_and_unreadable_commands(project):
    settings(project, deny=["Bash(rm:*)", "Read(.env)"])

    def own(leaf: str, **args: Any) -> HookDecision:
        return pretool.handle(event("ctx", args, mcp_tool=leaf, project=project))

    cat = own("ctx_execute", language="shell", code="cat .env")
    assert cat.reason == (
        "Blocked by security policy: .env (in cat .env) matches Read deny pattern Read(.env)"
    )
    assert own("ctx_execute", language="python", code="open('.env').read()").kind == "deny"
    batch = own("ctx_batch_execute", commands=[{"label": "env", "command": "cat .env"}])
    assert batch.reason == (
        'Blocked by security policy: .env (in batch command "env": cat .env) matches Read '
        "deny pattern Read(.env)"
    )
    expanded = own("ctx_execute", language="shell", code="X=rm; $X -rf build")
    assert expanded.kind == "deny"
    unknown = own("ctx_execute", language="shell", code="$TOOL -rf build")
    assert unknown == HookDecision(
        "ask",
        reason='ctxmode: "$TOOL -rf build" runs a command named at run time ($TOOL), which '
        "no rule can check (deny rule Bash(rm:*) is in force); confirm to run it.",
    )
    # The host's own Bash tool keeps the host's semantics: Read rules are the host's there.
    assert bash("cat .env", project=project).kind != "deny"


def test_own_tools_naming_more_files_than_are_checked_are_asked_about(project):
    """The check stops reading after MAX_NAMES names: what follows (here .env) is unread,
    so the host asks; the verdict once had no rule and the hook let it through."""
    from ctxmode.security.named import MAX_NAMES

    settings(project, deny=["Read(.env)"])
    code = "cat " + " ".join(f"n{i}" for i in range(MAX_NAMES + 100)) + " .env"
    decision = pretool.handle(
        event("ctx", {"language": "shell", "code": code}, mcp_tool="ctx_execute", project=project)
    )
    assert decision.kind == "ask"
    assert decision.reason is not None
    assert f"names more than {MAX_NAMES:,} files" in decision.reason
    assert "(deny rule Read(.env) is in force); confirm to run it." in decision.reason


def test_fail_closed_security_denies_when_settings_are_broken(project, monkeypatch):
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.json").write_text("{not json", encoding="utf-8")
    assert bash("ls -la", project=project) == HookDecision()
    monkeypatch.setenv("CTXMODE_REQUIRE_SECURITY", "1")
    decision = bash("ls -la", project=project)
    assert decision.kind == "deny"
    assert decision.reason is not None and "CTXMODE_REQUIRE_SECURITY" in decision.reason


# -- CTXMODE_INJECT=off --------------------------------------------------------------------


def test_inject_off_silences_nudges_and_subagent_blocks_but_not_redirects(monkeypatch, server):
    monkeypatch.setenv("CTXMODE_INJECT", "off")
    assert pretool.handle(event("Read", {"file_path": "/a"})) == HookDecision()
    assert bash("find /") == HookDecision()
    assert _mcp_calls(3) == []
    agent = event("Agent", {"prompt": "p", "subagent_type": "general-purpose"})
    assert pretool.handle(agent) == HookDecision()
    assert bash("curl https://example.com").kind == "modify"


# -- sub-agent launches (item 70, users.md #12) ---------------------------------------------


def test_a_general_purpose_agent_gets_the_block_without_operator_commands(server):
    args = {"prompt": "Find the bug", "description": "d", "subagent_type": "general-purpose"}
    decision = pretool.handle(event("Agent", args))
    assert decision.kind == "modify"
    assert decision.updated_input is not None
    prompt = decision.updated_input["prompt"]
    assert prompt.startswith("Find the bug\n\n<context_window_protection>")
    assert "ctx stats" not in prompt
    assert decision.updated_input["description"] == "d"


def test_a_bash_agent_becomes_general_purpose(server):
    decision = pretool.handle(event("Agent", {"prompt": "p", "subagent_type": "Bash"}))
    assert decision.updated_input is not None
    assert decision.updated_input["subagent_type"] == "general-purpose"


@pytest.mark.parametrize("kind", ["Explore", "Plan", "statusline-setup", "my-custom-agent"])
def test_read_only_and_custom_agents_get_nothing_by_default(server, kind):
    assert pretool.handle(event("Agent", {"prompt": "p", "subagent_type": kind})) == HookDecision()


def test_subagent_routing_all_and_off(server, monkeypatch):
    explore = event("Agent", {"prompt": "p", "subagent_type": "Explore"})
    general = event("Agent", {"prompt": "p", "subagent_type": "general-purpose"})
    monkeypatch.setenv("CTXMODE_SUBAGENT_ROUTING", "all")
    assert pretool.handle(explore).kind == "modify"
    monkeypatch.setenv("CTXMODE_SUBAGENT_ROUTING", "off")
    assert pretool.handle(general) == HookDecision()


def test_agent_blocks_go_into_the_hosts_prompt_field_once(server):
    decision = pretool.handle(event("Agent", {"objective": "Investigate"}, platform="gemini-cli"))
    assert decision.updated_input is not None
    assert "<context_window_protection>" in decision.updated_input["objective"]
    again = event("Agent", decision.updated_input, platform="gemini-cli")
    assert pretool.handle(again) == HookDecision()


def test_no_agent_block_without_a_running_server():
    args = {"prompt": "p", "subagent_type": "general-purpose"}
    assert pretool.handle(event("Agent", args)) == HookDecision()


@pytest.mark.parametrize(
    "tool", ["Task", "Glob", "Edit", "Write", "WebSearch", "NotebookEdit", "other", None]
)
def test_other_tools_pass_through(server, tool):
    assert pretool.handle(event(tool, {"prompt": "p", "todos": []})) == HookDecision()


# -- the shell analysis --------------------------------------------------------------------


def test_commands_split_pipelines_and_keep_redirections_apart():
    a, b, c, d = commands("a 1 | b > out 2>&1 && c 'x && y'; d <<EOF\nbody\nEOF")
    assert [x.words for x in (a, b, c, d)] == [["a", "1"], ["b"], ["c", "x && y"], ["d"]]
    assert a.rest == [b]
    assert b.rest == c.rest == d.rest == []
    assert b.redirects == (("", ">", "out"), ("2", ">&", "1"))
    assert b.stdout_to_file()
    assert d.heredoc == "body"


def test_unbalanced_quotes_still_get_analysed(server):
    assert classify_bash("curl 'https://example.com").kind == "fetch"


@pytest.mark.parametrize(
    "command", ["", "   ", "date & cat huge.log", "echo ok\rfind /", "ls `find /`", "cat < f"]
)
def test_control_operators_and_blanks_are_never_bounded(command):
    assert not is_bounded(command)


# -- the hook process ----------------------------------------------------------------------


def _modules_after(tool: str, tool_input: dict[str, Any], home: Path) -> set[str]:
    payload = json.dumps({"session_id": "s", "tool_name": tool, "tool_input": tool_input})
    code = (
        "import sys, json\nfrom ctxmode.__main__ import main\n"
        "rc = main(['hook', 'claude-code', 'pretooluse'])\n"
        "sys.stderr.write('MODULES' + json.dumps(sorted(sys.modules)))"
    )
    env = {**os.environ, "HOME": str(home)}
    proc = subprocess.run(
        [sys.executable, "-c", code],
        input=payload,
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=env,
        check=True,
    )
    return set(json.loads(proc.stderr.split("MODULES", 1)[1]))


def test_pre_tool_opens_no_database_and_loads_security_only_for_shell(_private_home):
    heavy = {"sqlite3", "ctxmode.store", "ctxmode.session", "ctxmode.db", "typer", "mcp"}
    read = _modules_after("Read", {"file_path": "/x"}, _private_home)
    assert not heavy & read
    assert "ctxmode.security" not in read
    assert "ctxmode.hooks.bash" not in read
    shell = _modules_after("Bash", {"command": "curl https://example.com"}, _private_home)
    assert not heavy & shell
    assert "ctxmode.security" in shell
