"""What an agent is told when asked to upgrade ctxmode."""

import shlex
import shutil
import sys
from collections.abc import Iterable
from pathlib import Path

from ctxmode import __version__
from ctxmode.upgrade.install import PACKAGE, current_install


def _ctxmode_command() -> str:
    """How an agent's shell should call ctxmode: ``ctxmode`` when it is on PATH, else the
    absolute path of this installation's executable, else ``python -m ctxmode``."""
    if shutil.which(PACKAGE):
        return PACKAGE
    candidates: Iterable[Path] = (
        Path(sys.argv[0]).absolute() if sys.argv and sys.argv[0] else Path(),
        Path(sys.prefix) / "bin" / PACKAGE,
        Path(sys.prefix) / "Scripts" / f"{PACKAGE}.exe",
    )
    for candidate in candidates:
        if candidate.name.startswith(PACKAGE) and candidate.is_file():
            return shlex.quote(str(candidate))
    return f"{shlex.quote(sys.executable)} -m {PACKAGE}"


def agent_instructions() -> str:
    """What an agent is told when asked to upgrade ctxmode: the command to run with its
    shell tool (this function upgrades nothing), and to restart afterwards."""
    install = current_install()
    command = f"{_ctxmode_command()} upgrade --yes"
    lines = [
        "To upgrade ctxmode, run this command with your shell tool:",
        "",
        f"    {command}",
        "",
        f"Installed version: {__version__}. Install method: {install.method} ({install.detail}).",
    ]
    if install.development:
        lines += [
            "This is a development install: ctxmode does not change its code. Tell the user "
            "to update the checkout (git pull, pip install -e .); the command above then "
            "only migrates ctxmode's databases and re-runs setup for every platform set up.",
        ]
    elif install.command:
        lines.append(
            f"It runs the package tool ({shlex.join(install.command)}), then migrates "
            "ctxmode's databases and re-runs setup for every platform set up, in a new "
            "process of the upgraded code."
        )
    else:
        lines.append("This install cannot be upgraded by ctxmode: tell the user the above.")
    lines += [
        "",
        "When it has finished, restart the agent afterwards so the new MCP server starts: "
        "the running server keeps the old code until then.",
    ]
    return "\n".join(lines)
