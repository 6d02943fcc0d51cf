"""Opt-in OS confinement with bubblewrap (Linux): what the sandbox enforces for real.

Inside a confined run:

* the project and the run's temp directory (its TMPDIR) are writable; the rest of the file
  system is read-only, /tmp included (the interpreter itself may live there);
* every existing path a ``Read(...)`` deny rule denies is masked: a file reads as empty
  (``/dev/null`` bound over it: writes vanish), a directory as an empty read-only one. The
  globs are resolved against the file system when the run starts (`denied_paths`);
* the host's settings files inside the project stay read-only, so a run cannot rewrite
  the rules that confine the next one;
* there is no network unless allowed (``--network``, ``CTXMODE_ISOLATE_NETWORK``): a new
  network namespace with only its own loopback, so even the host's 127.0.0.1 is out of
  reach.

Not enforced: ``Bash(...)`` rules (a command inside the project runs as the user), a file
that only comes to match a deny rule during the run, another name for a denied file (a
hard link, a copy made before), and unanchored patterns (``**/.env``) outside the
project. This goes beyond upstream, whose "sandbox" is only a separate process. Where
bubblewrap is missing, or the kernel refuses it namespaces, `isolation_problem` says so
plainly and the caller refuses to run rather than silently running unconfined.
"""

import itertools
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from collections import deque
from collections.abc import Iterable, Sequence
from functools import cache
from pathlib import Path

from ctxmode.errors import EnvironmentProblem

PROBE_TIMEOUT_S = 10


def _base(bwrap: str, network: bool) -> list[str]:
    return [
        bwrap,
        "--die-with-parent",
        "--unshare-all",
        *(["--share-net"] if network else []),
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
    ]


def _masks(paths: Iterable[str]) -> list[str]:
    """bubblewrap arguments hiding ``paths``: /dev/null over a file, an empty read-only
    tmpfs over a directory."""
    args: list[str] = []
    for path in paths:
        if os.path.isdir(path):
            args += ["--tmpfs", path, "--remount-ro", path]
        elif os.path.exists(path):
            args += ["--dev-bind", "/dev/null", path]
    return args


@cache
def isolation_problem() -> str | None:
    """None when confined runs work here, else why they don't.

    The probe runs the same kind of sandbox as a real run, masks and all (a kernel or a
    container may allow namespaces yet refuse a /proc mount or a tmpfs).
    """
    if not sys.platform.startswith("linux"):
        return "--isolate needs Linux with bubblewrap; it is not available on this system"
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return (
            "--isolate needs bubblewrap, which is not installed "
            "(apt install bubblewrap, dnf install bubblewrap, or pacman -S bubblewrap)"
        )
    with tempfile.TemporaryDirectory(prefix="ctxmode-probe-") as tmp:
        folder, file = Path(tmp, "d"), Path(tmp, "f")
        folder.mkdir()
        file.write_text("probe", encoding="utf-8")
        argv = [
            *_base(bwrap, network=False),
            "--bind",
            tmp,
            tmp,
            *_masks([str(folder), str(file)]),
            "--",
            "true",
        ]
        try:
            probe = subprocess.run(argv, capture_output=True, timeout=PROBE_TIMEOUT_S, check=False)
        except (OSError, subprocess.SubprocessError) as exc:
            return f"bubblewrap could not run: {exc}"
    if probe.returncode != 0:
        reason = probe.stderr.decode("utf-8", "replace").strip() or f"exit {probe.returncode}"
        return f"bubblewrap cannot create namespaces here ({reason})"
    return None


SOCKET_ROOTS = ("/run", "/var/run", "/tmp", "/dev/shm")
SOCKET_DEPTH = 3  # folders below a root looked into for Unix sockets
SOCKET_SCAN_MAX = 20_000  # directory entries looked at in all, at most
SOCKET_FOLDER_MAX = 1_000  # of one folder (a full /tmp does not starve the others)


def host_sockets(skip: Iterable[Path] = ()) -> list[str]:
    """Unix socket files of the host (a Docker daemon, an SSH agent, a display server, a
    session bus) under the usual places, outside `skip`: a confined run must not reach
    them through the read-only file system (a socket still accepts a connection).
    Breadth first, so the shallow places are all looked at before the deep ones."""
    roots = [*SOCKET_ROOTS, os.environ.get("XDG_RUNTIME_DIR", "")]
    skipped = [Path(p) for p in skip]
    found: list[str] = []
    seen: set[str] = set()
    budget = SOCKET_SCAN_MAX
    queue = deque((r, 0) for r in roots if r and os.path.isdir(r))
    while queue and budget > 0:
        folder, depth = queue.popleft()
        real = os.path.realpath(folder)
        if real in seen or _inside(real, skipped):
            continue
        seen.add(real)
        try:
            with os.scandir(folder) as listing:
                entries = list(itertools.islice(listing, min(budget, SOCKET_FOLDER_MAX)))
        except OSError:
            continue
        budget -= len(entries)
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    if depth < SOCKET_DEPTH:
                        queue.append((entry.path, depth + 1))
                elif stat.S_ISSOCK(entry.stat(follow_symlinks=False).st_mode):
                    found.append(entry.path)
            except OSError:  # noqa: PERF203 - it may be gone meanwhile
                continue
    return found


def _inside(path: str, folders: Iterable[Path]) -> bool:
    return any(path == str(f) or path.startswith(str(f).rstrip("/") + "/") for f in folders)


def confine(
    argv: Sequence[str],
    *,
    project_dir: Path,
    workdir: Path,
    cwd: Path,
    network: bool,
    masked: Sequence[str] = (),
    read_only: Sequence[str] = (),
    guarded: Sequence[str] = (),
) -> list[str]:
    """`argv` wrapped in bubblewrap.

    ``masked``: paths to hide (`ctxmode.security.denied_paths`); one that holds the
    project or the temp directory is hidden around them, the rest after them, so neither
    a parent nor a child of a writable directory escapes. ``read_only``: files inside the
    writable directories to keep read-only (the host's settings files). ``guarded``: the
    folders that hold them (``<project>/.claude``), kept read-only whole, so that nothing
    in them can be renamed, replaced or created (an existing one is bound read-only over
    itself, a missing one becomes an empty read-only folder for the run: the caller
    removes its mount point after). The host's Unix sockets are masked (`host_sockets`).

    Raises:
        EnvironmentProblem: confinement is unavailable here (message says why).
    """
    problem = isolation_problem()
    if problem:
        raise EnvironmentProblem(problem)
    bwrap = shutil.which("bwrap") or "bwrap"
    writable = (project_dir, workdir)
    real: list[str] = []
    for path in sorted({os.path.realpath(m) for m in masked}, key=len):
        if os.path.exists(path) and not _inside(path, map(Path, real)):
            real.append(path)
    around = [p for p in real if any(_inside(str(w), [Path(p)]) for w in writable)]
    after = [p for p in real if p not in around]
    keep = [p for p in read_only if os.path.isfile(p) and _inside(p, writable)]
    folders: list[str] = []
    for folder in guarded:
        if _inside(folder, writable) and not os.path.islink(folder):
            if os.path.isdir(folder):
                folders += ["--ro-bind", folder, folder]
            elif not os.path.exists(folder):
                folders += ["--tmpfs", folder, "--remount-ro", folder]
    sockets = host_sockets(skip=writable)
    return [
        *_base(bwrap, network),
        *(arg for p in around for arg in ("--tmpfs", p)),
        "--bind",
        str(project_dir),
        str(project_dir),
        "--bind",
        str(workdir),
        str(workdir),
        *(arg for p in around for arg in ("--remount-ro", p)),
        *(arg for p in keep for arg in ("--ro-bind", p, p)),
        *folders,
        *_masks(after),
        *(arg for p in sockets for arg in ("--dev-bind", "/dev/null", p)),
        "--chdir",
        str(cwd),
        "--",
        *argv,
    ]
