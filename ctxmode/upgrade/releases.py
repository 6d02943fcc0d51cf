"""The newest ctxmode release on PyPI, and whether it is newer than this one."""

import json
import re
from typing import NamedTuple

from ctxmode import __version__, settings

PYPI_URL = settings.PYPI_JSON
PYPI_TIMEOUT_S = 3.0


class Latest(NamedTuple):
    """What the package index said about ctxmode: its newest version, or why it could
    not be asked (exactly one of the two is set)."""

    version: str | None
    problem: str | None


def _why(exc: BaseException) -> str:
    """A short reason for a failed look-up: the socket's own words, not urllib's wrapper."""
    from urllib.error import HTTPError, URLError

    if isinstance(exc, HTTPError):
        return f"HTTP {exc.code} {exc.reason}".strip()
    if isinstance(exc, URLError):
        reason = exc.reason
        if isinstance(reason, OSError) and reason.strerror:
            return str(reason.strerror)
        return str(reason)
    if isinstance(exc, (ValueError, KeyError, TypeError)):
        return f"an answer that is not PyPI's JSON ({type(exc).__name__})"
    if isinstance(exc, OSError) and exc.strerror:
        return str(exc.strerror)
    return str(exc) or type(exc).__name__


def probe(url: str | None = None, timeout: float = PYPI_TIMEOUT_S) -> Latest:
    """Ask the package index for ctxmode's newest version, within `timeout`.

    Runs in a daemon thread joined with the timeout: urllib's timeout does not cover
    name resolution, and an offline machine must not wait for it.
    """
    import threading

    url = url or settings.pypi_url()
    found: list[Latest] = []

    def fetch() -> None:
        import urllib.request

        try:
            with urllib.request.urlopen(url, timeout=timeout) as response:
                found.append(Latest(str(json.load(response)["info"]["version"]), None))
        except Exception as exc:  # offline, proxy, 404 (not published), bad JSON
            found.append(Latest(None, f"{url}: {_why(exc)}"))

    thread = threading.Thread(target=fetch, name="ctxmode-pypi", daemon=True)
    thread.start()
    thread.join(timeout + 0.5)
    return found[0] if found else Latest(None, f"{url}: no answer within {timeout:g} seconds")


def latest_version(url: str | None = None, timeout: float = PYPI_TIMEOUT_S) -> str | None:
    """The newest version on PyPI, or None when it cannot be told within `timeout`."""
    return probe(url, timeout).version


# PEP 440's public version scheme with its alternative spellings (a local ``+label`` is
# accepted and ignored); a version that does not match cannot be compared.
_VERSION = re.compile(
    r"""
    v?
    (?:(?P<epoch>\d+)!)?
    (?P<release>\d+(?:\.\d+)*)
    (?P<pre>[-_.]?(?P<pre_l>alpha|a|beta|b|preview|pre|c|rc)[-_.]?(?P<pre_n>\d+)?)?
    (?P<post>-(?P<post_n1>\d+)|[-_.]?(?:post|rev|r)[-_.]?(?P<post_n2>\d+)?)?
    (?P<dev>[-_.]?dev[-_.]?(?P<dev_n>\d+)?)?
    (?:\+[a-z0-9]+(?:[-_.][a-z0-9]+)*)?
    """,
    re.VERBOSE | re.IGNORECASE,
)
_PRE = {"a": 0, "alpha": 0, "b": 1, "beta": 1, "c": 2, "rc": 2, "pre": 2, "preview": 2}
_FINAL = 3  # after every pre-release kind

Key = tuple[int, tuple[int, ...], tuple[int, int], int, tuple[int, int]]


def _release(version: str) -> Key | None:
    """A sort key: epoch, release (trailing zeros dropped, so 1.0 == 1.0.0), pre-release,
    post-release, dev release; so ``1.0a1 < 1.0b1 < 1.0rc1 < 1.0 < 1.0.post1``, and
    ``1.0.dev1`` before all of them. None when `version` is not PEP 440."""
    match = _VERSION.fullmatch(version.strip())
    if match is None:
        return None
    release = tuple(int(p) for p in match["release"].split("."))
    while len(release) > 1 and release[-1] == 0:
        release = release[:-1]
    dev = (0, int(match["dev_n"] or 0)) if match["dev"] else (1, 0)
    if match["pre"]:
        pre = (_PRE[match["pre_l"].lower()], int(match["pre_n"] or 0))
    elif match["dev"] and not match["post"]:
        pre = (-1, 0)  # 1.0.dev1 comes before 1.0a1
    else:
        pre = (_FINAL, 0)
    post = int(match["post_n1"] or match["post_n2"] or 0) if match["post"] else -1
    return int(match["epoch"] or 0), release, pre, post, dev


def newer(latest: str | None, installed: str = __version__) -> bool | None:
    """Whether `latest` is a newer release than `installed` (None: cannot tell)."""
    a, b = _release(latest or ""), _release(installed)
    if a is None or b is None:
        return None
    return a > b
