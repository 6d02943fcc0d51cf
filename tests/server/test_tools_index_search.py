"""ctx_index and ctx_search through a real MCP session and a real knowledge base
(spec 1.4, 1.5; section 12 items 14-18, 44-45)."""

import re

import anyio
import pytest

from .support import CALL_S, call, deny

pytestmark = pytest.mark.anyio

GUIDE = """# Widget guide

## Installing widgets

Run the widget installer and confirm the checksum.

## Configuring widgets

Set widget.color and widget.size in the config file.

## Removing widgets

Delete the widget directory and clear the cache.
"""


def hits(text: str) -> int:
    return len(re.findall(r"^--- \[", text, flags=re.MULTILINE))


async def index(client, **args) -> str:
    text, is_error = await call(client, "ctx_index", args)
    assert not is_error, text
    return text


# ------------------------------------------------------------------------ ctx_index


@pytest.mark.parametrize("args", [{}, {"content": ""}, {"content": "", "path": ""}])
async def test_index_needs_content_or_path(client, args):
    text, is_error = await call(client, "ctx_index", args)
    assert is_error
    assert "Either content or path must be provided" in text


async def test_indexed_content_is_searchable(client):
    text = await index(client, content=GUIDE, source="widget-docs")
    assert text.startswith("Indexed 4 sections (0 with code) from: widget-docs\n")
    assert 'source: "widget-docs"' in text
    found, is_error = await call(client, "ctx_search", {"queries": ["checksum installer"]})
    assert not is_error
    assert "--- [widget-docs" in found
    assert "### Widget guide > Installing widgets" in found


async def test_index_counts_code_sections(client):
    text = await index(
        client, content="# Use\n\n```python\nprint('x')\n```\n\n# Notes\n\nprose", source="c"
    )
    assert text.startswith("Indexed 2 sections (1 with code) from: c\n")


async def test_index_path_relative_to_the_project_gets_a_project_relative_label(client, project):
    (project / "docs").mkdir()
    (project / "docs" / "guide.md").write_text(GUIDE, encoding="utf-8")
    text = await index(client, path="docs/guide.md")
    assert "from: docs/guide.md\n" in text
    found, is_error = await call(client, "ctx_search", {"queries": ["widget cache directory"]})
    assert not is_error
    assert "--- [docs/guide.md" in found
    assert "Delete the widget directory" in found


async def test_index_absolute_path_inside_the_project(client, project):
    (project / "notes.md").write_text("# Notes\n\nThe ferret feeds at noon.", encoding="utf-8")
    text = await index(client, path=str(project / "notes.md"))
    assert "from: notes.md\n" in text


async def test_index_path_with_an_explicit_source(client, project):
    (project / "notes.md").write_text("# Notes\n\nThe ferret feeds at noon.", encoding="utf-8")
    text = await index(client, path="notes.md", source="my notes")
    assert "from: my notes\n" in text


async def test_index_refuses_what_is_not_a_regular_file(client, project):
    text, is_error = await call(client, "ctx_index", {"path": "/dev/null"})
    assert is_error
    assert "not a regular file" in text
    empty, is_error = await call(client, "ctx_search", {"queries": ["anything"]})
    assert is_error and empty.startswith("Knowledge base is empty")


async def test_index_directory_indexes_each_text_file_and_skips_binaries(client, project):
    docs = project / "docs"
    (docs / "deep").mkdir(parents=True)
    (docs / "a.md").write_text("# A\n\nthe ocelot naps\n", encoding="utf-8")
    (docs / "deep" / "b.py").write_text("def ocelot_feed():\n    return 1\n", encoding="utf-8")
    (docs / "logo.png").write_bytes(b"\x89PNG\x00\x00")
    text, is_error = await call(client, "ctx_index", {"path": "docs"})
    assert not is_error
    assert "from: 2 files under docs" in text and "Skipped 1" in text
    found, _ = await call(client, "ctx_search", {"queries": ["ocelot"], "limit": 2})
    assert "docs/a.md" in found and "docs/deep/b.py" in found


async def test_a_directory_index_out_of_time_says_to_call_again_and_goes_on(
    client, project, monkeypatch
):
    from ctxmode.server import tools

    docs = project / "docs"
    docs.mkdir()
    for n in range(3):
        (docs / f"n{n}.md").write_text(f"# N{n}\n\nthe pangolin {n}\n", encoding="utf-8")
    monkeypatch.setattr(tools, "INDEX_BUDGET_S", 0)
    text, is_error = await call(client, "ctx_index", {"path": "docs"})
    assert not is_error
    assert "from: 0 files under docs" in text
    assert "Stopped after 0 s with 3 files left: call ctx_index again" in text
    monkeypatch.setattr(tools, "INDEX_BUDGET_S", 45)
    text, _ = await call(client, "ctx_index", {"path": "docs"})
    assert "from: 3 files under docs" in text and "Stopped" not in text


async def test_a_directory_too_big_to_list_in_time_is_an_error_naming_it(
    client, project, monkeypatch
):
    from ctxmode.server import tools
    from ctxmode.store.indexer import STOP_EVERY

    docs = project / "docs"
    docs.mkdir()
    for n in range(STOP_EVERY):
        (docs / f"n{n}.md").write_text("# N\n\nx\n", encoding="utf-8")
    monkeypatch.setattr(tools, "INDEX_BUDGET_S", 0)
    text, is_error = await call(client, "ctx_index", {"path": "docs"})
    assert is_error
    assert text == (
        "Stopped after 0 s: docs holds too many files to list in one call."
        " Index its subdirectories one by one."
    )


async def test_index_missing_path_is_an_error(client):
    text, is_error = await call(client, "ctx_index", {"path": "no/such.md"})
    assert is_error
    assert "no such file" in text


async def test_index_denied_path_is_refused_and_nothing_is_indexed(client, project):
    deny(project, "Read(.env)")
    (project / ".env").write_text("API_TOKEN=hunter2\n", encoding="utf-8")
    text, is_error = await call(client, "ctx_index", {"path": ".env"})
    assert is_error
    assert text == "File access blocked by security policy: path matches Read deny pattern .env"
    empty, is_error = await call(client, "ctx_search", {"queries": ["hunter2"]})
    assert is_error and empty.startswith("Knowledge base is empty")


async def test_index_denied_path_reached_through_dotdot_is_refused(client, project):
    deny(project, "Read(.env)")
    (project / ".env").write_text("API_TOKEN=hunter2\n", encoding="utf-8")
    (project / "sub").mkdir()
    text, is_error = await call(client, "ctx_index", {"path": "sub/../.env"})
    assert is_error
    assert text.startswith("File access blocked by security policy")


async def test_index_content_is_not_path_gated(client, project):
    deny(project, "Read(.env)")
    text = await index(client, content="# Env\n\nAPI_TOKEN is documented here.", source=".env")
    assert "from: .env\n" in text


# ----------------------------------------------------------------------- ctx_search


async def test_search_on_an_empty_knowledge_base_is_an_error(client):
    text, is_error = await call(client, "ctx_search", {"queries": ["anything"]})
    assert is_error
    assert text.startswith("Knowledge base is empty")
    assert "ctx_batch_execute(commands, queries)" in text
    assert "ctx_index(content, source)" in text


async def test_search_without_queries_is_an_error(client):
    await index(client, content=GUIDE, source="widget-docs")
    text, is_error = await call(client, "ctx_search", {"queries": []})
    assert is_error
    assert "provide query or queries" in text


async def test_search_result_format(client):
    await index(client, content=GUIDE, source="widget-docs")
    text, is_error = await call(client, "ctx_search", {"queries": ["checksum installer"]})
    assert not is_error
    assert re.match(
        r"## checksum installer\n\n--- \[widget-docs[^\]]*\] ---\n"
        r"### Widget guide > Installing widgets\n\n",
        text,
    ), text


async def test_search_sections_per_query_are_separated(client):
    await index(client, content=GUIDE, source="widget-docs")
    text, is_error = await call(client, "ctx_search", {"queries": ["checksum", "color size"]})
    assert not is_error
    first, second = text.split("\n\n---\n\n")
    assert first.startswith("## checksum\n\n")
    assert second.startswith("## color size\n\n")
    assert "widget.color" in second


async def test_search_queries_as_a_json_string(client):
    await index(client, content=GUIDE, source="widget-docs")
    text, is_error = await call(client, "ctx_search", {"queries": '["checksum", "cache"]'})
    assert not is_error
    assert text.startswith("## checksum\n\n")
    assert "\n## cache\n\n" in text


async def test_search_queries_as_a_bare_string(client):
    await index(client, content=GUIDE, source="widget-docs")
    text, is_error = await call(client, "ctx_search", {"queries": "checksum"})
    assert not is_error
    assert text.startswith("## checksum\n\n--- [widget-docs")


@pytest.mark.parametrize(("limit", "expected"), [("1", 1), ("2", 2), (2, 2)])
async def test_search_limit_as_string_or_number(client, limit, expected):
    await index(client, content=GUIDE, source="widget-docs")
    text, is_error = await call(client, "ctx_search", {"queries": ["widget"], "limit": limit})
    assert not is_error
    assert hits(text) == expected


async def test_search_limit_above_two_is_capped_at_two(client):
    await index(client, content=GUIDE, source="widget-docs")
    text, is_error = await call(client, "ctx_search", {"queries": ["widget"], "limit": 10})
    assert not is_error
    assert hits(text) == 2


async def test_search_bad_limit_is_an_error_result(client):
    await index(client, content=GUIDE, source="widget-docs")
    text, is_error = await call(client, "ctx_search", {"queries": ["widget"], "limit": "many"})
    assert is_error
    assert "limit must be a number" in text


async def test_search_no_results(client):
    await index(client, content=GUIDE, source="widget-docs")
    text, is_error = await call(client, "ctx_search", {"queries": ["xylophone"]})
    assert (text, is_error) == ("## xylophone\n\nNo results found.", False)


async def test_search_source_filter_matches_label_substrings(client):
    await index(client, content="# Alpha\n\nthe shared gizmo in alpha", source="alpha-notes")
    await index(client, content="# Beta\n\nthe shared gizmo in beta", source="beta-notes")
    both, _ = await call(client, "ctx_search", {"queries": ["shared gizmo"]})
    assert "--- [alpha-notes" in both and "--- [beta-notes" in both
    text, is_error = await call(
        client, "ctx_search", {"queries": ["shared gizmo"], "source": "beta"}
    )
    assert not is_error
    assert "--- [beta-notes" in text
    assert "alpha-notes" not in text


async def test_search_content_type_filter(client):
    content = (
        "# Prose part\n\nThe gizmo calibration is explained in words.\n\n"
        "# Code part\n\n```python\ngizmo_calibration = calibrate('gizmo')\n```\n"
    )
    await index(client, content=content, source="mixed")
    code, _ = await call(client, "ctx_search", {"queries": ["gizmo"], "contentType": "code"})
    prose, _ = await call(client, "ctx_search", {"queries": ["gizmo"], "contentType": "prose"})
    assert "### Code part" in code and "### Prose part" not in code
    assert "### Prose part" in prose and "### Code part" not in prose


async def test_search_bad_content_type_is_an_error_result(client):
    await index(client, content=GUIDE, source="widget-docs")
    text, is_error = await call(
        client, "ctx_search", {"queries": ["widget"], "contentType": "video"}
    )
    assert is_error
    assert "contentType must be code or prose" in text


async def test_search_auto_refreshes_a_file_changed_since_indexing(client, project):
    doc = project / "changing.md"
    doc.write_text("# Fruit\n\nkiwi and banana", encoding="utf-8")
    await index(client, path="changing.md")
    doc.write_text("# Fruit\n\nkiwi and mango and papaya, much more now", encoding="utf-8")
    text, is_error = await call(client, "ctx_search", {"queries": ["kiwi"]})
    assert not is_error
    assert text.startswith("> Auto-refreshed 1 stale source (file changed since indexing).\n\n")
    assert "mango and papaya" in text
    assert "banana" not in text


async def test_search_drops_a_deleted_file_and_says_so(client, project):
    await index(client, content="# Keep\n\nkiwi kept in content", source="kept")
    doc = project / "gone.md"
    doc.write_text("# Gone\n\nkiwi in a file that goes away", encoding="utf-8")
    await index(client, path="gone.md")
    doc.unlink()
    text, is_error = await call(client, "ctx_search", {"queries": ["kiwi"]})
    assert not is_error
    assert "> Dropped 1 source(s) whose file was deleted: gone.md" in text
    assert "goes away" not in text
    assert "--- [kept" in text


# --------------------------------------------------------------------- flood guard


async def search_once(client) -> tuple[str, bool]:
    return await call(client, "ctx_search", {"queries": ["widget", "cache"], "limit": 3})


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_flood_guard_limits_then_blocks_the_ninth_call(server, mode):
    from mcp import Client

    async with Client(server, mode=mode) as client:
        await index(client, content=GUIDE, source="widget-docs")
        for n in range(1, 9):
            text, is_error = await search_once(client)
            assert not is_error, f"call {n}: {text}"
            sections = text.split("\n\n---\n\n")
            if n <= 2:
                assert "⚠ search call" not in text, f"call {n}"
            if n >= 4:
                assert all(hits(section) <= 1 for section in sections), f"call {n}: {text}"
                assert f"⚠ search call #{n}/8 in this window" in text, f"call {n}: {text}"
                assert "Results limited to 1/query" in text
        text, is_error = await search_once(client)
    assert is_error, text
    assert text.startswith("BLOCKED: 9 search calls in ")
    assert "ctx_batch_execute(commands, queries)" in text


async def test_flood_guard_windows_are_per_client_session(server):
    # Handshake-era sessions (initialize): each client connection is a session of its own.
    # (2026-07-28 requests are sessionless, so two such clients cannot be told apart.)
    from mcp import Client

    async with Client(server, mode="legacy") as first, Client(server, mode="legacy") as second:
        await index(first, content=GUIDE, source="widget-docs")
        for _ in range(8):
            await search_once(first)
        blocked, first_refused = await search_once(first)
        text, second_refused = await search_once(second)
    assert first_refused and blocked.startswith("BLOCKED:"), "the first session is not blocked"
    assert not second_refused, text
    assert "⚠ search call" not in text
    assert hits(text.split("\n\n---\n\n")[0]) == 2


async def test_a_reply_full_of_answers_names_the_queries_it_did_not_search(
    client, state, monkeypatch
):
    from ctxmode.store.query import MAX_QUERIES

    await index(client, content=GUIDE * 40, source="widget-docs")
    searched = []
    with state.store() as store:  # the real search, counted
        search = store.search
        monkeypatch.setattr(store, "search", lambda q, **kw: searched.append(q) or search(q, **kw))
    queries = [f"widget installer checksum {n}" for n in range(MAX_QUERIES + 50)]
    text, is_error = await call(client, "ctx_search", {"queries": queries})
    assert not is_error
    assert len(text) < 48 * 1024
    assert 0 < len(searched) < len(queries)
    assert searched == queries[: len(searched)]
    rest = len(queries) - len(searched)
    assert f"{rest} more queries not searched" in text
    assert f"- {queries[len(searched)]}\n" in text and f"- … and {rest - 5} more" in text


async def test_a_query_is_echoed_on_one_line_and_cut_when_long(client):
    await index(client, content=GUIDE, source="widget-docs")
    pasted = "widget installer\n  checksum " + "x" * 500
    text, _ = await call(client, "ctx_search", {"queries": [pasted]})
    first = text.splitlines()[0]
    assert first.startswith("## widget installer checksum xxx") and first.endswith("…")
    assert len(first) == 3 + 200


async def test_a_reply_answers_at_most_max_queries(client):
    from ctxmode.store.query import MAX_QUERIES

    await index(client, content=GUIDE, source="widget-docs")
    queries = [f"zzqx{n}" for n in range(MAX_QUERIES + 7)]
    text, is_error = await call(client, "ctx_search", {"queries": queries})
    assert not is_error
    assert text.count("No results found.") == MAX_QUERIES
    assert "7 more queries not searched" in text and f"- zzqx{MAX_QUERIES}\n" in text


async def test_a_search_on_an_unknown_source_says_so_and_names_the_sources(client):
    await index(client, content=GUIDE, source="widget-docs")
    text, is_error = await call(
        client, "ctx_search", {"queries": ["widget installer"], "source": "no-such-source"}
    )
    assert not is_error
    assert text.startswith('No indexed source matches source: "no-such-source".')
    assert '"widget-docs"' in text
    found, _ = await call(
        client, "ctx_search", {"queries": ["nothing-like-this"], "source": "widget"}
    )
    assert "No indexed source matches" not in found  # the source exists: no hint


async def test_a_log_of_several_megabytes_is_indexed_by_path_and_found(client, project):
    lines = [f"2026-01-01T00:00:00 INFO req={i:08x} ok status=200" for i in range(120_000)]
    lines[77_777] = "2026-01-01T00:00:00 ERROR quartz-reactor meltdown in sector seven"
    (project / "app.log").write_text("\n".join(lines) + "\n")
    assert (project / "app.log").stat().st_size > 5 * 1024 * 1024
    text = await index(client, path="app.log")
    assert text.startswith("Indexed ")
    found, _ = await call(client, "ctx_search", {"queries": ["quartz-reactor meltdown"]})
    assert "quartz-reactor meltdown in sector seven" in found


async def test_a_file_over_the_ctx_index_ceiling_is_refused_in_ctx_index_s_terms(
    client, project, monkeypatch
):
    from ctxmode.server import tools

    monkeypatch.setattr(tools, "FILE_MAX_BYTES", 1024)
    (project / "big.txt").write_text("words and more words\n" * 200)
    text, is_error = await call(client, "ctx_index", {"path": "big.txt"})
    assert is_error
    assert "--max-file-size" not in text
    assert "split it" in text and "ctx_index" in text


async def test_flood_guard_is_not_bypassed_by_naming_a_new_agent_per_call(client):
    """The agent id comes from the client's `_meta`: a fresh one per call gets a fresh
    window, but all agents together are held to `AGENT_SHARE` agents' budget."""
    from ctxmode.server.state import AGENT_SHARE

    await index(client, content=GUIDE, source="widget-docs")
    outcomes = []
    for n in range(AGENT_SHARE * 9):
        with anyio.fail_after(CALL_S):
            result = await client.call_tool(
                "ctx_search", {"queries": ["widget"]}, meta={"agent_id": f"invented-{n}"}
            )
        outcomes.append((bool(result.is_error), result.content[0].text))
    assert not any(refused for refused, _ in outcomes[:-1])
    assert "Results limited to 1/query" in outcomes[AGENT_SHARE * 4][1]
    refused, text = outcomes[-1]
    assert refused, text
    assert text.startswith(f"BLOCKED: {AGENT_SHARE * 9} search calls by all agents in ")


async def test_flood_guard_still_counts_each_named_agent_on_its_own(client):
    await index(client, content=GUIDE, source="widget-docs")
    for agent in ("a", "b", "c"):
        for n in range(8):
            with anyio.fail_after(CALL_S):
                result = await client.call_tool(
                    "ctx_search", {"queries": ["widget"]}, meta={"agent_id": agent}
                )
            assert not result.is_error, (agent, n, result.content[0].text)


def test_flood_guard_keeps_a_bounded_number_of_windows():
    from ctxmode.server.state import MAX_CALLERS, FloodGuard

    guard = FloodGuard()
    for n in range(MAX_CALLERS * 10):
        guard.hit(f"client:agent={n}", now=1.0)
    assert len(guard.windows) <= MAX_CALLERS
    assert guard.hit("client:agent=new", now=1.0).calls == MAX_CALLERS * 10 + 1
