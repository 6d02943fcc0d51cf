"""One line per language the executor runs: which interpreter it would use, and its version.

Detection is the executor's own (`ctxmode.executor.runtimes.find_runtime`), so the report
says exactly what ``ctx_execute`` would run. Version probes run in parallel with a short
deadline; runtimes whose ``--version`` boots a VM or a compiler service (Elixir, dotnet-script,
ts-node) are not spawned at all, only located.
"""

import os
import re
import signal
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from ctxmode.doctor.model import Check, fail, ok, warn

PROBE_TIMEOUT_S = 0.8
# argv after the executable that prints a version quickly; absent: do not spawn.
_VERSION_ARGS: dict[str, tuple[str, ...]] = {
    "bun": ("--version",),
    "node": ("--version",),
    "tsx": ("--version",),
    "bash": ("--version",),
    "sh": (),  # no portable version flag; located only
    "ruby": ("--version",),
    "go": ("version",),
    "rustc": ("--version",),
    "php": ("--version",),
    "perl": ("--version",),
    "Rscript": ("--version",),
}
_VERSION = re.compile(r"\d+(?:\.\d+)+")
_LOOKED = re.compile(r"\(looked for: [^)]*\)")
_REQUIRED = frozenset({"shell", "python"})


def _kill(proc: "subprocess.Popen[bytes]") -> None:
    """Stop a probe and whatever it started (its own process group)."""
    try:
        if hasattr(os, "killpg"):
            os.killpg(proc.pid, signal.SIGKILL)
        else:
            proc.kill()
    except OSError:
        pass
    proc.wait()


def probe_version(argv: list[str], timeout: float = PROBE_TIMEOUT_S) -> str | None:
    """The first dotted version number `argv` prints (stdout or stderr), or None."""
    try:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    except OSError:
        return None
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill(proc)
        return None
    match = _VERSION.search(out.decode("utf-8", "replace") + "\n" + err.decode("utf-8", "replace"))
    return match.group(0) if match else None


def _version_of(language: str, argv: tuple[str, ...], name: str) -> str | None:
    exe = argv[0]
    if language == "python" and exe == sys.executable:
        import platform

        return platform.python_version()
    if language == "python":
        return probe_version([exe, "--version"])
    tool = name.split()[0]
    args = _VERSION_ARGS.get(tool)
    if not args:
        return None
    return probe_version([exe, *args])


def runtime_checks(project_dir: Path | None) -> list[Check]:
    """Every executor language, in the executor's order; shell missing is FAIL."""
    from ctxmode.errors import RuntimeMissingError
    from ctxmode.executor.runtimes import INSTALL_HINTS, LANGUAGES, find_runtime

    found = {}
    missing = {}
    for language in LANGUAGES:
        try:
            found[language] = find_runtime(language, project_dir)
        except RuntimeMissingError as exc:  # noqa: PERF203 - one lookup per language
            missing[language] = str(exc)
    with ThreadPoolExecutor(max_workers=max(1, len(found))) as pool:
        versions = {
            lang: pool.submit(_version_of, lang, rt.argv, rt.name) for lang, rt in found.items()
        }
        checks = []
        for language in LANGUAGES:
            name = f"runtime {language}"
            if language in missing:
                make = fail if language in _REQUIRED else warn
                looked = _LOOKED.search(missing[language])
                detail = f"not installed {looked.group(0)}" if looked else "not installed"
                checks.append(make(name, detail, INSTALL_HINTS[language]))
                continue
            runtime = found[language]
            version = versions[language].result()
            label = f"{runtime.name} {version}" if version else runtime.name
            checks.append(ok(name, f"{label} ({runtime.argv[0]})"))
    return checks
