#!/usr/bin/env python3
"""CLI start-up: whole-process time of the commands people and scripts run, beside bare Python.

Run by hand, never from the test suite:

    .venv/bin/python benchmarks/bench_cli_start.py [--runs 20] [--ctxmode PATH] [--json out.json]

Each command runs ``--runs`` times as a whole process (spawn to exit, output to pipes), in a
fresh data directory with a small indexed project, after one warm-up run each; the runs of
the different commands are interleaved, so a burst of load on a shared machine spreads over
all of them. Printed: p50 and p95 milliseconds, user+system CPU milliseconds (p50), and the
p50 as a multiple of a bare ``python -c pass`` measured in the same rounds. Targets (issue
"The CLI as people and scripts use it"): ``--version`` and ``--help`` at most 7x bare,
``search`` and ``execute --lang shell`` at most 10x.
"""

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
VENV_CTXMODE = ROOT / ".venv" / "bin" / "ctxmode"

TARGETS = {"--version": 7.0, "--help": 7.0, "search": 10.0, "execute shell": 10.0}

_DOC = """# Connection pool

The pool keeps at most `max_size` connections open; a request waits up to `timeout`
seconds for a free one, then raises PoolTimeout.

## Retries

Failed connections are retried with exponential backoff.
"""


def _commands(ctxmode: list[str]) -> dict[str, list[str]]:
    return {
        "python -c pass": [sys.executable, "-c", "pass"],
        "--version": [*ctxmode, "--version"],
        "--help": [*ctxmode, "--help"],
        "search": [*ctxmode, "search", "pool timeout"],
        "execute shell": [*ctxmode, "execute", "--lang", "shell", "echo ok"],
        "execute python": [*ctxmode, "execute", "--lang", "python", "print(1)"],
    }


def _one(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """Wall and CPU (user + system of the child) milliseconds of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, stdin=subprocess.DEVNULL)
    wall = (time.perf_counter() - t0) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(
            f"{' '.join(argv)} exited {proc.returncode}: {proc.stderr.decode(errors='replace')}"
        )
    cpu = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000
    return wall, cpu


def _p95(samples: list[float]) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    default = str(VENV_CTXMODE) if VENV_CTXMODE.exists() else f"{sys.executable} -m ctxmode"
    parser.add_argument("--ctxmode", default=default, help="the command that runs ctxmode")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    ctxmode = args.ctxmode.split()
    with tempfile.TemporaryDirectory(prefix="ctxmode-cli-start-") as scratch:
        project = Path(scratch) / "project"
        project.mkdir()
        (project / "pool.md").write_text(_DOC, encoding="utf-8")
        env = {
            "PATH": os.environ["PATH"],
            "HOME": scratch,
            "CTXMODE_DIR": str(Path(scratch) / "data"),
            "CTXMODE_PROJECT_DIR": str(project),
        }
        _one([*ctxmode, "index", "pool.md"], env, project)
        commands = _commands(ctxmode)
        for argv in commands.values():
            _one(argv, env, project)  # warm-up: file caches, bytecode
        samples: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
        for _ in range(args.runs):
            for name, argv in commands.items():
                samples[name].append(_one(argv, env, project))
    figures: dict[str, Any] = {"ctxmode": args.ctxmode, "runs": args.runs, "commands": {}}
    bare = statistics.median(w for w, _ in samples["python -c pass"])
    print(f"ctxmode: {args.ctxmode}; {args.runs} runs each, interleaved")
    print(
        f"  {'command':<16} {'p50 ms':>8} {'p95 ms':>8} {'cpu ms':>8} {'x bare':>8} {'target':>8}"
    )
    for name, runs in samples.items():
        walls = [w for w, _ in runs]
        p50 = statistics.median(walls)
        cpu = statistics.median(c for _, c in runs)
        multiple = p50 / bare
        target = TARGETS.get(name)
        figures["commands"][name] = {
            "p50_ms": round(p50, 1),
            "p95_ms": round(_p95(walls), 1),
            "cpu_ms": round(cpu, 1),
            "x_bare": round(multiple, 1),
            "target_x": target,
        }
        shown = f"<= {target:g}x" if target else ""
        print(
            f"  {name:<16} {p50:>8.1f} {_p95(walls):>8.1f} {cpu:>8.1f} {multiple:>7.1f}x {shown:>8}"
        )
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
