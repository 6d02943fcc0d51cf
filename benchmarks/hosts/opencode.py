#!/usr/bin/env python3
"""ctxmode under the real OpenCode (npm ``opencode-ai``), headless, against the fake API.

    .venv/bin/python benchmarks/hosts/opencode.py [--ctxmode PATH] [--keep] [--no-netns]

OpenCode's binary: ``$CTXMODE_OPENCODE_PREFIX/bin/opencode`` (default
``~/.cache/ctxmode-hosts-extra/opencode``; install with ``npm install -g --prefix <that>
opencode-ai``). The model is the fake (``fakeapi.py``) as an OpenAI-compatible provider in
``~/.config/opencode/opencode.json`` (``@ai-sdk/openai-compatible``, bundled in OpenCode);
the project is set up with ``ctxmode setup opencode`` (plugin shim + ``mcp.ctxmode``).

Invocations: run1 ``opencode run "do the task"`` (the scenario's task: ``bash`` curl, four
ctx_* calls, ``write`` notes.txt); run2 ``opencode run --continue "RESUME ..."``; run3
an overflowing prompt: the model's context limit in the config is small and the fake reports
a large prompt, so OpenCode compacts the session by itself (``experimental.session.compacting``);
run4 ``opencode run --continue "RESUME ..."`` after it.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import scenario  # noqa: E402
from fakeapi import Script, Step  # noqa: E402

HOST = "opencode"


def provider_config(url: str, model: str, context: int = 200000) -> dict[str, Any]:
    """An OpenCode (or Kilo) config with the fake as the only provider."""
    return {
        "$schema": "https://opencode.ai/config.json",
        "model": f"fake/{model}",
        "small_model": f"fake/{model}",
        "autoupdate": False,
        "share": "disabled",
        "permission": {"*": "allow", "bash": "allow", "edit": "allow", "webfetch": "allow"},
        "provider": {
            "fake": {
                "npm": "@ai-sdk/openai-compatible",
                "name": "Fake",
                "options": {"baseURL": f"{url}/v1", "apiKey": "dummy"},
                "models": {
                    model: {
                        "name": "Fake model",
                        "tool_call": True,
                        "limit": {"context": context, "output": 4096},
                    }
                },
            }
        },
    }


COMPACT = "COMPACT"
SUMMARY = "Summary: the zebracorn task is done; notes.txt was written."


def script(run: scenario.Run, shell: str = "bash", write: str = "write") -> Script:
    """The task with OpenCode's tools; ``COMPACT`` reports an overflowing prompt once."""
    notes = os.path.join(run.d["proj"], "notes.txt")
    prompts = scenario.task_script(
        lambda cmd: Step(shell, {"command": cmd, "description": "fetch the page"}),
        lambda path, text: Step(write, {"filePath": path, "content": text}),
        notes,
    )
    prompts[COMPACT] = []
    return Script(
        prompts,
        aux={"context summarization agent": SUMMARY, "Generate a title": "Zebracorn task"},
        aux_text=SUMMARY,
        tokens={COMPACT: 60000},
        ready_dir=os.path.join(run.d["data"], "servers"),
    )


def drive(
    host: str, binary: str, config: str, env_extra: dict[str, str], ctxmode: str
) -> tuple[scenario.Run, list[scenario.Result]]:
    """The scenario on OpenCode or a fork of it that keeps its CLI (`binary`), whose user
    config file is `config` (relative to HOME)."""
    run = scenario.Run(host, ctxmode, scenario.scratch(host))
    results: list[scenario.Result] = []
    try:
        run.git_project()
        results.append(run.setup_round_trip())
        fake = run.start_fake(script(run))
        path = os.path.join(run.d["home"], config)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            json.dump(provider_config(fake.url, fake.script.model, CONTEXT), f, indent=1)
        env = run.env(
            # Both install @opencode-ai/plugin into every config dir before they load
            # plugins; offline that retries for ~70 s, against the fake it fails at once.
            npm_config_registry=f"{fake.url}/npm/",
            npm_config_fetch_retries="0",
            **env_extra,
        )
        proj = run.d["proj"]
        base = [binary, "run", "--print-logs", "--log-level", "DEBUG", "--format", "json"]
        resume = f"{scenario.RESUME}: continue where we left off"
        compact = f"{COMPACT}: wrap up"
        after = f"{scenario.RESUME}: after the compaction"
        for name, extra, prompt in (
            ("run1", [], scenario.TASK),
            ("run2", ["--continue"], resume),
            ("run3", ["--continue"], compact),
            ("run4", ["--continue"], after),
        ):
            run.invoke(name, [*base, *extra, prompt], proj, env, prompt)
        events = run.collect_events()
        segs = run.requests()
        run1 = segs.get("run1", [])
        results += [
            *scenario.first_run_checks(run, run1, shell_tool(run1), events),
            scenario.check_continue(segs.get("run2", []), events),
            check_compaction(run, [*segs.get("run3", []), *segs.get("run4", [])], events),
            scenario.check_guidance_once(segs),
            scenario.check_orphans(run.runs),
        ]
        results.append(run.uninstall_after())
    finally:
        scenario.finish(run)
    return run, results


CONTEXT = 30000
"""The fake model's context limit: far above the task's reported 100 tokens, below
COMPACT's 60000."""


def shell_tool(entries: list[dict[str, Any]]) -> str:
    made = scenario.calls(entries)
    return made[0]["name"] if made else "bash"


def check_compaction(
    run: scenario.Run, entries: list[dict[str, Any]], events: list[dict[str, Any]]
) -> scenario.Result:
    """run3's overflow made the host compact (OpenCode right after run3's reply, Kilo before
    run4's first request): the summary request, one the fake answers as an aux request,
    carries ctxmode's snapshot (``experimental.session.compacting`` context) naming
    notes.txt."""
    summaries = [e for e in entries if str(e.get("reply_label", "")).startswith("aux")]
    since = run.run("run3").get("start", 0.0)
    blocks = scenario.new_resume_blocks(summaries, since)
    named = [attrs for attrs, block in blocks if "notes.txt" in block]
    built = [e for e in events if e.get("type") == "snapshot_built"]
    return scenario.Result(
        "compaction",
        bool(named),
        f"{len(summaries)} aux request(s) in run3-run4; <session_resume> naming notes.txt in "
        f"one {'yes' if named else 'no'}"
        + (f" (events={named[0].get('events')})" if named else f" ({len(blocks)} blocks)")
        + f"; snapshot_built events {len(built)}",
    )


def main() -> int:
    args = scenario.arguments(__doc__.split("\n")[0] if __doc__ else "").parse_args()
    scenario.isolate(args)
    opencode = scenario.find_bin("CTXMODE_OPENCODE_PREFIX", "opencode", "bin/opencode")
    env = {
        "OPENCODE_DISABLE_AUTOUPDATE": "1",
        "OPENCODE_DISABLE_SHARE": "1",
        "OPENCODE_DISABLE_MODELS_FETCH": "1",
    }
    config = os.path.join(".config", "opencode", "opencode.json")
    run, results = drive(HOST, opencode, config, env, os.path.abspath(args.ctxmode))
    return scenario.report(HOST, results, run.root, args.keep)


if __name__ == "__main__":
    raise SystemExit(main())
