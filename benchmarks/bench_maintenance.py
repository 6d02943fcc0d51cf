#!/usr/bin/env python3
"""Maintenance benchmark: are the stats honest, and are the maintenance commands fast?

Run by hand, never from the test suite:

    .venv/bin/python benchmarks/bench_maintenance.py [--runs 20] [--peer PATH/TO/peer.sh]

1. Honesty. One stdio MCP server per side runs the same workload through a real client:
   five ``ctx_execute`` calls printing 200 KB each (indexed, a short pointer returned) and
   five printing one short line. The ground truth is what the runs printed and what the
   agent received; each side's ``ctx_stats`` claim is read back and compared with it.
2. Speed: ``ctxmode statusline`` as a whole process over a data root of 50 projects (the
   peer's ``statusline`` too, given ``--peer``), ``ctx_stats`` through MCP, and the
   ``stats``, ``stats --all-projects``, ``doctor``, ``gc --dry-run`` and
   ``purge --project --dry-run`` commands as processes: p50 / p95 in ms.

Every process gets a throw-away HOME and data root.
"""

import argparse
import asyncio
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CTXMODE = [sys.executable, "-m", "ctxmode"]
BIG = 200_000
SMALL_LINE = "ok: 42 files checked"


def _ms(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {"p50_ms": round(statistics.median(ordered), 1), "p95_ms": round(p95, 1)}


def _timed(cmd: list[str], env: dict[str, str], cwd: Path, runs: int, stdin: str = "") -> dict:
    samples = []
    out = ""
    for _ in range(runs):
        started = time.perf_counter()
        proc = subprocess.run(
            cmd, env=env, cwd=cwd, input=stdin, capture_output=True, text=True, check=False
        )
        samples.append((time.perf_counter() - started) * 1000)
        out = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else proc.stderr[-200:]
    return {**_ms(samples), "last_line": out}


def _env(home: Path, data: Path | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CTXMODE_", "CLAUDE_"))}
    # the peer's install is found through the harness's home, not the throw-away HOME
    env["CTXMODE_BENCH_HOME"] = os.environ.get(
        "CTXMODE_BENCH_HOME", str(Path.home() / ".cache" / "ctxmode-bench")
    )
    env["HOME"] = str(home)
    if data is not None:
        env["CTXMODE_DIR"] = str(data)
    return env


# ---------------------------------------------------------------------- honesty


def _workload() -> list[tuple[str, dict[str, Any], int]]:
    big = f"import sys\nsys.stdout.write(('x' * 99 + '\\n') * {BIG // 100})"
    calls = [("ctx_execute", {"language": "python", "code": big}, BIG) for _ in range(5)]
    small = f"print({SMALL_LINE!r})"
    calls += [
        ("ctx_execute", {"language": "python", "code": small}, len(SMALL_LINE) + 1)
        for _ in range(5)
    ]
    return calls


async def _honesty(server: list[str], env: dict[str, str], cwd: Path) -> dict[str, Any]:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=server[0], args=server[1:], env=env, cwd=str(cwd))
    printed = returned = 0
    stats_ms: list[float] = []
    with open(os.devnull, "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                for tool, args, nbytes in _workload():
                    result = await session.call_tool(tool, args)
                    text = "".join(c.text for c in result.content if c.type == "text")
                    printed += nbytes
                    returned += len(text.encode())
                report = ""
                for _ in range(5):
                    started = time.perf_counter()
                    result = await session.call_tool("ctx_stats", {})
                    stats_ms.append((time.perf_counter() - started) * 1000)
                    report = "".join(c.text for c in result.content if c.type == "text")
    truth = 100 * (1 - returned / printed)
    claims = [float(m) for m in re.findall(r"(\d+(?:\.\d+)?)\s*%", report)]
    return {
        "printed_bytes": printed,
        "returned_bytes": returned,
        "true_kept_out_pct": round(truth, 1),
        "claimed_pcts": claims[:4],
        "ctx_stats": _ms(stats_ms),
        "report_head": report.strip().splitlines()[:12],
    }


# ---------------------------------------------------------------------- speed


def _populate(data: Path, projects: int) -> Path:
    """`projects` projects with counters and events, through the real APIs."""
    sys.path.insert(0, str(ROOT))
    os.environ["CTXMODE_DIR"] = str(data)
    os.environ["CTXMODE_SESSION_SUFFIX"] = ""
    from ctxmode.session.db import SessionDB
    from ctxmode.session.events import Event
    from ctxmode.session.where import session_db_path
    from ctxmode.stats.model import Usage
    from ctxmode.stats.record import Recorder

    first = None
    for i in range(projects):
        project = data.parent / "projects" / f"p{i:03d}"
        project.mkdir(parents=True, exist_ok=True)
        first = first or project
        recorder = Recorder(session_db_path(project, data), project)
        for tool in ("ctx_execute", "ctx_batch_execute", "ctx_search"):
            recorder.record(tool, Usage(3, 4000, 90_000, 90_000), f"s{i}")
        recorder.close()
        with SessionDB(session_db_path(project, data)) as sdb:
            sdb.ensure_session(f"s{i}", str(project), "claude-code")
            sdb.add_events(
                f"s{i}",
                [Event("file_read", f"src/m{j}.py") for j in range(100)],
                source_hook="PostToolUse",
            )
    del os.environ["CTXMODE_SESSION_SUFFIX"]
    assert first is not None
    return first


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--projects", type=int, default=50)
    parser.add_argument("--peer", help="path to the harness's peer.sh (upstream context-mode)")
    parser.add_argument("--json", dest="json_out")
    args = parser.parse_args()
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="ctxmode-bench-") as tmp:
        base = Path(tmp)
        home = base / "home"
        home.mkdir()
        project = base / "work"
        project.mkdir()
        subprocess.run(["git", "init", "-q"], cwd=project, check=True)
        data = base / "data"
        results["honesty_ctxmode"] = asyncio.run(
            _honesty([*CTXMODE, "serve"], _env(home, data), project)
        )
        if args.peer:
            peer_home = base / "peer-home"
            peer_home.mkdir()
            results["honesty_upstream"] = asyncio.run(
                _honesty([args.peer, "server"], _env(peer_home), project)
            )
        shutil.rmtree(data)
        first = _populate(data, args.projects)
        env = _env(home, data)
        payload = json.dumps({"session_id": "s0", "cwd": str(first)})
        speed = {
            "statusline": _timed([*CTXMODE, "statusline"], env, first, args.runs, payload),
            "stats": _timed([*CTXMODE, "stats"], env, first, max(5, args.runs // 2)),
            "stats --all-projects": _timed(
                [*CTXMODE, "stats", "--all-projects"], env, first, max(5, args.runs // 2)
            ),
            "doctor": _timed([*CTXMODE, "doctor"], env, first, 5),
            "gc --dry-run": _timed([*CTXMODE, "gc", "--dry-run"], env, first, 5),
            "purge --project --dry-run": _timed(
                [*CTXMODE, "purge", "--project", "--dry-run"], env, first, 5
            ),
            "bare python": _timed([sys.executable, "-c", "0"], env, first, args.runs),
        }
        if args.peer:
            speed["upstream statusline"] = _timed(
                [args.peer, "cli", "statusline"], _env(base / "peer-home"), first, args.runs
            )
        results["speed"] = speed
    for name, value in results.items():
        print(f"== {name}")
        print(json.dumps(value, indent=2, ensure_ascii=False))
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(results, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
