#!/usr/bin/env python3
"""ctxmode as a Codex plugin, in the real Codex CLI (npm ``@openai/codex``), headless
(``codex exec --json``), against the host harness's fake OpenAI Responses API.

    .venv/bin/python benchmarks/hosts/codex_plugin.py [--source DIR] [--keep] [--netns]
        [--enable FEATURE]...

The host: ``node $CTXMODE_CODEX_PREFIX/node_modules/@openai/codex/bin/codex.js`` (default
prefix ``~/.cache/ctxmode-hosts-extra/codex``; ``npm install --prefix <that>
@openai/codex@0.171.0``: a launcher, the native binary is its optional dependency). The fake
model is ``fake_openai.py`` of the host harness (``$CTXMODE_SHARED_HOSTS``, default
``shared/hosts`` beside the repository), served in this process; its script is the
harness's: ``exec_command`` curl, ``tool_search`` (MCP tools are deferred), the four ctx_*
calls, ``apply_patch`` adding notes.txt, text. ``--source`` is the checkout to install
(default: this one); its committed ``HEAD`` is cloned into the scratch dir, as a user would
clone it. No ``ctxmode`` is on the host's PATH: the plugin's launcher builds its own.

Steps, as README.md tells users: ``codex plugin marketplace add <clone>``; ``codex plugin add
ctxmode@ctxmode``; ``codex plugin list --json``; run1 ``codex exec "do the task"`` in a git
project (the plugin's first use: the hooks fail open and the MCP server answers at once
with no tools while the venv builds, then hands over to the real server; the fake holds its
first reply until that server is ready); run2 the same task in a second project (a warm
start); then ``codex plugin remove ctxmode@ctxmode`` and ``codex plugin marketplace remove
ctxmode``, after which nothing of the plugin may be left in HOME and no process of the run
alive.

Codex's own settings are left at ``codex exec``'s defaults (no approval policy or sandbox
override): the MCP tools run because the plugin's ``.codex-plugin/mcp.json`` approves them
(``default_tools_approval_mode``). The plugin's hooks need the one-time review README.md
mentions, which a headless run cannot give: every ``exec`` passes
``--dangerously-bypass-hook-trust``. ``--enable FEATURE`` adds ``--enable FEATURE`` to every
``exec`` (``mcp_tool_list_changed`` makes Codex 0.171 re-list a server's tools when it says
they changed). ``CTXMODE_DIR`` points into the scratch dir; the plugin's server gets it
through its ``env_vars``. ``exec``'s default sandbox has no network: a curl the hook lets
through fails (curl exit 7) instead of reaching the fake.

It runs outside the loopback-only network namespace by default: the plugin's first use
installs ctxmode's dependencies with pip from the package index, as on a user's machine.
``--netns`` runs it inside (the build then fails and the first-use checks fail).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import scenario  # noqa: E402

HOSTS = Path(
    os.environ.get(
        "CTXMODE_SHARED_HOSTS", str(Path(__file__).resolve().parents[3] / "shared" / "hosts")
    )
)
HOST = "codex"
PLUGIN = "ctxmode@ctxmode"
MODEL = "gpt-5.5"
"""In Codex's bundled model catalogue (an unknown slug gets no apply_patch tool)."""
CHECKS = (
    ("ctx_fetch_and_index", lambda t: "indexed" in t.lower(), "says indexed"),
    ("ctx_execute", lambda t: any(line.strip() == "45" for line in t.splitlines()), "prints 45"),
    ("ctx_index", lambda t: "indexed" in t.lower(), "says indexed"),
    ("ctx_search", lambda t: "zebracorn" in t.lower(), "finds zebracorn"),
)


def shared() -> tuple[Any, Any]:
    """The host harness's fake Responses API module and its Codex request reader."""
    if not (HOSTS / "fake_openai.py").is_file():
        sys.exit(f"{HOSTS}/fake_openai.py not found: set CTXMODE_SHARED_HOSTS")
    sys.dont_write_bytecode = True  # the harness folder may be read-only
    sys.path.insert(0, str(HOSTS))
    import expectations
    import fake_openai

    return fake_openai, expectations.Codex


class Fake:
    """``fake_openai.py`` served from a thread of this process (so the run's process sweep
    never takes it for a leftover); `project` is where its apply_patch writes notes.txt."""

    def __init__(self, module: Any, log: str, project: str, ready_dir: str) -> None:
        self.m = module
        module.ARGS = argparse.Namespace(
            log=log, project=project, ready_dir=ready_dir, ready_timeout=150.0
        )
        self.srv = ThreadingHTTPServer(("127.0.0.1", 0), module.H)
        self.srv.daemon_threads = True
        module.PORT = self.srv.server_address[1]
        self.url = f"http://127.0.0.1:{module.PORT}"
        threading.Thread(target=self.srv.serve_forever, daemon=True).start()

    def project(self, path: str) -> None:
        self.m.ARGS.project = path

    def mark(self, run: str) -> None:
        self.m.log({"mark": run})

    def close(self) -> None:
        self.srv.shutdown()
        self.srv.server_close()


def codex_config(home: str, url: str, projects: list[str]) -> None:
    """``~/.codex/config.toml`` before the plugin commands add their tables: the fake as a
    Responses provider, no update check, no analytics, the projects trusted."""
    path = Path(home, ".codex", "config.toml")
    path.parent.mkdir(parents=True, exist_ok=True)
    trusted = "".join(f'\n[projects.{json.dumps(p)}]\ntrust_level = "trusted"\n' for p in projects)
    path.write_text(
        f'model = "{MODEL}"\nmodel_provider = "fake"\ncheck_for_update_on_startup = false\n\n'
        f'[model_providers.fake]\nname = "fake"\nbase_url = "{url}/v1"\nwire_api = "responses"\n'
        'env_key = "FAKE_OPENAI_API_KEY"\n\n[analytics]\nenabled = false\n' + trusted,
        encoding="utf-8",
    )


def jsonl(path: str) -> list[dict[str, Any]]:
    out = []
    try:
        with open(path, encoding="utf-8") as f:
            for line in f:
                try:
                    value = json.loads(line)
                except ValueError:
                    continue
                if isinstance(value, dict):
                    out.append(value)
    except OSError:
        pass
    return out


def thread_id(run: scenario.Run, name: str) -> str | None:
    """The session (thread) id of an ``exec --json`` invocation: ctxmode's session id."""
    return next(
        (
            e["thread_id"]
            for e in jsonl(os.path.join(run.d["logs"], f"{name}.out"))
            if "thread_id" in e
        ),
        None,
    )


def venvs(home: str) -> list[str]:
    """Every environment the plugin's launcher built: in Codex's plugin data folder and in
    the launcher's fallback folder."""
    found = [
        *Path(home, ".codex", "plugins", "data").glob("*/venv-*"),
        *Path(home, ".local", "share", "ctxmode-plugin").glob("venv-*"),
    ]
    return sorted(
        str(p.relative_to(home))
        for p in found
        if p.is_dir() and not p.name.endswith((".lock", ".tmp", ".src"))
    )


def plugin_files(home: str) -> tuple[list[str], list[str]]:
    """(what of the plugin is in HOME, empty folders named after it): its cache, data and
    marketplace copies, the launcher's fallback data folder, and config.toml's tables."""
    found, empty = [], []
    roots = [Path(home, ".codex", "plugins"), Path(home, ".codex", ".tmp")]
    for root in roots:
        for path in sorted(root.rglob("*")) if root.is_dir() else []:
            rel = str(path.relative_to(home))
            if "ctxmode" not in path.name or "ctxmode" in str(Path(rel).parent):
                continue  # a folder inside one already counted
            (empty if path.is_dir() and not any(path.iterdir()) else found).append(rel)
    fallback = Path(home, ".local", "share", "ctxmode-plugin")
    if fallback.exists():
        found.append(str(fallback.relative_to(home)))
    config = Path(home, ".codex", "config.toml")
    text = config.read_text(encoding="utf-8") if config.is_file() else ""
    if PLUGIN in text or "[marketplaces.ctxmode]" in text:
        found.append(".codex/config.toml names the plugin or its marketplace")
    return found, empty


class Session:
    """What one ``exec`` invocation showed: the requests, the calls and their results."""

    def __init__(self, codex: Any, entries: list[dict[str, Any]]) -> None:
        self.entries = entries
        self.main = [e for e in entries if codex.is_main(e)]
        self.offered = list(dict.fromkeys(n for e in self.main for n in codex.tools(e["body"])))
        self.calls = codex.calls(entries)
        self.held = next((e["ready_wait_s"] for e in entries if e.get("ready_wait_s")), None)

    def tools(self) -> tuple[list[str], list[str]]:
        """(the ctx_* tools offered, the missing ones)."""
        got = [t for t in scenario.ALL_CTX if any(n.endswith("__" + t) for n in self.offered)]
        return got, [t for t in scenario.ALL_CTX if t not in got]

    def searched(self) -> str:
        """What the fake's tool_search loaded (MCP tools are deferred)."""
        outs = [
            it
            for e in self.main
            for it in e["body"].get("input") or []
            if isinstance(it, dict) and it.get("type") == "tool_search_output"
        ]
        if not outs:
            return "no tool_search"
        return f"tool_search loaded {len(outs[-1].get('tools') or [])} tool group(s)"

    def call(self, tool: str) -> dict[str, Any] | None:
        return next((c for c in self.calls if c["name"].endswith("__" + tool)), None)

    def curl(self) -> tuple[bool, str]:
        call = next(
            (
                c
                for c in self.calls
                if c["name"] in ("exec_command", "shell_command", "shell")
                and "curl-target" in json.dumps(c["input"])
            ),
            None,
        )
        ran = any(str(e.get("path", "")).startswith("/curl-target") for e in self.entries)
        if call is None:
            return False, "no exec_command curl call was made"
        res = call["result"] or ""
        return "ctx_fetch_and_index" in res and not ran, (
            ("GET /curl-target served; " if ran else "GET /curl-target not served; ")
            + (f"result: {' '.join(res.split())[:100]!r}" if res else "no result")
        )

    def results(self) -> list[scenario.Result]:
        out = []
        for tool, pred, what in CHECKS:
            c = self.call(tool)
            if c is None:
                out.append(scenario.Result(f"{tool}-result", False, f"no {tool} call was made"))
            elif c["result"] is None:
                out.append(
                    scenario.Result(f"{tool}-result", False, f"{c['name']}: no result came back")
                )
            else:
                ok = pred(c["result"]) and not c["error"]
                out.append(
                    scenario.Result(
                        f"{tool}-result",
                        ok,
                        f"{c['name']} {what}: {'yes' if ok else 'no'}; "
                        f"{' '.join(c['result'].split())[:80]!r}",
                    )
                )
        return out


def approvals(run: scenario.Run, names: list[str]) -> tuple[int, list[str]]:
    """(MCP tool calls answered, the ones Codex refused for want of an approval) in the
    ``exec --json`` output of invocations `names`."""
    done, refused = 0, []
    for name in names:
        for e in jsonl(os.path.join(run.d["logs"], f"{name}.out")):
            item = e.get("item") or {}
            if e.get("type") != "item.completed" or item.get("type") != "mcp_tool_call":
                continue
            message = str((item.get("error") or {}).get("message", ""))
            if "approval" in message:
                refused.append(f"{name}: {item.get('tool')}: {message[:80]}")
            elif item.get("result") is not None:
                done += 1
    return done, refused


def mcp_tools(s: Session, prefix: str = "") -> scenario.Result:
    got, missing = s.tools()
    shown = next((n.rsplit("__", 1)[0] for n in s.offered if n.endswith("__ctx_execute")), "-")
    held = f"first reply held {s.held} s for the server; " if s.held else ""
    return scenario.Result(
        prefix + "mcp-tools",
        not missing,
        f"{held}{len(got)}/{len(scenario.ALL_CTX)} ctx_* tools offered"
        + (f" (as {shown}__*)" if got else "")
        + f"; {s.searched()}"
        + (f"; missing {', '.join(missing)}" if missing else ""),
    )


def main() -> int:
    ap = scenario.arguments(__doc__.split("\n")[0] if __doc__ else "")
    ap.add_argument("--source", default=str(Path(__file__).resolve().parents[2]))
    ap.add_argument(
        "--netns", action="store_true", help="run in the loopback-only namespace (no index)"
    )
    ap.add_argument(
        "--enable",
        action="append",
        default=[],
        metavar="FEATURE",
        help="a Codex feature to enable in every exec (e.g. mcp_tool_list_changed)",
    )
    args = ap.parse_args()
    if args.netns:
        scenario.isolate(args)
    fake_openai, codex_reader = shared()
    relative = os.path.join("node_modules", "@openai", "codex", "bin", "codex.js")
    codex = [
        shutil.which("node") or "node",
        scenario.find_bin("CTXMODE_CODEX_PREFIX", "codex", relative),
    ]
    run = scenario.Run(HOST, os.path.abspath(args.ctxmode), scenario.scratch("codex-plugin"))
    results: list[scenario.Result] = []
    fake: Fake | None = None
    try:
        run.git_project()
        home, proj = run.d["home"], run.d["proj"]
        other = os.path.join(run.root, "proj2")
        os.makedirs(other)
        subprocess.run(["git", "init", "-q"], cwd=other, check=True, timeout=30)
        clone = os.path.join(run.root, "clone")
        subprocess.run(["git", "clone", "-q", args.source, clone], check=True, timeout=120)
        fake = Fake(fake_openai, run.requests_log, proj, os.path.join(run.d["data"], "servers"))
        codex_config(home, fake.url, [proj, other])
        env = run.env(FAKE_OPENAI_API_KEY="dummy")
        # The plugin must not need ctxmode on PATH.
        env["PATH"] = os.pathsep.join(
            p for p in env["PATH"].split(os.pathsep) if p and p != run.d["bin"]
        )

        def invoke(name: str, argv: list[str], cwd: str, prompt: str = "") -> dict[str, Any]:
            fake.mark(name)
            return run.invoke(name, [*codex, *argv], cwd, env, prompt)

        before, _ = plugin_files(home)
        add = invoke("marketplace-add", ["plugin", "marketplace", "add", clone], proj)
        inst = invoke("plugin-add", ["plugin", "add", PLUGIN], proj)
        invoke("plugin-list", ["plugin", "list", "--json"], proj)
        try:
            listed = json.loads(Path(run.d["logs"], "plugin-list.out").read_text(encoding="utf-8"))
        except ValueError:
            listed = {}
        entry = next((p for p in listed.get("installed") or [] if p.get("pluginId") == PLUGIN), {})
        cached = Path(
            home, ".codex", "plugins", "cache", "ctxmode", "ctxmode", str(entry.get("version"))
        )
        try:
            hooks = json.loads(
                (cached / ".codex-plugin" / "hooks.json").read_text(encoding="utf-8")
            )
            mcp = json.loads((cached / ".codex-plugin" / "mcp.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            hooks, mcp = {}, {}
        server = (mcp.get("mcpServers") or {}).get("ctxmode") or {}
        results.append(
            scenario.Result(
                "plugin-install",
                add["rc"] == 0
                and inst["rc"] == 0
                and bool(entry.get("installed"))
                and bool(entry.get("enabled"))
                and bool(hooks.get("hooks"))
                and bool(server),
                f"marketplace add rc={add['rc']}, add rc={inst['rc']}; listed: "
                + (
                    f"{PLUGIN} {entry.get('version')} installed={entry.get('installed')} "
                    f"enabled={entry.get('enabled')}"
                    if entry
                    else "no"
                )
                + f"; cached {os.path.relpath(cached, home)}: hooks "
                + ",".join(hooks.get("hooks") or {})
                + f"; server ctxmode: {'yes' if server else 'no'}",
            )
        )
        flags = ["--dangerously-bypass-hook-trust"]
        for feature in args.enable:
            flags += ["--enable", feature]
        exe = ["exec", "--json", *flags, scenario.TASK]
        t0 = time.time()
        invoke("run1", exe, proj, scenario.TASK)
        first_s = time.time() - t0
        built = venvs(home)
        fake.project(other)
        t0 = time.time()
        invoke("run2", exe, other, scenario.TASK)
        warm_s = time.time() - t0
        events = run.collect_events()
        segs = run.requests()
        s1, s2 = (Session(codex_reader, segs.get(n, [])) for n in ("run1", "run2"))
        sid1, sid2 = thread_id(run, "run1"), thread_id(run, "run2")
        ok1, curl1 = s1.curl()
        results += [
            scenario.check_exits(run.runs),
            mcp_tools(s1),
            scenario.Result("curl-redirected", ok1, curl1),
            *s1.results(),
            scenario.check_write([], os.path.join(proj, "notes.txt")),
            scenario.check_events(events, sid1),
        ]
        done, refused = approvals(run, ["run1", "run2"])
        results.append(
            scenario.Result(
                "tools-approved",
                done > 0 and not refused,
                f"the plugin's default_tools_approval_mode: "
                f"{server.get('default_tools_approval_mode', 'unset')}; {done} MCP calls answered"
                + (f"; refused: {'; '.join(refused[:3])}" if refused else ", none refused"),
            )
        )
        killed = [k for r in run.runs if r["name"] == "run1" for k in r.get("killed") or []]
        results.append(
            scenario.Result(
                "first-use",
                True,
                f"run1 (venv built during it) {first_s:.1f} s, first reply held {s1.held} s for "
                f"the server; run2 (warm) {warm_s:.1f} s"
                + (
                    f"; still running after run1, killed: {'; '.join(killed)[:200]}"
                    if killed
                    else ""
                ),
            )
        )
        results.append(
            scenario.Result(
                "one-environment",
                len(built) == 1,
                f"environments after run1: {', '.join(built) or 'none'}"
                + (" (the hooks and the server built one each)" if len(built) > 1 else ""),
            )
        )
        got2, missing2 = s2.tools()
        ok2, curl2 = s2.curl()
        bad2 = [r.name for r in s2.results() if not r.ok]
        ev2 = scenario.check_events(events, sid2)
        write2 = scenario.check_write([], os.path.join(other, "notes.txt"))
        results.append(
            scenario.Result(
                "warm-start",
                not missing2 and ok2 and not bad2 and bool(ev2.ok) and bool(write2.ok),
                f"run2 (second project): {len(got2)}/{len(scenario.ALL_CTX)} ctx_* tools; curl "
                f"{'redirected' if ok2 else 'NOT redirected'}; ctx_* results "
                + (f"wrong: {', '.join(bad2)}" if bad2 else "right")
                + f"; notes.txt {'written' if write2.ok else 'missing'}; {ev2.evidence}",
            )
        )
        rm = invoke("plugin-remove", ["plugin", "remove", PLUGIN], proj)
        rm2 = invoke("marketplace-remove", ["plugin", "marketplace", "remove", "ctxmode"], proj)
        # Codex keeps a removed plugin's data folder: README says to delete it, as here.
        kept = os.path.join(home, ".codex", "plugins", "data", "ctxmode-ctxmode")
        kept_by_codex = os.path.isdir(kept)
        shutil.rmtree(kept, ignore_errors=True)
        left, empty = plugin_files(home)
        left = [p for p in left if p not in before]
        alive = [p.describe() for p in scenario.run_processes(run.root)]
        results.append(
            scenario.Result(
                "uninstall-clean",
                rm["rc"] == 0 and rm2["rc"] == 0 and not left and not alive,
                f"plugin remove rc={rm['rc']}, marketplace remove rc={rm2['rc']}; "
                + ("data folder kept by Codex, removed as README says; " if kept_by_codex else "")
                + "left in HOME: "
                f"{', '.join(left) or 'nothing'}"
                + (f" (empty folders: {', '.join(empty)})" if empty else "")
                + f"; processes alive: {', '.join(alive) or 'none'}",
            )
        )
        results.append(scenario.check_orphans(run.runs))
    finally:
        if fake is not None:
            fake.close()
        scenario.finish(run)
    return scenario.report("codex-plugin", results, run.root, args.keep)


if __name__ == "__main__":
    raise SystemExit(main())
