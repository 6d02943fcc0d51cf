"""The fake API's log as the scenario checks read it, for hosts that call MCP tools through
a wrapper tool: Oh My Pi writes a tool's JSON arguments to ``xd://<tool>`` with ``write``,
OpenClaw calls ``tool_call(id, args)`` after a ``tool_search`` (and returns the answer as
JSON in an untrusted-content envelope). Standard library only.

`unwrapped` rewrites each wrapper call (in the replies and in the requests' history) as a
call of the tool it reaches, and adds the tool names a request's text names (the system
prompt's device list, a search result) to its offered tools, so `scenario.check_mcp_tools`,
`check_results` and `calls` apply unchanged.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

Unwrap = Callable[[str, Any], tuple[str, Any] | None]
"""(wrapper name, its parsed arguments) -> (the tool it calls, that tool's arguments)."""


def xd_device(name: str, args: Any) -> tuple[str, Any] | None:
    """Oh My Pi: ``write`` to ``xd://<tool>`` with the arguments as JSON ``content``."""
    path = args.get("path") if isinstance(args, dict) else None
    if name != "write" or not isinstance(path, str) or not path.startswith("xd://"):
        return None
    return path[len("xd://") :], args.get("content", "")


def tool_call(name: str, args: Any) -> tuple[str, Any] | None:
    """OpenClaw: ``tool_call`` with the tool in ``id`` and its arguments in ``args``."""
    if name != "tool_call" or not isinstance(args, dict) or not isinstance(args.get("id"), str):
        return None
    return args["id"], json.dumps(args.get("args") or {})


_ENVELOPE = re.compile(
    r"<<<EXTERNAL_UNTRUSTED_CONTENT[^>]*>>>\n(?:Source: [^\n]*\n)?---\n(.*)\n<<<END_EXTERNAL",
    re.DOTALL,
)


def tool_call_result(text: str) -> str:
    """OpenClaw: a ``tool_call`` result is the tool's answer as JSON in an untrusted-content
    envelope; the text parts of that answer (else the text as it is)."""
    m = _ENVELOPE.search(text)
    try:
        answer = json.loads(m.group(1)) if m else None
    except ValueError:
        return text
    content = (answer.get("result") or {}).get("content") if isinstance(answer, dict) else None
    if not isinstance(content, list):
        return text
    return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))


def _call(c: Mapping[str, Any], unwrap: Unwrap) -> dict[str, Any]:
    fn = c.get("function") or {}
    try:
        args = json.loads(fn.get("arguments") or "{}")
    except ValueError:
        return dict(c)
    inner = unwrap(str(fn.get("name")), args)
    if inner is None:
        return dict(c)
    return {**c, "function": {"name": inner[0], "arguments": inner[1]}}


def unwrapped(
    entries: Sequence[Mapping[str, Any]],
    unwrap: Unwrap,
    names: re.Pattern[str],
    result: Callable[[str], str] | None = None,
) -> list[dict[str, Any]]:
    """`entries` with wrapper calls unwrapped, the tools `names` finds in a request's text
    (group 1) added to its offered tools, and tool results passed through `result`."""
    out = []
    for entry in entries:
        e = json.loads(json.dumps(entry))
        body = e.get("body")
        if isinstance(body, dict) and "messages" in body:
            found = sorted(set(names.findall(json.dumps(body["messages"]))))
            body["tools"] = list(body.get("tools") or []) + [
                {"type": "function", "function": {"name": n}} for n in found
            ]
            for m in body["messages"]:
                if isinstance(m, dict) and isinstance(m.get("tool_calls"), list):
                    m["tool_calls"] = [_call(c, unwrap) for c in m["tool_calls"]]
                if result and isinstance(m, dict) and m.get("role") == "tool":
                    if isinstance(m.get("content"), str):
                        m["content"] = result(m["content"])
        reply = e.get("reply")
        if isinstance(reply, dict) and reply.get("tool_call"):
            reply["tool_call"] = _call(reply["tool_call"], unwrap)
        out.append(e)
    return out
