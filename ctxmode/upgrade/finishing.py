"""What follows the package tool: the new code migrates the databases and sets up again."""

import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

from ctxmode import paths
from ctxmode.upgrade.databases import Migrated, _migrate, database_status
from ctxmode.upgrade.records import Resetup, _resetup, setup_records

FINISH_ARGV = ["-m", "ctxmode", "upgrade", "--finish"]


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
    databases = [_migrate(s) for s in database_status(root)]
    records, warnings = setup_records(root)
    return Finished(databases, [_resetup(r) for r in records], warnings)


def run_finish(json_output: bool) -> tuple[int, str, str]:
    """Run the post-upgrade step in a new process of the freshly installed code.

    Returns its exit status, stdout and stderr.
    """
    argv = [sys.executable, *FINISH_ARGV, *(["--json"] if json_output else [])]
    proc = subprocess.run(
        argv,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        encoding="utf-8",
        errors="replace",
    )
    return proc.returncode, proc.stdout, proc.stderr
