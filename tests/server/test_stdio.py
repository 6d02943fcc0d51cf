"""The real thing: `ctxmode serve` as a subprocess speaking newline-delimited JSON-RPC on
stdio, and how it ends (stdin EOF, SIGTERM, the client dying) without leaving a process
behind. The process boundary is what is under test, so these spawn real servers."""

import json
import signal
import sys
from pathlib import Path
from typing import Any

import anyio
import psutil

from .support import (
    CALL_S,
    EXIT_WITHIN_S,
    INIT,
    SERVE,
    RawServer,
    alive,
    marker,
    server_env,
    spawn_server,
    start_process,
    survivors,
    wait_until,
)

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


def start_sleeping_call(server: RawServer, tmp_path: Path, id_: int) -> None:
    """Request `id_`: a run that sleeps five minutes; returns once it has started."""
    began = tmp_path / "began"
    code = f"import time\nopen({str(began)!r}, 'w').close()\ntime.sleep(300)\n"
    server.request(
        id_,
        "tools/call",
        {"name": "ctx_execute", "arguments": {"language": "python", "code": code}},
    )
    assert wait_until(began.exists, CALL_S), "the run never started"


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
    server.call_tool(1, "ctx_stats", {})  # answered by the SDK: the server is up
    body = json.loads(marker(data_root, server.pid).read_text(encoding="utf-8"))
    assert body["state"] == "ready"
    server.close_stdin()
    assert server.proc.wait(EXIT_WITHIN_S) == 0
    assert not marker(data_root, server.pid).exists()


def test_a_server_that_cannot_publish_its_marker_still_serves(
    tmp_path, project, data_root, started
):
    (data_root / "servers").write_text("not a folder", encoding="utf-8")
    server = spawn_server(tmp_path, project, data_root, started)
    server.initialize()
    result = server.call_tool(1, "ctx_execute", {"language": "shell", "code": "echo up"})
    assert (result["content"][0]["text"], result["isError"]) == ("up\n", False)
    server.close_stdin()
    assert server.proc.wait(EXIT_WITHIN_S) == 0
    stderr = (tmp_path / "server.stderr").read_text(encoding="utf-8")
    assert "cannot publish the readiness marker" in stderr
    assert (data_root / "servers").read_text(encoding="utf-8") == "not a folder"


def test_every_request_is_answered_exactly_once(tmp_path, project, data_root, started):
    """The opening is answered before the SDK runs, and the SDK reads it again: its own
    answers to it must not reach the client a second time."""
    server = spawn_server(tmp_path, project, data_root, started)
    server.request(0, "initialize", INIT)
    server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    for id_, method in [(1, "tools/list"), ("p", "ping"), (2, "prompts/list")]:
        server.request(id_, method)
    server.request(3, "tools/call", {"name": "ctx_stats", "arguments": {}})
    server.request(4, "tools/list")
    server.close_stdin()
    server.stdout_closed()
    assert server.proc.wait(EXIT_WITHIN_S) == 0
    ids = [json.loads(line)["id"] for line in server.lines]
    assert sorted(ids, key=str) == [0, 1, 2, 3, 4, "p"]
    assert "at start-up" not in (tmp_path / "server.stderr").read_text(encoding="utf-8")


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
    parent = start_process(
        tmp_path,
        [sys.executable, "-c", INTERMEDIATE, str(pid_file), *SERVE, str(project)],
        data_root,
    )
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


def test_a_cancelled_request_does_not_hold_the_server_open_after_stdin_closes(
    tmp_path, project, data_root, started
):
    """A cancelled request gets no answer; waiting for one kept the server (and its
    readiness marker, which steers the hooks) alive after the client left."""
    server = spawn_server(tmp_path, project, data_root, started)
    server.initialize()
    start_sleeping_call(server, tmp_path, 7)
    server.send(
        {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": 7, "reason": "the user pressed Esc"},
        }
    )
    server.close_stdin()
    assert server.proc.wait(EXIT_WITHIN_S) == 0
    assert not list((data_root / "servers").glob("*.json"))  # no marker left to steer hooks


def _answer_ids(server: Any) -> list[Any]:
    return [json.loads(line).get("id") for line in server.lines]


def test_a_slow_call_does_not_hold_up_a_quick_one(tmp_path, project, data_root, started):
    server = spawn_server(tmp_path, project, data_root, started)
    server.initialize()
    slow = {"language": "shell", "code": "sleep 2; echo slow"}
    server.request(1, "tools/call", {"name": "ctx_execute", "arguments": slow})
    quick = server.call_tool(2, "ctx_execute", {"language": "shell", "code": "echo quick"})
    assert quick["content"][0]["text"] == "quick\n"
    assert server.response(1)["result"]["content"][0]["text"] == "slow\n"
    assert _answer_ids(server)[-2:] == [2, 1]


def test_a_message_for_the_sdk_mid_session_is_answered_after_the_calls_in_flight(
    tmp_path, project, data_root, started
):
    """Tool calls are answered without the SDK; the first message that needs it loads it.
    The calls in flight finish first, then the SDK answers that message and the rest."""
    server = spawn_server(tmp_path, project, data_root, started)
    server.initialize()
    slow = {"language": "shell", "code": "sleep 1; echo done"}
    server.request(1, "tools/call", {"name": "ctx_execute", "arguments": slow})
    server.request(2, "no/such/method")
    assert server.response(1)["result"]["content"][0]["text"] == "done\n"
    assert server.response(2)["error"]["code"] == -32601
    indexed = server.call_tool(3, "ctx_index", {"content": "# Notes\n\nkiwi", "source": "n"})
    assert indexed["isError"] is False
    found = server.call_tool(4, "ctx_search", {"queries": ["kiwi"]})
    assert "kiwi" in found["content"][0]["text"]
    server.close_stdin()
    assert server.proc.wait(EXIT_WITHIN_S) == 0
    assert _answer_ids(server).count(1) == 1


def test_a_cancelled_call_stops_its_run_and_gets_no_answer(tmp_path, project, data_root, started):
    server = spawn_server(tmp_path, project, data_root, started)
    server.initialize()
    start_sleeping_call(server, tmp_path, 7)
    server.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7}})
    server.request("after", "ping")
    assert server.response("after")["result"] == {}

    def running() -> list[psutil.Process]:  # the run (the leftovers watcher stays)
        found = []
        for child in psutil.Process(server.proc.pid).children(recursive=True):
            try:
                if child.status() != psutil.STATUS_ZOMBIE and "reap.py" not in " ".join(
                    child.cmdline()
                ):
                    found.append(child)
            except psutil.Error:  # noqa: PERF203 - gone, or a zombie about to be reaped
                pass
        return found

    assert wait_until(lambda: not running(), CALL_S), "the run was not stopped"
    server.close_stdin()
    assert server.proc.wait(EXIT_WITHIN_S) == 0
    assert 7 not in _answer_ids(server)
