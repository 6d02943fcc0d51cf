"""The maintenance tools: ctx_stats, ctx_purge, ctx_doctor, ctx_upgrade, ctx_insight.

Each is one call into the same core the CLI subcommand uses, so an agent and a person
asking the same question get the same answer.
"""

import logging
from typing import Any

from ctxmode import purge
from ctxmode.server import coerce
from ctxmode.server.state import ServerState
from ctxmode.server.tools import Call, Reply

log = logging.getLogger("ctxmode.server")


def ctx_stats(state: ServerState, args: dict[str, Any], call: Call) -> Reply:
    from ctxmode.stats.report import build, render_text

    recorder = state.recorder
    report = build(
        recorder.session_db,
        state.project.content_db,
        state.project_dir,
        session_id=state.session_id or None,
    )
    return render_text(report), False


def ctx_purge(state: ServerState, args: dict[str, Any], call: Call) -> Reply:
    session_id = coerce.string(args, "sessionId")
    scope = coerce.string(args, "scope")
    if session_id and scope == "project":
        return purge.AMBIGUOUS, True  # checked before confirm: nothing is deleted
    if "confirm" not in args:
        return "confirm is required: pass confirm: true to delete (cannot be undone).", True
    if not coerce.boolean(args, "confirm"):
        return purge.CANCELLED, False
    effective, bare = purge.resolve_scope(scope, session_id)
    if bare:
        log.warning(purge.BARE_CONFIRM_DEPRECATED)
    root, project_dir = state.project.root, state.project_dir
    if effective == "session":
        outcome = purge.purge_session(root, project_dir, session_id or "")
        return purge.message(outcome), False
    state.close_store()  # no handle may outlive its file (Windows refuses to delete it)
    state.close_recorder()
    outcome = purge.purge_project(root, project_dir)
    text = purge.message(outcome)
    if bare:
        text += f"\nNote: {purge.BARE_CONFIRM_DEPRECATED}"
    return text, False


def ctx_doctor(state: ServerState, args: dict[str, Any], call: Call) -> Reply:
    from ctxmode.doctor import render_text, run_checks

    return render_text(run_checks(state.project_dir)), False


def ctx_upgrade(state: ServerState, args: dict[str, Any], call: Call) -> Reply:
    from ctxmode.upgrade import agent_instructions

    return agent_instructions(), False


def ctx_insight(state: ServerState, args: dict[str, Any], call: Call) -> Reply:
    from ctxmode.insight import for_agent

    port = coerce.number(args, "port", low=1, high=65535)
    return for_agent(
        state.project_dir,
        port=int(port) if port is not None else None,
        open_browser=coerce.boolean(args, "open", default=True),
    ), False


UNCOUNTED = frozenset({"ctx_purge"})  # a wipe must leave no counters or stats file behind

HANDLERS = {
    "ctx_stats": ctx_stats,
    "ctx_doctor": ctx_doctor,
    "ctx_upgrade": ctx_upgrade,
    "ctx_purge": ctx_purge,
    "ctx_insight": ctx_insight,
}
