"""The report is safe to paste publicly: no home path, no user name, no secrets."""

import json

from ctxmode.__main__ import main
from ctxmode.doctor.model import Check
from ctxmode.doctor.redact import redact, redact_checks

from .support import by_name, doctor_json, run_process

USER = "zqdoctoruser"
TOKEN = "ghp_" + "a1B2c3D4e5" * 4
ENV_SECRET = "plain-secret-value-7731"


def test_redact_masks_home_user_env_secrets_and_tokens(home, monkeypatch):
    monkeypatch.setenv("USER", USER)
    monkeypatch.setenv("DOCTOR_TEST_API_KEY", ENV_SECRET)
    text = (
        f"{home}/.claude/settings.json; /srv/{USER}/data; pytest-of-{USER}; "
        f"args --opaque {ENV_SECRET}; token {TOKEN}; {home}other stays"
    )
    out = redact(text)
    assert out.startswith("~/.claude/settings.json; ")
    assert USER not in out and "/srv/<user>/data" in out and "pytest-of-<user>" in out
    assert ENV_SECRET not in out and TOKEN not in out
    assert out.endswith("/homeother stays")  # a longer name that merely starts like the home
    assert redact(out) == out


def test_ordinary_words_and_paths_survive(home, monkeypatch):
    monkeypatch.setenv("USER", USER)
    text = "SQLite 3.45.1, FTS5 and trigram tokenizer; /usr/bin/bash; max_tokens=4096"
    assert redact(text) == text


def test_redact_checks_covers_every_field_but_the_status(home, monkeypatch):
    monkeypatch.setenv("USER", USER)
    check = Check(f"setup {USER}", "WARN", f"{home}/x", f"rm {home}/x")
    assert redact_checks([check]) == [Check("setup <user>", "WARN", "~/x", "rm ~/x")]


def test_a_real_report_leaks_no_home_user_or_secret(tmp_path, home, monkeypatch, capsys):
    # The user's name in the data directory's path, the project under the home directory,
    # a secret in the environment and a token in a host's settings file.
    monkeypatch.setenv("USER", USER)
    monkeypatch.setenv("LOGNAME", USER)
    monkeypatch.setenv("DOCTOR_TEST_API_KEY", ENV_SECRET)
    monkeypatch.setenv("CTXMODE_DIR", str(tmp_path / USER / "ctxdata"))
    project = home / "code" / "app"
    (project / ".git").mkdir(parents=True)
    monkeypatch.chdir(project)
    assert main(["setup", "claude-code", "--json"]) == 0
    assert main(["setup", "codex", "--global", "--json"]) == 0
    foreign = {
        "mcpServers": {
            "ctxmode": {
                "command": "npx",
                "args": ["some-server", "--opaque", ENV_SECRET],
                "env": {"GITHUB_TOKEN": TOKEN},
            }
        }
    }
    (project / ".mcp.json").write_text(json.dumps(foreign), encoding="utf-8")
    capsys.readouterr()

    _, data = doctor_json(capsys)
    claude = by_name(data)["setup claude-code (project)"]
    assert claude["status"] == "WARN"
    assert "already configured and does not run `ctxmode serve`" in claude["detail"]
    assert "~/.codex/config.toml" in by_name(data)["setup codex (global)"]["detail"]
    assert "<user>" in by_name(data)["storage"]["detail"]

    proc = run_process(project)
    everything = json.dumps(data) + proc.stdout + proc.stderr
    assert "already configured" in proc.stdout
    for leak in (str(home), USER, TOKEN, ENV_SECRET):
        assert leak not in everything, leak


def test_a_generic_account_name_is_only_replaced_where_it_locates_something(home, monkeypatch):
    monkeypatch.setenv("USER", "node")
    monkeypatch.setenv("LOGNAME", "node")
    text = "runtime javascript: node 20.1 (/usr/bin/node); /tmp/node/x; node@box"
    assert (
        redact(text) == "runtime javascript: node 20.1 (/usr/bin/node); /tmp/<user>/x; <user>@box"
    )


def test_a_windows_home_matches_in_any_case_and_either_slash(monkeypatch):
    from ctxmode.doctor import redact as module

    monkeypatch.setattr(module.sys, "platform", "win32")
    monkeypatch.setattr(module, "_homes", lambda: ["C:\\Users\\Alice"])
    monkeypatch.setattr(module, "_users", lambda: [])
    text = "c:\\users\\alice\\.claude; C:/Users/Alice/x; C:\\Users\\Alicia"
    assert redact(text) == "~\\.claude; ~/x; C:\\Users\\Alicia"


def test_a_missing_project_path_in_an_error_is_redacted(home, monkeypatch, capsys):
    missing = home / "secret-project"
    assert main(["doctor", "--project", str(missing), "--json"]) == 3
    out = capsys.readouterr().out
    assert str(home) not in out and "~/secret-project" in out
