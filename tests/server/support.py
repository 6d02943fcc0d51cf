"""Helpers shared by the server tests: one tool call, deny rules, bounded polls, and a
raw JSON-RPC peer of a real `ctxmode serve` process."""

import json
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import psutil

# Generous: calls run real subprocesses on a possibly busy machine. Not a performance bound.
CALL_S = 60.0
# How long a process gets to go away after it was told to (bounded poll, not a sleep).
EXIT_WITHIN_S = 20.0


async def call(client: Any, name: str, args: dict[str, Any] | None = None) -> tuple[str, bool]:
    """Call one tool; return (the single text content, is_error)."""
    with anyio.fail_after(CALL_S):
        result = await client.call_tool(name, args or {})
    assert len(result.content) == 1
    assert result.content[0].type == "text"
    return result.content[0].text, bool(result.is_error)


def deny(project: Path, *rules: str) -> None:
    """Write `rules` as permissions.deny in <project>/.claude/settings.json."""
    folder = project / ".claude"
    folder.mkdir(exist_ok=True)
    body = {"permissions": {"deny": list(rules)}}
    (folder / "settings.json").write_text(json.dumps(body), encoding="utf-8")


def wait_until(predicate: Callable[[], bool], within: float = EXIT_WITHIN_S) -> bool:
    """Poll `predicate` until it holds or `within` seconds pass; return its last value."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return predicate()


def alive(pid: int) -> bool:
    """True while `pid` runs; a zombie (dead, not yet reaped by its new parent) is dead."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def survivors(pids: list[int], within: float = EXIT_WITHIN_S) -> list[int]:
    """The pids still alive once they had `within` seconds to die."""
    wait_until(lambda: not any(alive(pid) for pid in pids), within)
    return [pid for pid in pids if alive(pid)]


def kill_all(pids: list[int]) -> None:
    """Teardown: make sure nothing a test started outlives it."""
    for pid in pids:
        try:
            psutil.Process(pid).kill()
        except psutil.Error:  # noqa: PERF203 - each may already be gone
            pass


SERVE = [sys.executable, "-m", "ctxmode", "serve", "--project"]
INIT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "ctxmode-tests", "version": "0"},
}


def server_env(data_root: Path, home: Path) -> dict[str, str]:
    """What an MCP client gives a server: a minimal environment."""
    return {"PATH": os.environ["PATH"], "CTXMODE_DIR": str(data_root), "HOME": str(home)}


class RawServer:
    """A JSON-RPC peer over a child's pipes; stdout lines are collected by a thread."""

    def __init__(self, proc: "subprocess.Popen[bytes]", server_pid: int | None = None) -> None:
        self.proc = proc
        self.pid = server_pid if server_pid is not None else proc.pid
        self.lines: list[bytes] = []
        self._inbox: queue.Queue[bytes | None] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line)
            self._inbox.put(line)
        self._inbox.put(None)

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode("utf-8") + b"\n")
        self.proc.stdin.flush()

    def request(self, id_: Any, method: str, params: dict[str, Any] | None = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": id_, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)

    def response(self, id_: Any, within: float = CALL_S) -> dict[str, Any]:
        """The next message answering `id_` (other messages are skipped, kept in lines)."""
        while True:
            try:
                line = self._inbox.get(timeout=within)
            except queue.Empty:
                raise AssertionError(f"no answer to request {id_!r} within {within}s") from None
            if line is None:
                raise AssertionError(f"stdout closed before request {id_!r} was answered")
            message = json.loads(line)
            if message.get("id") == id_ and ("result" in message or "error" in message):
                return message

    def initialize(self) -> None:
        self.request(0, "initialize", INIT)
        assert "result" in self.response(0)
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def call_tool(self, id_: Any, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        self.request(id_, "tools/call", {"name": name, "arguments": arguments})
        return self.response(id_)["result"]

    def close_stdin(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()

    def stdout_closed(self, within: float = EXIT_WITHIN_S) -> None:
        self._reader.join(within)
        assert not self._reader.is_alive(), "server stdout still open"

    def shutdown(self) -> None:
        """Teardown: close our pipe ends, kill what still runs, reap the child."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        if not self.proc.stdin.closed:
            self.proc.stdin.close()
        kill_all([self.pid, self.proc.pid])
        self.proc.wait()
        self._reader.join(EXIT_WITHIN_S)
        self.proc.stdout.close()


def start_process(
    tmp_path: Path, argv: list[str], data_root: Path, **env: str
) -> "subprocess.Popen[bytes]":
    """`argv` with piped stdin/stdout, stderr to tmp_path/server.stderr, an MCP client's
    minimal environment (plus `env`) and tmp_path as working directory."""
    with (tmp_path / "server.stderr").open("wb") as stderr:
        return subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            env={**server_env(data_root, tmp_path / "home"), **env},
            cwd=tmp_path,
        )


def spawn_server(tmp_path: Path, project: Path, data_root: Path, started: list[Any]) -> RawServer:
    server = RawServer(start_process(tmp_path, [*SERVE, str(project)], data_root))
    started.append(server)
    return server


def marker(data_root: Path, pid: int) -> Path:
    return data_root / "servers" / f"{pid}.json"
