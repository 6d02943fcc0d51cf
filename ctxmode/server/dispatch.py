"""One tool call, from its name and arguments to its answer, counted: what the SDK server
(`ctxmode.server.app`) and the direct path (`ctxmode.server.direct`) both run.

No SDK here: the direct path answers tool calls before (and without) loading it.
"""

import logging
import threading
from typing import Any

from ctxmode.errors import CtxError
from ctxmode.server import meta, tools
from ctxmode.server.state import ServerState
from ctxmode.server.tools import Call
from ctxmode.stats.model import Usage

log = logging.getLogger("ctxmode.server")

HANDLERS: dict[str, tools.Handler] = {**tools.HANDLERS, **meta.HANDLERS}
UNTIL_EOF = tools.UNTIL_EOF


def with_notices(text: str, notices: list[str]) -> str:
    """The answer, after what happened to the knowledge base on the way (a damaged file
    healed): told once, in the answer of the call that met it."""
    if not notices:
        return text
    told = "\n".join(f"Note: {notice}." for notice in notices)
    return f"{told}\n\n{text}"


def counted(state: ServerState, name: str, args: dict[str, Any], call: Call) -> tuple[str, bool]:
    """Run a handler and count the call: its answer's bytes, and what it kept out.

    A purge is not counted, and does not even look up the session: that would create the
    very database it is about to delete (and report it deleted on an empty project).
    """
    is_counted = name not in meta.UNCOUNTED
    if is_counted:
        state.session_id = state.recorder.session_id()
    if name in meta.HANDLERS:  # they read (or delete) the counters: all of them written
        state.recorder.flush()
    try:
        text, is_error = HANDLERS[name](state, args, call)
    except CtxError as exc:
        text, is_error = str(exc), True
    text = with_notices(text, state.take_notices())
    if not is_counted:
        return text, is_error
    returned = len(text.encode("utf-8", "surrogatepass"))
    meter = call.meter
    usage = Usage(
        calls=1,
        returned=returned,
        sandboxed=max(0, meter.handled - returned),
        indexed=meter.indexed,
        cache_hits=meter.cache_hits,
        cache_saved=meter.cache_saved,
    )
    state.recorder.record(name, usage, state.session_id)
    return text, is_error


def answer(
    state: ServerState, name: str, args: dict[str, Any], caller: str, cancel: threading.Event
) -> tuple[str, bool]:
    """The answer to one call, in this thread: an unknown tool and a bug of ours (logged)
    are error answers too, and the server keeps serving."""
    if name not in HANDLERS:
        return f"Unknown tool: {name}", True
    try:
        return counted(state, name, args, Call(caller, cancel))
    except Exception as exc:
        log.exception("tool %s failed", name)
        return f"Internal error in {name}: {type(exc).__name__}: {exc}", True
