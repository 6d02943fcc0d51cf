"""Session continuity on recorded host sessions: what comes back after a real compaction?

``continuity_recorded/*.json[.gz]`` are sessions of the real Claude Code (and Gemini CLI)
recorded by ``hosts_record/record.py``: every hook call's payload, cwd and host variables, and
the host's transcripts, with scratch paths as placeholders. Each recording is replayed in a
fresh HOME, CTXMODE_DIR and project (a git work tree holding the host's settings files):
before each call the transcripts are rebuilt as the hook saw them (Claude's JSONL cut to its
line count then, Gemini's chat file as it was), then the payload goes through a real
``ctxmode hook <platform> <event>`` subprocess.

Judged at two checkpoints: ``compact``, the first SessionStart(compact) (Gemini, which has no
such source: the first injection after PreCompress), and ``resume``, the first
SessionStart(resume) after it. Figures per half and per fact class (files, failures, todos,
early, errors_detail):

* recall: the share of a recording's expected facts its injection holds (XML entities undone,
  white space collapsed, case ignored; a fact given as a list must sit on one line, a part
  given as a list is a set of alternatives);
* leaks: must-not facts (a fixed failure called still failing, a stale todo state) and the
  planted secrets, found in an injection;
* secrets at rest: planted secrets found in any file under CTXMODE_DIR;
* bytes per injection at the checkpoints (max, mean).

The recordings are split by a fixed rule, the digit after the name's letter: odd (``a1``,
``b1``, ...) tuning, even (``a2``, ``b2``, ...) held-out. Do not tune on the held-out half: do
not read its per-recording results.

    .venv/bin/python benchmarks/bench_continuity_recorded.py --half tuning
    .venv/bin/python benchmarks/bench_continuity_recorded.py --half tuning --verbose --show
    .venv/bin/python benchmarks/bench_continuity_recorded.py --list         # load, run nothing
    .venv/bin/python benchmarks/bench_continuity_recorded.py --ctxmode /other/ctxmode --json o.json
"""

from __future__ import annotations

import argparse
import gzip
import html
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
RECORDED = HERE / "continuity_recorded"
DEFAULT_CTXMODE = HERE.parent / ".venv" / "bin" / "ctxmode"
HALVES = ("tuning", "held-out")
CLASSES = ("files", "failures", "todos", "early", "errors_detail")
CHECKPOINTS = ("compact", "resume")
# Host variables that name live host processes; the replay has none.
DROP_ENV = {"CLAUDE_PID", "CLAUDE_CODE_MESSAGING_SOCKET", "CLAUDE_CODE_MESSAGING_TOKEN"}
HOOK_TIMEOUT = 60

Fact = str | list[Any]


# --------------------------------------------------------------------------- loading


def half_of(name: str) -> str:
    """A recording's half by the digit after its letter(s): odd tuning, even held-out."""
    found = re.match(r"[a-z]+(\d)", name)
    if not found:
        raise ValueError(f"recording {name!r}: no digit after its letter to pick a half by")
    return HALVES[1 - int(found.group(1)) % 2]


def load_recordings(half: str = "both") -> list[dict[str, Any]]:
    """The recordings, sorted by name, each with its ``half`` set (``half_of``)."""
    paths = sorted(RECORDED.glob("*.json")) + sorted(RECORDED.glob("*.json.gz"))
    loaded = []
    for path in paths:
        data = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
        loaded.append(json.loads(data))
    loaded.sort(key=lambda r: r["name"])
    for rec in loaded:
        rec["half"] = half_of(rec["name"])
    return [r for r in loaded if half in ("both", r["half"])]


# --------------------------------------------------------------------------- facts


def normal(text: str) -> str:
    return " ".join(html.unescape(text).split()).casefold()


def _part_in(line: str, part: str | list[str]) -> bool:
    options = [part] if isinstance(part, str) else part
    return any(normal(o) in line for o in options)


def has(context: str, fact: Fact) -> bool:
    """Whether `context` holds `fact` (a string anywhere; a list's parts on one line)."""
    if isinstance(fact, str):
        return normal(fact) in normal(context)
    lines = [normal(line) for line in html.unescape(context).splitlines()]
    return any(all(_part_in(line, part) for part in fact) for line in lines)


def label(fact: Fact) -> str:
    if isinstance(fact, str):
        return fact
    return " + ".join(p if isinstance(p, str) else "|".join(p) for p in fact)


# --------------------------------------------------------------------------- replay


def dashed(path: str) -> str:
    """How Claude Code names a project's folder under ~/.claude/projects."""
    return re.sub(r"[^A-Za-z0-9]", "-", path)


class World:
    """One replay's machine: the placeholders' real paths, and the transcripts so far."""

    def __init__(self, root: Path) -> None:
        host = root / "h"
        self.scratch = root
        self.home, self.data, self.project = host / "home", host / "data", host / "proj"
        named = {
            "{project}": self.project,
            "{home}": self.home,
            "{data}": self.data,
            "{root}": host,
            "{scratch}": root,
        }
        self.names = {k: str(v) for k, v in named.items()}
        self.names |= {k[:-1] + "_dash}": dashed(str(v)) for k, v in named.items()}
        self.lines: dict[str, int] = {}
        self.chat: dict[str, str] = {}

    def fill(self, value: Any) -> Any:
        """`value` with every placeholder replaced by this world's path."""
        if isinstance(value, str):
            if "{" in value:
                for name, real in self.names.items():
                    value = value.replace(name, real)
            return value
        if isinstance(value, list):
            return [self.fill(v) for v in value]
        if isinstance(value, dict):
            return {self.fill(k): self.fill(v) for k, v in value.items()}
        return value

    def prepare(self, rec: dict[str, Any]) -> None:
        """Home, data dir, the project as a git work tree, the host's settings files, and
        every cwd a hook ran in."""
        for path in (self.home, self.data, self.project):
            path.mkdir(parents=True, exist_ok=True)
        if rec.get("git"):
            subprocess.run(["git", "init", "-q", str(self.project)], check=True)
        for name, text in rec.get("settings_files", {}).items():
            path = Path(self.fill(name))
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(self.fill(text), encoding="utf-8")
        for call in rec["calls"]:
            Path(self.fill(call["cwd"])).mkdir(parents=True, exist_ok=True)

    def sync(self, rec: dict[str, Any], state: dict[str, Any]) -> None:
        """Bring the transcripts to what the host had written when this hook started."""
        for name, mark in state.items():
            path = Path(self.fill(name))
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(mark, int):
                self._lines(path, rec["transcripts"].get(name, []), mark)
            elif self.chat.get(str(path)) != mark:
                body = json.dumps(self.fill(rec["chats"][mark]), ensure_ascii=False, indent=2)
                path.write_text(body, encoding="utf-8")
                self.chat[str(path)] = mark

    def _lines(self, path: Path, lines: list[Any], count: int) -> None:
        have = self.lines.get(str(path), 0)
        if count == have:
            return
        mode, start = ("a", have) if count > have else ("w", 0)
        with path.open(mode, encoding="utf-8") as handle:
            for obj in lines[start:count]:
                handle.write(json.dumps(self.fill(obj), ensure_ascii=False) + "\n")
        self.lines[str(path)] = count


def base_env(world: World) -> dict[str, str]:
    """The caller's environment minus anything naming a host or a ctxmode root (but
    CTXMODE_SNAPSHOT_BYTES, the budget under test), plus the replay's HOME and CTXMODE_DIR."""
    drop = ("CTXMODE_", "CLAUDE", "GEMINI_", "CODEX_", "XDG_", "CONTEXT_MODE_")
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(drop) or k == "CTXMODE_SNAPSHOT_BYTES"
    }
    return env | {"HOME": str(world.home), "CTXMODE_DIR": str(world.data)}


def injected(stdout: str) -> str:
    """The additionalContext of a hook's answer ("" when there is none)."""
    try:
        data = json.loads(stdout) if stdout.strip() else {}
    except ValueError:
        return ""
    specific = data.get("hookSpecificOutput") if isinstance(data, dict) else None
    if isinstance(specific, dict) and isinstance(specific.get("additionalContext"), str):
        return str(specific["additionalContext"])
    return ""


class Checkpoints:
    """Which calls are judged. ``compact``: Claude's first SessionStart(compact); Gemini's
    first injection after the PreCompress a real compression followed (the recording marks
    it ``compressed``; Gemini fires PreCompress before every request and has no compact
    source). ``resume``: the first SessionStart(resume) after the compact checkpoint."""

    def __init__(self) -> None:
        self.contexts: dict[str, str] = {}
        self.compressed = False

    def see(self, call: dict[str, Any], context: str) -> None:
        payload = call["payload"] if isinstance(call["payload"], dict) else {}
        source = payload.get("source") if call["event"] == "sessionstart" else None
        if "compact" not in self.contexts:
            if source == "compact" or (self.compressed and context):
                self.contexts["compact"] = context
            self.compressed = self.compressed or bool(call.get("compressed"))
        elif "resume" not in self.contexts and source == "resume":
            self.contexts["resume"] = context


@dataclass
class Outcome:
    name: str
    half: str
    host: str
    calls: int = 0
    errors: list[str] = field(default_factory=list)
    contexts: dict[str, str] = field(default_factory=dict)
    found: dict[str, dict[str, list[int]]] = field(default_factory=dict)  # cp -> cls -> [n, of]
    missed: list[str] = field(default_factory=list)
    leaked: list[str] = field(default_factory=list)
    secrets_planted: int = 0
    secrets_at_rest: list[str] = field(default_factory=list)
    seconds: float = 0.0


def run_hook(
    ctxmode: str, world: World, call: dict[str, Any], env: dict[str, str]
) -> tuple[int, str]:
    """One ``ctxmode hook`` subprocess: (exit code, stdout)."""
    extra = {k: v for k, v in world.fill(call["env"]).items() if k not in DROP_ENV}
    payload = world.fill(call["payload"])
    stdin = payload if isinstance(payload, str) else json.dumps(payload, ensure_ascii=False)
    proc = subprocess.run(
        [ctxmode, "hook", call["platform"], call["event"]],
        input=stdin.encode("utf-8"),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env | extra,
        cwd=world.fill(call["cwd"]),
        timeout=HOOK_TIMEOUT,
        check=False,
    )
    return proc.returncode, proc.stdout.decode("utf-8", "replace")


def replay(rec: dict[str, Any], ctxmode: str, keep: bool = False) -> Outcome:
    """Feed one recording through ``ctxmode hook`` in a fresh world and judge it."""
    out = Outcome(rec["name"], rec["half"], rec["host"])
    began = time.perf_counter()
    root = Path(tempfile.mkdtemp(prefix=f"ctx-rec-{rec['name']}-"))
    world = World(root)
    try:
        world.prepare(rec)
        env = base_env(world)
        points = Checkpoints()
        for call in rec["calls"]:
            world.sync(rec, call["transcripts"])
            try:
                code, stdout = run_hook(ctxmode, world, call, env)
            except subprocess.TimeoutExpired:
                code, stdout = -1, ""
            out.calls += 1
            if code != 0:
                out.errors.append(f"{call['event']}: exit {code}")
            points.see(call, injected(stdout))
        out.contexts = points.contexts
        judge(rec, out)
        out.secrets_planted = len(rec.get("secrets", []))
        out.secrets_at_rest = secrets_at_rest(world.data, rec.get("secrets", []))
    finally:
        if not keep:
            shutil.rmtree(root, ignore_errors=True)
    out.seconds = time.perf_counter() - began
    return out


def judge(rec: dict[str, Any], out: Outcome) -> None:
    """Recall per checkpoint and class; leaks (must-not facts, planted secrets)."""
    for point in CHECKPOINTS:
        context = out.contexts.get(point, "")
        table = out.found.setdefault(point, {})
        for cls, facts in rec["expect"].items():
            hits = [f for f in facts if has(context, f)]
            table[cls] = [len(hits), len(facts)]
            out.missed += [f"{point} {cls}: {label(f)}" for f in facts if f not in hits]
        for fact in [*rec.get("leaks", []), *rec.get("secrets", [])]:
            if has(context, fact):
                shown = label(fact) if fact not in rec.get("secrets", []) else "secret " + fact[:10]
                out.leaked.append(f"{point}: {shown}")


def secrets_at_rest(data: Path, secrets: list[str]) -> list[str]:
    """Planted secrets found in any file under the data dir (databases, WAL, logs)."""
    blob = b"".join(p.read_bytes() for p in sorted(data.rglob("*")) if p.is_file())
    return [s[:10] + "…" for s in secrets if s.encode("utf-8") in blob]


# --------------------------------------------------------------------------- report


def summarise(outcomes: list[Outcome], half: str) -> dict[str, Any]:
    """Figures of one half: recall per checkpoint and class, leaks, secrets, bytes."""
    chosen = [o for o in outcomes if o.half == half]
    recall: dict[str, dict[str, Any]] = {}
    for point in CHECKPOINTS:
        rows = {}
        for cls in (*CLASSES, "all"):
            pairs = [
                v for o in chosen for c, v in o.found.get(point, {}).items() if cls in (c, "all")
            ]
            n, of = sum(p[0] for p in pairs), sum(p[1] for p in pairs)
            rows[cls] = {"found": n, "facts": of, "recall": (n / of) if of else None}
        recall[point] = rows
    sizes = [len(c.encode("utf-8")) for o in chosen for c in o.contexts.values() if c]
    return {
        "half": half,
        "recordings": len(chosen),
        "hook_calls": sum(o.calls for o in chosen),
        "recall": recall,
        "leaks": sum(len(o.leaked) for o in chosen),
        "secrets_at_rest": sum(len(o.secrets_at_rest) for o in chosen),
        "secrets_planted": sum(o.secrets_planted for o in chosen),
        "injections": len(sizes),
        "injection_bytes_mean": statistics.mean(sizes) if sizes else 0,
        "injection_bytes_max": max(sizes) if sizes else 0,
        "missing_checkpoints": [
            f"{o.name}: {p}" for o in chosen for p in CHECKPOINTS if p not in o.contexts
        ],
        "errors": [f"{o.name}: {e}" for o in chosen for e in o.errors][:10],
        "seconds": sum(o.seconds for o in chosen),
    }


def _cell(row: dict[str, Any]) -> str:
    if row["recall"] is None:
        return f"{'-':>12}"
    return f"{row['recall']:>5.2f} {row['found']:>3}/{row['facts']:<3}"


def print_summary(s: dict[str, Any]) -> None:
    print(f"\n== {s['half']}: {s['recordings']} recordings, {s['hook_calls']} hook calls")
    print(f"{'class':<14}" + "".join(f"{p:>14}" for p in CHECKPOINTS))
    for cls in (*CLASSES, "all"):
        print(f"{cls:<14}" + "".join(f"  {_cell(s['recall'][p][cls])}" for p in CHECKPOINTS))
    print(
        f"leaks {s['leaks']}; secrets at rest {s['secrets_at_rest']} of"
        f" {s['secrets_planted']}; injection bytes mean {s['injection_bytes_mean']:.0f},"
        f" max {s['injection_bytes_max']} ({s['injections']} injections)"
    )
    if s["missing_checkpoints"]:
        print("no injection at:", ", ".join(s["missing_checkpoints"]))
    if s["errors"]:
        print("hook errors:", s["errors"])


def report(o: Outcome, verbose: bool, show: bool) -> None:
    parts = [
        f"{point} {sum(v[0] for v in o.found[point].values())}/"
        f"{sum(v[1] for v in o.found[point].values())}"
        for point in CHECKPOINTS
    ]
    flags = (f" LEAKS {len(o.leaked)}" if o.leaked else "") + (
        f" SECRETS-AT-REST {len(o.secrets_at_rest)}" if o.secrets_at_rest else ""
    )
    run = f"({o.calls} calls, {o.seconds:.0f} s)"
    print(f"[{o.half:<8}] {o.name:<26} {'  '.join(parts)}{flags}  {run}")
    if verbose:
        for line in o.missed:
            print(f"    missed  {line}")
        for line in o.leaked:
            print(f"    LEAKED  {line}")
        for e in o.errors[:3]:
            print(f"    error   {e}")
    if show:
        for point, text in o.contexts.items():
            print(f"  --- {point} ({len(text.encode('utf-8'))} bytes)\n{text}\n")


def list_recordings(recs: list[dict[str, Any]]) -> None:
    for half in HALVES:
        chosen = [r for r in recs if r["half"] == half]
        if not chosen:
            continue
        calls = sum(len(r["calls"]) for r in chosen)
        print(f"{half}: {len(chosen)} recordings, {calls} hook calls")
        for r in chosen:
            facts = sum(len(v) for v in r["expect"].values())
            print(f"  {r['name']:<26} {r['host']:<12} {len(r['calls']):>4} calls {facts:>3} facts")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--half", choices=("tuning", "held-out", "both"), default="both")
    parser.add_argument("--ctxmode", default=str(DEFAULT_CTXMODE), help="the ctxmode to run")
    parser.add_argument("--json", type=Path, help="write the figures here")
    parser.add_argument("--jobs", type=int, default=4, help="recordings replayed at once")
    parser.add_argument("--only", help="recordings whose name contains this")
    parser.add_argument("--verbose", action="store_true", help="missed and leaked facts")
    parser.add_argument("--show", action="store_true", help="print the judged injections")
    parser.add_argument("--keep", action="store_true", help="keep the scratch dirs")
    parser.add_argument("--list", action="store_true", help="list the recordings, run nothing")
    args = parser.parse_args(argv)
    recs = load_recordings(args.half)
    if args.only:
        recs = [r for r in recs if args.only in r["name"]]
    if args.list:
        list_recordings(recs)
        return 0
    ctxmode = os.path.abspath(args.ctxmode)
    began = time.perf_counter()
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        outcomes = list(pool.map(lambda r: replay(r, ctxmode, args.keep), recs))
    for o in outcomes:
        report(o, args.verbose, args.show)
    summaries = [summarise(outcomes, h) for h in HALVES if any(o.half == h for o in outcomes)]
    for s in summaries:
        print_summary(s)
    print(f"\n{time.perf_counter() - began:.0f} s")
    if args.json:
        detail = [
            {k: v for k, v in vars(o).items() if k != "contexts"}
            | {"injection_bytes": {p: len(c.encode("utf-8")) for p, c in o.contexts.items()}}
            for o in outcomes
        ]
        body = {"ctxmode": ctxmode, "summaries": summaries, "recordings": detail}
        args.json.write_text(json.dumps(body, indent=2, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
