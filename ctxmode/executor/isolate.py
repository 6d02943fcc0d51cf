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

import os
import shutil
import subprocess
import sys
import tempfile
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
) -> list[str]:
    """`argv` wrapped in bubblewrap.

    ``masked``: paths to hide (`ctxmode.security.denied_paths`); one that holds the
    project or the temp directory is hidden around them, the rest after them, so neither
    a parent nor a child of a writable directory escapes. ``read_only``: files inside the
    writable directories to keep read-only (the host's settings files).

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
        *_masks(after),
        "--chdir",
        str(cwd),
        "--",
        *argv,
    ]
