#!/usr/bin/env python3
"""Fake Gemini API that plays a recorded session's script of tool calls.

It is the host harness's ``fake_gemini.py`` (same endpoints, log and replies to JSON-mode
requests) with its ``plan`` replaced; the script is ``script.json`` beside ``--log`` (the
format of ``fake_scripted.py``), where a step may carry ``"compress": true``.

For a main-loop request (its function declarations include ``run_shell_command``) the last
user turn with text (not a function response) is looked up by ``match``; the step is the
number of functionCalls the model sent since. A step with ``compress`` is answered with a
``promptTokenCount`` far above any model's limit, so Gemini CLI compresses the history before
its next request (an automatic compression: PreCompress fires, then the two summariser
requests, answered with a ``<state_snapshot>`` of ``summary``). Everything else: "ok".
"""

from __future__ import annotations

import json
import os
import sys
import threading
from pathlib import Path
from typing import Any

HOSTS = os.environ.get(
    "CTXMODE_SHARED_HOSTS", str(Path(__file__).resolve().parents[3] / "shared" / "hosts")
)
sys.dont_write_bytecode = True
sys.path.insert(0, HOSTS)
import fake_gemini as base  # noqa: E402

HUGE_PROMPT = 5_000_000
_SCRIPT: dict[str, Any] | None = None


def script() -> dict[str, Any]:
    global _SCRIPT
    if _SCRIPT is None:
        path = os.path.join(os.path.dirname(os.path.abspath(base.ARGS.log)), "script.json")
        with open(path, encoding="utf-8") as handle:
            _SCRIPT = json.load(handle)
    return _SCRIPT


def _prompt_index(contents: list[dict[str, Any]]) -> int:
    index = 0
    for i, c in enumerate(contents):
        parts = c.get("parts") or []
        if (
            c.get("role") == "user"
            and base.user_text(c).strip()
            and not any("functionResponse" in p for p in parts)
        ):
            index = i
    return index


def plan(body: dict[str, Any]) -> tuple[list[dict[str, Any]], str]:
    """(parts, label); a label ending in ``+compress`` asks for a huge token count."""
    gen = body.get("generationConfig") or {}
    contents = body.get("contents") or []
    last = base.user_text(contents[-1]) if contents else ""
    if "state_snapshot" in last:
        snapshot = f"<state_snapshot>{script().get('summary', '')}</state_snapshot>"
        return [{"text": snapshot}], "compress-summary"
    names = base.decl_names(body)
    if gen.get("responseMimeType") == "application/json" or "run_shell_command" not in names:
        return base_plan(body)
    pidx = _prompt_index(contents)
    prompt = base.user_text(contents[pidx]) if contents else ""
    entry = next((p for p in reversed(script()["prompts"]) if p["match"] in prompt), None)
    if entry is None:
        return [{"text": "No script for this prompt."}], "unscripted"
    step = sum(
        1
        for c in contents[pidx + 1 :]
        if c.get("role") == "model"
        for p in c.get("parts") or []
        if "functionCall" in p
    )
    if step >= len(entry["steps"]):
        return [{"text": entry.get("final", "Done.")}], f"step{step}-final"
    want = entry["steps"][step]
    if want["tool"] not in names:
        return [{"text": f"TOOL {want['tool']} NOT AVAILABLE"}], f"missing-{want['tool']}"
    label = f"step{step}-{want['tool']}" + ("+compress" if want.get("compress") else "")
    return [{"functionCall": {"name": want["tool"], "args": want["input"]}}], label


base_plan = base.plan
_STATE = threading.local()  # per request thread: whether this reply asks for compression


def planned(body: dict[str, Any]) -> tuple[list[dict[str, Any]], str]:
    parts, label = plan(body)
    _STATE.compress = label.endswith("+compress")
    return parts, label


def _huge(doc: dict[str, Any]) -> dict[str, Any]:
    if isinstance(doc.get("usageMetadata"), dict):
        doc["usageMetadata"]["promptTokenCount"] = HUGE_PROMPT
    return doc


class Handler(base.H):
    """fake_gemini's handler, reporting a huge prompt size after a ``compress`` step."""

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        _STATE.compress = False
        super().do_POST()

    def _send(self, code: int, data: bytes, ctype: str = "application/json") -> None:
        if getattr(_STATE, "compress", False):
            if data.startswith(b"data: "):
                doc = _huge(json.loads(data[len(b"data: ") :]))
                data = ("data: " + json.dumps(doc) + "\r\n\r\n").encode()
            elif ctype == "application/json":
                data = json.dumps(_huge(json.loads(data))).encode()
        super()._send(code, data, ctype)


if __name__ == "__main__":
    base.plan = planned
    base.H = Handler
    base.main()
