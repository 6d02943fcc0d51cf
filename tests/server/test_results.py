"""Tool results per client: Gemini CLI gets a result it will not turn into an error, and
every client reads exactly the output as text.

Gemini CLI 0.61 (`fixStructuredContent` in its stdio transport) parses the first text item
of a result without ``structuredContent`` as JSON, stores the value as
``structuredContent`` and then requires an object there; it shows the model only the text
items. `gemini_reads` replays that logic on what our server sends.
"""

import json
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client

from ctxmode.server.results import parses_as_non_object, structured_content

from .support import CALL_S

pytestmark = pytest.mark.anyio

GEMINI = types.Implementation(name="gemini-cli-mcp-client", version="0.61.0")


def _javascript_json(text: str) -> Any:
    def reject(name: str) -> Any:
        raise ValueError(name)  # NaN, Infinity: not JSON to JSON.parse

    return json.loads(text, parse_constant=reject)


def gemini_reads(result: types.CallToolResult) -> tuple[str, bool]:
    """(what Gemini CLI shows the model, whether it is a tool error), as Gemini decides."""
    wire = json.loads(result.model_dump_json(by_alias=True, exclude_unset=True))
    first = wire["content"][0]
    if "structuredContent" not in wire and first["type"] == "text":
        try:
            wire["structuredContent"] = _javascript_json(first["text"])
        except ValueError:
            pass
    if "structuredContent" in wire and not isinstance(wire["structuredContent"], dict):
        return "Invalid input: expected record", True  # its SDK's schema check
    return "".join(c["text"] for c in wire["content"]), bool(wire.get("isError"))


async def run(client: Client, code: str) -> types.CallToolResult:
    with anyio.fail_after(CALL_S):
        return await client.call_tool("ctx_execute", {"language": "shell", "code": code})


@pytest.mark.parametrize(
    "printed", ["45", "[1,2]", "true", '"x"', "null", '{"a": 1}', "hello", "NaN", "-1.5e3"]
)
async def test_gemini_cli_reads_exactly_the_output_as_a_result(server, printed):
    async with Client(server, client_info=GEMINI, mode="legacy") as client:
        result = await run(client, f"printf '%s\\n' '{printed}'")
    assert gemini_reads(result) == (f"{printed}\n", False)


async def test_other_clients_get_the_text_alone(server):
    async with Client(server, mode="legacy") as client:
        result = await run(client, "echo 45")
    assert result.structured_content is None
    assert [c.text for c in result.content if c.type == "text"] == ["45\n"]


async def test_an_error_result_keeps_its_message_for_gemini_cli(server):
    async with Client(server, client_info=GEMINI, mode="legacy") as client:
        with anyio.fail_after(CALL_S):
            result = await client.call_tool("ctx_nope", {})
    assert gemini_reads(result) == ("Unknown tool: ctx_nope", True)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("45\n", True),
        (" [1, 2] ", True),
        ("null", True),
        ('"x"', True),
        ('{"a": 1}', False),
        ("Infinity", False),  # not JSON to JavaScript
        ("", False),
        ("45 apples", False),
    ],
)
def test_what_javascript_would_parse_as_a_non_object(text, expected):
    assert parses_as_non_object(text) is expected


@pytest.mark.parametrize("client", [None, "claude-code", "codex-mcp-client", "mcp"])
def test_only_gemini_cli_gets_structured_content(client: Any):
    assert structured_content(client, "45") is None
    assert structured_content("gemini-cli-mcp-client", "45") == {}
