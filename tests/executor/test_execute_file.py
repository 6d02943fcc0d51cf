"""execute_file: the file reaches the code as FILE_CONTENT / FILE_CONTENT_PATH / file_path,
never through source text (spec §12 items 9-10; §2.6)."""

import os
import re
from pathlib import Path

import pytest

from ctxmode.errors import InputError, NotFoundError
from ctxmode.executor import ExecRequest, execute

from .procs import needs

TEXT = "héllo wörld ✓\n日本語 line two 🎉\nthird line\n"

# Each prints FILE_CONTENT, then FILE_CONTENT_PATH and file_path on their own lines.
PRINTERS = {
    "python": "print(FILE_CONTENT, end='')\nprint(FILE_CONTENT_PATH)\nprint(file_path)",
    "shell": 'printf "%s\\n" "$FILE_CONTENT"\necho "$FILE_CONTENT_PATH"\necho "$file_path"',
    "javascript": (
        "process.stdout.write(FILE_CONTENT);\nconsole.log(FILE_CONTENT_PATH);\n"
        "console.log(file_path);"
    ),
    "perl": (
        'use Encode;\nprint Encode::encode("UTF-8", $FILE_CONTENT);\n'
        'print "$FILE_CONTENT_PATH\\n";\nprint "$file_path\\n";'
    ),
    "ruby": "print FILE_CONTENT\nputs FILE_CONTENT_PATH\nputs file_path",
    "php": 'echo $FILE_CONTENT;\necho $FILE_CONTENT_PATH . "\\n";\necho $file_path . "\\n";',
}
LANGUAGES = [
    "python",
    "shell",
    pytest.param("javascript", marks=needs("node")),
    pytest.param("perl", marks=needs("perl")),
    pytest.param("ruby", marks=needs("ruby")),
    pytest.param("php", marks=needs("php")),
]
HOSTILE_NAMES = [
    "$(touch pwned)",
    "`touch pwned`.txt",
    'a\'b "c" $HOME `x`.txt',
    "with space and $PATH and !bang.txt",
    "semi;colon && touch pwned.txt",
    "-starts-with-dash.txt",
    "ünïcödé 名前.txt",
]


def check_printed(stdout: str, expected_path: Path) -> None:
    lines = stdout.splitlines()
    assert lines[-2] == str(expected_path)
    assert lines[-1] == str(expected_path)
    # shell's $(cat) drops the trailing newline; the content is otherwise byte-exact
    assert "\n".join(lines[:-2]) == TEXT.rstrip("\n")


@pytest.mark.parametrize("language", LANGUAGES)
def test_file_content_path_and_alias_are_exposed_and_utf8_round_trips(run, project, language):
    (project / "data.txt").write_text(TEXT, encoding="utf-8")
    result = run(language, PRINTERS[language], file_path="data.txt")
    assert result.exit_code == 0, result.stderr
    check_printed(result.stdout, project / "data.txt")


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_hostile_file_names_are_read_without_expansion(run, project, language, name):
    (project / name).write_text(TEXT, encoding="utf-8")
    result = run(language, PRINTERS[language], file_path=name)
    assert result.exit_code == 0, result.stderr
    check_printed(result.stdout, project / name)
    assert not (project / "pwned").exists()
    assert not (project / "pwned.txt").exists()


def test_hostile_directory_name_in_an_absolute_path(run, project, tmp_path):
    folder = tmp_path / "$(touch pwned)" / "it's `here`"
    folder.mkdir(parents=True)
    (folder / "data.txt").write_text(TEXT, encoding="utf-8")
    result = run("shell", PRINTERS["shell"], file_path=str(folder / "data.txt"))
    check_printed(result.stdout, folder / "data.txt")
    assert not (project / "pwned").exists()


def test_relative_paths_resolve_against_the_project_not_the_cwd(
    run, project, tmp_path, monkeypatch
):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "data.txt").write_text("the wrong file\n", encoding="utf-8")
    (project / "sub").mkdir()
    (project / "sub" / "data.txt").write_text(TEXT, encoding="utf-8")
    (elsewhere / "sub").mkdir()
    (elsewhere / "sub" / "data.txt").write_text("the wrong file\n", encoding="utf-8")
    monkeypatch.chdir(elsewhere)
    result = run("python", PRINTERS["python"], file_path="sub/data.txt")
    check_printed(result.stdout, project / "sub" / "data.txt")


def test_absolute_path_is_used_as_is(run, tmp_path):
    outside = tmp_path / "outside.txt"
    outside.write_text(TEXT, encoding="utf-8")
    result = run("python", PRINTERS["python"], file_path=str(outside))
    check_printed(result.stdout, outside)


def test_missing_file_is_not_found(run):
    with pytest.raises(NotFoundError, match="no-such-file.txt"):
        run("python", "print(FILE_CONTENT)", file_path="no-such-file.txt")


def test_a_directory_is_not_a_file(run, project):
    (project / "folder").mkdir()
    with pytest.raises(InputError, match="is a directory"):
        run("python", "print(FILE_CONTENT)", file_path="folder")


def test_python_future_imports_stay_first(run, project):
    (project / "data.txt").write_text(TEXT, encoding="utf-8")
    code = "from __future__ import annotations\nx: undefined_name = 1\nprint(len(FILE_CONTENT))"
    result = run("python", code, file_path="data.txt")
    assert result.exit_code == 0, result.stderr
    assert result.stdout == f"{len(TEXT)}\n"


def test_only_what_the_code_prints_comes_back(run, project):
    big = "".join(f"secret row {i}\n" for i in range(5000))
    (project / "big.log").write_text(big, encoding="utf-8")
    result = run("python", "print(len(FILE_CONTENT.splitlines()))", file_path="big.log")
    assert result.stdout == "5000\n"
    assert "secret row" not in result.stderr


@needs("node")
def test_javascript_module_syntax_gets_the_file_too(run, project):
    (project / "data.txt").write_text(TEXT, encoding="utf-8")
    code = "import { basename } from 'node:path';\nconsole.log(basename(FILE_CONTENT_PATH));\n"
    code += "console.log(FILE_CONTENT.split('\\n').length);"
    result = run("javascript", code, file_path="data.txt")
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "data.txt\n4\n"


@needs("rustc")
def test_rust_reads_the_file_as_file_content(run, project):
    (project / "data.txt").write_text(TEXT, encoding="utf-8")
    code = 'println!("{}", file_content.lines().count());\nprint!("{}", file_content);'
    result = run("rust", code, file_path="data.txt")
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "3\n" + TEXT


@pytest.mark.parametrize(
    ("make", "said"),
    [
        (lambda d: os.mkfifo(d / "pipe"), "is a named pipe (FIFO)"),
        (lambda d: (d / "pipe").mkdir(), "is a directory"),
        (lambda d: os.symlink("/dev/zero", d / "pipe"), "is a device"),
        (lambda d: os.symlink(d / "pipe", d / "pipe"), "is a symlink loop"),
    ],
)
def test_a_path_that_is_not_a_regular_file_says_what_it_is(tmp_path, make, said):
    """A FIFO would hang the read, /dev/zero never ends: each is refused, by what it is."""
    make(tmp_path)
    with pytest.raises(InputError, match=re.escape(said)):
        execute(ExecRequest("python", "print(1)", tmp_path, file_path="pipe", timeout_ms=5000))


def test_a_file_too_large_to_read_whole_is_refused_before_anything_reads_it(tmp_path):
    """A 2 GiB sparse file was read whole into FILE_CONTENT (2 GiB of memory)."""
    from ctxmode.executor import FILE_CONTENT_MAX_BYTES

    big = tmp_path / "sparse.bin"
    with big.open("wb") as handle:
        handle.truncate(FILE_CONTENT_MAX_BYTES + 1)  # no disk used: a hole
    with pytest.raises(InputError, match=r"more than the 512 MiB execute_file reads"):
        execute(ExecRequest("python", "print(1)", tmp_path, file_path="sparse.bin"))
