"""The newest ctxmode release on PyPI, and whether it is newer than this one."""

import json
import os

from ctxmode import __version__

PYPI_URL = "https://pypi.org/pypi/ctxmode/json"
PYPI_TIMEOUT_S = 3.0
PYPI_ENV = "CTXMODE_PYPI_URL"


def latest_version(url: str | None = None, timeout: float = PYPI_TIMEOUT_S) -> str | None:
    """The newest version on PyPI, or None when it cannot be told within `timeout`.

    Runs in a daemon thread joined with the timeout: urllib's timeout does not cover
    name resolution, and an offline machine must not wait for it.
    """
    import threading

    url = url or os.environ.get(PYPI_ENV, "").strip() or PYPI_URL
    found: list[str] = []

    def fetch() -> None:
        import urllib.request

        try:
            with urllib.request.urlopen(url, timeout=timeout) as response:
                found.append(str(json.load(response)["info"]["version"]))
        except Exception:  # offline, proxy, 404 (not published), bad JSON: all "unknown"
            return

    thread = threading.Thread(target=fetch, name="ctxmode-pypi", daemon=True)
    thread.start()
    thread.join(timeout + 0.5)
    return found[0] if found else None


def _release(version: str) -> tuple[int, ...] | None:
    import re

    match = re.match(r"v?(\d+(?:\.\d+)*)", version.strip())
    return tuple(int(p) for p in match.group(1).split(".")) if match else None


def newer(latest: str | None, installed: str = __version__) -> bool | None:
    """Whether `latest` is a newer release than `installed` (None: cannot tell)."""
    a, b = _release(latest or ""), _release(installed)
    if a is None or b is None:
        return None
    width = max(len(a), len(b))
    return a + (0,) * (width - len(a)) > b + (0,) * (width - len(b))
