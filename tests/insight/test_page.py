"""The dashboard's data and page over real databases: numbers, escaping, empty state."""

import json
import re

import pytest

from ctxmode import paths
from ctxmode.insight import data, page
from ctxmode.session.db import SessionDB
from ctxmode.session.events import Event
from ctxmode.session.where import session_db_path
from ctxmode.stats.model import Usage, savings
from ctxmode.stats.report import EMPTY_STATE

from .support import CHARTS, EVIL, chart, fill, table


def test_data_gathers_days_tools_categories_and_files(project, home):
    fill(project, home)
    found = data.gather(project)
    assert found["scope"] == "project" and found["projects"] == [str(project)]
    assert found["sessions"] == 2
    assert found["knowledge_base"]["sources"] == 1
    assert [(d["day"], d["calls"], d["returned"], d["sandboxed"]) for d in found["daily"]] == [
        ("2024-05-01", 2, 1000, 99_000),
        ("2024-05-03", 4, 1700, 4800),
    ]
    tools = {t["tool"]: t for t in found["by_tool"]}
    assert [t["tool"] for t in found["by_tool"]] == ["ctx_execute", "ctx_index", "ctx_search"]
    assert tools["ctx_index"]["indexed"] == 4800 and tools["ctx_search"]["calls"] == 3
    assert found["totals"]["sandboxed"] == 103_800 and found["totals"]["returned"] == 2700
    expected = savings(103_800, 2700)
    assert expected is not None
    assert found["savings"]["kept_out_percent"] == expected.percent
    assert found["events_by_category"] == [
        {"category": "file", "events": 5},
        {"category": "git", "events": 1},
    ]
    assert found["top_files"] == [
        {"path": "src/app.py", "project_dir": str(project), "events": 2},
        {"path": EVIL, "project_dir": str(project), "events": 1},
        {"path": "~/notes.md", "project_dir": str(project), "events": 1},
    ]
    json.dumps(found)  # the data is JSON as it is


def test_page_has_the_four_charts_with_their_numbers(project, home):
    fill(project, home)
    html = page.render(data.gather(project))
    for name in CHARTS:
        svg = chart(html, name)
        assert re.search(r'<title id="[^"]+">[^<]+</title>', svg), name
        assert 'role="img"' in svg
        assert svg.count("<rect") > 0, name
    assert chart(html, "savings-over-time").count("<rect") == 4  # two days, kept + returned
    assert "<b>97.5%</b> kept out of the context" in html
    assert table(html, "per-tool") == [
        ["tool", "calls", "returned", "kept out", "indexed", "kept out %"],
        ["ctx_execute", "2", "1000 B", "96.7 KB", "0 B", "99.0%"],
        ["ctx_index", "1", "200 B", "4.7 KB", "4.7 KB", "96.0%"],
        ["ctx_search", "3", "1.5 KB", "0 B", "0 B", "0.0%"],
    ]
    files = chart(html, "top-files")
    assert ">src/app.py</text>" in files and ">~/notes.md</text>" in files
    assert "**/*.py" not in files
    assert "tokens are estimates (bytes / 4)" in html
    assert "ctxmode 0." in html and "generated 20" in html


def test_untrusted_text_is_escaped(project, home):
    fill(project, home)
    html = page.render(data.gather(project))
    assert "<script" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;.py" in chart(html, "top-files")


def test_the_page_loads_nothing_from_anywhere(project, home):
    fill(project, home)
    html = page.render(data.gather(project))
    lowered = html.lower()
    for forbidden in (
        "<script",
        "src=",
        "href=",
        "http://",
        "https://",
        "url(",
        "@import",
        "<link",
    ):
        assert forbidden not in lowered, forbidden
    assert "Content-Security-Policy" in html and "default-src 'none'" in html


def test_empty_state_without_any_data(project):
    found = data.gather(project)
    assert found["savings"] == {"measured": False}
    assert found["daily"] == [] and found["by_tool"] == [] and found["top_files"] == []
    html = page.render(found)
    assert EMPTY_STATE in html
    assert "kept out of the context:" not in html
    for name in CHARTS:
        svg = chart(html, name)
        assert "<rect" not in svg and 'class="empty"' in svg
    assert 'data-table="per-tool"' not in html
    assert list(paths.data_root().rglob("*")) == [], "looking must write nothing"


def test_calls_without_bytes_are_not_a_percentage(project):
    with SessionDB(session_db_path(project, paths.data_root())) as sdb:
        sdb.add_usage("s1", "ctx_search", Usage(calls=1))
    found = data.gather(project)
    assert found["savings"] == {"measured": False}
    assert EMPTY_STATE in page.render(found)


def test_an_unreadable_database_is_a_problem_not_a_crash(project, home, tmp_path):
    fill(project, home)
    broken = paths.data_root() / "sessions" / "0123456789abcdef.db"
    broken.write_bytes(b"this is not a database" * 100)
    found = data.gather(project, all_projects=True)
    assert found["problems"] and found["problems"][0].startswith("0123456789abcdef.db: ")
    assert found["totals"]["calls"] == 6  # the readable project still counts
    assert "Could not read 0123456789abcdef.db" in page.render(found)
    other = (tmp_path / "other").resolve()
    other.mkdir()
    session_db_path(other, paths.data_root()).write_bytes(b"\0garbage" * 100)
    single = data.gather(other)
    assert len(single["problems"]) == 1 and single["sessions"] == 0
    assert "Could not read" in page.render(single)


def test_all_projects_adds_every_project(project, home, tmp_path):
    fill(project, home)
    other = (tmp_path / "other").resolve()
    other.mkdir()
    with SessionDB(session_db_path(other, paths.data_root())) as sdb:
        sdb.ensure_session("s9", str(other))
        sdb.add_usage("s9", "ctx_execute", Usage(calls=1, returned=10, sandboxed=990))
    mine = data.gather(project)
    everything = data.gather(project, all_projects=True)
    assert everything["scope"] == "all_projects"
    assert sorted(everything["projects"]) == sorted([str(project), str(other)])
    assert everything["totals"]["calls"] == mine["totals"]["calls"] + 1
    html = page.render(everything)
    assert "All projects (2)" in html
    assert ">proj: src/app.py</text>" in chart(html, "top-files")


def test_paths_are_shown_relative_to_the_project_and_home():
    assert data.display_path("/w/p/src/a.py", "/w/p", home="/h") == "src/a.py"
    assert data.display_path("/w/px/a.py", "/w/p", home="/h") == "/w/px/a.py"
    assert data.display_path("/h/notes/a.md", "/w/p", home="/h") == "~/notes/a.md"
    assert data.display_path("rel/a.py", "/w/p", home="/h") == "rel/a.py"
    assert data.display_path("/h", "", home="/h") == "~"


def test_a_row_with_a_bad_date_is_left_out_of_the_days(project):
    with SessionDB(session_db_path(project, paths.data_root())) as sdb:
        sdb.add_usage("s1", "ctx_execute", Usage(calls=1, returned=10, sandboxed=90))
        sdb.connection.execute("UPDATE usage_daily SET day = '2024-13-45'")
        sdb.connection.execute("UPDATE tool_calls SET updated_at = '2024-13-45T00:00:00.000Z'")
    found = data.gather(project)
    assert found["daily"] == [] and found["totals"]["calls"] == 1
    assert 'class="empty"' in chart(page.render(found), "savings-over-time")


def test_windows_absolute_paths_get_no_project_name(project):
    recorded = ["C:\\docs\\notes.md", "D:/x/y.py", "\\\\server\\share\\z.py", "src/rel.py"]
    with SessionDB(session_db_path(project, paths.data_root())) as sdb:
        sdb.add_events(
            "s1",
            [Event("file_read", path) for path in recorded],
            source_hook="PostToolUse",
            project_dir=str(project),
        )
    files = chart(page.render(data.gather(project, all_projects=True)), "top-files")
    for shown in ("C:/docs/notes.md", "D:/x/y.py", "//server/share/z.py", "proj: src/rel.py"):
        assert f">{shown}</text>" in files, shown
    assert "proj: C:" not in files and "proj: D:" not in files and "proj: //" not in files


@pytest.mark.parametrize(
    ("path", "label"),
    [
        ("C:/Users/me/a.py", "C:/Users/me/a.py"),
        ("c:\\Users\\me\\a.py", "c:\\Users\\me\\a.py"),
        ("//server/share/a.py", "//server/share/a.py"),
        ("/home/me/a.py", "/home/me/a.py"),
        ("~/a.py", "~/a.py"),
        ("src/a.py", "proj: src/a.py"),
        ("a:b.py", "proj: a:b.py"),  # a file name with a colon, not a drive
    ],
)
def test_file_labels_name_the_project_only_for_relative_paths(path, label):
    row = {"path": path, "project_dir": "~/code/proj", "events": 1}
    assert page._file_label(row, all_projects=True) == label
    assert page._file_label(row, all_projects=False) == path


def test_page_says_what_the_kept_out_tokens_were_worth(project, home):
    from ctxmode.session import modelusage
    from ctxmode.session.db import now_iso
    from ctxmode.session.hostusage import TokenUsage

    fill(project, home)
    with SessionDB(session_db_path(project, paths.data_root())) as sdb, sdb.transaction() as con:
        modelusage.add(con, "s1", {"gpt-4.1": TokenUsage(9000, 100, 1000, 0, 3)}, now_iso())
    found = data.gather(project)
    worth = found["worth"]
    assert (worth["model"], worth["kept_out_tokens_estimate"]) == ("gpt-4.1", 25_950)
    assert worth["dollars"] == pytest.approx(25_950 * worth["input_usd_per_million"] / 1e6)
    html = page.render(found)
    assert "Worth: ~25.9K tokens kept out = $" in html and "at gpt-4.1&#x27;s input price" in html
