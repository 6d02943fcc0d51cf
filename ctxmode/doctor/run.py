"""Running every check, in report order, each guarded so one crash is one FAIL line.

Groups run in parallel threads: the slow ones (runtime version probes, ``quick_check``
over a large knowledge base) overlap instead of adding up.
"""

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from ctxmode.doctor.model import Check, fail

BUG_FIX = "report a bug and paste this report"

Group = tuple[str, Callable[[], list[Check]]]


def guarded(name: str, fn: Callable[[], list[Check]]) -> list[Check]:
    """`fn`'s checks, or one FAIL line naming the exception it raised."""
    try:
        return fn()
    except Exception as exc:  # a diagnosis must survive any one check
        return [fail(name, f"the check itself failed: {type(exc).__name__}: {exc}", BUG_FIX)]


def groups(project_dir: Path | None) -> list[Group]:
    """Every check group, in the order of the report."""
    from ctxmode.doctor import hosts, runtimes, servers, storage, system
    from ctxmode.paths import data_root

    root = data_root()
    return [
        ("python", system.python),
        ("sqlite", system.sqlite),
        ("runtimes", lambda: runtimes.runtime_checks(project_dir)),
        ("storage", lambda: storage.storage_check(root)),
        ("databases", lambda: storage.database_checks(root, project_dir)),
        ("setup", lambda: hosts.platform_checks(project_dir)),
        ("server", lambda: servers.server_check(root, project_dir)),
        ("install", system.install),
        ("environment", system.environment),
    ]


def run_checks(project_dir: Path | None) -> list[Check]:
    """Every check for `project_dir` (None: outside any project; the global ones only).

    Never raises because of a check; reads settings files and databases but writes
    neither (the data directory gets a probe file, created and deleted).
    """
    try:
        todo = groups(project_dir)
    except Exception as exc:  # nothing can stop the report itself
        return [fail("doctor", f"cannot start: {type(exc).__name__}: {exc}", BUG_FIX)]
    with ThreadPoolExecutor(max_workers=len(todo)) as pool:
        futures = [pool.submit(guarded, name, fn) for name, fn in todo]
        return [check for future in futures for check in future.result()]
