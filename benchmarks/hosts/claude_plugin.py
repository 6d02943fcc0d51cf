#!/usr/bin/env python3
"""ctxmode as a Claude Code plugin, in the real Claude Code (npm ``@anthropic-ai/claude-code``),
headless, against the fake API (its Anthropic Messages endpoint).

    .venv/bin/python benchmarks/hosts/claude_plugin.py [--source DIR] [--keep] [--netns]

The binary: ``$CTXMODE_CLAUDE_PREFIX/node_modules/@anthropic-ai/claude-code/bin/claude.exe``
(default prefix ``~/.cache/ctxmode-hosts-extra/claude-code``; ``npm install --prefix <that>
@anthropic-ai/claude-code@2.1.332``). ``--source`` is the checkout to install (default: this
one); its committed ``HEAD`` is cloned into the scratch dir, as a user would clone it. No
``ctxmode`` is on the host's PATH: the plugin's launcher builds its own.

Steps: ``claude plugin marketplace add <clone>``; ``claude plugin install ctxmode@ctxmode``;
run1 ``claude -p "do the task"`` (the plugin's first use: hooks fail open and the MCP server
answers at once while the venv builds, then the real server takes over and its tools
appear; the fake holds its first reply until that server is ready); run2 ``claude -p
/ctxmode:ctx-stats --continue`` (the skill, then its ctx_stats call); run3 ``claude -p
"do the task"`` in a second project (a warm start: the venv is there); then ``claude plugin
uninstall ctxmode@ctxmode`` and ``claude plugin marketplace remove ctxmode``, after which no
process of the run may be alive and nothing of the plugin may be left in HOME.

Unlike the other drivers it runs outside the loopback-only network namespace by default:
the plugin's first use installs ctxmode's dependencies with pip from the package index it
is configured with, as on a user's machine. ``--netns`` runs it inside (the build then
fails: hooks fail open, the server offers no tools, and the first-use checks fail).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import scenario  # noqa: E402
from fakeapi import Script, Step, text_of  # noqa: E402

HOST = "claude-code"
STATS = "# ctxmode stats"
"""A line of the ctx-stats skill: the prompt the fake sees once the skill is expanded."""
PREFIX = "mcp__plugin_ctxmode_ctxmode__"
"""How Claude Code names the tools of the plugin ctxmode's server ctxmode."""
TOOLS = "Bash,Write,Edit,Read,ToolSearch,Skill," + PREFIX.rstrip("_")


def script(run: scenario.Run, proj: str) -> Script:
    prompts = scenario.task_script(
        lambda cmd: Step("Bash", {"command": cmd, "description": "fetch the page"}),
        lambda path, text: Step("Write", {"file_path": path, "content": text}),
        os.path.join(proj, "notes.txt"),
    )
    prompts[STATS] = [Step("mcp:ctx_stats", {})]
    return Script(
        prompts,
        final={STATS: "ctxmode kept the tool output out of the context."},
        # Claude Code names only some deferred tools in the conversation: select all of them.
        loader=Step(
            "ToolSearch", {"query": "select:" + ",".join(PREFIX + t for t in scenario.ALL_CTX)}
        ),
        model="claude-sonnet-4-5",
        ready_dir=os.path.join(run.d["data"], "servers"),
        ready_timeout=150.0,
    )


def plugin_files(home: str) -> list[str]:
    """What of the plugin is in HOME: its cache, data, marketplace copy, and registrations.
    A cached copy Claude Code marked ``.orphaned_at`` (it deletes those itself, later, so
    running sessions keep their files) is not counted."""
    plugins = Path(home, ".claude", "plugins")
    found = [
        str(path.relative_to(home))
        for path in (sorted(plugins.rglob("*")) if plugins.is_dir() else [])
        if "ctxmode" in path.name
        and path.parent.name in ("cache", "data", "marketplaces")
        and not orphaned(path)
    ]
    for name in (
        "settings.json",
        "plugins/installed_plugins.json",
        "plugins/known_marketplaces.json",
    ):
        path = Path(home, ".claude", name)
        if path.is_file() and "ctxmode" in path.read_text(encoding="utf-8"):
            found.append(f".claude/{name} names ctxmode")
    return found


def orphaned(folder: Path) -> bool:
    """Every version folder under `folder` carries Claude Code's ``.orphaned_at`` mark."""
    marks = [p.parent for p in folder.rglob(".orphaned_at")]
    versions = list(folder.rglob(".claude-plugin"))
    return bool(marks) and len(marks) == len(versions)


def result_of(requests: list[dict], name: str) -> str | None:
    """The result text of the scripted call of tool `name` (matched by its call id)."""
    call = next(
        (
            r["reply"]["tool_call"]
            for r in requests
            if (r.get("reply") or {}).get("tool_call")
            and r["reply"]["tool_call"]["function"]["name"].endswith(name)
        ),
        None,
    )
    if call is None or not requests:
        return None
    ident = "toolu_" + call["id"][5:]
    for m in requests[-1]["body"].get("messages") or []:
        for b in m.get("content") if isinstance(m.get("content"), list) else []:
            if isinstance(b, dict) and b.get("tool_use_id") == ident:
                return text_of(b.get("content"))
    return None


def main() -> int:
    ap = scenario.arguments(__doc__.split("\n")[0] if __doc__ else "")
    ap.add_argument("--source", default=str(Path(__file__).resolve().parents[2]))
    ap.add_argument(
        "--netns", action="store_true", help="run in the loopback-only namespace (no index)"
    )
    args = ap.parse_args()
    if args.netns:
        scenario.isolate(args)
    relative = os.path.join("node_modules", "@anthropic-ai", "claude-code", "bin", "claude.exe")
    claude = scenario.find_bin("CTXMODE_CLAUDE_PREFIX", "claude-code", relative)
    run = scenario.Run(HOST, os.path.abspath(args.ctxmode), scenario.scratch("claude-plugin"))
    results: list[scenario.Result] = []
    try:
        run.git_project()
        proj = run.d["proj"]
        other = os.path.join(run.root, "proj2")
        clone = os.path.join(run.root, "clone")
        subprocess.run(["git", "clone", "-q", args.source, clone], check=True, timeout=120)
        fake = run.start_fake(script(run, proj))
        path = [p for p in os.environ.get("PATH", "").split(os.pathsep) if p != run.d["bin"]]
        env = run.env(
            ANTHROPIC_BASE_URL=fake.url,
            ANTHROPIC_API_KEY="dummy",
            DISABLE_TELEMETRY="1",
            DISABLE_AUTOUPDATER="1",
            CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
            DISABLE_ERROR_REPORTING="1",
        )
        env["PATH"] = os.pathsep.join(path)  # the plugin must not need ctxmode on PATH
        before = plugin_files(run.d["home"])
        cli = [claude, "plugin"]
        add = run.invoke("marketplace-add", [*cli, "marketplace", "add", clone], proj, env)
        inst = run.invoke("install", [*cli, "install", "ctxmode@ctxmode"], proj, env)
        with open(os.path.join(clone, "hooks", "hooks.json"), encoding="utf-8") as f:
            events = len(json.load(f)["hooks"])
        listed = subprocess.run(
            [*cli, "details", "ctxmode@ctxmode"], env=env, cwd=proj, capture_output=True, text=True
        ).stdout
        results.append(
            scenario.Result(
                "plugin-install",
                add["rc"] == 0 and inst["rc"] == 0 and f"Hooks ({events})" in listed,
                f"marketplace add rc={add['rc']}, install rc={inst['rc']}; "
                + "; ".join(line.strip() for line in listed.splitlines() if "(" in line)[:300],
            )
        )
        common = ["--output-format", "json", "--verbose", "--debug", "--allowedTools", TOOLS]
        t0 = time.time()
        run.invoke("run1", [claude, "-p", scenario.TASK, *common], proj, env, scenario.TASK)
        first_s = time.time() - t0
        run.invoke("run2", [claude, "-p", "/ctxmode:ctx-stats", "--continue", *common], proj, env)
        os.makedirs(other)
        subprocess.run(["git", "init", "-q"], cwd=other, check=True)
        t0 = time.time()
        run.invoke("run3", [claude, "-p", scenario.TASK, *common], other, env, scenario.TASK)
        warm_s = time.time() - t0
        hook_events = run.collect_events()
        segs = run.requests()
        run1 = segs.get("run1", [])
        results += scenario.first_run_checks(run, run1, "Bash", hook_events)
        held = next((e.get("ready_wait_s") for e in run1 if e.get("ready_wait_s")), None)
        results.append(
            scenario.Result(
                "first-use",
                True,
                f"run1 (venv built during it) {first_s:.1f} s, first reply held {held} s for the "
                f"server; run3 (warm) {warm_s:.1f} s",
            )
        )
        run2 = scenario.main_requests(segs.get("run2", []), STATS)
        skill = bool(run2)
        got = result_of(run2, "ctx_stats")
        results.append(
            scenario.Result(
                "slash-command",
                skill and got is not None and "ctx_" in got and "error" not in got.lower()[:80],
                f"/ctxmode:ctx-stats expanded: {skill}; ctx_stats result: "
                + (repr(" ".join(got.split())[:120]) if got else "none"),
            )
        )
        run3 = scenario.calls(segs.get("run3", []))
        results.append(
            scenario.Result(
                "warm-start",
                any(
                    c["name"].endswith("ctx_search") and "zebracorn" in (c["result"] or "").lower()
                    for c in run3
                ),
                f"run3 made {len(run3)} calls: "
                + ", ".join(c["name"].split("__")[-1] for c in run3),
            )
        )
        data = Path(run.d["home"], ".claude", "plugins", "data")
        venvs = (
            sorted(str(p.relative_to(run.d["home"])) for p in data.glob("*/venv-*"))
            if data.is_dir()
            else []
        )
        rm = run.invoke("uninstall", [*cli, "uninstall", "ctxmode@ctxmode"], proj, env)
        rm2 = run.invoke(
            "marketplace-remove", [*cli, "marketplace", "remove", "ctxmode"], proj, env
        )
        left = plugin_files(run.d["home"])
        alive = [p.describe() for p in scenario.run_processes(run.root)]
        results.append(
            scenario.Result(
                "uninstall-clean",
                rm["rc"] == 0 and rm2["rc"] == 0 and left == before and not alive,
                f"venvs while installed: {venvs or '-'}; uninstall rc={rm['rc']}, marketplace "
                f"remove rc={rm2['rc']}; left in HOME: {left or 'nothing'}; "
                f"processes alive: {alive or 'none'}",
            )
        )
        results.append(scenario.check_orphans(run.runs))
    finally:
        scenario.finish(run)
    return scenario.report("claude-plugin", results, run.root, args.keep)


if __name__ == "__main__":
    raise SystemExit(main())
