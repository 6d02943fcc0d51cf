#!/usr/bin/env python3
"""Hostile workloads: output floods and orphaned processes, as a failing run would cause them.

Run by hand, never from the test suite:

    .venv/bin/python benchmarks/bench_hostile.py [--only floods|orphans|redteam]
        [--items 1,7] [--repeat 7] [--json out.json] [--command 'ctxmode']

Floods (each through a real ``ctxmode serve`` over stdio, or the CLI):

* ``stdout``: ``ctx_execute`` shell ``echo start; yes hello-fast-line`` with a 5 s timeout;
* ``stderr``: the same printing to stderr;
* ``batch``: ``ctx_batch_execute`` of one command printing ~100 MB of distinct lines;
* ``cli``: ``ctxmode execute --timeout-ms 3000 'echo start; yes x'``.

For each: seconds to the answer, peak RSS of the server (or CLI) and all its descendants
(sampled every 20 ms), bytes of the answer, and whether the answer shows the output's head.

Orphans:

* ``kill -9``: four runs in flight (each a shell with a background and a foreground
  ``sleep``), then SIGKILL of the server: processes of those runs still alive 3 s later,
  and again after a new server started for the same data root and project;
* ``setsid``: a run that escapes with ``setsid -f`` and ignores TERM/HUP, then a normal
  shutdown (stdin closed): how many of ``--repeat`` shutdowns leave it running.

Every process a case leaves behind is killed before the next case.

Redteam (``hostile_redteam.py``): the attacks of the third hostile round (issue 24,
items 1-12) replayed through real processes, per item the attacks tried and the attacks
that succeeded; ``--command`` points it at another install to count them before a fix,
``--items 1,7`` replays a few.
"""

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import psutil

ROOT = Path(__file__).resolve().parent.parent
VENV_CTXMODE = ROOT / ".venv" / "bin" / "ctxmode"
MB = 1024 * 1024
# The runner's own agent and ctxmode settings stay out of the cases' environment.
HOST_VARS = ("CLAUDE", "CTXMODE_", "CONTEXT_MODE_", "CODEX_", "GEMINI_", "CTX_FETCH")


class Peak:
    """Samples the summed RSS of a process and its descendants until stopped."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                root = psutil.Process(self.pid)
                procs = [root, *root.children(recursive=True)]
            except psutil.Error:
                procs = []
            total = 0
            for proc in procs:
                try:
                    total += proc.memory_info().rss
                except psutil.Error:  # noqa: PERF203 - a child may end meanwhile
                    continue
            self.peak = max(self.peak, total)
            self._stop.wait(0.02)

    def stop(self) -> int:
        self._stop.set()
        self._thread.join()
        return self.peak


class Server:
    """A ``ctxmode serve`` process spoken to in raw JSON-RPC lines."""

    def __init__(
        self, command: list[str], env: dict[str, str], cwd: Path, *, initialize: bool = True
    ) -> None:
        self.proc = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            cwd=cwd,
        )
        self._next = 0
        self._replies: dict[Any, dict[str, Any]] = {}
        self._cond = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()
        if not initialize:
            return
        self.request(
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "bench-hostile", "version": "0"},
            },
        )
        self.notify("notifications/initialized")

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if isinstance(message, dict) and "id" in message:
                with self._cond:
                    self._replies[message["id"]] = message
                    self._cond.notify_all()

    def _send(self, message: dict[str, Any]) -> None:
        self.send_line(json.dumps(message).encode())

    def send_line(self, line: bytes) -> None:
        """One raw line, as a client might send it (malformed or not)."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + b"\n")
        self.proc.stdin.flush()

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self._send(message)

    def next_id(self) -> int:
        self._next += 1
        return self._next

    def start(self, method: str, params: dict[str, Any]) -> int:
        request_id = self.next_id()
        self._send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        return request_id

    def replies(self) -> dict[Any, dict[str, Any]]:
        """The answers received and not yet waited for, by id."""
        with self._cond:
            return dict(self._replies)

    def wait(self, request_id: int, timeout: float = 600) -> dict[str, Any]:
        with self._cond:
            if not self._cond.wait_for(lambda: request_id in self._replies, timeout):
                raise TimeoutError(f"no answer to request {request_id}")
            return self._replies.pop(request_id)

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        return self.wait(self.start(method, params))

    def call(self, name: str, arguments: dict[str, Any]) -> int:
        return self.start("tools/call", {"name": name, "arguments": arguments})

    def close(self, within: float = 20) -> bool:
        """Close stdin and wait for the exit; True if it exited in time."""
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(within)
            return True
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            return False


def answer_text(reply: dict[str, Any]) -> str:
    result = reply.get("result") or {}
    parts = [c.get("text", "") for c in result.get("content", []) if isinstance(c, dict)]
    return "\n".join(parts) if parts else json.dumps(reply.get("error"))


def marked(marker: str) -> list[psutil.Process]:
    """Live processes whose command line holds `marker`."""
    found = []
    for proc in psutil.process_iter(["cmdline", "status"]):
        try:
            if proc.info["status"] == psutil.STATUS_ZOMBIE:
                continue
            if marker in " ".join(proc.info["cmdline"] or []):
                found.append(proc)
        except psutil.Error:  # noqa: PERF203
            continue
    return found


def kill_marked(marker: str) -> None:
    for proc in marked(marker):
        try:
            proc.kill()
        except psutil.Error:  # noqa: PERF203
            pass


class World:
    """A fresh data root and project for one case."""

    def __init__(self, command: list[str]) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="ctxmode-hostile-"))
        self.project = self.tmp / "project"
        self.project.mkdir()
        self.command = command
        self.data = self.tmp / "data"
        self.home = self.tmp / "home"
        self.home.mkdir()
        self.env = {
            **{k: v for k, v in os.environ.items() if not k.startswith(HOST_VARS)},
            "CTXMODE_DIR": str(self.data),
            "CTXMODE_PROJECT_DIR": str(self.project),
            "HOME": str(self.home),
        }

    def serve(self, *, initialize: bool = True) -> Server:
        return Server([*self.command, "serve"], self.env, self.project, initialize=initialize)

    def cleanup(self) -> None:
        shutil.rmtree(self.tmp, ignore_errors=True)


# --------------------------------------------------------------------------- floods


def flood_call(world: World, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    server = world.serve()
    peak = Peak(server.proc.pid)
    start = time.monotonic()
    reply = server.wait(server.call(tool, arguments))
    seconds = time.monotonic() - start
    rss = peak.stop()
    server.close()
    text = answer_text(reply)
    return {
        "seconds": round(seconds, 2),
        "peak_rss_mb": round(rss / MB, 1),
        "answer_bytes": len(text.encode()),
        "shows_head": "start" in text[:4000],
    }


def floods(world_factory: Any, command: list[str]) -> dict[str, Any]:
    results: dict[str, Any] = {}
    cases = {
        "stdout": (
            "ctx_execute",
            {
                "language": "shell",
                "code": "echo start; yes hello-fast-line",
                "timeout": 5000,
            },
        ),
        "stderr": (
            "ctx_execute",
            {
                "language": "shell",
                "code": "echo start; yes err >&2",
                "timeout": 5000,
            },
        ),
        "batch": (
            "ctx_batch_execute",
            {
                "commands": [{"label": "flood", "command": "echo start; seq 1 12000000"}],
                "queries": ["error"],
                "timeout": 5000,
            },
        ),
    }
    for name, (tool, arguments) in cases.items():
        world = world_factory()
        try:
            results[name] = flood_call(world, tool, arguments)
        finally:
            world.cleanup()
        print(f"  flood {name:<7} {results[name]}", flush=True)
    world = world_factory()
    try:
        start = time.monotonic()
        proc = subprocess.Popen(
            [*command, "execute", "--timeout-ms", "3000", "echo start; yes x"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=world.env,
            cwd=world.project,
        )
        peak = Peak(proc.pid)
        out, err = proc.communicate()
        results["cli"] = {
            "seconds": round(time.monotonic() - start, 2),
            "peak_rss_mb": round(peak.stop() / MB, 1),
            "answer_bytes": len(out) + len(err),
            "shows_head": b"start" in out[:4000],
            "exit_code": proc.returncode,
        }
    finally:
        world.cleanup()
    print(f"  flood cli     {results['cli']}", flush=True)
    return results


# --------------------------------------------------------------------------- orphans


def orphans_kill9(world_factory: Any) -> dict[str, Any]:
    world = world_factory()
    marker = "3017"  # sleep durations unique to this case
    try:
        server = world.serve()
        for n in range(4):
            server.call(
                "ctx_execute",
                {
                    "language": "shell",
                    "code": f"sleep {marker}{n} & sleep {marker}{n}",
                    "timeout": 600000,
                },
            )
        deadline = time.monotonic() + 20
        while len(marked(f"sleep {marker}")) < 8 and time.monotonic() < deadline:
            time.sleep(0.05)
        started = len(marked(f"sleep {marker}"))
        os.kill(server.proc.pid, signal.SIGKILL)
        server.proc.wait()
        time.sleep(3)
        after_kill = len(marked(f"sleep {marker}"))
        second = world.serve()
        time.sleep(3)
        after_restart = len(marked(f"sleep {marker}"))
        second.close()
    finally:
        kill_marked(f"sleep {marker}")
        world.cleanup()
    result = {
        "started": started,
        "alive_3s_after_kill": after_kill,
        "alive_after_new_server": after_restart,
    }
    print(f"  orphans kill -9 {result}", flush=True)
    return result


def orphans_setsid(world_factory: Any, repeat: int) -> dict[str, Any]:
    escaped = 0
    for n in range(repeat):
        world = world_factory()
        marker = f"sleep 4{n:03d}7"
        try:
            server = world.serve()
            reply = server.wait(
                server.call(
                    "ctx_execute",
                    {
                        "language": "shell",
                        "code": (
                            f"setsid -f sh -c 'trap \"\" TERM HUP; exec {marker}'; echo launched"
                        ),
                        "timeout": 30000,
                    },
                )
            )
            del reply
            server.close()
            time.sleep(2)
            if marked(marker):
                escaped += 1
        finally:
            kill_marked(marker)
            world.cleanup()
    result = {"shutdowns": repeat, "escaped": escaped}
    print(f"  orphans setsid {result}", flush=True)
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", choices=["floods", "orphans", "redteam"])
    parser.add_argument(
        "--items", help="redteam: the items of issue 24 to replay, e.g. 1,7 (default: all)"
    )
    parser.add_argument("--repeat", type=int, default=7, help="setsid shutdowns (default 7)")
    parser.add_argument(
        "--command",
        default=str(VENV_CTXMODE),
        help="the ctxmode command (default: this checkout's venv)",
    )
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    command = args.command.split()

    def world_factory() -> World:
        return World(command)

    figures: dict[str, Any] = {}
    if args.only in (None, "floods"):
        print("floods (seconds, peak RSS of the tree, answer bytes, head shown):")
        figures["floods"] = floods(world_factory, command)
    if args.only in (None, "orphans"):
        print("orphans:")
        figures["orphans"] = {
            "kill9": orphans_kill9(world_factory),
            "setsid": orphans_setsid(world_factory, args.repeat),
        }
    if args.only in (None, "redteam"):
        from hostile_redteam import redteam  # imports this module: not at the top

        print("redteam (issue 24: items 1-12, 13 the decided ones; attacks tried, succeeded):")
        items = {int(n) for n in args.items.split(",")} if args.items else None
        figures["redteam"] = redteam(command, items)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
