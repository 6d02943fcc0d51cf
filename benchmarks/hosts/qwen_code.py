#!/usr/bin/env python3
"""ctxmode under the real Qwen Code (npm ``@qwen-code/qwen-code``), headless, against the fake.

    .venv/bin/python benchmarks/hosts/qwen_code.py [--ctxmode PATH] [--keep] [--no-netns]

Qwen Code: ``$CTXMODE_QWEN_PREFIX/bin/qwen`` (default ``~/.cache/ctxmode-hosts-extra/qwen-code``;
``npm install -g --prefix <that> @qwen-code/qwen-code``), run with Node. The model is the fake
through Qwen's OpenAI auth (``--auth-type openai --openai-base-url <fake>/v1``); the project
is set up with ``ctxmode setup qwen-code`` (``.qwen/settings.json``: hooks + ``mcpServers``).

Invocations: run1 ``qwen --yolo -o json "do the task"`` (``run_shell_command`` curl, four
ctx_* calls after ``tool_search`` loads the deferred MCP tools, ``write_file`` notes.txt);
run2 ``qwen --continue "RESUME ..."`` (the same session, history replayed); run3 ``qwen --continue
"/compress"`` (PreCompact ``manual``: ctxmode builds the snapshot); run4 ``qwen --continue
"RESUME ..."``, whose prompt brings the snapshot (Qwen drops SessionStart answers).
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import scenario  # noqa: E402
from fakeapi import Script, Step  # noqa: E402

HOST = "qwen-code"
SUMMARY = "Summary: the zebracorn task is done; notes.txt was written."


def script(run: scenario.Run) -> Script:
    notes = os.path.join(run.d["proj"], "notes.txt")
    prompts = scenario.task_script(
        lambda cmd: Step("run_shell_command", {"command": cmd, "is_background": False}),
        lambda path, text: Step("write_file", {"file_path": path, "content": text}),
        notes,
    )
    return Script(
        prompts,
        aux={"summar": SUMMARY, "<state_snapshot>": SUMMARY},
        aux_text='{"next_speaker": "user", "reasoning": "done"}',
        # Qwen Code defers MCP tools: the model loads them with tool_search first.
        loader=Step("tool_search", {"query": "select:{names}", "max_results": 20}),
        ready_dir=os.path.join(run.d["data"], "servers"),
    )


def settings() -> dict[str, Any]:
    """~/.qwen/settings.json: OpenAI auth, no telemetry, no update checks."""
    return {
        "security": {"auth": {"selectedType": "openai"}},
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
        "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
        "model": {"name": "fake-model"},
    }


def check_compaction(
    run: scenario.Run, segs: dict[str, list[dict[str, Any]]], events: list[dict[str, Any]]
) -> scenario.Result:
    """run3's /compress ran PreCompact (snapshot built); Qwen drops every session start
    answer, so the snapshot rides on run4's prompt: a <session_resume> built during run3
    naming notes.txt in run4's request."""
    r3 = run.run("run3")
    lo, hi = r3.get("start", 0.0), r3.get("end", 0.0)

    def during(e: dict[str, Any]) -> bool:
        t = scenario.epoch(str(e.get("created_at") or "")[:19] + "Z")
        return t is not None and int(lo) <= t <= hi

    built = [e for e in events if e.get("type") == "snapshot_built" and during(e)]
    summaries = [e for e in segs.get("run3", []) if str(e.get("reply_label", "")).startswith("aux")]
    blocks = scenario.new_resume_blocks(segs.get("run4", []), lo)
    named = [attrs for attrs, block in blocks if "notes.txt" in block]
    return scenario.Result(
        "compaction",
        bool(built) and bool(named),
        f"run3 /compress: {len(summaries)} summary request(s), snapshot_built "
        f"{'yes' if built else 'no'}; run4's prompt carries it: "
        + (f"<session_resume events={named[0].get('events')}> naming notes.txt" if named else "no"),
    )


def main() -> int:
    args = scenario.arguments(__doc__.split("\n")[0] if __doc__ else "").parse_args()
    scenario.isolate(args)
    qwen = scenario.find_bin("CTXMODE_QWEN_PREFIX", "qwen-code", "bin/qwen")
    run = scenario.Run(HOST, os.path.abspath(args.ctxmode), scenario.scratch(HOST))
    results: list[scenario.Result] = []
    try:
        run.git_project()
        results.append(run.setup_round_trip())
        fake = run.start_fake(script(run))
        qdir = os.path.join(run.d["home"], ".qwen")
        os.makedirs(qdir, exist_ok=True)
        with open(os.path.join(qdir, "settings.json"), "w", encoding="utf-8") as f:
            json.dump(settings(), f, indent=1)
        env = run.env(
            OPENAI_API_KEY="dummy",
            OPENAI_BASE_URL=f"{fake.url}/v1",
            OPENAI_MODEL=fake.script.model,
        )
        proj = run.d["proj"]
        base = [
            qwen,
            "--yolo",
            "--output-format",
            "json",
            "--auth-type",
            "openai",
            "--openai-base-url",
            f"{fake.url}/v1",
            "--openai-api-key",
            "dummy",
            "--model",
            fake.script.model,
        ]
        resume = f"{scenario.RESUME}: continue where we left off"
        after = f"{scenario.RESUME}: after the compaction"
        for name, extra, prompt in (
            ("run1", [], scenario.TASK),
            ("run2", ["--continue"], resume),
            ("run3", ["--continue"], "/compress"),
            ("run4", ["--continue"], after),
        ):
            run.invoke(name, [*base, *extra, prompt], proj, env, prompt)
        events = run.collect_events()
        segs = run.requests()
        run1 = segs.get("run1", [])
        results += [
            *scenario.first_run_checks(run, run1, "run_shell_command", events),
            scenario.check_continue(segs.get("run2", []), events),
            check_compaction(run, segs, events),
            scenario.check_guidance_once(segs),
            scenario.check_orphans(run.runs),
        ]
        results.append(run.uninstall_after())
    finally:
        scenario.finish(run)
    return scenario.report(HOST, results, run.root, args.keep)


if __name__ == "__main__":
    raise SystemExit(main())
