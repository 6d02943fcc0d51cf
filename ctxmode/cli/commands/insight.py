"""`ctxmode insight`: the local HTML dashboard, as a file, a live local server or JSON."""

from typing import Annotated

import typer

from ctxmode import paths
from ctxmode.cli import output
from ctxmode.cli.options import JsonOpt, ProjectOpt
from ctxmode.errors import UsageError


def insight(
    all_projects: Annotated[
        bool, typer.Option("--all-projects", "-a", help="Cover every project, not just this one.")
    ] = False,
    project: ProjectOpt = None,
    no_open: Annotated[bool, typer.Option("--no-open", help="Do not open a browser.")] = False,
    serve: Annotated[
        bool,
        typer.Option("--serve", help="Serve the page live on 127.0.0.1 until Ctrl+C."),
    ] = False,
    port: Annotated[
        int | None,
        typer.Option(
            "--port",
            help="Port for --serve (default 4747; 0 picks a free one).",
            min=0,
            max=65535,
            show_default=False,
        ),
    ] = None,
    json_: JsonOpt = False,
) -> None:
    """Open a local dashboard of what ctxmode kept out of the context.

    Savings per day, per tool, session events by category and the most-touched files. The
    page is one self-contained HTML file (inline CSS and SVG, no script, no network),
    written to <data root>/insight/index.html and opened in the browser when there is a
    display (never with --no-open or CTXMODE_NO_BROWSER=1). --serve keeps it live
    instead: regenerated on every request, bound to 127.0.0.1 only, with the figures at
    /data.json. Tokens are estimates (bytes / 4). Read-only: no database is changed.

    Example: ctxmode insight --all-projects --serve --port 0
    """
    from ctxmode.insight import agent, data, publish
    from ctxmode.insight.serve import DEFAULT_PORT

    output.use_json(["insight"], json_)
    if json_ and serve:
        raise UsageError("--json and --serve do not go together: pick one")
    if port is not None and not serve:
        raise UsageError("--port needs --serve")
    where = paths.project_paths(project)
    if json_:
        output.emit_json(data.gather(where.project_dir, all_projects=all_projects, root=where.root))
        return
    if serve:
        _serve(where, all_projects, DEFAULT_PORT if port is None else port, open_=not no_open)
        return
    path = agent.write(where.project_dir, all_projects=all_projects, root=where.root)
    output.stdout.print(str(path))
    if not no_open and not publish.open_browser(path.as_uri()):
        output.stderr.print(f"open it in a browser: {path.as_uri()}", soft_wrap=True)


def _serve(where: paths.ProjectPaths, all_projects: bool, port: int, *, open_: bool) -> None:
    """Serve until Ctrl+C, which is a normal way to stop (exit 0), not an interruption."""
    import sys

    from ctxmode.insight import data, publish, serve

    server = serve.bind(
        port,
        lambda: data.gather(where.project_dir, all_projects=all_projects, root=where.root),
    )
    try:
        output.stdout.print(f"Serving ctxmode insight at {server.url}  (Ctrl+C to stop)")
        sys.stdout.flush()
        if open_:
            publish.open_browser(server.url)
        server.serve_forever()
    except KeyboardInterrupt:
        output.stderr.print("stopped")
    finally:
        server.server_close()
