"""Reading files for the index and walking directories (ctxmode.store.files)."""

import hashlib
import os
from pathlib import Path

import pytest

from ctxmode.errors import InputError, NotFoundError
from ctxmode.store.files import parse_gitignore, read_text_file, walk_text_files


def _tree(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def _walk(root: Path, **kw) -> list[str]:
    return [p.relative_to(root).as_posix() for p in walk_text_files(root, **kw)]


# --------------------------------------------------------------------------- walking


def test_walk_honours_gitignore_negation_dir_only_anchored_and_double_star(tmp_path):
    _tree(
        tmp_path,
        {
            ".gitignore": (
                "# comment line\n"
                "*.log\n"
                "!keep.log\n"
                "build/\n"
                "/root_only.txt\n"
                "docs/**/draft.md\n"
                "**/generated\n"
            ),
            "main.py": "",
            "debug.log": "",
            "keep.log": "",
            "nested/deep/trace.log": "",
            "nested/deep/keep.log": "",
            "build/out.txt": "",
            "src/build/artifact.txt": "",
            "lib/build": "a file named build is not a directory",
            "root_only.txt": "",
            "sub/root_only.txt": "",
            "docs/draft.md": "",
            "docs/a/b/draft.md": "",
            "docs/a/final.md": "",
            "other/draft.md": "",
            "x/y/generated/file.txt": "",
            "generated/file.txt": "",
        },
    )
    assert _walk(tmp_path) == [
        "docs/a/final.md",
        "keep.log",
        "lib/build",
        "main.py",
        "nested/deep/keep.log",
        "other/draft.md",
        "sub/root_only.txt",
    ]


def test_nested_gitignore_applies_only_below_its_directory(tmp_path):
    _tree(
        tmp_path,
        {
            "pkg/.gitignore": "*.tmp\n/local.txt\n",
            "pkg/a.tmp": "",
            "pkg/inner/b.tmp": "",
            "pkg/local.txt": "",
            "pkg/inner/local.txt": "",
            "top.tmp": "",
        },
    )
    assert _walk(tmp_path) == ["pkg/inner/local.txt", "top.tmp"]


def test_later_gitignore_rule_wins(tmp_path):
    _tree(
        tmp_path,
        {".gitignore": "!important.txt\n*.txt\n", "important.txt": "", "a.md": ""},
    )
    assert _walk(tmp_path) == ["a.md"]


def test_walk_skips_vcs_dependency_and_hidden_entries(tmp_path):
    _tree(
        tmp_path,
        {
            "app.py": "",
            ".git/config": "",
            "node_modules/pkg/index.js": "",
            "__pycache__/app.cpython-311.pyc": "",
            ".venv/lib/site.py": "",
            ".env": "SECRET=1",
            ".hidden/notes.md": "",
            "src/.cache/blob": "",
            "src/mod.py": "",
        },
    )
    assert _walk(tmp_path) == ["app.py", "src/mod.py"]


def test_walk_with_hidden_included_still_skips_vcs_and_dependency_dirs(tmp_path):
    _tree(
        tmp_path,
        {
            ".env": "",
            ".github/workflows/ci.yml": "",
            ".git/HEAD": "",
            "node_modules/x.js": "",
            "a.py": "",
        },
    )
    assert _walk(tmp_path, include_hidden=True) == [".env", ".github/workflows/ci.yml", "a.py"]


def test_walk_order_is_stable_and_sorted(tmp_path):
    _tree(tmp_path, {"b.txt": "", "a/z.txt": "", "a/b.txt": "", "c/a.txt": ""})
    first = _walk(tmp_path)
    assert first == ["a/b.txt", "a/z.txt", "b.txt", "c/a.txt"]
    assert _walk(tmp_path) == first


@pytest.mark.parametrize(
    ("pattern", "path", "is_dir", "ignored"),
    [
        ("*.log", "a/b/c.log", False, True),
        ("/top.txt", "top.txt", False, True),
        ("/top.txt", "a/top.txt", False, False),
        ("a/*.txt", "a/x.txt", False, True),
        ("a/*.txt", "a/b/x.txt", False, False),
        ("a/**/x.txt", "a/x.txt", False, True),
        ("a/**/x.txt", "a/b/c/x.txt", False, True),
        ("a/**", "a/b/c", False, True),
        ("out/", "out", True, True),
        ("out/", "out", False, False),
        ("file?.txt", "file1.txt", False, True),
        ("file?.txt", "file10.txt", False, False),
        ("[!a]*.md", "b.md", False, True),
        ("[!a]*.md", "a.md", False, False),
        ("\\#hash", "#hash", False, True),
    ],
)
def test_gitignore_pattern_semantics(pattern, path, is_dir, ignored):
    from ctxmode.store.files import IgnoreMatcher

    matcher = IgnoreMatcher()
    matcher.push("", parse_gitignore(pattern + "\n"))
    assert matcher.ignored(path, is_dir) is ignored


# --------------------------------------------------------------------------- reading


def test_reading_a_text_file_returns_its_text_hash_size_and_mtime(tmp_path):
    path = tmp_path / "a.md"
    data = "héllo wörld\n".encode()
    path.write_bytes(data)
    read = read_text_file(path)
    info = path.stat()
    assert read.text == "héllo wörld\n"
    assert read.sha256 == hashlib.sha256(data).hexdigest()
    assert (read.size, read.mtime_ns) == (len(data), info.st_mtime_ns)
    assert read.path == path


def test_reading_strips_a_utf8_bom(tmp_path):
    path = tmp_path / "bom.txt"
    path.write_bytes(b"\xef\xbb\xbfhello")
    assert read_text_file(path).text == "hello"


def test_reading_a_missing_file_raises_not_found(tmp_path):
    with pytest.raises(NotFoundError):
        read_text_file(tmp_path / "nope.txt")


def test_reading_a_binary_file_is_refused(tmp_path):
    path = tmp_path / "blob.bin"
    path.write_bytes(b"GIF89a\x00\x01\x02\x03" * 100)
    with pytest.raises(InputError, match="binary"):
        read_text_file(path)


def test_reading_a_directory_is_refused_as_bad_input(tmp_path):
    with pytest.raises(InputError, match="not a regular file"):
        read_text_file(tmp_path)


def test_reading_dev_null_is_refused_as_not_a_regular_file():
    with pytest.raises(InputError, match="not a regular file"):
        read_text_file(Path("/dev/null"))


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_reading_a_fifo_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match="not a regular file"):
        read_text_file(fifo)


def test_reading_a_file_over_the_size_limit_is_refused(tmp_path):
    path = tmp_path / "big.txt"
    path.write_text("x" * 101)
    with pytest.raises(InputError, match="limit"):
        read_text_file(path, max_bytes=100)
    path.write_text("x" * 100)
    assert read_text_file(path, max_bytes=100).size == 100


def test_reading_a_symlink_reads_its_regular_target(tmp_path):
    target = tmp_path / "real.txt"
    target.write_text("through the link")
    link = tmp_path / "link.txt"
    link.symlink_to(target)
    assert read_text_file(link).text == "through the link"


def test_a_multibyte_character_cut_by_the_sniff_window_is_still_text(tmp_path):
    path = tmp_path / "utf8.txt"
    path.write_bytes(("a" * 8191 + "é" * 10).encode())
    assert read_text_file(path).text.endswith("é" * 10)


def test_the_deny_check_judges_the_file_opened_not_the_name_given(tmp_path):
    """A symlink flipped between a check of its name and the read indexed .env (1 in 200):
    the check now runs on the file the descriptor holds."""
    from ctxmode.errors import InputError
    from ctxmode.store.files import read_text_file

    (tmp_path / ".env").write_text("API_KEY=hunter2\n")
    (tmp_path / "notes.txt").write_text("plain notes\n")
    link = tmp_path / "innocent.txt"
    link.symlink_to(tmp_path / ".env")  # already flipped when the read opens it

    def denied(path: str) -> bool:
        return path.endswith("/.env")

    with pytest.raises(InputError, match="a Read deny rule matches the file it opens"):
        read_text_file(link, denied=denied)
    link.unlink()
    link.symlink_to(tmp_path / "notes.txt")
    assert read_text_file(link, denied=denied).text == "plain notes\n"


def test_a_socket_is_named_as_one_not_as_no_such_device(tmp_path):
    """Opening a socket fails with ENXIO ("No such device or address"): say what it is."""
    import socket

    path = tmp_path / "app.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    try:
        with pytest.raises(InputError, match=r"app\.sock: a socket, not a regular file"):
            read_text_file(path)
    finally:
        server.close()
