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
``opencode run --continue --command compact`` is not a thing headless, so compaction is driven
the way OpenCode does it by itself: the model's context limit in the config is small and the
fake reports a large prompt, so run3's prompt overflows and OpenCode compacts the session
(``experimental.session.compacting``) before answering.
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


def script(run: scenario.Run) -> Script:
    notes = os.path.join(run.d["proj"], "notes.txt")
    prompts = scenario.task_script(
        lambda cmd: Step("bash", {"command": cmd, "description": "fetch the page"}),
        lambda path, text: Step("write", {"filePath": path, "content": text}),
        notes,
    )
    return Script(
        prompts,
        aux={"summar": "Summary: the zebracorn task is done; notes.txt was written."},
        aux_text="Zebracorn task",
        ready_dir=os.path.join(run.d["data"], "servers"),
    )


def main() -> int:
    args = scenario.arguments(__doc__.split("\n")[0] if __doc__ else "").parse_args()
    scenario.isolate(args)
    opencode = scenario.find_bin("CTXMODE_OPENCODE_PREFIX", "opencode", "bin/opencode")
    run = scenario.Run(HOST, os.path.abspath(args.ctxmode), scenario.scratch(HOST))
    results: list[scenario.Result] = []
    try:
        run.git_project()
        results.append(run.setup_round_trip())
        fake = run.start_fake(script(run))
        conf = os.path.join(run.d["home"], ".config", "opencode")
        os.makedirs(conf, exist_ok=True)
        with open(os.path.join(conf, "opencode.json"), "w", encoding="utf-8") as f:
            json.dump(provider_config(fake.url, fake.script.model), f, indent=1)
        env = run.env(
            OPENCODE_DISABLE_AUTOUPDATE="1",
            OPENCODE_DISABLE_SHARE="1",
            OPENCODE_DISABLE_MODELS_FETCH="1",
            # OpenCode installs @opencode-ai/plugin into every config dir before it loads
            # plugins; offline that retries for ~70 s, against the fake it fails at once.
            npm_config_registry=f"{fake.url}/npm/",
            npm_config_fetch_retries="0",
        )
        proj = run.d["proj"]
        base = [opencode, "run", "--print-logs", "--log-level", "DEBUG", "--format", "json"]
        run.invoke("run1", [*base, scenario.TASK], proj, env, scenario.TASK)
        resume = f"{scenario.RESUME}: continue where we left off"
        run.invoke("run2", [*base, "--continue", resume], proj, env, resume)
        events = run.collect_events()
        segs = run.requests()
        run1 = segs.get("run1", [])
        results += [
            scenario.check_exits(run.runs),
            scenario.check_mcp_tools(run1),
            scenario.check_redirect(run1, "bash"),
            *scenario.check_results(run1),
            scenario.check_write(run1, os.path.join(proj, "notes.txt")),
            scenario.check_events(events),
            scenario.check_orphans(run.runs),
        ]
    finally:
        scenario.finish(run)
    return scenario.report(HOST, results, run.root, args.keep)


if __name__ == "__main__":
    raise SystemExit(main())
