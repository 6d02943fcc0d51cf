"""Reading files for the index: regular files only, text only, size-capped; and walking
directories the way a developer expects (``.gitignore`` honoured, VCS and cache dirs and
hidden entries skipped)."""

import errno
import fnmatch
import hashlib
import os
import re
import stat
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from ctxmode.errors import InputError, NotFoundError, UsageError
from ctxmode.paths import file_kind

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


def opened_path(fd: int, fallback: Path) -> str:
    """The path of the file open on `fd`, as the kernel knows it (Linux, else `fallback`
    resolved): a symlink swapped after the open does not change it."""
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return os.path.realpath(fallback)


def _not_regular(path: Path, mode: int) -> InputError:
    return InputError(f"refusing to index {path}: {file_kind(mode)}, not a regular file")


def _open_checked(
    path: Path,
    max_bytes: int,
    over: str,
    denied: "Callable[[str], bool] | None",
) -> tuple[BinaryIO, os.stat_result]:
    """The file open for reading, once it is known to be a regular file within
    `max_bytes` that `denied` does not refuse (see `read_text_file`)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError as exc:
        raise NotFoundError(f"no such file: {path}") from exc
    except IsADirectoryError as exc:
        raise _not_regular(path, stat.S_IFDIR) from exc
    except PermissionError as exc:
        raise InputError(f"cannot read {path}: permission denied") from exc
    except OSError as exc:
        if exc.errno == errno.ENXIO:  # a socket (or a device with nothing behind it)
            raise _not_regular(path, os.stat(path).st_mode) from exc
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from exc
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise _not_regular(path, info.st_mode)
    if denied is not None and denied(opened_path(fd, path)):
        os.close(fd)
        raise InputError(f"refusing to index {path}: a Read deny rule matches the file it opens")
    if info.st_size > max_bytes:
        os.close(fd)
        raise InputError(
            f"skipping {path}: {info.st_size:,} bytes is over the {max_bytes:,}-byte limit ({over})"
        )
    return os.fdopen(fd, "rb"), info


def _decode(data: bytes, first: bool) -> str:
    bom = first and data.startswith(b"\xef\xbb\xbf")
    return data.decode("utf-8-sig" if bom else "utf-8", "replace")


def read_text_file(
    path: Path,
    max_bytes: int = MAX_FILE_BYTES,
    *,
    over: str = "raise it with --max-file-size",
    denied: "Callable[[str], bool] | None" = None,
) -> FileText:
    """Read one regular text file, bound to one descriptor (no check/use race). `denied`
    judges the file that was opened (its real path), not the name given: a symlink a
    confined run flips between a check and the read cannot smuggle in a denied file.

    Raises:
        NotFoundError: no such file.
        InputError: not a regular file, unreadable, binary, larger than `max_bytes`, or
            (with `denied`) a file the rules deny.
    """
    handle, info = _open_checked(path, max_bytes, over, denied)
    with handle:
        try:
            data = handle.read(max_bytes + 1)
        except OSError as exc:
            raise InputError(f"cannot read {path}: {exc.strerror or exc}") from exc
    if len(data) > max_bytes:
        raise InputError(f"skipping {path}: over the {max_bytes:,}-byte limit")
    if looks_binary(data[:_SNIFF]):
        raise InputError(f"skipping {path}: binary file")
    return FileText(
        path, _decode(data, True), hashlib.sha256(data).hexdigest(), info.st_mtime_ns, info.st_size
    )


class TextPieces:
    """A large text file read a piece at a time, each piece ending at a line end (or at
    `piece_bytes` for a line longer than that): what `read_text_file` checks, in bounded
    memory. `sha256` is the whole file's, once `pieces` has been read to the end."""

    def __init__(
        self,
        path: Path,
        max_bytes: int,
        *,
        over: str = "raise it with --max-file-size",
        denied: "Callable[[str], bool] | None" = None,
    ) -> None:
        self.path = path
        self._max_bytes = max_bytes
        self._handle, info = _open_checked(path, max_bytes, over, denied)
        self.size = info.st_size
        self.mtime_ns = info.st_mtime_ns
        self._hash = hashlib.sha256()
        head = self._handle.read(_SNIFF)
        if looks_binary(head):
            self._handle.close()
            raise InputError(f"skipping {path}: binary file")
        self._head = head

    @property
    def sha256(self) -> str:
        return self._hash.hexdigest()

    def pieces(self, piece_bytes: int) -> Iterator[str]:
        """The text, piece by piece (each read once); the file is closed at the end."""
        with self._handle as handle:
            pending, total, first = self._head, len(self._head), True
            while True:
                try:
                    more = handle.read(piece_bytes)
                except OSError as exc:
                    raise InputError(f"cannot read {self.path}: {exc.strerror or exc}") from exc
                total += len(more)
                if total > self._max_bytes:
                    raise InputError(
                        f"skipping {self.path}: over the {self._max_bytes:,}-byte limit"
                    )
                pending += more
                while len(pending) >= piece_bytes or (not more and pending):
                    if len(pending) < piece_bytes:  # the end
                        cut = len(pending)
                    else:
                        cut = pending.rfind(b"\n", 0, piece_bytes) + 1
                        cut = cut or _char_start(pending, piece_bytes)
                    piece, pending = pending[:cut], pending[cut:]
                    self._hash.update(piece)
                    yield _decode(piece, first)
                    first = False
                if not more:
                    return


def _char_start(data: bytes, at: int) -> int:
    """`at`, moved back to where a UTF-8 character starts (a line longer than a piece is
    cut there, not inside a character)."""
    while 1 < at < len(data) and data[at] & 0xC0 == 0x80:
        at -= 1
    return at


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


@dataclass(frozen=True)
class WalkOptions:
    """What a directory walk lists, beyond the built-in rules (hidden entries, `SKIP_DIRS`).

    The defaults are the plain walk: every text file, any depth, no cap, .gitignore
    honoured, symlinked directories not followed. Patterns use `fnmatch` semantics and are
    matched against the path relative to the walked root and against the bare name; a
    leading ``**/`` also matches at the root, and a trailing ``/`` matches directories only.

    Attributes:
        include: when not empty, only files matching one of these are listed.
        exclude: files or directories to skip (a matching directory is not entered);
            added to `SKIP_DIRS`, never replacing them.
        max_depth: deepest level entered: files directly in the root are depth 0, files
            in a subdirectory of it depth 1, ...; None: no limit.
        max_files: list at most this many files (>= 1); None: no cap.
        extensions: only files whose name ends in one of these (".md" or "md", any
            case); None (or empty): any extension.
        respect_gitignore: honour .gitignore files met on the way down.
        follow_symlinks: enter symlinked directories, each real directory once, and only
            those whose real path is inside `confine`.
        confine: the directory a followed link must stay in; None: the walked root.

    Raises:
        UsageError: a negative `max_depth`, a `max_files` under 1, an empty extension.
    """

    include: Sequence[str] = ()
    exclude: Sequence[str] = ()
    max_depth: int | None = None
    max_files: int | None = None
    extensions: Sequence[str] | None = None
    respect_gitignore: bool = True
    follow_symlinks: bool = False
    confine: Path | None = None

    def __post_init__(self) -> None:
        def strings(value: Sequence[str]) -> tuple[str, ...]:
            return (value,) if isinstance(value, str) else tuple(value)

        object.__setattr__(self, "include", strings(self.include))
        object.__setattr__(self, "exclude", strings(self.exclude))
        if self.max_depth is not None and self.max_depth < 0:
            raise UsageError(f"max_depth must be 0 or more, not {self.max_depth}")
        if self.max_files is not None and self.max_files < 1:
            raise UsageError(f"max_files must be 1 or more, not {self.max_files}")
        if self.extensions is not None:
            exts = []
            for ext in strings(self.extensions):
                bare = ext.strip().lstrip(".").lower()
                if not bare:
                    raise UsageError(f"not a file extension: {ext!r} (e.g. md or .md)")
                exts.append("." + bare)
            object.__setattr__(self, "extensions", tuple(dict.fromkeys(exts)) or None)


PLAIN_WALK = WalkOptions()  # the defaults: today's walk


_Globs = tuple[tuple[tuple[str, ...], bool], ...]  # (alternatives, directories only)


def _globs(patterns: Sequence[str]) -> _Globs:
    out = []
    for raw in patterns:
        dir_only = raw.endswith("/") and raw.rstrip("/") != ""
        pattern = raw.rstrip("/") if dir_only else raw
        out.append((tuple(_zero_dirs(pattern)), dir_only))
    return tuple(out)


def _zero_dirs(pattern: str) -> list[str]:
    """`pattern` and its forms with a ``**/`` (at the start or after a ``/``) standing
    for no directory at all: ``**/*.md`` also matches ``a.md``, ``src/**/*.py``
    ``src/a.py``. fnmatch's ``*`` crosses ``/`` already: one or more levels match."""
    forms = [""]
    optional = 0
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i) and (i == 0 or pattern[i - 1] == "/") and optional < 6:
            forms = [f + "**/" for f in forms] + forms
            optional += 1
            i += 3
        else:
            forms = [f + pattern[i] for f in forms]
            i += 1
    return list(dict.fromkeys(forms))


def _glob_hit(globs: _Globs, rel: str, name: str, is_dir: bool) -> bool:
    for alternatives, dir_only in globs:
        if dir_only and not is_dir:
            continue
        for pattern in alternatives:
            if fnmatch.fnmatch(rel, pattern) or fnmatch.fnmatch(name, pattern):
                return True
            if is_dir and fnmatch.fnmatch(rel + "/", pattern):  # `docs/**` names docs
                return True
    return False


def _inside(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip(os.sep) + os.sep)


def walk_text_files(
    root: Path, include_hidden: bool = False, options: WalkOptions = PLAIN_WALK
) -> Iterator[Path]:
    """Files under `root` in a stable order, honouring .gitignore files on the way down
    (unless `options` says otherwise) and narrowed by `options` (see `WalkOptions`).

    Files are listed by name, not sniffed: a binary file is refused when it is read.
    """
    matcher = IgnoreMatcher()
    gitignore = options.respect_gitignore
    include = _globs(options.include)
    exclude = _globs(options.exclude)
    extensions = tuple(options.extensions) if options.extensions is not None else None
    max_depth = options.max_depth
    left = options.max_files
    follow = options.follow_symlinks
    seen: set[str] = set()
    confine = real_root = ""
    if follow:  # real paths are worked out only here: a plain walk costs no extra calls
        real_root = os.path.realpath(root)
        confine = os.path.realpath(options.confine) if options.confine is not None else real_root
        seen.add(real_root)

    def visit(directory: Path, rel: str, depth: int, real: str) -> Iterator[Path]:
        nonlocal left
        pushed = False
        if gitignore:
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
        descend = max_depth is None or depth < max_depth
        for entry in entries:
            if left is not None and left <= 0:
                break
            name = entry.name
            child_rel = f"{rel}/{name}" if rel else name
            if not include_hidden and name.startswith("."):
                continue
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
                is_file = entry.is_file(follow_symlinks=True)
                linked_dir = (
                    follow and not is_dir and not is_file and entry.is_dir(follow_symlinks=True)
                )
            except OSError:
                continue
            if is_dir or linked_dir:
                if not descend or name in SKIP_DIRS:
                    continue
                if exclude and _glob_hit(exclude, child_rel, name, True):
                    continue
                if gitignore and matcher.ignored(child_rel, True):
                    continue
                child_real = ""
                if follow:
                    child_real = (
                        os.path.realpath(entry.path) if linked_dir else os.path.join(real, name)
                    )
                    if child_real in seen or (linked_dir and not _inside(child_real, confine)):
                        continue
                    seen.add(child_real)
                yield from visit(Path(entry.path), child_rel, depth + 1, child_real)
            elif is_file:
                if gitignore and matcher.ignored(child_rel, False):
                    continue
                if exclude and _glob_hit(exclude, child_rel, name, False):
                    continue
                if include and not _glob_hit(include, child_rel, name, False):
                    continue
                if extensions is not None and not name.lower().endswith(extensions):
                    continue
                if left is not None:
                    left -= 1
                yield Path(entry.path)
        if pushed:
            matcher.pop()

    yield from visit(root, "", 0, real_root)


def expand_glob(pattern: str, base: Path) -> list[Path]:
    """Paths matching a glob (``**`` recursive), relative patterns against `base`."""
    import glob

    full = pattern if os.path.isabs(pattern) else str(base / pattern)
    return sorted(Path(p) for p in glob.glob(full, recursive=True))


def is_glob(text: str) -> bool:
    return any(ch in text for ch in "*?[")


def fnmatch_any(name: str, patterns: list[str]) -> bool:
    return any(fnmatch.fnmatch(name, p) for p in patterns)
