#!/usr/bin/env python3
"""ctxmode under the real Pi (npm ``@mariozechner/pi-coding-agent``) or Oh My Pi (npm
``@oh-my-pi/pi-coding-agent``, ``--host omp``), headless, against the fake API.

    .venv/bin/python benchmarks/hosts/pi.py [--host pi|omp] [--ctxmode PATH] [--keep] [--no-netns]

Binaries: ``$CTXMODE_PI_PREFIX/node_modules/.bin/pi`` (default
``~/.cache/ctxmode-hosts-extra/pi``), ``$CTXMODE_OMP_PREFIX/node_modules/.bin/omp`` (default
``.../omp``; Oh My Pi runs on Bun: ``$CTXMODE_BUN``, default
``.../bun/node_modules/@oven/bun-linux-x64/bin/bun``). The model is the fake
(``fakeapi.py``) as an OpenAI-compatible provider (``api: openai-completions``) in the agent
dir's ``models.json`` (Pi) or ``models.yml`` (Oh My Pi); the project is set up with ``ctxmode
setup <host>`` (the extension, plus ``.omp/mcp.json`` for Oh My Pi).

Invocations (Oh My Pi first runs a throwaway ``--no-session`` prompt, so its MCP tool
cache is filled as after a user's first session): run1 ``pi -p "do the task"`` (``bash``
curl, four ctx_* calls, ``write`` notes.txt); run2 ``pi -p --continue "RESUME ..."`` (the
resumed session must get a new ``<session_resume>`` naming notes.txt); run3 ``pi --mode rpc
--continue``: the RPC ``compact`` command, then a prompt, whose request must hold the
snapshot built by that compaction and the routing block once.
"""

from __future__ import annotations

import json
import os
import queue
import re
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import scenario  # noqa: E402
from fakeapi import Script, Step, chat_requests  # noqa: E402
from views import unwrapped, xd_device  # noqa: E402

XD = "xd://"
MCP_PREFIX = "mcp__ctxmode_"
SUMMARY = "## Goal\nZebracorn task. ## Progress\nnotes.txt written."


def script(run: scenario.Run, host: str) -> Script:
    notes = os.path.join(run.d["proj"], "notes.txt")
    # Oh My Pi's tools take a required "i" (intent) and its MCP tools are xd:// devices.
    intent: dict[str, str] = {} if host == "pi" else {"i": "scripted step"}
    prompts = scenario.task_script(
        lambda cmd: Step("bash", {**intent, "command": cmd}),
        lambda path, text: Step("write", {**intent, "path": path, "content": text}),
        notes,
    )
    if host == "omp":
        prompts[scenario.TASK] = [device_step(s) for s in prompts[scenario.TASK]]
    return Script(
        prompts,
        aux={"summar": SUMMARY},
        aux_text=SUMMARY,
        ready_dir=os.path.join(run.d["data"], "servers"),
    )


def device_step(step: Step) -> Step:
    """An ``mcp:<leaf>`` step as Oh My Pi's model makes it: JSON arguments written to the
    tool's ``xd://`` device."""
    if not step.tool.startswith("mcp:"):
        return step
    leaf = step.tool[4:]
    args = {"i": f"call {leaf}", "path": XD + MCP_PREFIX + leaf, "content": json.dumps(step.args)}
    return Step("write", args)


def provider(url: str, model: str) -> dict[str, Any]:
    """The fake as the agent dir's only custom provider (Pi's models.json shape)."""
    return {
        "providers": {
            "fake": {
                "baseUrl": f"{url}/v1",
                "api": "openai-completions",
                "apiKey": "dummy",
                "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
                "models": [
                    {
                        "id": model,
                        "name": "Fake model",
                        "reasoning": False,
                        "input": ["text"],
                        "contextWindow": 200000,
                        "maxTokens": 4096,
                    }
                ],
            }
        }
    }


class Host:
    """How to run one of the two hosts."""

    def __init__(self, name: str) -> None:
        self.name = name
        cache = os.path.join(
            os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"),
            "ctxmode-hosts-extra",
        )
        if name == "pi":
            self.argv = [scenario.find_bin("CTXMODE_PI_PREFIX", "pi", "node_modules/.bin/pi")]
            self.extra_path: list[str] = []
            self.agent = (".pi", "agent")
            self.models = "models.json"
        else:
            bun = os.environ.get("CTXMODE_BUN") or os.path.join(
                cache, "bun", "node_modules", "@oven", "bun-linux-x64", "bin", "bun"
            )
            omp = scenario.find_bin("CTXMODE_OMP_PREFIX", "omp", "node_modules/.bin/omp")
            self.argv = [bun, os.path.realpath(omp)]
            self.extra_path = [os.path.dirname(bun)]
            self.agent = (".omp", "agent")
            self.models = "models.yml"

    def configure(self, run: scenario.Run, fake_url: str, model: str) -> None:
        agent = os.path.join(run.d["home"], *self.agent)
        os.makedirs(agent, exist_ok=True)
        with open(os.path.join(agent, self.models), "w", encoding="utf-8") as f:
            json.dump(provider(fake_url, model), f, indent=1)  # JSON is YAML too
        settings = {
            "defaultProvider": "fake",
            "defaultModel": model,
            "quietStartup": True,
            "enableInstallTelemetry": False,
            # keep nothing back, so /compact has something to summarise
            "compaction": {"enabled": True, "keepRecentTokens": 1},
        }
        with open(os.path.join(agent, "settings.json"), "w", encoding="utf-8") as f:
            json.dump(settings, f, indent=1)

    def env(self, run: scenario.Run) -> dict[str, str]:
        return run.env(
            self.extra_path,
            PI_OFFLINE="1",
            PI_SKIP_VERSION_CHECK="1",
            PI_TELEMETRY="0",
            OMP_NO_UPDATE_CHECK="1",
        )


def invoke_rpc(
    run: scenario.Run,
    name: str,
    argv: Sequence[str],
    cwd: str,
    env: Mapping[str, str],
    commands: Sequence[tuple[dict[str, Any], str]],
) -> dict[str, Any]:
    """One ``--mode rpc`` invocation: each command is sent once the event that ends the
    previous one (``response`` to it, or ``agent_end``) came back; then stdin is closed.
    Recorded like `scenario.Run.invoke`."""
    start = run.begin(name)
    out_path = os.path.join(run.d["logs"], f"{name}.out")
    err_path = os.path.join(run.d["logs"], f"{name}.err")
    lines: queue.Queue[dict[str, Any]] = queue.Queue()
    problems: list[str] = []
    with open(out_path, "w") as fo, open(err_path, "w") as fe:
        p = subprocess.Popen(
            list(argv),
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=fe,
            text=True,
            start_new_session=True,
        )

        def pump() -> None:
            assert p.stdout is not None
            for line in p.stdout:
                fo.write(line)
                fo.flush()
                try:
                    value = json.loads(line)
                except ValueError:
                    continue
                if isinstance(value, dict):
                    lines.put(value)

        reader = threading.Thread(target=pump, daemon=True)
        reader.start()
        deadline = time.monotonic() + scenario.HOST_TIMEOUT
        assert p.stdin is not None
        for command, until in commands:
            p.stdin.write(json.dumps(command) + "\n")
            p.stdin.flush()
            while True:
                try:
                    msg = lines.get(timeout=max(0.1, deadline - time.monotonic()))
                except queue.Empty:
                    problems.append(f"{command['type']}: no {until} in time")
                    break
                if msg.get("type") == "response" and msg.get("id") == command.get("id"):
                    if not msg.get("success"):
                        problems.append(f"{command['type']}: {msg.get('error')}")
                        break
                    if until == "response":
                        break
                elif msg.get("type") == until:
                    break
            if problems:
                break
        p.stdin.close()
        try:
            rc = p.wait(max(1.0, deadline - time.monotonic()))
            timed_out = False
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, 9)
            rc, timed_out = p.wait(), True
        reader.join(5)
    return run.record(
        {
            "name": name,
            "argv": list(argv),
            "prompt": " / ".join(c[0].get("message", c[0]["type"]) for c in commands),
            "cwd": cwd,
            "start": start,
            "end": time.time(),
            "rc": 1 if problems and rc == 0 else rc,
            "timed_out": timed_out,
            "problems": problems,
        }
    )


def check_resume(entries: Sequence[Mapping[str, Any]], since: float) -> scenario.Result:
    blocks = scenario.new_resume_blocks(entries, since)
    named = [b for _, b in blocks if "notes.txt" in b]
    return scenario.Result(
        "resume",
        bool(named),
        f"{len(blocks)} new <session_resume> block(s) in run2's requests"
        + (", naming notes.txt" if named else ", none naming notes.txt"),
    )


def check_compaction(
    entries: Sequence[Mapping[str, Any]], rec: Mapping[str, Any], events: Sequence[Any]
) -> scenario.Result:
    compacted = [
        e for e in events if e.get("type") in ("compaction", "compaction_summary", "snapshot_built")
    ]
    asked = [r for r in chat_requests(entries) if r.get("prompt_key") == scenario.RESUME]
    blocks = scenario.new_resume_blocks(asked, rec["start"])
    routing = bool(asked) and scenario.GUIDANCE in json.dumps(asked[-1]["body"])
    ok = not rec.get("problems") and bool(compacted) and bool(blocks) and routing
    return scenario.Result(
        "compaction",
        ok,
        "; ".join(rec.get("problems") or [])
        or f"{len(compacted)} compaction event(s) recorded; the prompt after /compact got "
        f"{len(blocks)} new <session_resume> block(s)"
        + (" and the routing block" if routing else ", no routing block"),
    )


def main() -> int:
    ap = scenario.arguments(__doc__.split("\n")[0] if __doc__ else "")
    ap.add_argument("--host", choices=["pi", "omp"], default="pi")
    args = ap.parse_args()
    scenario.isolate(args)
    host = Host(args.host)
    run = scenario.Run(args.host, os.path.abspath(args.ctxmode), scenario.scratch(args.host))
    results: list[scenario.Result] = []
    try:
        run.git_project()
        results.append(run.setup_round_trip())
        fake = run.start_fake(script(run, args.host))
        host.configure(run, fake.url, fake.script.model)
        env, proj = host.env(run), run.d["proj"]
        base = [*host.argv, "--provider", "fake", "--model", fake.script.model]
        if args.host == "omp":
            # OMP waits 250 ms for MCP servers at start, then mounts the tools it cached
            # from an earlier connection; the first session after setup gets them only once
            # the server is up. A throwaway first session fills that cache, as a user's
            # first session would.
            warm = f"{scenario.RESUME}: warm up"
            run.invoke("warmup", [*base, "-p", "--no-session", warm], proj, env, warm)
        run.invoke("run1", [*base, "-p", scenario.TASK], proj, env, scenario.TASK)
        resume = f"{scenario.RESUME}: continue where we left off"
        run2 = run.invoke("run2", [*base, "-p", "--continue", resume], proj, env, resume)
        after = f"{scenario.RESUME}: after the compaction, what was done?"
        run3 = invoke_rpc(
            run,
            "run3",
            [*base, "--mode", "rpc", "--continue"],
            proj,
            env,
            [
                ({"id": "c1", "type": "compact"}, "response"),
                ({"id": "p1", "type": "prompt", "message": after}, "agent_end"),
            ],
        )
        events = run.collect_events()
        segs = run.requests()
        if args.host == "omp":
            devices = re.compile(r"xd://(mcp__[a-z0-9_]+)")
            segs = {name: unwrapped(seg, xd_device, devices) for name, seg in segs.items()}
        run1 = segs.get("run1", [])
        shell = "bash"
        results += [
            *scenario.first_run_checks(run, run1, shell, events),
            check_resume(segs.get("run2", []), run2["start"]),
            check_compaction(segs.get("run3", []), run3, events),
            scenario.check_guidance_once(segs),
            scenario.check_orphans(run.runs),
            run.uninstall_after(),
        ]
    finally:
        scenario.finish(run)
    return scenario.report(args.host, results, run.root, args.keep)


if __name__ == "__main__":
    raise SystemExit(main())
