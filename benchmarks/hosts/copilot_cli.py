#!/usr/bin/env python3
"""ctxmode under the real GitHub Copilot CLI (npm ``@github/copilot``), headless, against
the fake API.

    .venv/bin/python benchmarks/hosts/copilot_cli.py [--ctxmode PATH] [--keep] [--no-netns]

The binary: ``$CTXMODE_COPILOT_PREFIX/node_modules/@github/copilot-linux-x64/copilot``
(default prefix ``~/.cache/ctxmode-hosts-extra/copilot-cli``; install with ``npm install
--prefix <that> @github/copilot``). The model is the fake (``fakeapi.py``) as a BYOK
provider: ``COPILOT_OFFLINE=true`` (no GitHub sign-in, no network), ``COPILOT_PROVIDER_
BASE_URL`` = the fake's ``/v1`` (chat completions). ``COPILOT_ALLOW_ALL=true`` allows every
tool and trusts the project, so its ``.github/hooks`` and MCP file load in ``-p`` mode. The
project is set up with ``ctxmode setup copilot-cli`` (``.github/hooks/ctxmode-copilot-cli.json``
and ``.github/mcp.json``).

Invocations: run1 ``copilot -p "do the task"`` (``bash`` curl, the four ctx_* calls as
``ctxmode-ctx_*``, ``create`` notes.txt); run2 ``--continue -p "RESUME ..."`` (sessionStart
``source: resume``); run3 ``--continue -p /compact`` (preCompact, then Copilot's summary
request); run4 ``--continue -p "RESUME after compaction"``: the snapshot taken at
preCompact reaches the model (session start of the resumed session, or the next tool result).
"""

from __future__ import annotations

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import scenario  # noqa: E402
from fakeapi import Script, Step  # noqa: E402

HOST = "copilot-cli"
MODEL = "gpt-4.1"  # a model Copilot knows the limits of (an unknown id works too, with defaults)


def script(run: scenario.Run) -> Script:
    notes = os.path.join(run.d["proj"], "notes.txt")
    prompts = scenario.task_script(
        lambda cmd: Step("bash", {"command": cmd, "description": "fetch the page"}),
        lambda path, text: Step("create", {"path": path, "file_text": text}),
        notes,
    )
    return Script(
        prompts,
        aux={"summary": "Summary: the zebracorn task is done; notes.txt was written."},
        aux_text="Zebracorn task",
        model=MODEL,
        ready_dir=os.path.join(run.d["data"], "servers"),
    )


def check_events_hooks(events: list[dict], session: str | None) -> scenario.Result:
    """The redirect marker reached the session (a PostToolUse after the curl's preToolUse)."""
    mine = [e for e in events if session is None or e.get("session_id") == session]
    kinds = sorted({str(e.get("type")) for e in mine})
    return scenario.Result(
        "event-kinds", bool(mine), f"{len(mine)} events of kinds {', '.join(kinds) or '-'}"
    )


def main() -> int:
    args = scenario.arguments(__doc__.split("\n")[0] if __doc__ else "").parse_args()
    scenario.isolate(args)
    prefix_bin = os.path.join("node_modules", "@github", "copilot-linux-x64", "copilot")
    copilot = scenario.find_bin("CTXMODE_COPILOT_PREFIX", "copilot-cli", prefix_bin)
    run = scenario.Run(HOST, os.path.abspath(args.ctxmode), scenario.scratch(HOST))
    results: list[scenario.Result] = []
    try:
        run.git_project()
        results.append(run.setup_round_trip())
        fake = run.start_fake(script(run))
        env = run.env(
            COPILOT_OFFLINE="true",
            COPILOT_PROVIDER_BASE_URL=f"{fake.url}/v1",
            COPILOT_PROVIDER_API_KEY="dummy",
            COPILOT_MODEL=MODEL,
            COPILOT_ALLOW_ALL="true",
            COPILOT_AUTO_UPDATE="false",
        )
        proj = run.d["proj"]
        logs = os.path.join(run.d["logs"], "copilot")
        base = [copilot, "--no-auto-update", "--log-level", "all", "--log-dir", logs]
        run.invoke("run1", [*base, "-p", scenario.TASK], proj, env, scenario.TASK)
        resume = f"{scenario.RESUME}: continue where we left off"
        run.invoke("run2", [*base, "--continue", "-p", resume], proj, env, resume)
        compact_at = time.time()
        run.invoke("run3", [*base, "--continue", "-p", "/compact"], proj, env, "/compact")
        after = f"{scenario.RESUME} after compaction"
        run.invoke("run4", [*base, "--continue", "-p", after], proj, env, after)
        events = run.collect_events()
        segs = run.requests()
        run1 = segs.get("run1", [])
        resumed = scenario.new_resume_blocks(segs.get("run2", []), run.run("run2").get("start", 0))
        compacted = scenario.new_resume_blocks(segs.get("run4", []), compact_at)
        snapshots = [e for e in events if e.get("type") in ("snapshot", "resume_snapshot")]
        results += [
            *scenario.first_run_checks(run, run1, "bash", events),
            check_events_hooks(events, None),
            scenario.Result(
                "resume",
                bool(resumed) and any("notes.txt" in b for _, b in resumed),
                f"{len(resumed)} new <session_resume> block(s) in run2's requests"
                + (" naming notes.txt" if any("notes.txt" in b for _, b in resumed) else ""),
            ),
            scenario.Result(
                "compaction",
                bool(compacted),
                f"{len(compacted)} <session_resume> block(s) generated since /compact reached "
                f"run4's requests; snapshot events: {len(snapshots)}",
            ),
            scenario.check_orphans(run.runs),
        ]
    finally:
        scenario.finish(run)
    return scenario.report(HOST, results, run.root, args.keep)


if __name__ == "__main__":
    raise SystemExit(main())
