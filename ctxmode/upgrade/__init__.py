"""Upgrading ctxmode in place, whichever way it was installed, and what must follow.

Why a command: ctxmode is installed with pipx, uv tool or pip (in a virtualenv, with
--user, or into a system Python), from PyPI or from a repository, and each needs another
upgrade command. An editable checkout gets none (its owner updates it, then the step
after the upgrade still runs); an install from a local directory or archive cannot be
upgraded from here. An upgrade is also more than new code: every database under the data
root must reach the new schema, and hook commands in host settings must match the new
version's setup. Only the new code knows its migrations and its setup, so after the
package tool ran, `finish` runs in a new process (``python -m ctxmode upgrade --finish``)
of the freshly installed code.

``CTXMODE_UPGRADE_COMMAND`` (a JSON list) replaces the tool command, for unusual installs
and for tests; ``CTXMODE_PYPI_URL`` replaces the PyPI JSON endpoint (mirrors, tests).
"""

from ctxmode import __version__
from ctxmode.upgrade.agent import agent_instructions
from ctxmode.upgrade.databases import DbStatus, Migrated, database_status, migrate
from ctxmode.upgrade.finishing import FINISH_ARGV, Finished, finish, finish_reason, run_finish
from ctxmode.upgrade.install import PACKAGE, Facts, Install, current_install, detect
from ctxmode.upgrade.records import Resetup, SetupRecord, resetup, setup_records
from ctxmode.upgrade.releases import (
    PYPI_TIMEOUT_S,
    PYPI_URL,
    Latest,
    latest_version,
    newer,
    probe,
)
from ctxmode.upgrade.run import (
    TOOL_ENV,
    TOOL_TIMEOUT_S,
    IndexUnreachable,
    UpgradeFailed,
    run_command,
)

__all__ = [
    "FINISH_ARGV",
    "PACKAGE",
    "PYPI_TIMEOUT_S",
    "PYPI_URL",
    "TOOL_ENV",
    "TOOL_TIMEOUT_S",
    "DbStatus",
    "Facts",
    "Finished",
    "IndexUnreachable",
    "Install",
    "Latest",
    "Migrated",
    "Resetup",
    "SetupRecord",
    "UpgradeFailed",
    "__version__",
    "agent_instructions",
    "current_install",
    "database_status",
    "detect",
    "finish",
    "finish_reason",
    "latest_version",
    "migrate",
    "newer",
    "probe",
    "resetup",
    "run_command",
    "run_finish",
    "setup_records",
]
