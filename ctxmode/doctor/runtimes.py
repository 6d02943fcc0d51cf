"""One line per language the executor runs: which interpreter it would use, and its version.

Detection is the executor's own (`ctxmode.executor.runtimes.find_runtime`), so the report
says exactly what ``ctx_execute`` would run. Version probes run in parallel with a short
deadline; runtimes whose ``--version`` boots a VM or a compiler service (Elixir, dotnet-script,
ts-node) are not spawned at all, only located.

Shell and Python are required (FAIL when missing). Every other language is optional: absent
is INFO, with how to install it. A runtime that is there but fails its version probe (rustup
with no default toolchain, a shim whose target is gone) is a WARN with the fix it names, or
what to run to see why.
"""

import os
import re
import signal
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import NamedTuple

from ctxmode.doctor.model import Check, fail, info, ok, warn

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
# What a tool's own error says to run: rustup's "help: run 'rustup default stable' to ..."
_SUGGESTED = re.compile(r"\brun [`'\"]([^`'\"]+)[`'\"]")


class Probe(NamedTuple):
    """What a version probe found: the version, or why the runtime does not work."""

    version: str | None = None
    broken: str | None = None  # its first error line, when it exited non-zero
    fix: str | None = None  # the command its error suggests, when it names one


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


def probe(argv: list[str], timeout: float = PROBE_TIMEOUT_S) -> Probe:
    """Run `argv` (a version command): its version, or what says it is broken. A probe
    that cannot start, or does not answer in time, says nothing either way."""
    try:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    except OSError:
        return Probe()
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill(proc)
        return Probe()
    text = out.decode("utf-8", "replace") + "\n" + err.decode("utf-8", "replace")
    if proc.returncode != 0:
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        first = lines[0] if lines else f"exit status {proc.returncode}"
        suggested = _SUGGESTED.search(text)
        return Probe(broken=first[:200], fix=suggested.group(1) if suggested else None)
    match = _VERSION.search(text)
    return Probe(match.group(0) if match else None)


def _version_of(language: str, argv: tuple[str, ...], name: str) -> Probe:
    exe = argv[0]
    if language == "python" and exe == sys.executable:
        import platform

        return Probe(platform.python_version())
    if language == "python":
        return probe([exe, "--version"])
    tool = name.split()[0]
    args = _VERSION_ARGS.get(tool)
    if not args:
        return Probe()
    return probe([exe, *args])


def runtime_checks(project_dir: Path | None) -> list[Check]:
    """Every executor language, in the executor's order: a required one missing is FAIL,
    an optional one missing INFO, one that is there but broken WARN."""
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
                make = fail if language in _REQUIRED else info
                looked = _LOOKED.search(missing[language])
                detail = f"not installed {looked.group(0)}" if looked else "not installed"
                checks.append(make(name, detail, INSTALL_HINTS[language]))
                continue
            runtime = found[language]
            found_probe = versions[language].result()
            exe = runtime.argv[0]
            if found_probe.broken:
                command = " ".join(
                    (Path(exe).name, *_VERSION_ARGS.get(runtime.name.split()[0], ()))
                )
                fix = found_probe.fix or f"run `{command}` to see why, then repair or reinstall it"
                detail = f"{runtime.name} ({exe}) is there but does not work: {found_probe.broken}"
                make_broken = fail if language in _REQUIRED else warn
                checks.append(make_broken(name, detail, fix))
                continue
            version = found_probe.version
            label = f"{runtime.name} {version}" if version else runtime.name
            checks.append(ok(name, f"{label} ({exe})"))
    return checks
