"""The dashboard for an agent (the ``ctx_insight`` tool): a file, or a server in a thread.

The MCP server is long-lived, so a requested server keeps running in a daemon thread
until `stop_all` (server shutdown); asking again for the same view returns the running
one instead of failing on a port it already holds.
"""

import threading
from pathlib import Path

from ctxmode import paths
from ctxmode.insight import data, page, publish, serve

_lock = threading.Lock()
_running: dict[tuple[str, bool], tuple[serve.InsightServer, threading.Thread]] = {}


def write(project_dir: Path, *, all_projects: bool = False, root: Path | None = None) -> Path:
    """Render the dashboard into ``<data root>/insight/index.html``; returns the file.

    Raises:
        CtxError: the file cannot be written.
    """
    root = paths.data_root() if root is None else root
    html = page.render(data.gather(project_dir, all_projects=all_projects, root=root))
    return publish.write_page(publish.page_file(root), html)


def start(port: int, project_dir: Path, *, all_projects: bool = False) -> serve.InsightServer:
    """The running server for this view, started on `port` in a daemon thread if needed.

    Raises:
        UsageError, EnvironmentProblem: see `serve.bind`.
    """
    key = (str(project_dir), all_projects)
    with _lock:
        found = _running.get(key)
        if found is not None and found[1].is_alive():
            return found[0]
        server = serve.bind(port, lambda: data.gather(project_dir, all_projects=all_projects))
        thread = threading.Thread(target=server.serve_forever, name="ctxmode-insight", daemon=True)
        thread.start()
        _running[key] = (server, thread)
        return server


def stop_all() -> None:
    """Stop every server `for_agent` started (the MCP server calls this on shutdown)."""
    with _lock:
        running = list(_running.values())
        _running.clear()
    for server, thread in running:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def for_agent(
    project_dir: Path, *, port: int | None, open_browser: bool, all_projects: bool = False
) -> str:
    """Plain text for the agent: where the dashboard is and how to open it.

    Without a port the page is written to a file; with one (0: any free port) it is served
    live on 127.0.0.1 until the MCP server stops.

    Raises:
        CtxError: the file cannot be written, or the port cannot be used.
    """
    if port is None:
        path = write(project_dir, all_projects=all_projects)
        url = path.as_uri()
        lines = [f"Dashboard written to {path}", f"Open: {url}"]
    else:
        url = start(port, project_dir, all_projects=all_projects).url
        lines = [f"Open: {url}", f"Live until the ctxmode server stops; the data: {url}data.json"]
    if open_browser:
        opened = publish.open_browser(url, detached=True)
        lines.append("Opened in the browser." if opened else "No browser here: open it yourself.")
    return "\n".join(lines)
