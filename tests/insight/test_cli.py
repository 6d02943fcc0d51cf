"""`ctxmode insight` as a command, and the core the ctx_insight tool calls."""

import json
import urllib.request

import pytest

from ctxmode import paths
from ctxmode.__main__ import main
from ctxmode.insight import agent, for_agent, publish, stop_all

from .support import CHARTS, fill


@pytest.fixture
def no_browser_calls(monkeypatch):
    """Record browser launches instead of making them."""
    opened: list[str] = []

    def fake_open(url: str, new: int = 0, autoraise: bool = True) -> bool:
        opened.append(url)
        return True

    monkeypatch.setattr("webbrowser.open", fake_open)
    return opened


def test_writes_the_page_and_prints_its_path(project, home, capsys, no_browser_calls):
    fill(project, home)
    assert main(["insight", "--no-open"]) == 0
    out = capsys.readouterr().out.strip()
    target = paths.data_root() / "insight" / "index.html"
    assert out == str(target)
    html = target.read_text(encoding="utf-8")
    assert all(f'data-chart="{name}"' in html for name in CHARTS)
    assert no_browser_calls == []
    assert [p.name for p in target.parent.iterdir()] == ["index.html"]  # no temp file left


def test_opens_the_browser_only_where_one_can_show(project, monkeypatch, capsys, no_browser_calls):
    monkeypatch.setattr(publish.sys, "platform", "linux")
    monkeypatch.delenv("CTXMODE_NO_BROWSER")
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    assert main(["insight"]) == 0
    assert no_browser_calls == []
    assert "open it in a browser: file://" in capsys.readouterr().err
    monkeypatch.setenv("WAYLAND_DISPLAY", "wayland-0")
    assert main(["insight"]) == 0
    assert no_browser_calls == [(paths.data_root() / "insight" / "index.html").as_uri()]
    assert main(["insight", "--no-open"]) == 0
    monkeypatch.setenv("CTXMODE_NO_BROWSER", "1")
    assert main(["insight"]) == 0
    assert len(no_browser_calls) == 1


def test_json_is_the_data_in_the_envelope(project, home, capsys):
    fill(project, home)
    assert main(["insight", "--json", "--all-projects"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["command"] == ["insight"] and doc["status"] == "ok"
    assert doc["data"]["scope"] == "all_projects"
    assert doc["data"]["totals"]["calls"] == 6
    assert not (paths.data_root() / "insight").exists()


@pytest.mark.parametrize(
    "argv",
    [["--port", "5000"], ["--json", "--serve"], ["--port", "70000", "--serve"]],
)
def test_bad_combinations_are_usage_errors(project, capsys, argv):
    assert main(["insight", *argv]) == 2
    captured = capsys.readouterr()
    assert "Traceback" not in captured.out + captured.err


def test_usage_error_under_json_is_an_envelope(project, capsys):
    assert main(["insight", "--json", "--serve"]) == 2
    doc = json.loads(capsys.readouterr().out)
    assert doc["status"] == "error" and doc["errors"][0]["code"] == "usage"


def test_a_missing_project_is_not_found(tmp_path, capsys):
    assert main(["insight", "--no-open", "--project", str(tmp_path / "nope")]) == 3


def test_for_agent_writes_the_page(project, home):
    fill(project, home)
    text = for_agent(project, port=None, open_browser=False)
    target = paths.data_root() / "insight" / "index.html"
    assert text.splitlines() == [f"Dashboard written to {target}", f"Open: {target.as_uri()}"]
    assert 'data-chart="per-tool"' in target.read_text(encoding="utf-8")


def test_for_agent_serves_once_and_reuses_the_server(project, home):
    fill(project, home)
    try:
        first = for_agent(project, port=0, open_browser=False)
        url = first.splitlines()[0].removeprefix("Open: ")
        assert url.startswith("http://127.0.0.1:") and url.endswith("/")
        second = for_agent(project, port=0, open_browser=False)
        assert second.splitlines()[0] == f"Open: {url}"
        with urllib.request.urlopen(url + "data.json", timeout=10) as reply:
            assert json.load(reply)["totals"]["calls"] == 6
        assert len(agent._running) == 1
    finally:
        stop_all()
    assert agent._running == {}


def test_for_agent_reports_no_browser(project):
    text = for_agent(project, port=None, open_browser=True)
    assert text.splitlines()[-1] == "No browser here: open it yourself."
