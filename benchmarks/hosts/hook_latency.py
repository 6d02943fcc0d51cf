#!/usr/bin/env python3
"""Hook latency per platform: every hook fixture of the platform (``tests/hooks/fixtures``)
run as the host runs it, ``ctxmode hook <platform> <event>`` with the fixture's payload on
stdin, `--runs` times each, in a private data root; p50 and p95 of the wall time per
platform and per event, and the p50 of the CPU time (user + system) the hook process used,
which a loaded machine does not inflate the way it does wall time. The same for a bare
``python -c pass`` of the same interpreter is shown as the floor.

    .venv/bin/python benchmarks/hosts/hook_latency.py [--ctxmode PATH] [--runs 20] PLATFORM...

No server runs, so redirects are not taken (the pre-tool path still classifies the call);
post-tool and pre-compact hooks write to the session database as they would in a session.
"""

from __future__ import annotations

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

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "hooks" / "fixtures"
HOST_PREFIXES = ("CLAUDE", "CONTEXT_MODE_", "CTXMODE_", "GEMINI_", "CODEX_", "COPILOT_", "KIMI")


def fixtures(platform: str) -> list[dict]:
    return [
        json.loads(p.read_text(encoding="utf-8"))
        for p in sorted(FIXTURES.glob(f"{platform}.*.json"))
    ]


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def timed(argv: list[str], data: bytes, env: dict[str, str], cwd: str) -> tuple[float, float]:
    """(wall ms, CPU ms) of one run of `argv`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(argv, input=data, env=env, capture_output=True, cwd=cwd, timeout=30)
    wall = (time.perf_counter() - t0) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000
    return wall, cpu


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    ap.add_argument("platforms", nargs="+")
    ap.add_argument("--ctxmode", default=str(ROOT / ".venv" / "bin" / "ctxmode"))
    ap.add_argument("--runs", type=int, default=20)
    args = ap.parse_args()
    base = {k: v for k, v in os.environ.items() if not k.startswith(HOST_PREFIXES)}
    python = os.path.join(os.path.dirname(args.ctxmode), "python")
    with tempfile.TemporaryDirectory(prefix="ctxmode-hook-latency.") as tmp:
        if os.path.exists(python):
            floor = [timed([python, "-c", "pass"], b"", base, tmp) for _ in range(args.runs)]
            print(
                f"python -c pass: p50 {statistics.median(w for w, _ in floor):.1f} ms wall, "
                f"{statistics.median(c for _, c in floor):.1f} ms CPU"
            )
        for platform in args.platforms:
            found = fixtures(platform)
            if not found:
                print(f"{platform}: no fixtures", file=sys.stderr)
                continue
            env = {**base, "CTXMODE_DIR": os.path.join(tmp, platform), "TMPDIR": tmp}
            per_event: dict[str, list[float]] = {}
            cpu: list[float] = []
            for fx in found:
                data = json.dumps(fx["stdin"]).encode()
                fenv = {**env, **{str(k): str(v) for k, v in (fx.get("env") or {}).items()}}
                event = fx["command"][3]
                for _ in range(args.runs):
                    wall, used = timed([args.ctxmode, "hook", platform, event], data, fenv, tmp)
                    per_event.setdefault(event, []).append(wall)
                    cpu.append(used)
            every = [v for vs in per_event.values() for v in vs]
            print(
                f"{platform}: p50 {statistics.median(every):.1f} ms wall "
                f"(p95 {pct(every, 0.95):.1f}), {statistics.median(cpu):.1f} ms CPU "
                f"({len(found)} fixtures x {args.runs} runs)"
            )
            for event, vs in sorted(per_event.items()):
                print(f"  {event}: p50 {statistics.median(vs):.1f} ms, p95 {pct(vs, 0.95):.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
