#!/usr/bin/env python3
"""Fake Anthropic Messages API that plays a recorded session's script of tool calls.

It is the host harness's ``fake_anthropic.py`` (same endpoints, log and SSE stream) with its
``plan`` replaced: the script is ``script.json`` beside ``--log``, written by ``record.py``:

    {"prompts": [{"match": TEXT, "steps": [{"tool": NAME, "input": {...}}, ...],
                  "final": TEXT}, ...],
     "summary": TEXT}

For a main-loop request (its tools include ``Bash``) the last user prompt (a user message
that is not a tool result) is looked up by ``match`` (a substring of the prompt); the step is
the number of ``tool_use`` blocks the assistant sent since that prompt (ToolSearch calls, made
once to load a deferred tool such as TodoWrite, not counted). Steps run one tool per
turn; after the last one the reply is ``final``. A compaction request (Claude Code appends
its "create a detailed summary of the conversation" text to the last user message) gets
``<summary>`` + ``summary``. Requests without
``Bash`` (titles, topic checks) get "ok". Everything listens on 127.0.0.1 only.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

HOSTS = os.environ.get(
    "CTXMODE_SHARED_HOSTS", str(Path(__file__).resolve().parents[3] / "shared" / "hosts")
)
sys.dont_write_bytecode = True
sys.path.insert(0, HOSTS)
import fake_anthropic as base  # noqa: E402

_SCRIPT: dict[str, Any] | None = None
COMPACT_ASK = "create a detailed summary of the conversation"


def script() -> dict[str, Any]:
    """The session script (read once, on the first request)."""
    global _SCRIPT
    if _SCRIPT is None:
        path = os.path.join(os.path.dirname(os.path.abspath(base.ARGS.log)), "script.json")
        with open(path, encoding="utf-8") as handle:
            _SCRIPT = json.load(handle)
    return _SCRIPT


def _last_prompt(msgs: list[dict[str, Any]]) -> int:
    """Index of the last user message that is not a tool result."""
    index = 0
    for i, msg in enumerate(msgs):
        if msg.get("role") == "user" and not base.has_tool_result(msg):
            index = i
    return index


def _tool_uses_since(msgs: list[dict[str, Any]], start: int) -> list[dict[str, Any]]:
    """The tool_use blocks the assistant sent after message `start`."""
    uses = []
    for msg in msgs[start + 1 :]:
        content = msg.get("content")
        if msg.get("role") != "assistant" or not isinstance(content, list):
            continue
        uses += [b for b in content if isinstance(b, dict) and b.get("type") == "tool_use"]
    return uses


def _call(want: dict[str, Any], names: list[str], uses: list[dict[str, Any]], step: int):
    """The reply for a scripted step: the tool call, or first a ToolSearch that loads a
    deferred tool (Claude Code 2.1 defers TodoWrite), or a note that it is missing."""
    tool = want["tool"]
    if tool in names:
        return [base.tool_use(tool, want["input"])], "tool_use", f"step{step}-{tool}"
    query = f"select:{tool}"
    searched = any(
        u.get("name") == "ToolSearch" and (u.get("input") or {}).get("query") == query for u in uses
    )
    if "ToolSearch" in names and not searched:
        return [base.tool_use("ToolSearch", {"query": query})], "tool_use", f"step{step}-ToolSearch"
    if searched:  # loaded by the search: its schema is in the tool_result, call it by name
        return [base.tool_use(tool, want["input"])], "tool_use", f"step{step}-{tool}"
    return [base.text(f"TOOL {tool} NOT AVAILABLE")], "end_turn", f"missing-{tool}"


def plan(body: dict[str, Any]) -> tuple[list[dict[str, Any]], str, str]:
    """(content blocks, stop_reason, label) for one /v1/messages request."""
    names = base.tool_names(body)
    if "Bash" not in names:
        return [base.text("ok")], "end_turn", "aux"
    msgs = body.get("messages") or []
    if msgs and COMPACT_ASK in base.text_of(msgs[-1]):
        summary = "<summary>" + script().get("summary", "Work in progress.") + "</summary>"
        return [base.text(summary)], "end_turn", "compact-summary"
    pidx = _last_prompt(msgs)
    prompt = base.text_of(msgs[pidx]) if msgs else ""
    # The newest turn first: after a compaction the summary message may quote earlier prompts.
    entry = next((p for p in reversed(script()["prompts"]) if p["match"] in prompt), None)
    if entry is None:
        return [base.text("No script for this prompt.")], "end_turn", "unscripted"
    uses = _tool_uses_since(msgs, pidx)
    step = sum(1 for u in uses if u.get("name") != "ToolSearch")
    steps = entry["steps"]
    if step >= len(steps):
        return [base.text(entry.get("final", "Done."))], "end_turn", f"step{step}-final"
    return _call(steps[step], names, uses, step)


if __name__ == "__main__":
    base.plan = plan
    base.main()
