"""Opt-in OS confinement with bubblewrap (Linux): the project read-write, the run's temp
directory read-write (it is the run's TMPDIR), the rest of the file system read-only, /tmp
included (the interpreter itself may live there), no network unless allowed.

This goes beyond upstream, whose "sandbox" is only a separate process. Where bubblewrap
is missing, or the kernel refuses it namespaces, `isolation_problem` says so plainly and
the caller refuses to run rather than silently running unconfined.
"""

import shutil
import subprocess
import sys
from collections.abc import Sequence
from functools import cache
from pathlib import Path

from ctxmode.errors import EnvironmentProblem


@cache
def isolation_problem() -> str | None:
    """None when confined runs work here, else why they don't."""
    if not sys.platform.startswith("linux"):
        return "--isolate needs Linux with bubblewrap; it is not available on this system"
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return (
            "--isolate needs bubblewrap, which is not installed "
            "(apt install bubblewrap, dnf install bubblewrap, or pacman -S bubblewrap)"
        )
    try:
        probe = subprocess.run(
            [bwrap, "--unshare-all", "--ro-bind", "/", "/", "--", "true"],
            capture_output=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return f"bubblewrap could not run: {exc}"
    if probe.returncode != 0:
        reason = probe.stderr.decode("utf-8", "replace").strip() or f"exit {probe.returncode}"
        return f"bubblewrap cannot create namespaces here ({reason})"
    return None


def confine(
    argv: Sequence[str], *, project_dir: Path, workdir: Path, cwd: Path, network: bool
) -> list[str]:
    """`argv` wrapped in bubblewrap.

    Raises:
        EnvironmentProblem: confinement is unavailable here (message says why).
    """
    problem = isolation_problem()
    if problem:
        raise EnvironmentProblem(problem)
    bwrap = shutil.which("bwrap") or "bwrap"
    wrapped = [
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
        "--bind",
        str(project_dir),
        str(project_dir),
        "--bind",
        str(workdir),
        str(workdir),
        "--chdir",
        str(cwd),
        "--",
        *argv,
    ]
    return wrapped
