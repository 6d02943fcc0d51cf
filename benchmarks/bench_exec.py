#!/usr/bin/env python3
"""Executor benchmark: overhead of trivial runs, and a run printing 5 MiB.

Run by hand, never from the test suite:

    .venv/bin/python benchmarks/bench_exec.py [--runs 30] [--json out.json]

Measured through the same core calls ``ctx_execute`` makes (``executor.execute`` then
``shaping.shape``), in this process, as a long-lived server would:
* trivial shell, python and javascript snippets (the harness's ``hello from <lang>``),
  30 runs after 2 warm-ups: p50 / p95 milliseconds;
* the harness's large-output snippet printing 5 MiB of log lines: time, bytes returned to
  the agent (the pointer), and peak RSS of this process (VmHWM), in a fresh child process;
* for reference, the same trivial runs through the whole CLI (``ctxmode execute``) as a
  new process each time, and the bare interpreter start-up of each runtime.

Python runs on the interpreter ctxmode runs under (a project's .venv when it has one),
not whatever ``python3`` is first on PATH: compare with upstream's python figure only
knowing which interpreter each side started.
"""

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ctxmode.executor import ExecRequest, execute  # noqa: E402
from ctxmode.executor.shaping import shape  # noqa: E402
from ctxmode.store import ContentStore  # noqa: E402

SNIPPETS = {
    "shell": 'echo "hello from shell"',
    "python": 'print("hello from python")',
    "javascript": 'console.log("hello from javascript")',
}


def large_output_code(target_bytes: int) -> str:
    n = target_bytes // 100
    return (
        "import sys\n"
        f"for i in range({n}):\n"
        "    line = f'{i:07d} INFO worker-{i % 8} request id={i * 7919 % 100000:05d} "
        "status={500 if i % 97 == 0 else 200} path=/api/v1/items/{i % 1000}'\n"
        "    sys.stdout.write(line.ljust(99) + '\\n')\n"
    )


def summary(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "p50_ms": round(statistics.median(ordered), 2),
        "p95_ms": round(ordered[int(0.95 * (len(ordered) - 1))], 2),
    }


def one_call(project: Path, db: Path, language: str, code: str) -> tuple[float, int]:
    started = time.perf_counter()
    result = execute(ExecRequest(language, code, project))
    shaped = shape(result, label=f"execute:{language}", open_store=lambda: ContentStore(db))
    return (time.perf_counter() - started) * 1000, len(shaped.text.encode("utf-8"))


def vm_hwm_mb() -> float | None:
    try:
        for line in Path("/proc/self/status").read_text(encoding="utf-8").splitlines():
            if line.startswith("VmHWM:"):
                return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        pass
    return None


def large_child(project: Path, db: Path, mib: float) -> dict[str, object]:
    ms, returned = one_call(project, db, "python", large_output_code(int(mib * 2**20)))
    return {"ms": round(ms, 1), "bytes_returned": returned, "peak_rss_mb": vm_hwm_mb()}


def main() -> int:
    if len(sys.argv) == 5 and sys.argv[1] == "--child-large":
        print(json.dumps(large_child(Path(sys.argv[2]), Path(sys.argv[3]), float(sys.argv[4]))))
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--large-mib", type=float, default=5.0)
    ap.add_argument("--large-runs", type=int, default=3)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    results: dict[str, object] = {}
    with tempfile.TemporaryDirectory(prefix="ctxmode-bench-exec-") as tmp:
        project = Path(tmp) / "project"
        project.mkdir()
        db = Path(tmp) / "kb.db"
        for language, code in SNIPPETS.items():
            if language == "javascript" and shutil.which("node") is None:
                continue
            for _ in range(args.warmup):
                one_call(project, db, language, code)
            samples = [one_call(project, db, language, code)[0] for _ in range(args.runs)]
            results[f"execute_{language}"] = summary(samples)
        cli = [sys.executable, "-m", "ctxmode", "execute", "--project", str(project)]
        for language, code in SNIPPETS.items():
            if language == "javascript" and shutil.which("node") is None:
                continue
            samples = []
            for _ in range(max(5, args.runs // 3)):
                started = time.perf_counter()
                subprocess.run([*cli, "--lang", language, code], capture_output=True, check=True)
                samples.append((time.perf_counter() - started) * 1000)
            results[f"cli_execute_{language}"] = summary(samples)
        for name, argv in {
            "bare_bash": ["bash", "-c", "true"],
            "bare_python": [sys.executable, "-c", "pass"],
            "bare_node": ["node", "-e", "0"],
        }.items():
            if shutil.which(argv[0]) is None:
                continue
            samples = []
            for _ in range(args.runs):
                started = time.perf_counter()
                subprocess.run(argv, capture_output=True, check=True)
                samples.append((time.perf_counter() - started) * 1000)
            results[name] = summary(samples)
        large = []
        for n in range(args.large_runs):
            run_db = Path(tmp) / f"large-{n}.db"
            proc = subprocess.run(
                [
                    sys.executable,
                    __file__,
                    "--child-large",
                    str(project),
                    str(run_db),
                    str(args.large_mib),
                ],
                capture_output=True,
                text=True,
                encoding="utf-8",
                check=True,
            )
            large.append(json.loads(proc.stdout))
        results[f"execute_{args.large_mib:g}MiB_output"] = {
            "p50_ms": statistics.median(r["ms"] for r in large),
            "bytes_returned": large[0]["bytes_returned"],
            "peak_rss_mb": max(r["peak_rss_mb"] or 0 for r in large),
        }
    for key, value in results.items():
        print(f"{key}: {json.dumps(value)}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
