"""Permission rules reach every CLI door: policy check, execute, execute-file, index, search."""

import json

import pytest

from .support import run_json


@pytest.fixture
def project(tmp_path, monkeypatch):
    root = tmp_path / "proj"
    (root / ".claude").mkdir(parents=True)
    (root / ".git").mkdir()
    (root / ".claude" / "settings.json").write_text(
        json.dumps(
            {
                "permissions": {
                    "deny": ["Bash(sudo *)", "Read(**/.env)"],
                    "ask": ["Bash(git push *)"],
                    "allow": ["Bash(git:*)"],
                }
            }
        ),
        encoding="utf-8",
    )
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.chdir(root)
    return root


def test_policy_check_names_the_deciding_rule_and_its_file(project, capsys):
    code, doc = run_json(capsys, "policy", "check", "echo ok && sudo rm -rf /")
    assert code == 5
    data = doc["data"]
    assert data["decision"] == "deny" and data["rule"] == "Bash(sudo *)"
    assert str(project / ".claude" / "settings.json") in data["origin"]
    assert data["parts"] == ["echo ok", "sudo rm -rf /"]


@pytest.mark.parametrize(
    ("command", "decision", "exit_code"),
    [("git status", "allow", 0), ("git push --force origin", "ask", 6), ("ls -la", "none", 0)],
)
def test_policy_check_exit_status_follows_the_decision(
    project, capsys, command, decision, exit_code
):
    code, doc = run_json(capsys, "policy", "check", command)
    assert (code, doc["data"]["decision"]) == (exit_code, decision)


def test_policy_check_path_resolves_dotdot(project, capsys):
    (project / "sub").mkdir()
    (project / ".env").write_text("TOKEN=1\n", encoding="utf-8")
    code, doc = run_json(capsys, "policy", "check", "--path", "sub/../.env")
    assert code == 5 and doc["data"]["rule"] == "Read(**/.env)"


def test_execute_refuses_denied_shell_and_embedded_commands(project, capsys):
    code, doc = run_json(capsys, "execute", "sudo id")
    assert code == 5
    assert doc["errors"][0]["message"] == (
        "Command blocked by security policy: matches deny pattern Bash(sudo *)"
    )
    marker = project / "ran"
    code, doc = run_json(
        capsys, "execute", "--lang", "python", f"import os; os.system('sudo touch {marker}')"
    )
    assert code == 5 and "embedded shell command" in doc["errors"][0]["message"]
    assert not marker.exists()


def test_execute_file_refuses_a_denied_path(project, capsys):
    (project / ".env").write_text("TOKEN=1\n", encoding="utf-8")
    code, doc = run_json(capsys, "execute-file", ".env", "--code", "print(FILE_CONTENT)")
    assert code == 5
    assert "Read deny pattern **/.env" in doc["errors"][0]["message"]
    assert "TOKEN" not in json.dumps(doc)


def test_execute_refuses_code_that_names_a_denied_file(project, capsys):
    (project / ".env").write_text("TOKEN=1\n", encoding="utf-8")
    code, doc = run_json(capsys, "execute", "grep TOKEN .env")
    assert code == 5
    assert doc["errors"][0]["message"] == (
        "File access blocked by security policy: .env (in grep TOKEN .env) matches Read "
        "deny pattern Read(**/.env)"
    )
    code, doc = run_json(capsys, "execute", "--lang", "python", "print(open('.env').read())")
    assert code == 5 and "TOKEN" not in json.dumps(doc)


def test_policy_check_decides_commands_as_execute_does(project, capsys):
    (project / ".env").write_text("TOKEN=1\n", encoding="utf-8")
    code, doc = run_json(capsys, "policy", "check", "cat .env")
    assert code == 5
    assert doc["data"]["rule"] == "Read(**/.env)" and doc["data"]["matched_as"] == ".env"
    code, doc = run_json(capsys, "policy", "check", "X=sudo; $X id")
    assert code == 5 and doc["data"]["rule"] == "Bash(sudo *)"
    code, doc = run_json(capsys, "policy", "check", "$TOOL id")
    assert code == 6
    assert "named at run time" in doc["data"]["reason"]


def test_index_skips_denied_files_and_search_never_rereads_them(project, capsys):
    (project / "notes.md").write_text("# Notes\nkeep these words\n", encoding="utf-8")
    (project / "config").mkdir()
    (project / "config" / ".env").write_text("TOKEN=hunter2\n", encoding="utf-8")
    code, doc = run_json(capsys, "index", "notes.md", "config/.env")
    assert code == 5
    assert [i["label"] for i in doc["data"]["indexed"]] == ["notes.md"]
    assert doc["data"]["skipped"][0]["code"] == "denied"
    code, doc = run_json(capsys, "search", "hunter2")
    assert doc["data"]["hits"] == []


def test_a_file_denied_after_indexing_is_left_alone_by_refresh(project, capsys):
    secret = project / "secret.md"
    secret.write_text("# Secret\nold words\n", encoding="utf-8")
    settings = project / ".claude" / "settings.json"
    rules = json.loads(settings.read_text(encoding="utf-8"))
    rules["permissions"]["deny"].append("Read(secret.md)")
    settings.write_text(json.dumps({"permissions": {}}), encoding="utf-8")
    assert run_json(capsys, "index", "secret.md")[0] == 0
    settings.write_text(json.dumps(rules), encoding="utf-8")
    secret.write_text("# Secret\nnew classified words\n", encoding="utf-8")
    code, doc = run_json(capsys, "search", "classified")
    assert doc["data"]["hits"] == []  # the changed file was not read again
    code, doc = run_json(capsys, "search", "old", "words")
    assert doc["data"]["hits"] == []  # nor is what it held served any more
