"""What follows the package tool: the new code migrates the databases and sets up again."""

import json
import subprocess
import sys
from pathlib import Path
from typing import Any, NamedTuple

from ctxmode import paths
from ctxmode.upgrade.databases import Migrated, database_status, migrate
from ctxmode.upgrade.records import Resetup, resetup, setup_records
from ctxmode.upgrade.run import UpgradeFailed

FINISH_ARGV = ["-m", "ctxmode", "upgrade", "--finish"]
RETRY = "Run it again: ctxmode upgrade --finish"


class Finished(NamedTuple):
    databases: list[Migrated]
    setups: list[Resetup]
    warnings: list[str]

    @property
    def problems(self) -> int:
        return sum(1 for m in self.databases if m.problem) + sum(
            1 for s in self.setups if s.problem
        )


def finish(root: Path | None = None) -> Finished:
    """What the new code does after an upgrade: migrate every database under the root,
    then re-run setup for every platform and scope an ownership record names."""
    root = paths.data_root() if root is None else root
    databases = [migrate(s) for s in database_status(root)]
    records, warnings = setup_records(root)
    return Finished(databases, [resetup(r) for r in records], warnings)


def _tail(text: str, lines: int = 10) -> str:
    kept = [line.rstrip() for line in text.splitlines() if line.strip()]
    return "\n".join(kept[-lines:])


def finish_reason(code: int, stdout: str, stderr: str) -> str:
    """Why the ``--finish`` process failed: the messages of its JSON envelope's errors,
    else the last lines it wrote (a crash before the envelope, a traceback)."""
    try:
        doc = json.loads(stdout)
    except ValueError:
        doc = None
    errors = doc.get("errors") if isinstance(doc, dict) else None
    messages = [
        str(e["message"])
        for e in (errors if isinstance(errors, list) else [])
        if isinstance(e, dict) and e.get("message")
    ]
    if messages:
        return "\n".join(messages)
    return _tail(stderr) or _tail(stdout) or f"(exit {code}, no output)"


def run_finish(after_upgrade: bool = True) -> dict[str, Any]:
    """Run the post-upgrade step in a new process of the freshly installed code, with
    ``--json``, and return its result (the envelope's data). Its stderr (warnings) is
    passed on.

    Raises:
        UpgradeFailed: the process could not start (the interpreter went away with the
            old environment) or failed; the message says why and how to run it again.
    """
    lead = (
        "ctxmode was upgraded, but the step after it (migrating databases, re-running setup)"
        if after_upgrade
        else "the step after an upgrade (migrating databases, re-running setup)"
    )
    argv = [sys.executable, *FINISH_ARGV, "--json"]
    try:
        proc = subprocess.run(
            argv,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            encoding="utf-8",
            errors="replace",
        )
    except OSError as exc:
        raise UpgradeFailed(
            f"{lead} could not start: cannot run {sys.executable}: {exc.strerror or exc}. {RETRY}"
        ) from exc
    if proc.stderr:
        sys.stderr.write(proc.stderr)
    data = None
    if proc.returncode == 0:
        try:
            doc = json.loads(proc.stdout)
        except ValueError:
            doc = None
        data = doc.get("data") if isinstance(doc, dict) else None
    if not isinstance(data, dict):
        reason = finish_reason(proc.returncode, proc.stdout, proc.stderr)
        raise UpgradeFailed(f"{lead} failed (exit {proc.returncode}):\n{reason}\n{RETRY}")
    return data
