"""A tool's answer as an MCP tool result, for the client that asked.

The answer is one text item, the same for every client. One client needs more:
Gemini CLI (0.61, its stdio transport's ``fixStructuredContent``) parses the first text
item of a result that has no ``structuredContent`` as JSON and stores the value as
``structuredContent``, which its SDK then rejects unless it is an object. A
``ctx_execute`` that printed a bare ``45``, ``[1,2]``, ``true``, ``"x"`` or ``null``
therefore reached the model as a tool error. Such a result carries an empty
``structuredContent`` object for Gemini CLI: it parses nothing then, and shows the model
only the text items, so the model reads exactly the output. No other client gets it:
Claude Code and Codex show the model ``structuredContent`` instead of the text whenever
a result has it.
"""

import json
from typing import Any


def _parses_text(client: str | None) -> bool:
    """Whether `client` is the MCP client of a host that parses text results (its
    descriptor says so: Gemini CLI, and the forks that keep its MCP client)."""
    from ctxmode.platforms import descriptor, for_client

    host = descriptor(for_client(client) or "")
    return host is not None and host.parses_text_results


def _no_constants(name: str) -> Any:
    raise ValueError(name)  # NaN and Infinity are not JSON to JavaScript's JSON.parse


def parses_as_non_object(text: str) -> bool:
    """Whether JavaScript's ``JSON.parse(text)`` returns something that is not an object."""
    try:
        value = json.loads(text, parse_constant=_no_constants)
    except ValueError:
        return False
    return not isinstance(value, dict)


def structured_content(client: str | None, text: str) -> dict[str, Any] | None:
    """The ``structuredContent`` a result (an error too) carries for `client`: None for
    all but a client that would turn `text` into a rejected one."""
    if not _parses_text(client):
        return None
    return {} if parses_as_non_object(text) else None
