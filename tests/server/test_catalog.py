"""tools/list as an agent sees it: eleven tools, upstream's argument names, plain object
schemas, boolean hints, and a small enough catalog to pay for on every turn.

The snapshot lives in tools_snapshot.json. After an intended catalog change, regenerate it
from the repository root with:

    .venv/bin/python -c "from tests.server.test_catalog import write_snapshot; write_snapshot()"

and review the diff like code.
"""

import json
import re
from pathlib import Path
from typing import Any

import anyio
import pytest

from ctxmode.server.catalog import TOOLS

pytestmark = pytest.mark.anyio

SNAPSHOT = Path(__file__).with_name("tools_snapshot.json")
BUDGET_BYTES = 10_000  # upstream's eleven tools are ~30 KB; we aim at a third of that
NAME_RE = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")

EXPECTED_ARGS = {
    "ctx_execute": ["language", "code", "timeout", "background", "cwd", "intent"],
    "ctx_execute_file": ["path", "language", "code", "timeout", "intent"],
    "ctx_batch_execute": ["commands", "queries", "timeout", "concurrency", "cwd", "query_scope"],
    "ctx_index": [
        "content",
        "path",
        "source",
        "include",
        "exclude",
        "maxDepth",
        "maxFiles",
        "extensions",
        "respectGitignore",
        "followSymlinks",
    ],
    "ctx_search": ["queries", "limit", "source", "contentType", "sort", "project"],
    "ctx_fetch_and_index": ["url", "source", "requests", "concurrency", "force", "ttl"],
    "ctx_stats": [],
    "ctx_doctor": [],
    "ctx_upgrade": [],
    "ctx_purge": ["confirm", "scope", "sessionId"],
    "ctx_insight": ["port", "open"],
}
NO_PARAMETERS = {"ctx_stats", "ctx_doctor", "ctx_upgrade"}
HINTS = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")


def wire(tools: list[Any]) -> list[dict[str, Any]]:
    """The tools array as it travels in the tools/list result."""
    return [t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in tools]


def compact(tools: list[dict[str, Any]]) -> bytes:
    return json.dumps(tools, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def write_snapshot() -> None:
    from ctxmode.server.app import tool_list

    text = json.dumps(wire(tool_list()), indent=2, ensure_ascii=False) + "\n"
    SNAPSHOT.write_text(text, encoding="utf-8")


async def listed(client: Any) -> list[dict[str, Any]]:
    with anyio.fail_after(5):
        result = await client.list_tools()
    assert result.next_cursor is None
    return wire(result.tools)


async def test_lists_exactly_the_eleven_tools_in_order_with_upstream_argument_names(client):
    tools = await listed(client)
    assert [t["name"] for t in tools] == list(EXPECTED_ARGS)
    for tool in tools:
        assert list(tool["inputSchema"]["properties"]) == EXPECTED_ARGS[tool["name"]]


async def test_every_input_schema_is_a_plain_object_schema(client):
    for tool in await listed(client):
        schema = tool["inputSchema"]
        assert schema["type"] == "object"
        assert schema["properties"] or tool["name"] in NO_PARAMETERS, tool["name"]
        assert not {"allOf", "anyOf", "oneOf", "not", "$ref"} & set(schema)
        assert set(schema.get("required", [])) <= set(schema["properties"])


async def test_required_arguments_match_upstream(client):
    required = {t["name"]: t["inputSchema"].get("required", []) for t in await listed(client)}
    assert required == {
        "ctx_execute": ["language", "code"],
        "ctx_execute_file": ["path", "language", "code"],
        "ctx_batch_execute": ["commands", "queries"],
        "ctx_index": [],
        "ctx_search": ["queries"],
        "ctx_fetch_and_index": [],
        "ctx_stats": [],
        "ctx_doctor": [],
        "ctx_upgrade": [],
        "ctx_purge": ["confirm"],
        "ctx_insight": [],
    }


async def test_tool_names_are_valid_mcp_names(client):
    for tool in await listed(client):
        assert NAME_RE.match(tool["name"])


async def test_annotations_carry_all_four_hints_as_booleans_as_the_catalog_declares(client):
    declared = {t.name: t for t in TOOLS}
    for tool in await listed(client):
        hints = tool["annotations"]
        assert all(isinstance(hints[h], bool) for h in HINTS), tool["name"]
        spec = declared[tool["name"]]
        assert hints == {
            "readOnlyHint": spec.read_only,
            "destructiveHint": spec.destructive,
            "idempotentHint": spec.idempotent,
            "openWorldHint": spec.open_world,
        }


async def test_hints_say_what_each_tool_does(client):
    """Read-only: nothing but reading (ctx_upgrade is not: it hands out an install
    command); open world: runs code, reaches the network or opens the user's browser."""
    by_name = {t["name"]: t["annotations"] for t in await listed(client)}
    assert [n for n, h in by_name.items() if h["readOnlyHint"]] == [
        "ctx_search",
        "ctx_stats",
        "ctx_doctor",
    ]
    assert [n for n, h in by_name.items() if h["destructiveHint"]] == [
        "ctx_execute",
        "ctx_execute_file",
        "ctx_batch_execute",
        "ctx_purge",
    ]
    assert [n for n, h in by_name.items() if h["openWorldHint"]] == [
        "ctx_execute",
        "ctx_execute_file",
        "ctx_batch_execute",
        "ctx_fetch_and_index",
        "ctx_insight",
    ]
    assert not by_name["ctx_execute"]["idempotentHint"]
    assert by_name["ctx_index"]["idempotentHint"] and by_name["ctx_search"]["idempotentHint"]


async def test_the_titles_of_the_tools_that_run_code_say_so(client):
    titles = {t["name"]: t["title"] for t in await listed(client)}
    for name in ("ctx_execute", "ctx_execute_file", "ctx_batch_execute"):
        assert "(executes" in titles[name] and titles[name].startswith("Run "), titles[name]


UPSTREAM = Path(__file__).with_name("upstream_tools_1.0.169.json")


async def test_every_argument_of_upstream_1_0_169_is_offered_with_its_type(client):
    """Agents written for context-mode 1.0.169 pass every argument its tools/list offers
    (saved from a live tools/list: names and JSON types)."""
    ours = {t["name"]: t["inputSchema"]["properties"] for t in await listed(client)}
    upstream = json.loads(UPSTREAM.read_text(encoding="utf-8"))["tools"]
    missing = [
        f"{tool['name']}.{arg}"
        for tool in upstream
        for arg in tool["arguments"]
        if arg not in ours.get(tool["name"], {})
    ]
    assert missing == []
    for tool in upstream:
        for arg, kind in tool["arguments"].items():
            declared = ours[tool["name"]][arg].get("type")
            assert declared == kind or {declared, kind} == {"integer", "number"}, (
                f"{tool['name']}.{arg}: {declared} vs {kind}"
            )


async def test_no_tool_declares_an_output_schema(client):
    assert all("outputSchema" not in t for t in await listed(client))


async def test_tools_list_matches_the_snapshot(client):
    expected = json.loads(SNAPSHOT.read_text(encoding="utf-8"))
    assert await listed(client) == expected


async def test_compact_tools_json_fits_the_budget(client):
    size = len(compact(await listed(client)))
    assert size <= BUDGET_BYTES, f"tools/list costs {size} bytes, budget {BUDGET_BYTES}"


async def test_prompts_and_resources_are_listed_empty(client):
    with anyio.fail_after(5):
        assert (await client.list_prompts()).prompts == []
        assert (await client.list_resources()).resources == []
        assert (await client.list_resource_templates()).resource_templates == []
