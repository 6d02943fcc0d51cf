"""`ctxmode serve`: the MCP stdio server (imports the MCP SDK only when it runs)."""

from ctxmode.cli.options import ProjectOpt


def serve(project: ProjectOpt = None) -> None:
    """Run the MCP server on stdin/stdout: the ctx_* tools for your agent.

    stdout carries only JSON-RPC; logs go to stderr and <data root>/logs/server.log.
    Exits on stdin EOF, SIGTERM/SIGINT, or when the client process dies, killing every
    run it started.

    Example: claude mcp add ctxmode -- ctxmode serve
    """
    from ctxmode.server.boot import run

    run(project)
