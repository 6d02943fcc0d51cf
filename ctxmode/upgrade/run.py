"""Running the package tool that upgrades ctxmode."""

import os
import shlex
import signal
import subprocess
import sys
import threading
from collections import deque
from typing import TextIO

from ctxmode.errors import CtxError, EnvironmentProblem
from ctxmode.upgrade.install import Install

TOOL_TIMEOUT_S = 15 * 60.0  # a slow index and a build from source fit; a hang does not

# Nothing may wait for an answer nobody gives: stdin is /dev/null, and these stop git
# (a repository install) and pip from prompting on the terminal for credentials.
TOOL_ENV = {"GIT_TERMINAL_PROMPT": "0", "PIP_NO_INPUT": "1"}


class UpgradeFailed(CtxError):
    """The package tool failed; nothing else was touched."""

    code = "upgrade_failed"


class IndexUnreachable(EnvironmentProblem):
    """The package tool ran and changed nothing, and the package index could not be
    asked: whether a newer ctxmode exists was never checked (exit 4, like a machine
    that cannot upgrade itself)."""

    code = "index_unreachable"


def tool_environment() -> dict[str, str]:
    """The package tool's environment: this one, with prompts switched off."""
    return {**os.environ, **TOOL_ENV}


def _kill(proc: "subprocess.Popen[str]") -> None:
    """Kill the tool and everything it started (git, a build backend): a child left
    behind would hold the output pipe open."""
    try:
        if sys.platform != "win32":
            os.killpg(proc.pid, signal.SIGKILL)
        else:
            proc.kill()
    except OSError:  # already gone
        pass


def _duration(seconds: float) -> str:
    return f"{seconds / 60:g} minutes" if seconds >= 120 else f"{seconds:g} seconds"


def run_command(install: Install, out: TextIO, timeout: float = TOOL_TIMEOUT_S) -> None:
    """Run the package tool, streaming its output to `out` as it comes.

    It runs in a process group of its own, killed whole after `timeout` seconds or when
    this process is interrupted.

    Raises:
        EnvironmentProblem: there is no command for this install.
        UpgradeFailed: the tool is missing, timed out or exited non-zero (its last lines
            say why).
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
            env=tool_environment(),
            start_new_session=sys.platform != "win32",
        )
    except OSError as exc:
        raise UpgradeFailed(
            f"cannot run {command[0]}: {exc.strerror or exc}. Is it installed and on PATH? "
            f"The upgrade command was: {shlex.join(command)}. Nothing was changed."
        ) from exc
    expired = threading.Event()

    def expire() -> None:
        expired.set()
        _kill(proc)

    timer = threading.Timer(timeout, expire)
    timer.daemon = True
    tail: deque[str] = deque(maxlen=10)
    assert proc.stdout is not None
    timer.start()
    try:
        with proc.stdout:
            for line in proc.stdout:
                out.write(line)
                out.flush()
                if line.strip():
                    tail.append(line.rstrip())
        code = proc.wait()
    except BaseException:  # Ctrl+C: the tool is in its own session and would go on
        _kill(proc)
        proc.wait()
        raise
    finally:
        timer.cancel()
    said = "\n".join(tail) or "(no output)"
    if expired.is_set():
        raise UpgradeFailed(
            f"the upgrade command did not finish within {_duration(timeout)} and was "
            f"stopped: {shlex.join(command)}\n{said}\n"
            "Nothing else was changed; run it yourself to see where it waits."
        )
    if code != 0:
        raise UpgradeFailed(
            f"the upgrade command failed (exit {code}): {shlex.join(command)}\n{said}\n"
            "Nothing else was changed."
        )
