"""``ctxmode insight``: a local, self-contained HTML dashboard of what ctxmode kept out.

`data` gathers one dict from the session and content databases (read-only), `page`
renders it with inline SVG charts, `serve` serves it on 127.0.0.1, `publish` writes the
file and opens a browser, and `agent` is the core of the ``ctx_insight`` MCP tool.
"""

from ctxmode.insight.agent import for_agent, stop_all

__all__ = ["for_agent", "stop_all"]
