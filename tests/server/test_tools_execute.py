"""ctx_execute and ctx_execute_file through a real in-memory MCP session: real
subprocesses, a real knowledge base (spec 1.1, 1.2, 1.12; section 12 items 12-13)."""

import re
from pathlib import Path

import pytest

from ctxmode.executor.runtimes import LANGUAGES

from .support import call, deny

pytestmark = pytest.mark.anyio


async def test_shell_hello(client):
    assert await call(client, "ctx_execute", {"language": "shell", "code": "echo hello"}) == (
        "hello\n",
        False,
    )


async def test_python_hello(client):
    assert await call(client, "ctx_execute", {"language": "python", "code": "print('hello')"}) == (
        "hello\n",
        False,
    )


async def test_result_carries_no_structured_content(client):
    result = await client.call_tool("ctx_execute", {"language": "shell", "code": "echo hi"})
    assert result.is_error is False
    assert result.structured_content is None


async def test_small_output_comes_back_verbatim(client):
    code = "for i in range(100):\n    print(f'line {i}: ' + 'x' * i)\n"
    expected = "".join(f"line {i}: " + "x" * i + "\n" for i in range(100))
    assert await call(client, "ctx_execute", {"language": "python", "code": code}) == (
        expected,
        False,
    )


async def test_output_over_100kb_becomes_a_pointer_and_is_searchable(client):
    code = (
        "for i in range(300):\n"
        "    print(f'## Section {i}')\n"
        "    print()\n"
        "    print('filler text ' * 30)\n"
        "    print()\n"
        "print('## Finale')\n"
        "print()\n"
        "print('the quokka ledger balances at zanzibar')\n"
    )
    text, is_error = await call(client, "ctx_execute", {"language": "python", "code": code})
    assert not is_error
    assert text.startswith("Indexed ")
    assert "from: execute:python" in text
    assert 'source: "execute:python"' in text
    assert len(text) < 2000

    found, is_error = await call(client, "ctx_search", {"queries": ["quokka ledger"]})
    assert not is_error
    assert "--- [execute:python" in found
    assert "quokka ledger balances at zanzibar" in found


async def test_intent_over_5kb_returns_only_matching_sections(client):
    sections = [f"worker {i} finished batch {i} without trouble" for i in range(200)]
    sections[137] = "worker 137 failed: connection refused by database replica"
    code = "sections = " + repr(sections) + "\nprint('\\n\\n'.join(sections))\n"
    text, is_error = await call(
        client,
        "ctx_execute",
        {"language": "python", "code": code, "intent": "connection refused"},
    )
    assert not is_error
    assert text.startswith("Indexed ")
    assert 'from "execute:python" into knowledge base.' in text
    assert 'matched "connection refused"' in text
    assert "connection refused by database replica" in text
    assert "without trouble" not in text
    assert len(text) < 2000


async def test_intent_with_small_output_returns_the_output(client):
    text, is_error = await call(
        client,
        "ctx_execute",
        {"language": "shell", "code": "echo short", "intent": "anything"},
    )
    assert (text, is_error) == ("short\n", False)


async def test_non_zero_exit_is_an_error_with_the_exit_code(client):
    code = "import sys\nprint('got this far')\nprint('boom', file=sys.stderr)\nsys.exit(3)\n"
    text, is_error = await call(client, "ctx_execute", {"language": "python", "code": code})
    assert is_error
    assert text.startswith("Exit code: 3\n")
    assert "stdout:\ngot this far" in text
    assert "stderr:\nboom" in text


async def test_shell_exit_1_with_stdout_is_not_an_error(client):
    assert await call(
        client, "ctx_execute", {"language": "shell", "code": "echo no match here; exit 1"}
    ) == ("no match here\n", False)


async def test_shell_exit_1_without_stdout_is_an_error(client):
    text, is_error = await call(client, "ctx_execute", {"language": "shell", "code": "exit 1"})
    assert is_error
    assert text.startswith("Exit code: 1\n")


async def test_timeout_with_partial_output_is_marked_partial(client):
    text, is_error = await call(
        client,
        "ctx_execute",
        {"language": "shell", "code": "echo first part; sleep 60", "timeout": 1500},
    )
    assert not is_error
    assert text.startswith("first part\n")
    assert text.endswith("_(timed out after 1500ms — partial output shown above)_")


async def test_timeout_without_output_is_an_error(client):
    text, is_error = await call(
        client, "ctx_execute", {"language": "shell", "code": "sleep 60", "timeout": "1000"}
    )
    assert is_error
    assert text.startswith("Execution timed out after 1000ms")


async def test_unknown_language_is_an_error_naming_the_languages(client):
    text, is_error = await call(client, "ctx_execute", {"language": "cobol", "code": "x"})
    assert is_error
    assert "cobol" in text
    for language in LANGUAGES:
        assert language in text


async def test_missing_runtime_is_an_error(client, tmp_path, monkeypatch, fresh_runtimes):
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    text, is_error = await call(client, "ctx_execute", {"language": "shell", "code": "echo hi"})
    assert is_error
    assert "runtime not installed for shell" in text


async def test_deny_rule_blocks_shell_code_before_anything_runs(client, project):
    deny(project, "Bash(sudo *)")
    code = "touch ran.marker && sudo ls /root"
    text, is_error = await call(client, "ctx_execute", {"language": "shell", "code": code})
    assert is_error
    assert text == "Command blocked by security policy: matches deny pattern Bash(sudo *)"
    assert not (project / "ran.marker").exists()


async def test_deny_rule_leaves_other_shell_code_alone(client, project):
    deny(project, "Bash(sudo *)")
    assert await call(client, "ctx_execute", {"language": "shell", "code": "echo fine"}) == (
        "fine\n",
        False,
    )


async def test_shell_runs_in_the_project_directory(client, project):
    text, is_error = await call(client, "ctx_execute", {"language": "shell", "code": "pwd -P"})
    assert (text.strip(), is_error) == (str(project), False)


# ------------------------------------------------------------------ ctx_execute_file


@pytest.fixture
def data_file(project: Path) -> Path:
    path = project / "logs" / "app.log"
    path.parent.mkdir()
    path.write_text("alpha ok\nbeta FAILED\ngamma ok\nδelta ok\n", encoding="utf-8")
    return path


async def test_execute_file_gives_the_code_file_content(client, data_file):
    code = "print(sum(1 for line in FILE_CONTENT.splitlines() if 'ok' in line))"
    text, is_error = await call(
        client,
        "ctx_execute_file",
        {"path": str(data_file), "language": "python", "code": code},
    )
    assert (text, is_error) == ("3\n", False)


async def test_execute_file_resolves_relative_paths_against_the_project(client, data_file):
    code = "print(FILE_CONTENT.splitlines()[-1])\nprint(FILE_CONTENT_PATH)"
    text, is_error = await call(
        client,
        "ctx_execute_file",
        {"path": "logs/app.log", "language": "python", "code": code},
    )
    assert not is_error
    last, where = text.splitlines()
    assert last == "δelta ok"
    assert Path(where).resolve() == data_file.resolve()


async def test_execute_file_shell_gets_file_content_too(client, data_file):
    text, is_error = await call(
        client,
        "ctx_execute_file",
        {"path": "logs/app.log", "language": "shell", "code": 'echo "$FILE_CONTENT" | grep -c ok'},
    )
    assert (text, is_error) == ("3\n", False)


async def test_execute_file_of_a_missing_file_is_an_error(client):
    text, is_error = await call(
        client,
        "ctx_execute_file",
        {"path": "nope.txt", "language": "python", "code": "print(1)"},
    )
    assert is_error
    assert "nope.txt" in text


async def test_execute_file_denied_path(client, project):
    deny(project, "Read(.env)")
    (project / ".env").write_text("TOKEN=hunter2\n", encoding="utf-8")
    text, is_error = await call(
        client,
        "ctx_execute_file",
        {"path": ".env", "language": "python", "code": "print(FILE_CONTENT)"},
    )
    assert is_error
    assert text == "File access blocked by security policy: path matches Read deny pattern .env"
    assert "hunter2" not in text


async def test_execute_file_denied_code(client, project, data_file):
    deny(project, "Bash(sudo *)")
    text, is_error = await call(
        client,
        "ctx_execute_file",
        {"path": "logs/app.log", "language": "shell", "code": "sudo cat $FILE_CONTENT_PATH"},
    )
    assert is_error
    assert text == "Command blocked by security policy: matches deny pattern Bash(sudo *)"


async def test_execute_file_timeout_names_the_file(client, data_file):
    code = "print('partial', flush=True)\nimport time\ntime.sleep(60)"
    text, is_error = await call(
        client,
        "ctx_execute_file",
        {"path": "logs/app.log", "language": "python", "code": code, "timeout": 1000},
    )
    assert is_error
    assert text == "Timed out processing logs/app.log after 1000ms"


async def test_execute_file_intent_indexes_under_the_file_label(client, project):
    lines = [f"request {i} served in {i % 50}ms" for i in range(400)]
    lines[250] = "request 250 raised OutOfMemoryError in the image resizer"
    (project / "big.log").write_text("\n".join(lines) + "\n", encoding="utf-8")
    text, is_error = await call(
        client,
        "ctx_execute_file",
        {
            "path": "big.log",
            "language": "python",
            "code": "print(FILE_CONTENT)",
            "intent": "OutOfMemoryError resizer",
        },
    )
    assert not is_error
    assert 'from "file:big.log" into knowledge base.' in text
    assert "raised OutOfMemoryError in the image resizer" in text
    # one preview line per matching section, titled by its first line: not the whole log
    assert len(re.findall(r"served in \d+ms", text)) <= 1
    assert len(text) < 1000
