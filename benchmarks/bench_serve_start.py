#!/usr/bin/env python3
"""``ctxmode serve`` start-up: how soon a freshly spawned server answers.

Run by hand, never from the test suite:

    .venv/bin/python benchmarks/bench_serve_start.py [--runs 20] [--json out.json]
    .venv/bin/python benchmarks/bench_serve_start.py --server "$CTXMODE_BENCH_DIR/peer.sh server"

Each run spawns the server with pipes in a fresh data directory and project, as a host
does, and sends what the host sends first, all at once:

* ``handshake`` (Gemini CLI, Codex, the TypeScript SDK 1.x): ``initialize``,
  ``notifications/initialized``, ``tools/list``, then a ``ctx_stats`` call;
* ``discover`` (Claude Code 2.1): ``server/discover`` with the 2026-07-28 envelope,
  ``tools/list`` with the envelope, then a ``ctx_stats`` call.

It prints p50 / p95 milliseconds from spawn to the first answer (``initialize`` or
``server/discover``: what hosts wait for with a deadline), to the tools list (when the
host can offer the tools to the model), and to the first tool call's answer (when the
server serves tool calls). Compare servers only on the same, otherwise idle machine;
``compare.sh --only start`` of the harness gives the side-by-side ratio.
"""

import argparse
import json
import os
import select
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
VENV_CTXMODE = ROOT / ".venv" / "bin" / "ctxmode"
ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "bench-serve-start", "version": "0"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


def opening(shape: str) -> list[dict[str, Any]]:
    """The messages a host of this `shape` sends first: (first, tools list, tool call)."""
    if shape == "discover":
        meta = {"_meta": ENVELOPE}
        return [
            {"jsonrpc": "2.0", "id": "probe", "method": "server/discover", "params": meta},
            {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": meta},
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "ctx_stats", "arguments": {}, **meta},
            },
        ]
    init = {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "bench-serve-start", "version": "0"},
    }
    return [
        {"jsonrpc": "2.0", "id": "probe", "method": "initialize", "params": init},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "ctx_stats"}},
    ]


def one_start(argv: list[str], shape: str, timeout: float) -> dict[str, float]:
    """Spawn, send the opening, and time the three answers (ms since spawn)."""
    with tempfile.TemporaryDirectory(prefix="ctxmode-start-") as scratch:
        project = Path(scratch) / "project"
        project.mkdir()
        env = {
            "PATH": os.environ["PATH"],
            "HOME": scratch,
            "CTXMODE_DIR": str(Path(scratch) / "data"),
        }
        payload = b"".join(json.dumps(m).encode() + b"\n" for m in opening(shape))
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=project,
            env=env,
        )
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(payload)
        proc.stdin.flush()
        wanted = {"probe": "first_answer_ms", 1: "tools_list_ms", 2: "first_call_ms"}
        seen: dict[str, float] = {}
        buffered = b""
        fd = proc.stdout.fileno()
        deadline = t0 + timeout
        try:
            while len(seen) < len(wanted) and time.perf_counter() < deadline:
                ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.perf_counter()))
                if not ready:
                    break
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    break
                now = (time.perf_counter() - t0) * 1000
                buffered += chunk
                *lines, buffered = buffered.split(b"\n")
                for line in lines:
                    message = json.loads(line)
                    key = wanted.get(message.get("id"))
                    if key is not None and key not in seen:
                        seen[key] = now
        finally:
            proc.stdin.close()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            proc.stdout.close()
        if len(seen) < len(wanted):
            raise SystemExit(f"no answer to {sorted(set(wanted.values()) - set(seen))}")
        return seen


def percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {"p50": round(statistics.median(ordered), 1), "p95": round(p95, 1)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    default = (
        f"{VENV_CTXMODE} serve" if VENV_CTXMODE.exists() else f"{sys.executable} -m ctxmode serve"
    )
    parser.add_argument("--server", default=default, help="the command that starts the server")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds per start")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    argv = shlex.split(args.server)
    figures: dict[str, Any] = {"server": args.server, "runs": args.runs}
    print(f"server: {args.server}; {args.runs} starts per opening")
    print(f"  {'opening':<10} {'answer':<14} {'p50 ms':>8} {'p95 ms':>8}")
    for shape in ("handshake", "discover"):
        one_start(argv, shape, args.timeout)  # warm-up: file caches, bytecode
        runs = [one_start(argv, shape, args.timeout) for _ in range(args.runs)]
        figures[shape] = {}
        for key in ("first_answer_ms", "tools_list_ms", "first_call_ms"):
            stats = percentiles([run[key] for run in runs])
            figures[shape][key] = stats
            label = key.removesuffix("_ms")
            print(f"  {shape:<10} {label:<14} {stats['p50']:>8} {stats['p95']:>8}")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
