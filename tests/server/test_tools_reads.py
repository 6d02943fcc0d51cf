"""Read deny rules at the front door of the ctx_* tools: a denied file named by the code,
the command or the path is refused before anything runs, and nothing of it is indexed;
under isolation a name the text does not show reads as empty."""

from pathlib import Path

import pytest

from ctxmode.executor.isolate import isolation_problem

from .support import call, deny

pytestmark = pytest.mark.anyio

SECRET = "hunter2"


@pytest.fixture
def secrets(project: Path) -> Path:
    deny(project, "Read(.env)", "Read(./secrets/**)")
    (project / ".env").write_text(f"API_KEY={SECRET}\n", encoding="utf-8")
    (project / "secrets").mkdir()
    (project / "secrets" / "key.txt").write_text(f"KEY={SECRET}\n", encoding="utf-8")
    (project / "notes.md").write_text("# Notes\n\nnothing secret\n", encoding="utf-8")
    return project


@pytest.mark.parametrize(
    ("language", "code", "named"),
    [
        ("shell", "touch ran.marker; cat .env", ".env"),
        ("shell", "touch ran.marker; grep KEY < .env", ".env"),
        ("shell", "touch ran.marker; head secrets/key.txt", "secrets/key.txt"),
        ("python", "open('ran.marker', 'w')\nprint(open('.env').read())", ".env"),
        ("javascript", "require('fs').readFileSync('secrets/key.txt', 'utf8')", "secrets/key.txt"),
    ],
)
async def test_execute_refuses_code_that_names_a_denied_file(
    client, secrets, language, code, named
):
    text, is_error = await call(client, "ctx_execute", {"language": language, "code": code})
    assert is_error
    assert text.startswith(f"File access blocked by security policy: {named} (in ")
    assert "matches Read deny pattern Read(" in text
    assert SECRET not in text
    assert not (secrets / "ran.marker").exists()


async def test_execute_file_refuses_a_denied_path_and_code_naming_one(client, secrets):
    text, is_error = await call(
        client,
        "ctx_execute_file",
        {"path": "secrets/key.txt", "language": "python", "code": "print(FILE_CONTENT)"},
    )
    assert is_error
    assert text.startswith("File access blocked by security policy: path matches")
    text, is_error = await call(
        client,
        "ctx_execute_file",
        {"path": "notes.md", "language": "shell", "code": "cat .env"},
    )
    assert is_error
    assert text == (
        "File access blocked by security policy: .env (in cat .env) matches Read deny "
        "pattern Read(.env)"
    )


async def test_batch_refuses_a_command_reading_a_denied_file_and_indexes_nothing(client, secrets):
    text, is_error = await call(
        client,
        "ctx_batch_execute",
        {
            "commands": [
                {"label": "notes", "command": "cat notes.md"},
                {"label": "env", "command": "cat .env"},
            ],
            "queries": [SECRET],
        },
    )
    assert is_error
    assert text == (
        "File access blocked by security policy: .env (in cat .env) matches Read deny "
        "pattern Read(.env)"
    )
    found, is_error = await call(client, "ctx_search", {"queries": [SECRET, "API_KEY"]})
    assert is_error and found.startswith("Knowledge base is empty")


async def test_index_refuses_a_denied_file_and_skips_one_in_a_directory(client, secrets):
    text, is_error = await call(client, "ctx_index", {"path": "secrets/key.txt"})
    assert is_error
    assert text.startswith("File access blocked by security policy")
    text, is_error = await call(client, "ctx_index", {"path": "secrets"})
    assert not is_error
    assert "Indexed 0 sections" in text and "Skipped 1 " in text
    (secrets / "docs").mkdir()
    (secrets / "docs" / "a.md").write_text("# A\n\nfine words\n", encoding="utf-8")
    (secrets / "docs" / ".env").write_text(f"X={SECRET}\n", encoding="utf-8")
    deny(secrets, "Read(.env)", "Read(./secrets/**)", "Read(**/.env)")
    text, is_error = await call(client, "ctx_index", {"path": "docs"})
    assert not is_error
    found, _ = await call(client, "ctx_search", {"queries": [SECRET]})
    assert f"X={SECRET}" not in found


@pytest.mark.skipif(isolation_problem() is not None, reason=f"{isolation_problem()}")
async def test_under_isolation_a_name_the_text_cannot_see_reads_as_empty(
    client, secrets, monkeypatch
):
    monkeypatch.setenv("CTXMODE_ISOLATE", "1")
    code = 'cat "$(printf \'.e\')nv" "$(printf secr)ets/key.txt" 2>/dev/null; echo done'
    text, is_error = await call(client, "ctx_execute", {"language": "shell", "code": code})
    assert (text, is_error) == ("done\n", False)
    batch, is_error = await call(
        client,
        "ctx_batch_execute",
        {"commands": [{"label": "sneaky", "command": code}], "queries": [SECRET]},
    )
    assert not is_error
    assert f"KEY={SECRET}" not in batch


@pytest.fixture
def own_log(data_root: Path, project: Path) -> Path:
    """A file of ctxmode's own data, and a link to it from the project."""
    log = data_root / "logs" / "server.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text(f"refused line: token={SECRET}\n", encoding="utf-8")
    (project / "logs").symlink_to(log.parent)
    return log


@pytest.mark.parametrize("named", ["absolute", "linked", "folder"])
async def test_index_never_reads_ctxmodes_own_data(client, own_log, named):
    path = {"absolute": str(own_log), "linked": "logs/server.log", "folder": "logs"}[named]
    text, is_error = await call(client, "ctx_index", {"path": path})
    assert is_error, text
    assert "is ctxmode's own data" in text
    found, _ = await call(client, "ctx_search", {"queries": [SECRET]})
    assert f"token={SECRET}" not in found


def test_a_walk_is_denied_every_file_of_ctxmodes_own_data(own_log, project):
    """A folder walked that holds the data root (a home folder, say) skips its files."""
    from ctxmode.security import load_policy, path_deny_check

    denied = path_deny_check(load_policy(project), project)
    assert denied(str(own_log)) and denied(str(project / "logs" / "server.log"))
    assert not denied(str(project / "notes.md"))


@pytest.mark.parametrize("named", ["absolute", "linked"])
async def test_execute_file_never_reads_ctxmodes_own_data(client, own_log, named):
    path = str(own_log) if named == "absolute" else "logs/server.log"
    text, is_error = await call(
        client, "ctx_execute_file", {"path": path, "language": "shell", "code": "cat"}
    )
    assert is_error, text
    assert "is ctxmode's own data" in text and SECRET not in text


async def test_index_reads_a_file_outside_the_project_no_rule_denies(client, tmp_path):
    """Decided: like the host's own Read tool, ctx_index reads outside the project unless
    a Read rule denies it (a run could print the file anyway without isolation)."""
    outside = tmp_path / "elsewhere" / "guide.md"
    outside.parent.mkdir()
    outside.write_text("# Guide\n\nthe outside guide words\n", encoding="utf-8")
    text, is_error = await call(client, "ctx_index", {"path": str(outside)})
    assert not is_error, text
    found, _ = await call(client, "ctx_search", {"queries": ["outside guide words"]})
    assert "the outside guide words" in found
