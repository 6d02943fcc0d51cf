"""The real thing: `ctxmode serve` as a subprocess speaking newline-delimited JSON-RPC on
stdio, and how it ends (stdin EOF, SIGTERM, the client dying) without leaving a process
behind. The process boundary is what is under test, so these spawn real servers."""

import json
import os
import queue
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from .support import CALL_S, EXIT_WITHIN_S, alive, kill_all, survivors, wait_until

SERVE = [sys.executable, "-m", "ctxmode", "serve", "--project"]
INIT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "ctxmode-tests", "version": "0"},
}

# The sandboxed code of the background tests: start a grandchild that records its pid and
# sleeps 300 s, record our own pid, say so, then sleep past the timeout (so the run is
# backgrounded, still running, when the server is told to stop).
GRANDCHILD = (
    "import os, sys, time\nopen(sys.argv[1], 'w').write(f'{os.getpid()}\\n')\ntime.sleep(300)"
)
BACKGROUND_CODE = """\
import os, subprocess, sys, time
child_file, grandchild_file = {child_file!r}, {grandchild_file!r}
subprocess.Popen([sys.executable, "-c", {grandchild!r}, grandchild_file])
for _ in range(3000):
    if os.path.exists(grandchild_file):
        break
    time.sleep(0.01)
open(child_file, "w").write(f"{{os.getpid()}}\\n")
print("grandchild up", flush=True)
time.sleep(300)
"""


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


@pytest.fixture
def data_root(_isolated_env: Path) -> Path:
    return _isolated_env


@pytest.fixture
def started() -> Iterator[list[Any]]:
    """Servers and pids a test starts; whatever is still alive at teardown is killed."""
    things: list[Any] = []
    yield things
    for thing in things:
        if isinstance(thing, RawServer):
            thing.shutdown()
        else:
            kill_all([thing])


def spawn_server(tmp_path: Path, project: Path, data_root: Path, started: list[Any]) -> RawServer:
    stderr = (tmp_path / "server.stderr").open("wb")
    proc = subprocess.Popen(
        [*SERVE, str(project)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=stderr,
        env=server_env(data_root, tmp_path / "home"),
        cwd=tmp_path,
    )
    stderr.close()
    server = RawServer(proc)
    started.append(server)
    return server


def marker(data_root: Path, pid: int) -> Path:
    return data_root / "servers" / f"{pid}.json"


def start_background_run(server: RawServer, tmp_path: Path, started: list[Any]) -> list[int]:
    """Run the grandchild-forking code in background mode; return [child, grandchild]."""
    child_file, grandchild_file = tmp_path / "child.pid", tmp_path / "grandchild.pid"
    code = BACKGROUND_CODE.format(
        child_file=str(child_file), grandchild_file=str(grandchild_file), grandchild=GRANDCHILD
    )
    result = server.call_tool(
        7,
        "ctx_execute",
        {"language": "python", "code": code, "timeout": 3000, "background": True},
    )
    text = result["content"][0]["text"]
    assert result["isError"] is False, text
    assert text.startswith("grandchild up\n")
    assert "_(process backgrounded after 3000ms — still running)_" in text
    pids = [int(child_file.read_text()), int(grandchild_file.read_text())]
    started.extend(pids)
    assert [pid for pid in pids if alive(pid)] == pids
    return pids


# ------------------------------------------------------------------------ protocol


def test_sdk_client_end_to_end_with_readiness_marker(tmp_path, project, data_root):
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "ctxmode", "serve", "--project", str(project)],
        env=server_env(data_root, tmp_path / "home"),
        cwd=str(tmp_path),
    )
    seen: dict[str, Any] = {}

    async def session() -> None:
        with anyio.fail_after(CALL_S):
            async with Client(params) as client:
                tools = await client.list_tools()
                seen["tools"] = [t.name for t in tools.tools]
                result = await client.call_tool(
                    "ctx_execute", {"language": "python", "code": "print(6 * 7)"}
                )
                seen["result"] = (result.content[0].text, result.is_error)
                seen["markers"] = {
                    path: json.loads(path.read_text(encoding="utf-8"))
                    for path in (data_root / "servers").glob("*.json")
                }

    anyio.run(session)
    assert seen["tools"] == [
        "ctx_execute",
        "ctx_execute_file",
        "ctx_batch_execute",
        "ctx_index",
        "ctx_search",
        "ctx_fetch_and_index",
        "ctx_stats",
        "ctx_doctor",
        "ctx_upgrade",
        "ctx_purge",
        "ctx_insight",
    ]
    assert seen["result"] == ("42\n", False)
    [(path, body)] = seen["markers"].items()
    pid = int(path.stem)
    assert body["pid"] == pid
    assert Path(body["project_dir"]) == project
    assert survivors([pid]) == []
    assert not path.exists(), "readiness marker left behind after the client disconnected"


def test_stdout_carries_only_json_rpc(tmp_path, project, data_root, started):
    server = spawn_server(tmp_path, project, data_root, started)
    server.request(0, "initialize", INIT)
    server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    server.request(1, "tools/list")
    code = (
        "import sys, subprocess\n"
        "print('to stdout')\n"
        "print('to stderr', file=sys.stderr)\n"
        "subprocess.run(['sh', '-c', 'echo from a child; echo child err >&2'])\n"
    )
    server.request(
        2, "tools/call", {"name": "ctx_execute", "arguments": {"language": "python", "code": code}}
    )
    server.request(
        3,
        "tools/call",
        {"name": "ctx_execute", "arguments": {"language": "shell", "code": "echo sh; echo e >&2"}},
    )
    server.close_stdin()
    server.stdout_closed()
    assert server.proc.wait(EXIT_WITHIN_S) == 0
    messages = []
    for line in server.lines:
        assert line.endswith(b"\n")
        message = json.loads(line)
        assert isinstance(message, dict) and message.get("jsonrpc") == "2.0", line
        messages.append(message)
    answered = {m["id"]: m for m in messages if "id" in m}
    assert sorted(answered) == [0, 1, 2, 3]
    assert answered[2]["result"]["content"][0]["text"] == "to stdout\nfrom a child\n"
    assert answered[3]["result"]["content"][0]["text"] == "sh\n"


def test_ping_is_answered_with_an_empty_result_and_ids_are_echoed(
    tmp_path, project, data_root, started
):
    server = spawn_server(tmp_path, project, data_root, started)
    server.initialize()
    server.request("ping-1", "ping")
    assert server.response("ping-1") == {"jsonrpc": "2.0", "id": "ping-1", "result": {}}
    server.request(5, "no/such/method")
    assert server.response(5)["error"]["code"] == -32601
    server.close_stdin()
    assert server.proc.wait(EXIT_WITHIN_S) == 0


def test_a_request_in_flight_when_stdin_closes_is_still_answered(
    tmp_path, project, data_root, started
):
    server = spawn_server(tmp_path, project, data_root, started)
    server.initialize()
    began, go = tmp_path / "began", tmp_path / "go"
    code = (
        "import os, time\n"
        f"open({str(began)!r}, 'w').close()\n"
        "for _ in range(6000):\n"
        f"    if os.path.exists({str(go)!r}):\n"
        "        break\n"
        "    time.sleep(0.01)\n"
        "print('finished after stdin closed')\n"
    )
    server.request(
        9, "tools/call", {"name": "ctx_execute", "arguments": {"language": "python", "code": code}}
    )
    assert wait_until(began.exists, CALL_S), "the run never started"
    server.close_stdin()
    go.touch()
    answer = server.response(9)
    assert answer["result"]["content"][0]["text"] == "finished after stdin closed\n"
    assert answer["result"]["isError"] is False
    assert server.proc.wait(EXIT_WITHIN_S) == 0


def test_flood_guard_blocks_the_ninth_search_of_a_stdio_client(
    tmp_path, project, data_root, started
):
    server = spawn_server(tmp_path, project, data_root, started)
    server.initialize()
    indexed = server.call_tool(1, "ctx_index", {"content": "# Notes\n\nkiwi", "source": "n"})
    assert indexed["isError"] is False
    results = [server.call_tool(10 + n, "ctx_search", {"queries": ["kiwi"]}) for n in range(9)]
    assert [r["isError"] for r in results] == [False] * 8 + [True]
    assert "⚠ search call #8/8 in this window" in results[7]["content"][0]["text"]
    assert results[8]["content"][0]["text"].startswith("BLOCKED: 9 search calls in ")


# ------------------------------------------------------------------------ lifecycle


def test_readiness_marker_exists_while_serving_and_goes_on_eof(
    tmp_path, project, data_root, started
):
    server = spawn_server(tmp_path, project, data_root, started)
    server.initialize()
    assert marker(data_root, server.pid).is_file()
    server.close_stdin()
    assert server.proc.wait(EXIT_WITHIN_S) == 0
    assert not marker(data_root, server.pid).exists()


def test_closing_stdin_stops_the_server_and_its_background_runs(
    tmp_path, project, data_root, started
):
    server = spawn_server(tmp_path, project, data_root, started)
    server.initialize()
    pids = start_background_run(server, tmp_path, started)
    server.close_stdin()
    assert server.proc.wait(EXIT_WITHIN_S) == 0
    assert survivors(pids) == []
    assert not marker(data_root, server.pid).exists()


def test_sigterm_stops_the_server_and_its_background_runs(tmp_path, project, data_root, started):
    server = spawn_server(tmp_path, project, data_root, started)
    server.initialize()
    pids = start_background_run(server, tmp_path, started)
    server.proc.send_signal(signal.SIGTERM)
    server.proc.wait(EXIT_WITHIN_S)
    assert survivors(pids) == []
    assert not marker(data_root, server.pid).exists()


INTERMEDIATE = """\
import subprocess, sys
server = subprocess.Popen(sys.argv[2:])
open(sys.argv[1], "w").write(f"{server.pid}\\n")
server.wait()
"""


def test_server_exits_when_its_client_process_dies(tmp_path, project, data_root, started):
    # The client parent shares its pipes with the server and is then SIGKILLed; we keep
    # the server's stdin open, so only the parent-death watchdog can notice.
    pid_file = tmp_path / "server.pid"
    stderr = (tmp_path / "server.stderr").open("wb")
    parent = subprocess.Popen(
        [sys.executable, "-c", INTERMEDIATE, str(pid_file), *SERVE, str(project)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=stderr,
        env=server_env(data_root, tmp_path / "home"),
        cwd=tmp_path,
    )
    stderr.close()
    assert wait_until(lambda: pid_file.is_file() and pid_file.read_text().endswith("\n"))
    server_pid = int(pid_file.read_text())
    server = RawServer(parent, server_pid)
    started.append(server)
    server.initialize()
    pids = start_background_run(server, tmp_path, started)
    assert marker(data_root, server_pid).is_file()

    parent.kill()
    parent.wait()
    assert survivors([server_pid]) == [], "the server outlived its client"
    assert survivors(pids) == []
    assert not marker(data_root, server_pid).exists()
