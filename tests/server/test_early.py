"""What `early.Opening` answers before the SDK loads is exactly what the SDK answers.

Each conversation is what a real client sends first (captured from Claude Code 2.1,
Gemini CLI 0.61, Codex 0.171, both MCP inspectors, the conformance suite and the SDK's
own client), or a shape the SDK treats differently. The SDK server is run in memory on
the whole conversation; every answer `Opening` gave must equal the SDK's answer to the
same request, and `Opening` must answer the opening of every real client (else the
host waits for the SDK after all).
"""

import json
import threading
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp.shared.message import SessionMessage
from mcp_types import version

from ctxmode.server import dispatch, early

pytestmark = pytest.mark.anyio

CLAUDE_ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {
        "name": "claude-code",
        "title": "Claude Code",
        "version": "2.1.332",
        "description": "Anthropic's agentic coding tool",
        "websiteUrl": "https://claude.com/claude-code",
    },
    "io.modelcontextprotocol/clientCapabilities": {
        "roots": {"listChanged": True},
        "elicitation": {"form": {}, "url": {}},
    },
}
SDK_ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "mcp", "version": "0.1.0"},
    "io.modelcontextprotocol/clientCapabilities": {},
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
DOC = {"content": "# Guide\nInstall with pip.", "source": "guide"}
ECHO_45 = {"language": "shell", "code": "echo 45"}  # Gemini CLI gets structuredContent
AGENT = {"agent_id": "a1", "claudecode/toolUseId": "t1"}


def request(id_: Any, method: str, params: Any = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": id_, "method": method}
    if params is not None:
        message["params"] = params
    return message


def initialize(
    id_: Any = 0,
    version: str = "2025-11-25",
    capabilities: Any = None,
    client: Any = None,
) -> dict[str, Any]:
    return request(
        id_,
        "initialize",
        {
            "protocolVersion": version,
            "capabilities": {} if capabilities is None else capabilities,
            "clientInfo": {"name": "t", "version": "1"} if client is None else client,
        },
    )


def enveloped(envelope: dict[str, Any], **params: Any) -> dict[str, Any]:
    return {**params, "_meta": envelope}


# (name, conversation, ids `Opening` answers)
CONVERSATIONS: list[tuple[str, list[dict[str, Any]], list[Any]]] = [
    (
        "claude-code",
        [
            request("server-discover-probe-1", "server/discover", enveloped(CLAUDE_ENVELOPE)),
            request(0, "prompts/list", enveloped(CLAUDE_ENVELOPE)),
            request(1, "resources/list", enveloped(CLAUDE_ENVELOPE)),
            request(2, "tools/list", enveloped(CLAUDE_ENVELOPE)),
            request(3, "tools/call", enveloped(CLAUDE_ENVELOPE, name="ctx_index", arguments=DOC)),
            request(4, "tools/call", enveloped(CLAUDE_ENVELOPE, name="nope", arguments={})),
        ],
        ["server-discover-probe-1", 0, 1, 2, 3, 4],
    ),
    (
        "gemini-cli",
        [
            initialize(
                0,
                "2025-06-18",
                {"roots": {"listChanged": True}},
                {"name": "gemini-cli-mcp-client", "version": "0.61.0"},
            ),
            INITIALIZED,
            request(1, "prompts/list", {}),
            request(2, "tools/list", {}),
            request(3, "resources/list", {}),
            request(4, "tools/call", {"name": "ctx_execute", "arguments": ECHO_45}),
        ],
        [0, 1, 2, 3, 4],
    ),
    (
        "codex",
        [
            initialize(
                0,
                "2025-06-18",
                {"experimental": {"codex/auth-change": {}}, "elicitation": {"form": {}, "url": {}}},
                {"name": "codex-mcp-client", "title": "Codex", "version": "0.171.0"},
            ),
            INITIALIZED,
            request(1, "tools/list", {"_meta": {"progressToken": 0}}),
        ],
        [0, 1],
    ),
    (
        "inspector-v2",
        [
            initialize(
                0,
                capabilities={
                    "extensions": {
                        "io.modelcontextprotocol/skills": {},
                        "io.modelcontextprotocol/tasks": {},
                    },
                    "roots": {"listChanged": True},
                },
                client={"name": "inspector-cli", "version": "2.12.0"},
            ),
            INITIALIZED,
            request(1, "resources/templates/list"),
        ],
        [0, 1],
    ),
    (
        "probe and inspector-v1",
        [
            initialize(1),
            INITIALIZED,
            request(2, "ping"),
            request("ping-1", "ping"),
            request(3, "tools/list"),
            request(4, "bogus/method"),
            request(5, "ping"),
        ],
        [1, 2, "ping-1", 3],
    ),
    (
        "conformance",
        [initialize(0, capabilities={"elicitation": {}, "sampling": {}}), INITIALIZED],
        [0],
    ),
    (
        "python sdk client",
        [
            request(0, "server/discover", enveloped(SDK_ENVELOPE)),
            request(1, "tools/list", enveloped(SDK_ENVELOPE)),
            request(2, "resources/templates/list", enveloped(SDK_ENVELOPE)),
            request(3, "server/discover", enveloped(SDK_ENVELOPE)),
        ],
        [0, 1, 2, 3],
    ),
    (
        "discover without envelope, then initialize",
        [request("d", "server/discover"), initialize(0), INITIALIZED, request(1, "tools/list")],
        ["d", 0, 1],
    ),
    ("ping first", [request(7, "ping"), initialize(0), request(1, "prompts/list")], [7, 0, 1]),
    ("an unknown protocol version", [initialize(0, "1999-01-01")], [0]),
    ("oldest protocol version", [initialize(0, "2024-11-05"), request(1, "tools/list")], [0, 1]),
    ("an unknown capability", [initialize(0, capabilities={"foo": 1})], [0]),
    # Left to the SDK:
    ("initialize asking for the modern era", [initialize(0, "2026-07-28")], []),
    ("a malformed capability", [initialize(0, capabilities={"roots": {"listChanged": "y"}})], []),
    ("a null capability", [initialize(0, capabilities={"roots": None})], []),
    ("tasks capability", [initialize(0, capabilities={"tasks": {"list": {}}})], []),
    ("client icons", [initialize(0, client={"name": "t", "version": "1", "icons": []})], []),
    ("no client version", [initialize(0, client={"name": "t"})], []),
    ("a list before initialize", [request(1, "tools/list"), initialize(0)], []),
    ("a notification first", [INITIALIZED, initialize(0)], []),
    ("a float id", [initialize(1.5)], []),
    ("a boolean id", [initialize(True)], []),
    ("a cursor", [initialize(0), request(1, "tools/list", {"cursor": "x"})], [0]),
    (
        "initialize with _meta",
        [request(0, "initialize", {**initialize()["params"], "_meta": {"progressToken": 1}})],
        [],
    ),
    (
        "discover asking for an old version",
        [
            request(
                0,
                "server/discover",
                enveloped(
                    {**SDK_ENVELOPE, "io.modelcontextprotocol/protocolVersion": "2025-11-25"}
                ),
            )
        ],
        [],
    ),
    (
        "modern ping",
        [
            request(0, "server/discover", enveloped(SDK_ENVELOPE)),
            request(1, "ping", enveloped(SDK_ENVELOPE)),
        ],
        [0],
    ),
    (
        "modern list without envelope",
        [request(0, "server/discover", enveloped(SDK_ENVELOPE)), request(1, "tools/list")],
        [0],
    ),
    (
        "discover after initialize",
        [initialize(0), request(1, "server/discover", enveloped(SDK_ENVELOPE))],
        [0],
    ),
    ("a second initialize", [initialize(0), initialize(1)], [0]),
    (
        "tool calls",
        [
            initialize(0),
            INITIALIZED,
            request(1, "tools/call", {"name": "ctx_index", "arguments": DOC}),
            request(2, "tools/call", {"name": "nope"}),
            request(3, "tools/call", {"name": "ctx_search", "arguments": None}),
            request(
                4,
                "tools/call",
                {"name": "ctx_execute", "arguments": ECHO_45, "_meta": {"progressToken": 9}},
            ),
            request(5, "tools/call", {"name": "ctx_index", "arguments": DOC, "_meta": AGENT}),
        ],
        [0, 1, 2, 3, 4, 5],
    ),
    # Left to the SDK:
    ("a tool call before initialize", [request(1, "tools/call", {"name": "nope"})], []),
    (
        "a task-augmented tool call",
        [initialize(0), request(1, "tools/call", {"name": "nope", "task": {}})],
        [0],
    ),
    (
        "arguments that are not an object",
        [initialize(0), request(1, "tools/call", {"name": "nope", "arguments": [1]})],
        [0],
    ),
    (
        "a modern tool call without its envelope",
        [
            request(0, "server/discover", enveloped(SDK_ENVELOPE)),
            request(1, "tools/call", {"name": "nope", "arguments": {}}),
        ],
        [0],
    ),
    (
        "a handshake tool call with an envelope",
        [initialize(0), request(1, "tools/call", enveloped(SDK_ENVELOPE, name="nope"))],
        [0],
    ),
]


def opening_answers(state: Any, conversation: list[dict[str, Any]]) -> dict[Any, dict[str, Any]]:
    """What `Opening` answers, and the direct path answers to the tool calls it hands on
    (`ctxmode.server.direct`), by request id, until it is unsure."""
    opening = early.Opening(early.tool_dicts())
    answers: dict[Any, dict[str, Any]] = {}
    for message in conversation:
        try:
            answer = opening.answer(message)
        except early.Unsure:
            break
        if isinstance(answer, early.ToolCall):
            text, is_error = dispatch.answer(
                state, answer.name, answer.arguments, answer.caller, threading.Event()
            )
            answer = early.tool_result(answer, text, is_error)
        if answer is not None:
            answers[message["id"]] = answer
    return answers


async def sdk_answers(server: Any, conversation: list[dict[str, Any]], ids: list[Any]) -> Any:
    """The in-memory SDK server's answers to `ids`, the whole conversation fed in order."""
    to_server, server_in = anyio.create_memory_object_stream[Any](100)
    server_out, from_server = anyio.create_memory_object_stream[Any](100)
    answers: dict[Any, dict[str, Any]] = {}
    async with to_server, server_in, server_out, from_server, anyio.create_task_group() as tasks:
        tasks.start_soon(
            lambda: server.run(server_in, server_out, server.create_initialization_options())
        )
        for message in conversation:
            text = json.dumps(message)
            try:
                await to_server.send(
                    SessionMessage(types.jsonrpc_message_adapter.validate_json(text))
                )
            except ValueError as exc:  # what the stdio transport hands on for a bad line
                await to_server.send(exc)
        with anyio.fail_after(5):
            while len(answers) < len(ids):
                item = await from_server.receive()
                answer = json.loads(item.message.model_dump_json(by_alias=True, exclude_unset=True))
                if answer.get("id") in ids:
                    answers[answer["id"]] = answer
        await to_server.aclose()
    return answers


@pytest.mark.parametrize(
    ("conversation", "expected"), [c[1:] for c in CONVERSATIONS], ids=[c[0] for c in CONVERSATIONS]
)
async def test_opening_answers_what_the_sdk_answers(state, server, conversation, expected):
    answers = opening_answers(state, conversation)
    assert list(answers) == expected
    assert answers == await sdk_answers(server, conversation, expected)


def test_protocol_versions_are_the_sdks():
    assert early.HANDSHAKE_VERSIONS == version.HANDSHAKE_PROTOCOL_VERSIONS
    assert (early.MODERN_VERSION,) == version.MODERN_PROTOCOL_VERSIONS


def test_once_unsure_every_later_message_is_the_sdks():
    opening = early.Opening(early.tool_dicts())
    with pytest.raises(early.Unsure):
        opening.answer(request(1, "tools/list"))  # before initialize
    with pytest.raises(early.Unsure):
        opening.answer(initialize(0))


@pytest.mark.parametrize("line", [None, [initialize(0)], {"jsonrpc": "1.0", "id": 0}, "text"])
def test_what_is_not_one_json_rpc_object_is_the_sdks(line):
    with pytest.raises(early.Unsure):
        early.Opening([]).answer(line)
