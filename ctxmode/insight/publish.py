"""Putting the page where a person sees it: a file under the data root, and a browser.

The file is replaced atomically, so a browser reloading it never shows half a page. A
browser is opened only where one can appear: on Linux and other X11/Wayland systems
without ``$DISPLAY`` or ``$WAYLAND_DISPLAY`` (SSH, containers, CI) `webbrowser` would fall
back to a text browser that takes over the terminal, so nothing is opened there.
"""

import os
import subprocess
import sys
import threading
from pathlib import Path

from ctxmode import settings
from ctxmode.errors import CtxError


def page_file(root: Path) -> Path:
    return root / "insight" / "index.html"


def write_page(path: Path, html: str) -> Path:
    """Write `html` to `path` atomically (a temporary file renamed over it).

    Raises:
        CtxError: the file cannot be written.
    """
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(html, encoding="utf-8")
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise CtxError(f"cannot write the dashboard to {path}: {exc.strerror or exc}") from exc
    return path


def browser_available() -> bool:
    """Whether opening a browser can show something to a person."""
    if settings.no_browser():
        return False
    if sys.platform in ("darwin", "win32"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def open_browser(url: str, *, detached: bool = False) -> bool:
    """Open `url` in the default browser; False when none could be started.

    `detached`: from a child process with no stdin/stdout (the MCP server speaks JSON-RPC
    on its own stdio, where a browser's console chatter must never land).
    """
    if not browser_available():
        return False
    if detached:
        try:
            child = subprocess.Popen(
                [sys.executable, "-m", "webbrowser", "-t", url],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
        except OSError:
            return False
        threading.Thread(target=child.wait, name="ctxmode-browser", daemon=True).start()
        return True
    import webbrowser

    try:
        return webbrowser.open(url, new=2)
    except webbrowser.Error:
        return False
