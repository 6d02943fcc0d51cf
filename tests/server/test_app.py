"""The dispatcher: every failure is an isError result carrying our own message, never the
SDK's generic text, and the server keeps serving afterwards."""

import mcp_types as types
import pytest
from mcp.shared.message import SessionMessage

from ctxmode.server.app import _Answered

from .support import call

pytestmark = pytest.mark.anyio


async def test_unknown_tool_is_an_error_result(client):
    assert await call(client, "ctx_nope", {}) == ("Unknown tool: ctx_nope", True)


@pytest.mark.parametrize(
    ("name", "args", "message"),
    [
        ("ctx_execute", {"language": "python"}, "code is required"),
        ("ctx_execute", {"code": "print(1)"}, "language is required"),
        ("ctx_execute", {"language": "python", "code": "   "}, "code must not be empty"),
        ("ctx_execute", {"language": 3, "code": "x"}, "language must be a string"),
        (
            "ctx_execute",
            {"language": "shell", "code": "true", "timeout": "soon"},
            "timeout must be a number",
        ),
        (
            "ctx_execute",
            {"language": "shell", "code": "true", "timeout": 0},
            "timeout must be at least 1",
        ),
        (
            "ctx_execute",
            {"language": "shell", "code": "true", "background": "yes"},
            "background must be true or false",
        ),
        ("ctx_execute_file", {"language": "python", "code": "x"}, "path is required"),
        ("ctx_search", {"queries": [1, 2]}, "queries must be an array of strings"),
    ],
)
async def test_argument_errors_carry_our_message(client, name, args, message):
    text, is_error = await call(client, name, args)
    assert is_error
    assert message in text
    assert "Error executing tool" not in text
    assert "Internal error" not in text


async def test_background_accepts_the_string_true(client):
    text, is_error = await call(
        client,
        "ctx_execute",
        {"language": "shell", "code": "echo quick", "background": "true", "timeout": "30000"},
    )
    assert (text, is_error) == ("quick\n", False)


async def test_the_server_keeps_serving_after_an_error(client):
    await call(client, "ctx_nope", {})
    await call(client, "ctx_execute", {"language": "cobol", "code": "x"})
    assert await call(client, "ctx_execute", {"language": "shell", "code": "echo still"}) == (
        "still\n",
        False,
    )


@pytest.mark.parametrize("args", [{}, {"source": "label only"}, {"url": ""}])
async def test_fetch_without_url_or_requests_is_a_usage_error(client, args):
    text, is_error = await call(client, "ctx_fetch_and_index", args)
    assert is_error
    assert text == (
        "ctx_fetch_and_index requires either `url` (single) or "
        "`requests: [{url, source?}, ...]` (batch)."
    )


def test_the_sdks_answer_to_a_request_answered_at_start_up_is_dropped_and_checked(caplog):
    sent = {"jsonrpc": "2.0", "id": 0, "result": {"prompts": []}}
    answered = _Answered([sent])

    def sdk(id_: object, result: dict[str, object]) -> SessionMessage:
        return SessionMessage(types.JSONRPCResponse(jsonrpc="2.0", id=id_, result=result))

    assert not answered.drop(sdk("0", {"prompts": []}))  # another request: id "0" is not 0
    assert answered.drop(sdk(0, {"prompts": [], "extra": 1}))
    assert "answered 0 at start-up" in caplog.text  # it differed: said so, in the log
    assert not answered.drop(sdk(0, {"prompts": []}))  # dropped once only
