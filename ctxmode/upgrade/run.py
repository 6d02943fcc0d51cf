"""Running the package tool that upgrades ctxmode."""

import shlex
import subprocess
from collections import deque
from typing import TextIO

from ctxmode.errors import CtxError, EnvironmentProblem
from ctxmode.upgrade.install import Install


class UpgradeFailed(CtxError):
    """The package tool failed; nothing else was touched."""

    code = "upgrade_failed"


def run_command(install: Install, out: TextIO) -> None:
    """Run the package tool, streaming its output to `out` as it comes.

    Raises:
        EnvironmentProblem: there is no command for this install.
        UpgradeFailed: the tool is missing or exited non-zero (its last lines say why).
    """
    command = install.command
    if not command:
        raise EnvironmentProblem(f"ctxmode cannot upgrade itself here: {install.detail}")
    try:
        proc = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            encoding="utf-8",
            errors="replace",
        )
    except OSError as exc:
        raise UpgradeFailed(f"cannot run {command[0]}: {exc.strerror or exc}") from exc
    tail: deque[str] = deque(maxlen=10)
    assert proc.stdout is not None
    with proc.stdout:
        for line in proc.stdout:
            out.write(line)
            out.flush()
            if line.strip():
                tail.append(line.rstrip())
    code = proc.wait()
    if code != 0:
        said = "\n".join(tail) or "(no output)"
        raise UpgradeFailed(
            f"the upgrade command failed (exit {code}): {shlex.join(command)}\n{said}\n"
            "Nothing else was changed."
        )
