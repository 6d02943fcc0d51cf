"""Lines the SDK's transport cannot read, sent raw to a real `ctxmode serve`: every request
is answered with its id, every line that is no JSON gets -32700, and the server goes on
answering what follows. `frames.diagnose`, which sorts those lines, is checked directly
too."""

import json
import subprocess
import sys
from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest

from ctxmode.server import early, frames

from .support import EXIT_WITHIN_S, INIT, SERVE, RawServer, server_env, spawn_server


def send_raw(server: RawServer, line: str) -> None:
    assert server.proc.stdin is not None
    server.proc.stdin.write(line.encode("utf-8") + b"\n")
    server.proc.stdin.flush()


def call_line(id_: Any, name: str, arguments_json: str) -> str:
    """A tools/call line with `arguments_json` as written (escapes and all)."""
    head = json.dumps({"jsonrpc": "2.0", "id": id_, "method": "tools/call"})[:-1]
    return f'{head}, "params": {{"name": "{name}", "arguments": {arguments_json}}}}}'


def test_a_lone_surrogate_in_arguments_is_replaced_and_the_call_answered(
    tmp_path, project, data_root, started
):
    server = spawn_server(tmp_path, project, data_root, started)
    server.initialize()
    send_raw(server, call_line(1, "ctx_index", r'{"content": "kiwi \ud800 pear", "source": "s"}'))
    indexed = server.response(1)["result"]
    assert indexed["isError"] is False, indexed
    send_raw(server, call_line(2, "ctx_search", r'{"queries": ["pear \udc00"]}'))
    found = server.response(2)["result"]
    assert found["isError"] is False
    assert "kiwi \N{REPLACEMENT CHARACTER} pear" in found["content"][0]["text"]
    # The id itself cannot be echoed with a surrogate replaced: an error, id null.
    send_raw(server, r'{"jsonrpc": "2.0", "id": "a\ud800", "method": "ping"}')
    server.request(3, "ping")
    assert server.response(3)["result"] == {}
    server.close_stdin()
    server.stdout_closed()
    assert server.proc.wait(EXIT_WITHIN_S) == 0
    answers = [json.loads(line) for line in server.lines]
    assert [a["id"] for a in answers] == [0, 1, 2, None, 3]
    assert answers[3]["error"]["code"] == -32600


def test_malformed_lines_get_json_rpc_errors_and_the_server_goes_on(
    tmp_path, project, data_root, started
):
    server = spawn_server(tmp_path, project, data_root, started)
    server.initialize()
    for line in [
        "{this is not json",
        "",
        '{"jsonrpc": "2.0", "id": 5}',
        '{"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": 7}',
        '{"id": 7, "method": "ping"}',
        '{"jsonrpc": "2.0", "id": null, "method": "ping"}',
        "[]",
        '{"jsonrpc": "2.0", "method": "notifications/bogus", "params": 8}',
        "[" * 100_000,
    ]:
        send_raw(server, line)
    server.request(9, "ping")
    assert server.response(9)["result"] == {}
    server.close_stdin()
    server.stdout_closed()
    assert server.proc.wait(EXIT_WITHIN_S) == 0
    errors = [(a["id"], a["error"]["code"]) for a in map(json.loads, server.lines[1:-1])]
    assert errors == [
        (None, -32700),
        (5, -32600),
        (6, -32600),
        (7, -32600),
        (None, -32600),
        (None, -32600),
        (None, -32700),
    ]
    stderr = (tmp_path / "server.stderr").read_text(encoding="utf-8")
    assert "ignored a malformed notification" in stderr


def test_a_path_with_a_nul_byte_is_a_usage_error(tmp_path, project, data_root, started):
    server = spawn_server(tmp_path, project, data_root, started)
    server.initialize()
    calls = [
        ("ctx_index", {"path": "notes\0.md"}),
        ("ctx_execute_file", {"path": "a\0b", "language": "python", "code": "print(1)"}),
    ]
    for id_, (name, arguments) in enumerate(calls, 1):
        result = server.call_tool(id_, name, arguments)
        assert result["isError"] is True
        assert result["content"][0]["text"] == "path contains a NUL byte"
    assert "Internal error" not in (tmp_path / "server.stderr").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    "path", ["x" * 200_000, "x" * 256, "/".join(["d" * 200] * 25), "\ud800" * 2000]
)
def test_a_path_too_long_for_a_file_system_is_a_usage_error(
    tmp_path, project, data_root, started, path
):
    """Not an "Internal error" naming ENAMETOOLONG: the agent is told what the limit is."""
    server = spawn_server(tmp_path, project, data_root, started)
    server.initialize()
    calls = [
        ("ctx_index", {"path": path}),
        ("ctx_execute_file", {"path": path, "language": "python", "code": "print(1)"}),
    ]
    for id_, (name, arguments) in enumerate(calls, 1):
        result = server.call_tool(id_, name, arguments)
        assert result["isError"] is True
        text = result["content"][0]["text"]
        assert text.startswith("path is too long for a file system"), text
        assert "Internal error" not in text


def test_stdin_that_is_not_a_pipe_gets_the_same_answers(tmp_path, project, data_root):
    """A file as stdin: the transport reads it in a thread, not on the event loop."""
    lines = [
        json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INIT}),
        json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        "not json",
        call_line(1, "ctx_index", r'{"content": "fig \ud800", "source": "s"}'),
        json.dumps({"jsonrpc": "2.0", "id": 2, "method": "ping"}),
    ]
    (tmp_path / "in.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    with (tmp_path / "in.jsonl").open("rb") as stdin:
        done = subprocess.run(
            [sys.executable, "-m", "ctxmode", "serve", "--project", str(project)],
            stdin=stdin,
            capture_output=True,
            env=server_env(data_root, tmp_path / "home"),
            cwd=tmp_path,
            timeout=60,
            check=False,
        )
    assert done.returncode == 0, done.stderr
    answers = {a["id"]: a for a in map(json.loads, done.stdout.splitlines())}
    assert answers[None]["error"]["code"] == -32700
    assert answers[1]["result"]["isError"] is False
    assert answers[2]["result"] == {}


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("{oops", frames.Fault(-32700, None, "Parse error: ")),
        ('{"a": NaN}', frames.Fault(-32700, None, "Parse error: NaN is not JSON")),
        ("[1]", frames.Fault(-32600, None, "Invalid Request: a batch (JSON array)")),
        ("3", frames.Fault(-32600, None, "Invalid Request: not a JSON object")),
        ('{"jsonrpc": "2.0", "id": 1.5, "method": "x"}', frames.Fault(-32600, None, "")),
        ('{"jsonrpc": "2.0", "id": true, "method": "x"}', frames.Fault(-32600, None, "")),
        ('{"jsonrpc": "2.0", "id": "k", "params": []}', frames.Fault(-32600, "k", "")),
        ('{"jsonrpc": "2.0", "id": 4, "result": 5}', frames.Fault(None, None, "")),
        ('{"jsonrpc": "2.0", "method": "m", "params": 5}', frames.Fault(None, None, "")),
        ('{"jsonrpc": "2.0", "id": "\\udc00", "result": {}}', frames.Fault(None, None, "")),
    ],
)
def test_diagnose_sorts_what_the_sdk_refused(line, expected):
    verdict = frames.diagnose(line)
    assert isinstance(verdict, frames.Fault)
    assert (verdict.code, verdict.id) == (expected.code, expected.id)
    assert verdict.message.startswith(expected.message)


def test_diagnose_replaces_lone_surrogates_and_keeps_pairs():
    params = r'{"\ud800k": ["\udfff", "\ud83d\ude00"]}'
    line = f'{{"jsonrpc": "2.0", "id": 1, "method": "m", "params": {params}}}'
    repaired = frames.diagnose(line)
    assert isinstance(repaired, str)
    assert json.loads(repaired)["params"] == {"\ufffdk": ["\ufffd", "\N{GRINNING FACE}"]}


def test_the_start_up_leaves_an_id_with_a_lone_surrogate_to_the_sdk_side():
    with pytest.raises(early.Unsure):
        early.Opening([]).answer({"jsonrpc": "2.0", "id": "\ud800", "method": "ping"})


def test_blank_lines_are_skipped():
    async def lines() -> AsyncIterator[str]:
        for line in ["\n", "  \r\n", '{"x": 1}\n']:
            yield line

    async def first() -> str:
        recorded = frames.Recorded(lines())
        got = await recorded.__anext__()
        assert list(recorded.kept) == [got]
        return got

    assert anyio.run(first) == '{"x": 1}\n'


def test_a_request_nested_too_deeply_is_answered_on_its_own_id(
    tmp_path, project, data_root, started
):
    """Valid JSON 1,000 levels deep: the client waited forever for an answer with id null."""
    server = spawn_server(tmp_path, project, data_root, started)
    server.initialize()
    deep = '{"x":' * 1000 + "1" + "}" * 1000
    send_raw(
        server,
        '{"jsonrpc": "2.0", "id": 42, "method": "tools/call", '
        f'"params": {{"name": "ctx_stats", "arguments": {{"deep": {deep}}}}}}}',
    )
    answer = server.response(42)
    assert answer["error"]["code"] == -32600
    assert "nested more deeply" in answer["error"]["message"]


def test_a_request_before_initialize_says_so(tmp_path, project, data_root):
    pre = {"jsonrpc": "2.0", "id": 7, "method": "tools/list"}
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT}
    done = subprocess.run(
        [sys.executable, "-m", "ctxmode", "serve"],
        input=(json.dumps(pre) + "\n" + json.dumps(init) + "\n").encode(),
        capture_output=True,
        env=server_env(data_root, tmp_path / "home"),
        cwd=tmp_path,
        timeout=60,
        check=False,
    )
    answers = {a["id"]: a for a in map(json.loads, done.stdout.splitlines())}
    error = answers[7]["error"]
    assert error["code"] == -32602
    assert "not initialized" in error["message"] and "initialize" in error["data"]
    assert "result" in answers[1]


def test_a_message_past_the_size_limit_is_refused_on_its_id_and_the_server_goes_on(
    tmp_path, project, data_root, started
):
    """A 70 MB line is not kept (the server held about six times a line's size while
    reading it, and copied it at every read): it is refused on its own id, and the next
    request is answered."""
    from ctxmode.server.direct import MESSAGE_MAX_BYTES

    server = spawn_server(tmp_path, project, data_root, started)
    server.initialize()
    big = "word " * ((MESSAGE_MAX_BYTES + 6_000_000) // 5)
    send_raw(server, call_line(7, "ctx_index", json.dumps({"content": big, "source": "big"})))
    refused = server.response(7, within=120)
    assert refused["error"]["code"] == -32600
    assert refused["error"]["message"].startswith("Request too large: ")
    result = server.call_tool(8, "ctx_index", {"content": "# Small\n\nfits", "source": "s"})
    assert result["isError"] is False
    assert "Indexed" in result["content"][0]["text"]


def test_a_last_request_without_a_newline_is_answered_at_end_of_input(tmp_path, project, data_root):
    """The SDK answers a final line the client did not end; so does the direct path."""
    lines = [
        json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INIT}),
        json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        call_line(1, "ctx_index", '{"content": "# Last\\n\\nline", "source": "s"}'),
    ]
    proc = subprocess.run(
        [*SERVE, str(project)],
        input="\n".join(lines).encode(),  # no newline after the last one
        capture_output=True,
        env=server_env(data_root, tmp_path / "home"),
        cwd=tmp_path,
        timeout=120,
    )
    answers = [json.loads(line) for line in proc.stdout.decode().splitlines()]
    assert [a.get("id") for a in answers] == [0, 1]
    assert "Indexed" in answers[1]["result"]["content"][0]["text"]


def test_a_tools_call_of_the_wrong_shape_is_told_the_shape(tmp_path, project, data_root, started):
    """The SDK's -32602 for it carried no detail at all (data "")."""
    server = spawn_server(tmp_path, project, data_root, started)
    server.initialize()
    send_raw(server, '{"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {}}')
    send_raw(server, call_line(4, "ctx_search", '"not an object"'))
    for id_ in (3, 4):
        error = server.response(id_)["error"]
        assert error["code"] == -32602
        assert error["data"].startswith("the params of tools/call do not have its shape: ")
        assert '"arguments": {...}' in error["data"]
    server.request(5, "ping")
    assert server.response(5)["result"] == {}
