"""The page as a real browser renders it: headless Chromium, skipped when none is installed.

No browser is a project or CI dependency; install one locally (``apt-get install
chromium``) to run these.
"""

import shutil
import subprocess
from pathlib import Path

import pytest

from ctxmode.insight import data, page
from ctxmode.insight.publish import write_page

from .support import CHARTS, chart, fill

BROWSERS = (
    "chromium",
    "chromium-browser",
    "google-chrome",
    "headless_shell",
    "chrome-headless-shell",
)
TIMEOUT_S = 120


def _browser() -> str:
    for name in BROWSERS:
        found = shutil.which(name)
        if found:
            return found
    pytest.skip(f"no headless browser found (looked for {', '.join(BROWSERS)})")


def _run(browser: str, tmp_path: Path, *args: str) -> str:
    profile = tmp_path / "browser-profile"
    try:
        proc = subprocess.run(
            [
                browser,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--disable-extensions",
                f"--user-data-dir={profile}",
                *args,
            ],
            capture_output=True,
            text=True,
            encoding="utf-8",
            errors="replace",
            timeout=TIMEOUT_S,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"{browser} did not finish in {TIMEOUT_S} s")
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


@pytest.fixture
def page_file(project, home, tmp_path) -> Path:
    fill(project, home)
    return write_page(tmp_path / "site" / "index.html", page.render(data.gather(project)))


def test_chromium_renders_the_four_charts(page_file, tmp_path):
    dom = _run(_browser(), tmp_path, "--dump-dom", page_file.as_uri())
    for name in CHARTS:
        svg = chart(dom, name)
        assert "<title" in svg, name
        assert svg.count("<rect") > 0, name
    assert "&lt;script&gt;alert(1)&lt;/script&gt;.py" in chart(dom, "top-files")
    assert "<script" not in dom


def test_chromium_screenshot_is_a_real_picture(page_file, tmp_path):
    shot = tmp_path / "insight.png"
    _run(
        _browser(),
        tmp_path,
        "--hide-scrollbars",
        "--window-size=1000,1600",
        f"--screenshot={shot}",
        page_file.as_uri(),
    )
    png = shot.read_bytes()
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    assert len(png) > 20_000  # text and bars, not a blank page
