"""Turn what a user names (files, directories, globs) into indexed sources.

One file is one source. Labels are paths relative to the project when the file is inside
it, absolute otherwise; ``--source LABEL`` names a single file, or prefixes the relative
paths of a directory's files.
"""

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

from ctxmode.errors import InputError, NotFoundError
from ctxmode.store.files import (
    MAX_FILE_BYTES,
    PLAIN_WALK,
    WalkOptions,
    expand_glob,
    is_glob,
    printable_path,
    walk_text_files,
)
from ctxmode.store.store import ContentStore, DenyCheck, IndexReport

BAD_NAME = "bad_name"  # the code of a file skipped because its name is not valid UTF-8
# A run that wrote this many chunks merges the index's segments (`ContentStore.merge_index`).
MERGE_AFTER_CHUNKS = 1000


@dataclass(frozen=True)
class Problem:
    path: str  # printable: bytes of a name that is not UTF-8 escaped (`printable_path`)
    message: str
    code: str
    explicit: bool  # named by the user (an error) rather than met inside a directory


@dataclass
class IndexRun:
    indexed: list[IndexReport] = field(default_factory=list)
    skipped: list[Problem] = field(default_factory=list)
    # Ended early by `stop`: the files listed but not reached, or while listing them.
    left: int = 0
    listing_stopped: bool = False
    # `WalkOptions.max_files` ended the directory walks: more files were there, not listed.
    capped: bool = False

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.skipped if p.explicit]


Progress = Callable[[int, int, str], None]
Stop = Callable[[], bool]  # asked between files: True ends the run where it is
STOP_EVERY = 256  # files listed between two `stop` checks of a directory walk


def label_for(path: Path, project: Path, prefix: str | None, base: Path | None) -> str:
    if prefix is not None:
        if base is None:
            return f"{prefix.rstrip('/')}/{path.name}"
        rel = path.relative_to(base).as_posix()
        return f"{prefix.rstrip('/')}/{rel}"
    try:
        return path.relative_to(project).as_posix()
    except ValueError:
        return str(path)


def _targets(
    names: Iterable[str],
    cwd: Path,
    include_hidden: bool,
    run: IndexRun,
    stop: Stop | None,
    walk: WalkOptions = PLAIN_WALK,
) -> list[tuple[Path, Path | None, bool]]:
    """(file, directory it was found under or None, named explicitly) for every input;
    `run.listing_stopped` when `stop` ended a directory walk, `run.capped` when
    `walk.max_files` (shared by all the directories named) left files out."""
    out: list[tuple[Path, Path | None, bool]] = []
    budget = walk.max_files
    for name in names:
        path = Path(name).expanduser()
        path = path if path.is_absolute() else cwd / path
        if not path.exists() and is_glob(name):
            matches = expand_glob(name, cwd)
            if not matches:
                shown = printable_path(name)
                run.skipped.append(Problem(shown, f"no files match {shown}", "not_found", True))
            out.extend((m.absolute(), None, True) for m in matches if m.is_file())
            continue
        if path.is_dir():
            root = path.resolve()
            options = walk
            if budget is not None:  # one more than may be listed: is anything left out?
                options = replace(walk, max_files=budget + 1)
            for n, found in enumerate(walk_text_files(root, include_hidden, options), 1):
                if stop is not None and n % STOP_EVERY == 0 and stop():
                    run.listing_stopped = True
                    return out
                if budget is not None:
                    if budget == 0:
                        run.capped = True
                        break
                    budget -= 1
                out.append((found, root, False))
        elif path.exists() or path.is_symlink():
            out.append((path.absolute(), None, True))
        else:
            shown = printable_path(name)
            run.skipped.append(
                Problem(shown, f"no such file or directory: {shown}", "not_found", True)
            )
    return out


def index_paths(
    store: ContentStore,
    names: Iterable[str],
    *,
    project: Path,
    cwd: Path,
    label: str | None = None,
    max_bytes: int = MAX_FILE_BYTES,
    include_hidden: bool = False,
    deny: DenyCheck | None = None,
    progress: Progress | None = None,
    stop: Stop | None = None,
    walk: WalkOptions = PLAIN_WALK,
) -> IndexRun:
    """Index files, directories and globs; collect what was skipped and why.

    A file whose name is not valid UTF-8 cannot be a label: it is skipped (code
    `BAD_NAME`, its name shown with the bytes escaped) and the others are indexed.
    `stop`, asked between files, ends the run early (`IndexRun.left`,
    `IndexRun.listing_stopped`); what was indexed stays, and running again skips it unread.

    `walk` narrows the walks of the directories named (not the files or globs named):
    include/exclude patterns, depth, extensions, .gitignore, symlinks (`WalkOptions`).
    Its `max_files` caps the files listed from all of them together; when files were
    left out, `IndexRun.capped` says so.
    """
    run = IndexRun()
    targets = _targets(names, cwd, include_hidden, run, stop, walk)
    if run.listing_stopped:
        return run
    single = len(targets) == 1 and targets[0][1] is None
    total = len(targets)
    targets.reverse()  # popped as they are indexed: a large tree's paths are not all kept
    while targets:
        if stop is not None and stop():
            run.left = len(targets)
            break
        path, base, explicit = targets.pop()
        shown = printable_path(label_for(path, project, None, None))
        if progress:
            progress(total - len(targets), total, shown)
        if printable_path(path) != str(path):
            message = f"skipping {shown}: its name is not valid UTF-8"
            run.skipped.append(Problem(shown, message, BAD_NAME, explicit))
            continue
        if deny is not None and deny(str(path)):
            message = f"File access blocked by security policy: a Read deny rule matches {shown}"
            run.skipped.append(Problem(str(path), message, "denied", explicit))
            continue
        name = label if (label is not None and single) else None
        prefix = label if (label is not None and not single) else None
        try:
            source = name or label_for(path, project, prefix, base)
            # the file opened is judged too: a symlink swapped in after the check above
            read = store.index_file(path, source, max_bytes=max_bytes, denied=deny)
            run.indexed.append(read)
        except (InputError, NotFoundError) as exc:
            run.skipped.append(Problem(shown, str(exc), exc.code, explicit))
    if sum(r.chunks for r in run.indexed if not r.unchanged) >= MERGE_AFTER_CHUNKS:
        store.merge_index()
    return run
