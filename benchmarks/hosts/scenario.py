"""The common real-host scenario: scratch layout, setup round trip, host invocations, the
recorded events, the process checks, and the checks every host driver reports.

Standard library only. A host driver (``opencode.py``, ``qwen_code.py``, ``kilo.py``, ...)
builds a `Run`, writes the host's own config (model provider = the fake API of
``fakeapi.py``), calls `Run.setup_round_trip`, runs the host with `Run.invoke`, then
`Run.collect_events` and the checks below, and prints `report`.

Scratch layout (``Run.root``, a fresh ``mktemp -d`` unless ``--keep``)::

    home/        the host's HOME (its config under home/.config or home/.<host>)
    data/        CTXMODE_DIR (ctxmode's data root: sessions, knowledge base, servers/)
    proj/        a git project, set up with ``ctxmode setup <platform>``
    bin/ctxmode  a link to the ctxmode under test, first on PATH (setup writes the bare name)
    logs/        requests.jsonl (fakeapi), <run>.out/.err, runs.json, events.jsonl, setup.json

The task script, the same on every host: a shell ``curl`` that ctxmode must redirect (pinned
to 127.0.0.1 with ``--resolve``), ``ctx_fetch_and_index`` of the fake's ``/page``,
``ctx_execute`` printing 45, ``ctx_index``, ``ctx_search`` for "zebracorn deploy", a file write
of ``notes.txt``, then text. A prompt containing ``RESUME`` gets text at once.

Checks (one `Result` each; `report` prints ``PASS|FAIL <host> <name>: <evidence>``):

* ``setup-round-trip``: setup writes, a second setup changes nothing, ``uninstall --dry-run``
  writes nothing, uninstall puts every file back byte for byte, setup again;
* ``mcp-tools``: all 11 ctx_* tools offered to the model;
* ``curl-redirected``: the curl's tool result names ctx_fetch_and_index and the fake never
  served ``/curl-target``;
* ``<tool>-result``: each ctx_* result is what the call should give;
* ``events``: the session's recorded events hold the four ctx_* calls (``mcp``) and the
  ``notes.txt`` write (``file_write``);
* ``resume`` / ``compaction``: driver-specific (`new_resume_blocks` helps);
* ``no-orphans``: no ctxmode process of the run alive 5 s after each host invocation.
"""

from __future__ import annotations

import argparse
import contextlib
import html
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fakeapi import (  # noqa: E402
    CURL_HOST,
    FakeAPI,
    Script,
    Step,
    chat_requests,
    find_prompt,
    load_log,
    resolve,
    segments,
    text_of,
    tool_names,
    tool_results,
)

ALL_CTX = (
    "ctx_execute",
    "ctx_execute_file",
    "ctx_batch_execute",
    "ctx_index",
    "ctx_search",
    "ctx_fetch_and_index",
    "ctx_stats",
    "ctx_doctor",
    "ctx_upgrade",
    "ctx_purge",
    "ctx_insight",
)
GUIDANCE = "<context_window_protection>"
TASK = "do the task"
RESUME = "RESUME"
CURL = (
    f"curl -s --max-time 10 --resolve {CURL_HOST}:{{port}}:127.0.0.1 "
    f"http://{CURL_HOST}:{{port}}/curl-target"
)
NOTES = "zebracorn deploy runs nightly\n"
MARK_ENV = "CTXMODE_HOSTS_RUN"
HOST_TIMEOUT = float(os.environ.get("CTXMODE_HOSTS_TIMEOUT", "180"))
SETTLE_S = 1.2  # between invocations: snapshot timestamps (1 s resolution) stay apart
RESUME_TAG = re.compile(r"<session_resume\b([^>]*)>")
# The caller's variables that would point a host or ctxmode at real accounts, data or proxies.
DROP_PREFIXES = (
    "ANTHROPIC_",
    "CLAUDE",
    "GEMINI_",
    "GOOGLE_",
    "OPENAI_",
    "CODEX_",
    "CTXMODE_",
    "CONTEXT_MODE_",
    "OPENCODE",
    "KILO",
    "QWEN",
    "DASHSCOPE",
    "OPENROUTER",
    "XDG_",
    "NPM_CONFIG_",
    "npm_config_",
    "MCP_",
    "OTEL_",
)
DROP_EXACT = frozenset(
    {"NODE_OPTIONS", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"}
    | {"http_proxy", "https_proxy", "all_proxy", "no_proxy"}
)


def task_script(
    shell: Callable[[str], Step], write: Callable[[str, str], Step], notes_path: str
) -> dict[str, list[Step]]:
    """The scenario's prompts for a host whose shell and write tools `shell` and `write`
    build (the host's own tool names and argument shapes)."""
    return {
        TASK: [
            shell(CURL),
            Step("mcp:ctx_fetch_and_index", {"url": "{base}/page", "source": "zebracorn-page"}),
            Step("mcp:ctx_execute", {"language": "python", "code": "print(sum(range(10)))"}),
            Step(
                "mcp:ctx_index",
                {"content": "# Notes\n\nThe zebracorn deploy runs nightly.", "source": "notes"},
            ),
            Step("mcp:ctx_search", {"queries": ["zebracorn deploy"]}),
            write(notes_path, NOTES),
        ],
        RESUME: [],
    }


# --- processes (Linux /proc) -----------------------------------------------------------------


@dataclass
class Proc:
    pid: int
    ppid: int
    state: str
    argv: list[str]
    cwd: str
    environ: bytes

    def describe(self) -> str:
        cmd = " ".join([os.path.basename(self.argv[0]), *self.argv[1:]]) if self.argv else "?"
        return f"pid {self.pid} '{cmd[:80]}'"


def _read(path: str) -> bytes | None:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return None


def processes() -> dict[int, Proc]:
    out = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        pid = int(name)
        stat = _read(f"/proc/{pid}/stat")
        if not stat:
            continue
        try:
            rest = stat[stat.rindex(b")") + 2 :].split()
            state, ppid = rest[0].decode(), int(rest[1])
        except (ValueError, IndexError):
            continue
        raw = _read(f"/proc/{pid}/cmdline") or b""
        argv = [a.decode("utf-8", "replace") for a in raw.split(b"\0") if a]
        try:
            cwd = os.readlink(f"/proc/{pid}/cwd")
        except OSError:
            cwd = ""
        out[pid] = Proc(pid, ppid, state, argv, cwd, _read(f"/proc/{pid}/environ") or b"")
    return out


def run_processes(root: str) -> list[Proc]:
    """Live processes of the run rooted at `root` (its marker in their environment, their
    cwd inside it, or an argument naming it), this driver and its ancestors excluded."""
    procs = processes()
    skip, pid = set(), os.getpid()
    while pid in procs and pid not in skip and pid > 1:
        skip.add(pid)
        pid = procs[pid].ppid
    marker = f"{MARK_ENV}={root}".encode()
    return [
        p
        for p in procs.values()
        if p.pid not in skip
        and not p.state.startswith("Z")
        and (
            marker in p.environ.split(b"\0")
            or p.cwd == root
            or p.cwd.startswith(root + "/")
            or any(root in a for a in p.argv)
        )
    ]


def is_ctxmode(p: Proc) -> bool:
    return any(os.path.basename(a) == "ctxmode" for a in p.argv[:2]) or p.argv[1:3] == [
        "-m",
        "ctxmode",
    ]


def wait_ctxmode_gone(root: str, limit: float = 5.0) -> tuple[float | None, list[str]]:
    """(seconds until no ctxmode process of the run was alive, or None; the survivors)."""
    t0 = time.monotonic()
    while True:
        alive = [p for p in run_processes(root) if is_ctxmode(p)]
        waited = time.monotonic() - t0
        if not alive:
            return round(waited, 2), []
        if waited >= limit:
            return None, [p.describe() for p in alive]
        time.sleep(0.1)


def kill_leftovers(root: str) -> list[str]:
    """SIGKILL every live process of the run (all of them started by it)."""
    left = run_processes(root)
    for p in left:
        with contextlib.suppress(OSError):
            os.kill(p.pid, signal.SIGKILL)
    return [p.describe() for p in left]


# --- the run -----------------------------------------------------------------------------------


@dataclass
class Result:
    name: str
    ok: bool | None  # None: not applicable (shown as SKIP)
    evidence: str


@dataclass
class Run:
    """One host's scratch dir, environment and invocations."""

    host: str
    """The platform name (``ctxmode setup <host>``)."""
    ctxmode: str
    root: str
    runs: list[dict[str, Any]] = field(default_factory=list)
    fake: FakeAPI | None = None
    setup_files: list[str] = field(default_factory=list)
    """The files the first ``ctxmode setup`` of `setup_round_trip` wrote."""
    setup_args: list[str] = field(default_factory=list)
    """Added to every ``ctxmode setup``/``uninstall`` (``--global`` for a host with no
    project configuration)."""

    def __post_init__(self) -> None:
        self.d = {k: os.path.join(self.root, k) for k in ("home", "data", "proj", "bin", "logs")}
        for p in self.d.values():
            os.makedirs(p, exist_ok=True)
        link = os.path.join(self.d["bin"], "ctxmode")
        if not os.path.lexists(link):
            os.symlink(self.ctxmode, link)
        self.requests_log = os.path.join(self.d["logs"], "requests.jsonl")

    # --- environment ---

    def env(self, extra_path: Sequence[str] = (), **extra: str) -> dict[str, str]:
        env = {
            k: v
            for k, v in os.environ.items()
            if k not in DROP_EXACT and not k.startswith(DROP_PREFIXES)
        }
        env.update(
            {
                "HOME": self.d["home"],
                "CTXMODE_DIR": self.d["data"],
                "PATH": os.pathsep.join([self.d["bin"], *extra_path, os.environ.get("PATH", "")]),
                MARK_ENV: self.root,
                "NO_PROXY": "127.0.0.1,localhost",
                "no_proxy": "127.0.0.1,localhost",
            }
        )
        env.update(extra)
        return env

    def git_project(self) -> None:
        proj, env = self.d["proj"], self.env()
        Path(proj, "README.md").write_text("# scratch project\n", encoding="utf-8")
        for cmd in (
            ["git", "init", "-q"],
            ["git", "add", "."],
            [
                "git",
                "-c",
                "user.email=c@example.invalid",
                "-c",
                "user.name=c",
                "commit",
                "-qm",
                "i",
            ],
        ):
            subprocess.run(cmd, cwd=proj, env=env, check=True, capture_output=True, timeout=30)

    def start_fake(self, script: Script) -> FakeAPI:
        self.fake = FakeAPI(script, self.requests_log).__enter__()
        return self.fake

    # --- ctxmode ---

    def ctxmode_cli(self, *args: str, cwd: str | None = None) -> subprocess.CompletedProcess[str]:
        # setup refuses an executable under $TMPDIR (a uvx copy would vanish); a venv under
        # /tmp is fine here, so TMPDIR points into the scratch dir for ctxmode's own calls.
        tmp = os.path.join(self.root, "tmp")
        os.makedirs(tmp, exist_ok=True)
        return subprocess.run(
            ["ctxmode", *args],
            cwd=cwd or self.d["proj"],
            env=self.env(TMPDIR=tmp),
            capture_output=True,
            text=True,
            timeout=120,
            stdin=subprocess.DEVNULL,
        )

    def setup_round_trip(self, watch: Iterable[str] = ()) -> Result:
        """setup, setup again (nothing changes), uninstall --dry-run (nothing changes),
        uninstall (every file as before), setup again. `watch`: more files or folders to
        compare (the host's global config, for instance); the project and the host's HOME
        are always compared."""
        roots = [self.d["proj"], self.d["home"], *watch]
        log: list[dict[str, Any]] = []

        def step(*args: str) -> tuple[int, dict[str, Any]]:
            r = self.ctxmode_cli(*args, *self.setup_args, "--json")
            try:
                data = json.loads(r.stdout)
            except ValueError:
                data = {}
            log.append({"argv": list(args), "rc": r.returncode, "out": data, "err": r.stderr})
            return r.returncode, data.get("data") or {}

        def tree() -> dict[str, bytes]:  # ctxmode's own data root (records, logs) aside
            return {
                p: b
                for p, b in _tree(roots).items()
                if "/.local/share/ctxmode/" not in p and not p.startswith(self.d["data"])
            }

        before = tree()
        problems = []
        rc, first = step("setup", self.host)
        if rc != 0:
            problems.append(f"setup exit {rc}: {log[-1]['err'].strip()[:200]}")
        self.setup_files = [str(f["path"]) for f in first.get("files") or []]
        written = sorted(os.path.relpath(f["path"], self.root) for f in first.get("files") or [])
        after = tree()
        rc, again = step("setup", self.host)
        if rc != 0 or again.get("changed") or tree() != after:
            problems.append("second setup changed something")
        rc, _ = step("uninstall", self.host, "--dry-run")
        if rc != 0 or tree() != after:
            problems.append("uninstall --dry-run changed something")
        rc, _ = step("uninstall", self.host)
        restored = tree()
        diff = sorted(
            os.path.relpath(p, self.root)
            for p in set(before) ^ set(restored)
            | {p for p in before if restored.get(p) != before[p]}
        )
        if rc != 0 or diff:
            problems.append(f"uninstall left {diff[:5]}")
        rc, _ = step("setup", self.host)
        if rc != 0:
            problems.append(f"setup (again) exit {rc}")
        with open(os.path.join(self.d["logs"], "setup.json"), "w", encoding="utf-8") as f:
            json.dump(log, f, indent=1)
        return Result(
            "setup-round-trip",
            not problems,
            "; ".join(problems)
            or f"setup wrote {', '.join(written)}; again: unchanged; uninstall restored all",
        )

    def uninstall_after(self) -> Result:
        """``ctxmode uninstall`` after the host ran (hosts rewrite their settings files:
        Qwen Code adds ``$version``, OpenCode installs packages beside the plugin): no file
        setup wrote still names ctxmode."""
        r = self.ctxmode_cli("uninstall", self.host, *self.setup_args)
        left = []
        for path in self.setup_files:
            with contextlib.suppress(OSError):
                if b"ctxmode" in Path(path).read_bytes().replace(self.root.encode(), b""):
                    left.append(os.path.relpath(path, self.root))
        return Result(
            "uninstall-after-run",
            r.returncode == 0 and not left,
            f"exit {r.returncode}; "
            + (
                f"ctxmode still named in {', '.join(sorted(left)[:5])}" if left else "no trace left"
            ),
        )

    # --- the host ---

    def begin(self, name: str) -> float:
        """Before invocation `name`: the settle gap after the previous one, the fake's log
        marked; the start time."""
        if self.runs and self.runs[-1].get("end"):
            time.sleep(max(0.0, SETTLE_S - (time.time() - self.runs[-1]["end"])))
        if self.fake is not None:
            self.fake.mark(name)
        return time.time()

    def record(self, rec: dict[str, Any]) -> dict[str, Any]:
        """After an invocation (`rec`: its name, argv, prompt, cwd, start, end, rc,
        timed_out): up to 5 s for its ctxmode processes to go (the ones still alive are
        recorded, then killed); kept in ``runs.json``."""
        gone, survivors = wait_ctxmode_gone(self.root)
        rec.update(ctxmode_gone_after_s=gone, survivors=survivors)
        if survivors or run_processes(self.root):
            rec["killed"] = kill_leftovers(self.root)
        self.runs.append(rec)
        self.save()
        return rec

    def invoke(
        self, name: str, argv: Sequence[str], cwd: str, env: Mapping[str, str], prompt: str = ""
    ) -> dict[str, Any]:
        """One host invocation under a timeout, then `record`."""
        start = self.begin(name)
        out = os.path.join(self.d["logs"], f"{name}.out")
        err = os.path.join(self.d["logs"], f"{name}.err")
        with open(out, "w") as fo, open(err, "w") as fe:
            p = subprocess.Popen(
                list(argv),
                cwd=cwd,
                env={**env, "PWD": cwd},  # some hosts (OpenCode) take PWD over the real cwd
                stdout=fo,
                stderr=fe,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
            try:
                rc = p.wait(HOST_TIMEOUT)
                timed_out = False
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                rc, timed_out = p.wait(), True
        rec = {"name": name, "argv": list(argv), "prompt": prompt, "cwd": cwd, "start": start}
        return self.record({**rec, "end": time.time(), "rc": rc, "timed_out": timed_out})

    def save(self) -> None:
        with open(os.path.join(self.d["logs"], "runs.json"), "w", encoding="utf-8") as f:
            json.dump({"host": self.host, "ctxmode": self.ctxmode, "runs": self.runs}, f, indent=1)

    # --- what was recorded ---

    def collect_events(self) -> list[dict[str, Any]]:
        """`ctxmode session events --json` of every recorded session of the project."""
        listed = self.ctxmode_cli("session", "list", "--json")
        events = []
        for line in listed.stdout.splitlines():
            try:
                sid = json.loads(line)["session_id"]
            except (ValueError, KeyError, TypeError):
                continue
            r = self.ctxmode_cli(
                "session", "events", "--json", "--session", sid, "--limit", "100000"
            )
            events += _json_lines(r.stdout)
        with open(os.path.join(self.d["logs"], "events.jsonl"), "w", encoding="utf-8") as f:
            f.writelines(json.dumps(e) + "\n" for e in events)
        if listed.returncode != 0:
            Path(self.d["logs"], "events.err").write_text(listed.stderr, encoding="utf-8")
        return events

    def requests(self) -> dict[str, list[dict[str, Any]]]:
        """{invocation name: its log entries}."""
        return segments(load_log(self.requests_log))

    def run(self, name: str) -> dict[str, Any]:
        return next((r for r in self.runs if r["name"] == name), {})


def _json_lines(text: str) -> list[dict[str, Any]]:
    out = []
    for line in text.splitlines():
        with contextlib.suppress(ValueError):
            value = json.loads(line)
            if isinstance(value, dict):
                out.append(value)
    return out


def _tree(roots: Iterable[str]) -> dict[str, bytes]:
    out = {}
    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = [d for d in dirnames if d != ".git"]
            for n in filenames:
                p = os.path.join(dirpath, n)
                if os.path.isfile(p) and not os.path.islink(p):
                    out[p] = Path(p).read_bytes()
    return out


# --- checks ------------------------------------------------------------------------------------


def main_requests(entries: Sequence[Mapping[str, Any]], key: str = TASK) -> list[dict[str, Any]]:
    """The chat requests of the scripted prompt `key` (not titles, summaries, checks)."""
    return [r for r in chat_requests(entries) if r.get("prompt_key") == key]


def calls(entries: Sequence[Mapping[str, Any]], key: str = TASK) -> list[dict[str, Any]]:
    """The scripted tool calls of prompt `key`: [{name, args, result}] (result: the text the
    model got back in a later request, None if none did)."""
    reqs = main_requests(entries, key)
    results: list[tuple[str, str]] = tool_results(reqs[-1]["body"]) if reqs else []
    out, made = [], 0
    for r in reqs:
        call = (r.get("reply") or {}).get("tool_call")
        if not call:
            continue
        fn = call["function"]
        res = results[made][1] if made < len(results) else None
        out.append({"name": fn["name"], "args": json.loads(fn["arguments"]), "result": res})
        made += 1
    return out


def check_mcp_tools(entries: Sequence[Mapping[str, Any]]) -> Result:
    reqs = main_requests(entries)
    if not reqs:
        return Result("mcp-tools", False, "no request of the task reached the fake API")
    first = tool_names(reqs[0]["body"])
    offered = list(dict.fromkeys(n for r in reqs for n in tool_names(r["body"])))
    missing = [t for t in ALL_CTX if resolve("mcp:" + t, offered) is None]
    shown = resolve("mcp:ctx_execute", offered) or "-"
    deferred = resolve("mcp:ctx_execute", first) is None and shown != "-"
    return Result(
        "mcp-tools",
        not missing,
        f"{len(ALL_CTX) - len(missing)}/{len(ALL_CTX)} ctx_* tools offered (as {shown})"
        + (" once loaded (deferred at first)" if deferred else "")
        + (f"; missing {', '.join(missing)}" if missing else ""),
    )


def check_redirect(entries: Sequence[Mapping[str, Any]], shell_tool: str) -> Result:
    ran = [e for e in entries if e.get("curl_target")]
    made = calls(entries)
    curl = next(
        (c for c in made if c["name"] == shell_tool and "curl-target" in json.dumps(c["args"])),
        None,
    )
    held = next((e["ready_wait_s"] for e in entries if e.get("ready_wait_s")), 0)
    if curl is None:
        return Result("curl-redirected", False, f"no {shell_tool} curl call was made")
    res = curl["result"] or ""
    ok = "ctx_fetch_and_index" in res and not ran
    return Result(
        "curl-redirected",
        ok,
        ("curl ran (GET /curl-target served); " if ran else "curl did not run; ")
        + (f"1st reply held {held} s for serve start; " if held else "")
        + (
            f"result: {' '.join(res.split())[:100]!r}"
            if curl["result"] is not None
            else "no result"
        ),
    )


def check_results(entries: Sequence[Mapping[str, Any]]) -> list[Result]:
    made = calls(entries)
    want: list[tuple[str, Callable[[str], bool], str]] = [
        ("ctx_fetch_and_index", lambda t: "indexed" in t.lower(), "says indexed"),
        ("ctx_execute", lambda t: re.search(r"(?m)^\s*45\s*$", t) is not None, "prints 45"),
        ("ctx_index", lambda t: "indexed" in t.lower(), "says indexed"),
        ("ctx_search", lambda t: "zebracorn" in t.lower(), "finds zebracorn"),
    ]
    out = []
    for leaf, pred, what in want:
        c = next(
            (x for x in made if x["name"] == leaf or x["name"].endswith(("_" + leaf, "-" + leaf))),
            None,
        )
        if c is None:
            out.append(Result(f"{leaf}-result", False, f"no {leaf} call was made"))
        elif c["result"] is None:
            out.append(Result(f"{leaf}-result", False, f"{c['name']}: no result reached the model"))
        else:
            res = c["result"]
            out.append(
                Result(
                    f"{leaf}-result",
                    pred(res),
                    f"{c['name']} {what}: {'yes' if pred(res) else 'no'}; "
                    f"{' '.join(res.split())[:80]!r}",
                )
            )
    return out


def check_write(entries: Sequence[Mapping[str, Any]], path: str) -> Result:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError:
        text = None
    return Result(
        "file-write", text == NOTES, f"{os.path.basename(path)}: {'written' if text else 'missing'}"
    )


def check_events(events: Sequence[Mapping[str, Any]], session: str | None = None) -> Result:
    """The four ctx_* calls and the notes.txt write are in the recorded events."""
    if not events:
        return Result("events", False, "no session events recorded (see logs/events.err)")
    mine = [e for e in events if session is None or e.get("session_id") == session]
    mcp = {
        t
        for t in ("ctx_fetch_and_index", "ctx_execute", "ctx_index", "ctx_search")
        for e in mine
        if e.get("type") == "mcp" and str(e.get("data", "")).startswith(t)
    }
    writes = [
        e
        for e in mine
        if e.get("type") == "file_write" and str(e.get("data", "")).endswith("notes.txt")
    ]
    prompts = [e for e in mine if e.get("type") == "user_prompt"]
    miss = [
        t for t in ("ctx_fetch_and_index", "ctx_execute", "ctx_index", "ctx_search") if t not in mcp
    ]
    sessions = sorted({str(e.get("session_id", ""))[:12] for e in mine})
    return Result(
        "events",
        not miss and bool(writes),
        f"{len(mine)} events ({', '.join(sessions)}): mcp {len(mcp)}/4"
        + (f" (missing {','.join(miss)})" if miss else "")
        + f", file_write notes.txt {'yes' if writes else 'no'}, user_prompt {len(prompts)}",
    )


def check_guidance_once(segs: Mapping[str, Sequence[Mapping[str, Any]]]) -> Result:
    """The routing block at most once in any request to the model."""
    worst, where, count = 0, "", 0
    for run, entries in segs.items():
        for i, e in enumerate(chat_requests(entries)):
            count += 1
            n = sum(t.count(GUIDANCE) for t in request_texts(e["body"]))
            if n > worst:
                worst, where = n, f"{run} request {i}"
    return Result(
        "guidance-once",
        worst <= 1,
        f"{GUIDANCE} at most {worst}x per request over {count} requests"
        + (f" ({worst}x in {where})" if worst > 1 else ""),
    )


def check_continue(
    entries: Sequence[Mapping[str, Any]], events: Sequence[Mapping[str, Any]]
) -> Result:
    """A continued session (prompt `RESUME`) on a host that replays its whole history
    under the same session id (so no snapshot is due): run1's tool results are in the
    request, the routing block is there once, every prompt is under one session id."""
    reqs = main_requests(entries, RESUME)
    if not reqs:
        return Result("resume", False, "no request of the continued session")
    body = reqs[0]["body"]
    texts = request_texts(body)
    replayed = [r for _, r in tool_results(body)]
    history = any("zebracorn" in t.lower() for t in replayed)
    routed = sum(t.count(GUIDANCE) for t in texts)
    sessions = {e.get("session_id") for e in events if e.get("type") == "user_prompt"}
    ok = history and routed == 1 and len(sessions) == 1
    return Result(
        "resume",
        ok,
        f"run2 --continue: run1's history replayed {'yes' if history else 'no'}, routing block "
        f"{routed}x, prompts recorded under {len(sessions)} session id(s)",
    )


def check_orphans(runs: Sequence[Mapping[str, Any]]) -> Result:
    bad = [f"{r['name']}: {'; '.join(r['survivors'])}" for r in runs if r.get("survivors")]
    slow = max((r.get("ctxmode_gone_after_s") or 0.0 for r in runs), default=0.0)
    return Result(
        "no-orphans",
        bool(runs) and not bad,
        "; ".join(bad)
        if bad
        else f"{len(runs)} invocations; ctxmode gone within {slow:.1f} s of each exit",
    )


def check_exits(runs: Sequence[Mapping[str, Any]]) -> Result:
    bad = [
        f"{r['name']} rc={r['rc']}{' (timeout)' if r.get('timed_out') else ''}"
        for r in runs
        if r["rc"] != 0
    ]
    return Result("host-exit", not bad, "; ".join(bad) or f"{len(runs)} invocations exited 0")


def first_run_checks(
    run: Run, run1: Sequence[Mapping[str, Any]], shell: str, events: Sequence[Mapping[str, Any]]
) -> list[Result]:
    """What every host's first run must show: all invocations exited 0, the ctx_* tools
    listed, the shell tool (`shell`, as the host names it) redirected, every ctx_* result,
    the project file written, and the hook events recorded."""
    return [
        check_exits(run.runs),
        check_mcp_tools(run1),
        check_redirect(run1, shell),
        *check_results(run1),
        check_write(run1, os.path.join(run.d["proj"], "notes.txt")),
        check_events(events),
    ]


def epoch(stamp: str | None) -> float | None:
    try:
        return (
            datetime.strptime(str(stamp), "%Y-%m-%dT%H:%M:%SZ")
            .replace(tzinfo=timezone.utc)
            .timestamp()
        )
    except ValueError:
        return None


def request_texts(body: Mapping[str, Any]) -> list[str]:
    """Every text of a chat request: system and messages (tool results included),
    HTML-unescaped (Qwen Code escapes ``<`` and ``>`` in the context hooks add)."""
    return [
        html.unescape(text_of(m.get("content")))
        for m in body.get("messages") or []
        if isinstance(m, dict)
    ]


def resume_blocks(text: str) -> list[tuple[dict[str, str], str]]:
    out = []
    for m in RESUME_TAG.finditer(text):
        attrs = dict(re.findall(r'(\w+)="([^"]*)"', m.group(1)))
        end = text.find("</session_resume>", m.end())
        out.append((attrs, text[m.start() : end if end >= 0 else len(text)]))
    return out


def new_resume_blocks(
    entries: Sequence[Mapping[str, Any]], since: float
) -> list[tuple[dict[str, str], str]]:
    """<session_resume> blocks in `entries`' requests generated at or after `since`."""
    found = []
    for e in chat_requests(entries):
        for text in request_texts(e["body"]):
            for attrs, block in resume_blocks(text):
                gen = epoch(attrs.get("generated_at"))
                if gen is None or gen >= int(since):
                    found.append((attrs, block))
    return found


def prompt_of(body: Mapping[str, Any]) -> str | None:
    return find_prompt(body, [TASK, RESUME])[0]


# --- driver plumbing ---------------------------------------------------------------------------


def arguments(description: str) -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument(
        "--ctxmode",
        default=str(Path(__file__).resolve().parents[2] / ".venv" / "bin" / "ctxmode"),
        help="the ctxmode executable under test (default: the checkout's .venv)",
    )
    ap.add_argument("--keep", action="store_true", help="keep the scratch dir")
    ap.add_argument(
        "--no-netns", action="store_true", help="do not re-run inside a loopback-only namespace"
    )
    ap.add_argument("--in-netns", action="store_true", help=argparse.SUPPRESS)
    return ap


def isolate(args: argparse.Namespace) -> None:
    """Re-execute this driver in a loopback-only network namespace (as root, or mapped to
    root), so the host's own background traffic cannot leave the machine; a no-op where
    unshare cannot do that, or with --no-netns."""
    if args.no_netns or args.in_netns:
        return
    ip = shutil.which("ip") or next(
        (c for c in ("/usr/sbin/ip", "/sbin/ip") if os.path.exists(c)), None
    )
    unshare = shutil.which("unshare")
    if not ip or not unshare:
        print("note: no loopback-only namespace (unshare/ip missing)", file=sys.stderr)
        return
    userns = [] if os.geteuid() == 0 else ["--map-root-user"]
    probe = subprocess.run(
        [unshare, "--net", *userns, ip, "link", "set", "lo", "up"], capture_output=True
    )
    if probe.returncode != 0:
        print("note: no loopback-only namespace (unshare failed)", file=sys.stderr)
        return
    argv = [sys.executable, *sys.argv, "--in-netns"]
    script = '"$1" link set lo up && shift && exec "$@"'
    os.execv(unshare, [unshare, "--net", *userns, "--", "bash", "-c", script, "_", ip, *argv])


def scratch(host: str) -> str:
    return os.path.realpath(tempfile.mkdtemp(prefix=f"ctxmode-host-{host}."))


def report(host: str, results: Sequence[Result], root: str, keep: bool) -> int:
    failed = 0
    for r in results:
        status = "SKIP" if r.ok is None else ("PASS" if r.ok else "FAIL")
        failed += r.ok is False
        print(f"{status} {host} {r.name}: {r.evidence}")
    print(f"{host}: {sum(r.ok is True for r in results)} passed, {failed} failed")
    with open(os.path.join(root, "logs", "results.json"), "w", encoding="utf-8") as f:
        json.dump([vars(r) for r in results], f, indent=1)
    if keep:
        print(f"scratch kept: {root}", file=sys.stderr)
    else:
        shutil.rmtree(root, ignore_errors=True)
    return 1 if failed else 0


def finish(run: Run) -> list[str]:
    """Stop the fake and kill whatever of the run is still alive (reported)."""
    if run.fake is not None:
        run.fake.close()
    left = kill_leftovers(run.root)
    if left:
        print(
            f"cleanup: killed {len(left)} leftover process(es): {'; '.join(left)}", file=sys.stderr
        )
    return left


def find_bin(prefix_env: str, default: str, relative: str) -> str:
    """A host executable from an npm prefix (``$<prefix_env>`` or `default` under
    ``~/.cache/ctxmode-hosts-extra``)."""
    base = os.environ.get(prefix_env) or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"),
        "ctxmode-hosts-extra",
        default,
    )
    path = os.path.join(base, relative)
    if not os.path.exists(path):
        # `npm install -g --prefix P` puts executables in P/bin; without -g they stay under
        # P/node_modules: the hint is the command README.md's "Install the hosts" gives.
        flag = "-g " if relative.startswith(("bin/", "lib/")) else ""
        sys.exit(
            f"{path} not found: npm install {flag}--prefix {base} <package> first "
            "(the exact package and version: README.md, Install the hosts)"
        )
    return path
