"""Reading files for the index: regular files only, text only, size-capped; and walking
directories the way a developer expects (``.gitignore`` honoured, VCS and cache dirs and
hidden entries skipped)."""

import fnmatch
import hashlib
import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ctxmode.errors import InputError, NotFoundError

MAX_FILE_BYTES = 1024 * 1024
_SNIFF = 8192
SKIP_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".jj",
        "node_modules",
        "__pycache__",
        ".venv",
        "venv",
        ".tox",
        ".nox",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".idea",
        ".gradle",
        "target",
    }
)


@dataclass(frozen=True)
class FileText:
    path: Path
    text: str
    sha256: str
    mtime_ns: int
    size: int


def printable_path(path: Path | str) -> str:
    """`path` for messages and JSON: a name that is not valid UTF-8 (its bytes came
    through as surrogates) shows its bytes escaped, ``bad\\xffname.md``."""
    text = os.fspath(path)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        try:
            raw = os.fsencode(text)
        except UnicodeEncodeError:  # a lone surrogate that no file name decodes to
            raw = text.encode("utf-8", "backslashreplace")
        return raw.decode("utf-8", "backslashreplace")
    return text


def looks_binary(head: bytes) -> bool:
    """NUL bytes, or mostly undecodable, in the first bytes of a file."""
    if b"\x00" in head:
        return True
    if not head:
        return False
    try:
        head.decode("utf-8")
        return False
    except UnicodeDecodeError as exc:
        if exc.start >= len(head) - 4:  # a multi-byte character cut by the sniff window
            return False
    bad = sum(1 for b in head if b < 9 or 13 < b < 32)
    return bad / len(head) > 0.1 or head.decode("utf-8", "replace").count("\ufffd") > len(head) / 20


def read_text_file(
    path: Path, max_bytes: int = MAX_FILE_BYTES, *, over: str = "raise it with --max-file-size"
) -> FileText:
    """Read one regular text file, bound to one descriptor (no check/use race).

    Raises:
        NotFoundError: no such file.
        InputError: not a regular file, unreadable, binary, or larger than `max_bytes`.
    """
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError as exc:
        raise NotFoundError(f"no such file: {path}") from exc
    except IsADirectoryError as exc:
        raise InputError(f"refusing to index {path}: not a regular file") from exc
    except PermissionError as exc:
        raise InputError(f"cannot read {path}: permission denied") from exc
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from exc
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise InputError(f"refusing to index {path}: not a regular file")
    with os.fdopen(fd, "rb") as handle:
        if info.st_size > max_bytes:
            raise InputError(
                f"skipping {path}: {info.st_size:,} bytes is over the {max_bytes:,}-byte limit "
                f"({over})"
            )
        try:
            data = handle.read(max_bytes + 1)
        except OSError as exc:
            raise InputError(f"cannot read {path}: {exc.strerror or exc}") from exc
    if len(data) > max_bytes:
        raise InputError(f"skipping {path}: over the {max_bytes:,}-byte limit")
    if looks_binary(data[:_SNIFF]):
        raise InputError(f"skipping {path}: binary file")
    text = data.decode("utf-8-sig" if data.startswith(b"\xef\xbb\xbf") else "utf-8", "replace")
    return FileText(path, text, hashlib.sha256(data).hexdigest(), info.st_mtime_ns, info.st_size)


# --------------------------------------------------------------------------- .gitignore


@dataclass(frozen=True)
class _Rule:
    regex: re.Pattern[str]
    negate: bool
    dir_only: bool


def _translate(pattern: str) -> str:
    """A gitignore glob (without leading '/') as a regex over a relative posix path."""
    out = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("/**", i) and i + 3 == len(pattern):
            out.append("/.*")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif c == "*":
            out.append("[^/]*")
            i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            end = pattern.find("]", i + 1)
            if end == -1:
                out.append(re.escape(c))
                i += 1
            else:
                body = pattern[i + 1 : end].replace("\\", "\\\\")
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append(f"[{body}]")
                i = end + 1
        elif c == "\\" and i + 1 < len(pattern):
            out.append(re.escape(pattern[i + 1]))
            i += 2
        else:
            out.append(re.escape(c))
            i += 1
    return "".join(out)


def parse_gitignore(text: str) -> list[_Rule]:
    rules = []
    for raw in text.splitlines():
        line = raw.rstrip()
        if not line or line.startswith("#"):
            continue
        negate = line.startswith("!")
        if negate:
            line = line[1:]
        dir_only = line.endswith("/")
        line = line.rstrip("/")
        if not line:
            continue
        anchored = "/" in line
        line = line.lstrip("/")
        body = _translate(line)
        regex = f"^{body}$" if anchored else f"^(?:.*/)?{body}$"
        rules.append(_Rule(re.compile(regex), negate, dir_only))
    return rules


class IgnoreMatcher:
    """Stacked .gitignore rules; a later rule (or a deeper file) wins, as in git."""

    def __init__(self) -> None:
        self._layers: list[tuple[str, list[_Rule]]] = []

    def push(self, base: str, rules: list[_Rule]) -> None:
        self._layers.append((base, rules))

    def pop(self) -> None:
        self._layers.pop()

    def ignored(self, rel: str, is_dir: bool) -> bool:
        verdict = False
        for base, rules in self._layers:
            if base and not rel.startswith(base + "/"):
                continue
            local = rel[len(base) + 1 :] if base else rel
            for rule in rules:
                if rule.dir_only and not is_dir:
                    continue
                if rule.regex.match(local):
                    verdict = not rule.negate
        return verdict


def walk_text_files(root: Path, include_hidden: bool = False) -> Iterator[Path]:
    """Files under `root` in a stable order, honouring .gitignore files on the way down."""
    matcher = IgnoreMatcher()

    def visit(directory: Path, rel: str) -> Iterator[Path]:
        pushed = False
        ignore_file = directory / ".gitignore"
        if ignore_file.is_file():
            try:
                matcher.push(rel, parse_gitignore(ignore_file.read_text("utf-8", "replace")))
                pushed = True
            except OSError:
                pass
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError:
            entries = []
        for entry in entries:
            name = entry.name
            child_rel = f"{rel}/{name}" if rel else name
            if not include_hidden and name.startswith("."):
                continue
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
                is_file = entry.is_file(follow_symlinks=True)
            except OSError:
                continue
            if is_dir:
                if name in SKIP_DIRS or matcher.ignored(child_rel, True):
                    continue
                yield from visit(Path(entry.path), child_rel)
            elif is_file and not matcher.ignored(child_rel, False):
                yield Path(entry.path)
        if pushed:
            matcher.pop()

    yield from visit(root, "")


def expand_glob(pattern: str, base: Path) -> list[Path]:
    """Paths matching a glob (``**`` recursive), relative patterns against `base`."""
    import glob

    full = pattern if os.path.isabs(pattern) else str(base / pattern)
    return sorted(Path(p) for p in glob.glob(full, recursive=True))


def is_glob(text: str) -> bool:
    return any(ch in text for ch in "*?[")


def fnmatch_any(name: str, patterns: list[str]) -> bool:
    return any(fnmatch.fnmatch(name, p) for p in patterns)
