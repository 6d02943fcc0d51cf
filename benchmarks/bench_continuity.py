"""Session continuity, replayed: does what matters come back after compaction and resume?

Each scenario is a realistic multi-session transcript written as the hook payloads Claude
Code and Gemini CLI really send (the shapes of ``spec/hook-fixtures``), with the transcript
files those hosts keep beside them. Every call goes through a real ``ctxmode hook <platform>
<event>`` subprocess with its own HOME, CTXMODE_DIR and project directory. At the checkpoints
a scenario names (a SessionStart after compaction or on resume, the tool result or prompt that
carries Gemini's late snapshot) the injected context is read back and judged:

* recall: the share of the scenario's must-include facts the injection holds (XML entities
  undone, white space collapsed, case ignored; a fact given as a tuple must sit on one line);
* leaks: must-not-include facts that did appear (another conversation's data in a fresh start
  or in the wrong resume, a fixed error called still failing, a rejected plan shown approved);
* secrets at rest: secrets the payloads carried, found in any file under CTXMODE_DIR (session
  databases with their WAL, the knowledge base, logs);
* bytes per injection (routing block included) and the hook subprocesses' p50 and p95.

Scenarios live in ``continuity_tuning.py`` and ``continuity_heldout.py``: the held-out half
is never looked at while tuning the extractor. Results by scenario kind (resume, fresh,
language, failfix, plan, long, indexed, english).

    .venv/bin/python benchmarks/bench_continuity.py                  # both halves
    .venv/bin/python benchmarks/bench_continuity.py --split tuning --verbose
    .venv/bin/python benchmarks/bench_continuity.py --only plan --show  # print injections
    .venv/bin/python benchmarks/bench_continuity.py --json out.json
"""

from __future__ import annotations

import argparse
import html
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

KINDS = ("resume", "fresh", "language", "failfix", "plan", "long", "indexed", "english")
Fact = str | tuple[str, ...]


# --------------------------------------------------------------------------- the world


@dataclass
class Step:
    """One thing that happens: a hook call, or a host writing a file."""

    platform: str = ""
    event: str = ""
    payload: dict[str, Any] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)
    check: str | None = None  # judge this call's injected context under that name
    write: tuple[Path, str, bool] | None = None  # (path, text, append)


@dataclass
class Check:
    include: list[Fact] = field(default_factory=list)
    exclude: list[Fact] = field(default_factory=list)


class World:
    """One scenario's machine: a home, a data root, a project, and the steps run there."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.home = root / "home"
        self.data = root / "ctxmode-data"
        self.project = root / "home" / "dev" / "projects" / "acme-api"
        self.steps: list[Step] = []
        self.checks: dict[str, Check] = {}
        self.secrets: list[str] = []
        self._clock = 1_778_750_000.0  # 2026-05-14, advanced one second per step

    def tick(self) -> float:
        self._clock += 1.0
        return self._clock

    def p(self, rel: str) -> str:
        """An absolute path inside the project."""
        return str(self.project / rel)

    def claude(self, session_id: str | None = None) -> Claude:
        return Claude(self, session_id or str(uuid.uuid4()))

    def gemini(self, session_id: str | None = None) -> Gemini:
        return Gemini(self, session_id or str(uuid.uuid4()))

    def expect(self, name: str, include: Iterable[Fact] = (), exclude: Iterable[Fact] = ()) -> None:
        check = self.checks.setdefault(name, Check())
        check.include.extend(include)
        check.exclude.extend(exclude)

    def secret(self, *values: str) -> None:
        self.secrets.extend(values)


class Session:
    platform = ""

    def __init__(self, world: World, session_id: str) -> None:
        self.w = world
        self.sid = session_id
        self.n = 0

    def _hook(self, event: str, payload: dict[str, Any], check: str | None) -> None:
        raise NotImplementedError

    # what the user and the agent do, whatever the host
    def prompt(self, text: str, check: str | None = None) -> None:
        raise NotImplementedError

    def tool(self, name: str, tool_input: dict[str, Any], response: Any = None, **kw: Any) -> None:
        raise NotImplementedError


class Claude(Session):
    """Claude Code: JSONL transcript under ~/.claude/projects/<encoded cwd>/<session>.jsonl."""

    platform = "claude-code"

    def __init__(self, world: World, session_id: str, transcript: Path | None = None) -> None:
        super().__init__(world, session_id)
        folder = world.home / ".claude" / "projects" / str(world.project).replace("/", "-")
        self.transcript = transcript or folder / f"{session_id}.jsonl"

    def _base(self, name: str) -> dict[str, Any]:
        return {
            "session_id": self.sid,
            "transcript_path": str(self.transcript),
            "cwd": str(self.w.project),
            "permission_mode": "default",
            "hook_event_name": name,
        }

    def _hook(self, event: str, payload: dict[str, Any], check: str | None = None) -> None:
        env = {"CLAUDE_PROJECT_DIR": str(self.w.project)}
        self.w.steps.append(Step(self.platform, event, payload, env, check))

    def _line(self, kind: str, message: Any) -> None:
        self.n += 1
        line = {
            "parentUuid": None,
            "isSidechain": False,
            "userType": "external",
            "cwd": str(self.w.project),
            "sessionId": self.sid,
            "version": "2.1.332",
            "type": kind,
            "message": message,
            "uuid": str(uuid.UUID(int=hash((self.sid, self.n)) & ((1 << 128) - 1))),
            "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(self.w.tick())),
        }
        text = json.dumps(line, ensure_ascii=False) + "\n"
        self.w.steps.append(Step(write=(self.transcript, text, True)))

    def start(self, source: str, check: str | None = None) -> None:
        payload = self._base("SessionStart") | {"source": source, "model": "claude-sonnet-4-5"}
        self._hook("sessionstart", payload, check)

    def prompt(self, text: str, check: str | None = None) -> None:
        self._line("user", {"role": "user", "content": text})
        self._hook("userpromptsubmit", self._base("UserPromptSubmit") | {"prompt": text}, check)

    def tool(
        self,
        name: str,
        tool_input: dict[str, Any],
        response: Any = None,
        *,
        error: str | None = None,
        check: str | None = None,
    ) -> None:
        self.n += 1
        use_id = f"toolu_{self.sid[:8]}{self.n:06d}"
        self._line(
            "assistant",
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": use_id, "name": name, "input": tool_input}
            ]},
        )  # fmt: skip
        payload = self._base("PostToolUseFailure" if error else "PostToolUse") | {
            "tool_name": name,
            "tool_input": tool_input,
            "tool_use_id": use_id,
        }
        if error is not None:
            payload |= {"error": error, "is_interrupt": False, "duration_ms": 812}
            self._hook("posttoolusefailure", payload, check)
        else:
            payload |= {"tool_response": response if response is not None else {}, "duration_ms": 9}
            self._hook("posttooluse", payload, check)

    # shorthands
    def bash(self, command: str, out: str = "", *, fail: str | None = None, **kw: Any) -> None:
        if fail is not None:
            self.tool("Bash", {"command": command, "description": "run"}, error=fail, **kw)
        else:
            response = {"stdout": out, "stderr": "", "interrupted": False, "isImage": False}
            self.tool("Bash", {"command": command, "description": "run"}, response, **kw)

    def read(self, rel: str, content: str = "…") -> None:
        path = self.w.p(rel)
        response = {"type": "text", "file": {"filePath": path, "content": content}}
        self.tool("Read", {"file_path": path}, response)

    def edit(self, rel: str, old: str = "a", new: str = "b") -> None:
        path = self.w.p(rel)
        self.tool(
            "Edit",
            {"file_path": path, "old_string": old, "new_string": new, "replace_all": False},
            {"filePath": path, "oldString": old, "newString": new, "userModified": False},
        )

    def write(self, rel: str, content: str = "") -> None:
        path = self.w.p(rel)
        self.tool("Write", {"file_path": path, "content": content}, {"type": "create"})

    def ctx(self, leaf: str, tool_input: dict[str, Any], text: str) -> None:
        response = [{"type": "text", "text": text}]
        self.tool(f"mcp__ctxmode__{leaf}", tool_input, response)

    def compact(self, trigger: str = "auto") -> None:
        payload = self._base("PreCompact") | {"trigger": trigger, "custom_instructions": ""}
        self._hook("precompact", payload)

    def resumed(self, new_id: str | None = None, *, copy: bool = True) -> Claude:
        """The same conversation under a new session id (``--resume``/``--continue``): a new
        transcript file holding the old lines (their sessionId kept), written at once when
        `copy`, else only once the conversation goes on."""
        new = Claude(self.w, new_id or str(uuid.uuid4()))
        new.n = self.n
        if copy:
            new.w.steps.append(Step(write=(new.transcript, f"@copy:{self.transcript}", False)))
        return new


class Gemini(Session):
    """Gemini CLI: one JSON chat file per session under ~/.gemini/tmp/<hash>/chats/."""

    platform = "gemini-cli"

    def __init__(self, world: World, session_id: str, chat: Path | None = None) -> None:
        super().__init__(world, session_id)
        stamp = time.strftime("%Y-%m-%dT%H-%M", time.gmtime(world._clock))
        folder = world.home / ".gemini" / "tmp" / ("3c9e5b1f" * 8) / "chats"
        self.chat = chat or folder / f"session-{stamp}-{session_id[:8]}.json"
        self.owner = session_id  # the chat file's sessionId
        self.messages: list[dict[str, Any]] = []

    def _stamp(self) -> str:
        return time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(self.w.tick()))

    def _base(self, name: str) -> dict[str, Any]:
        return {
            "session_id": self.sid,
            "transcript_path": str(self.chat),
            "cwd": str(self.w.project),
            "hook_event_name": name,
            "timestamp": self._stamp(),
        }

    def _hook(self, event: str, payload: dict[str, Any], check: str | None = None) -> None:
        env = {"GEMINI_PROJECT_DIR": str(self.w.project), "GEMINI_SESSION_ID": self.sid}
        self.w.steps.append(Step(self.platform, event, payload, env, check))

    def _save(self) -> None:
        body = {
            "sessionId": self.owner,
            "projectHash": "3c9e5b1f" * 8,
            "startTime": self.messages[0]["timestamp"] if self.messages else self._stamp(),
            "lastUpdated": self._stamp(),
            "messages": self.messages,
        }
        self.w.steps.append(Step(write=(self.chat, json.dumps(body, ensure_ascii=False), False)))

    def start(self, source: str, check: str | None = None) -> None:
        self._hook("sessionstart", self._base("SessionStart") | {"source": source}, check)

    def prompt(self, text: str, check: str | None = None) -> None:
        self.messages.append(
            {"id": str(uuid.uuid4()), "timestamp": self._stamp(), "type": "user", "content": text}
        )
        self._save()
        self._hook("beforeagent", self._base("BeforeAgent") | {"prompt": text}, check)

    def tool(
        self,
        name: str,
        tool_input: dict[str, Any],
        response: Any = None,
        *,
        error: str | None = None,
        mcp: tuple[str, str] | None = None,
        check: str | None = None,
    ) -> None:
        self.n += 1
        if response is None:
            response = {"llmContent": "", "returnDisplay": ""}
        if error is not None:
            response = {
                "llmContent": error,
                "returnDisplay": error,
                "error": {"message": error, "type": "execution_failed"},
            }
        payload = self._base("AfterTool") | {"tool_name": name, "tool_input": tool_input}
        payload["tool_response"] = response
        if mcp is not None:
            payload["mcp_context"] = {
                "server_name": mcp[0],
                "tool_name": mcp[1],
                "command": "ctxmode",
                "args": ["serve"],
                "cwd": str(self.w.project),
            }
        self._hook("aftertool", payload, check)

    def shell(self, command: str, out: str = "", code: int = 0, **kw: Any) -> None:
        content = (
            f"Command: {command}\nDirectory: (root)\nOutput: {out}\nError: (none)\n"
            f"Exit Code: {code}\nSignal: (none)\nBackground PIDs: (none)\n"
            "Process Group PGID: 48213"
        )
        self.tool(
            "run_shell_command",
            {"command": command, "description": "run"},
            {"llmContent": content, "returnDisplay": out},
            **kw,
        )

    def read(self, rel: str, content: str = "…") -> None:
        self.tool("read_file", {"file_path": self.w.p(rel)}, {"llmContent": content})

    def edit(self, rel: str, old: str = "a", new: str = "b") -> None:
        path = self.w.p(rel)
        self.tool(
            "replace",
            {"file_path": path, "old_string": old, "new_string": new, "instruction": "edit"},
            {"llmContent": f"Successfully modified file: {path} (1 replacements)."},
        )

    def write(self, rel: str, content: str = "") -> None:
        path = self.w.p(rel)
        self.tool(
            "write_file",
            {"file_path": path, "content": content},
            {"llmContent": f"Successfully created and wrote to new file: {path}."},
        )

    def ctx(self, leaf: str, tool_input: dict[str, Any], text: str, **kw: Any) -> None:
        self.tool(
            f"mcp_ctxmode_{leaf}",
            tool_input,
            {"llmContent": text, "returnDisplay": text},
            mcp=("ctxmode", leaf),
            **kw,
        )

    def compress(self, trigger: str = "manual") -> None:
        self._hook("precompress", self._base("PreCompress") | {"trigger": trigger})

    def resumed(self, new_id: str | None = None) -> Gemini:
        """``gemini --resume latest``: the old chat file goes on, under a new session id."""
        new = Gemini(self.w, new_id or str(uuid.uuid4()), chat=self.chat)
        new.owner, new.messages, new.n = self.owner, self.messages, self.n
        return new


@dataclass
class Scenario:
    name: str
    kind: str
    build: Callable[[World], None]
    split: str = ""


# --------------------------------------------------------------------------- running


def python() -> str:
    """The interpreter of the project's venv (this one when there is none)."""
    for root in (HERE.parent, *HERE.parent.parents):
        candidate = root / ".venv" / "bin" / "python"
        if candidate.exists():
            return str(candidate)
    return sys.executable


def ctxmode_command() -> list[str]:
    """``python -m ctxmode`` of the checkout this file is in (PYTHONPATH set by the caller),
    so a worktree of an older commit measures that commit."""
    return [python(), "-m", "ctxmode"]


@dataclass
class Outcome:
    name: str
    kind: str
    split: str
    facts: int = 0
    found: int = 0
    leaks: int = 0
    secrets: int = 0
    planted: int = 0
    missed: list[str] = field(default_factory=list)
    leaked: list[str] = field(default_factory=list)
    secret_hits: list[str] = field(default_factory=list)
    injections: list[int] = field(default_factory=list)
    hook_ms: list[float] = field(default_factory=list)
    hook_cpu_ms: list[float] = field(default_factory=list)
    calls: int = 0
    shown: dict[str, str] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)


def _normal(text: str) -> str:
    return " ".join(html.unescape(text).split()).casefold()


def _has(context: str, fact: Fact) -> bool:
    if isinstance(fact, str):
        return _normal(fact) in _normal(context)
    parts = [_normal(p) for p in fact]
    lines = [_normal(line) for line in html.unescape(context).splitlines()]
    return any(all(p in line for p in parts) for line in lines)


def _label(fact: Fact) -> str:
    return fact if isinstance(fact, str) else " + ".join(fact)


def _context_of(platform: str, stdout: str) -> str:
    stdout = stdout.strip()
    if not stdout:
        return ""
    try:
        data = json.loads(stdout)
    except ValueError:
        return stdout
    specific = data.get("hookSpecificOutput") if isinstance(data, dict) else None
    if isinstance(specific, dict) and isinstance(specific.get("additionalContext"), str):
        return str(specific["additionalContext"])
    return ""


def _write(path: Path, text: str, append: bool) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if text.startswith("@copy:"):
        shutil.copyfile(text[len("@copy:") :], path)
        return
    with path.open("a" if append else "w", encoding="utf-8") as handle:
        handle.write(text)


def run_measured(
    argv: list[str], stdin: bytes, env: dict[str, str], cwd: Path
) -> tuple[int, str, float, float]:
    """Run one process: (exit code, stdout, wall ms, CPU ms of the process itself). CPU
    time (user + system, from wait4) is steadier than wall time on a shared machine."""
    with tempfile.TemporaryFile() as given, tempfile.TemporaryFile() as taken:
        given.write(stdin)
        given.seek(0)
        began = time.perf_counter()
        proc = subprocess.Popen(
            argv, stdin=given, stdout=taken, stderr=subprocess.DEVNULL, env=env, cwd=cwd
        )
        _, status, usage = os.wait4(proc.pid, 0)
        wall = (time.perf_counter() - began) * 1000
        proc.returncode = os.waitstatus_to_exitcode(status)
        taken.seek(0)
        stdout = taken.read().decode("utf-8", "replace")
    return proc.returncode, stdout, wall, (usage.ru_utime + usage.ru_stime) * 1000


def run_scenario(scenario: Scenario, keep: bool = False) -> Outcome:
    root = Path(tempfile.mkdtemp(prefix=f"ctx-cont-{scenario.name}-"))
    world = World(root)
    world.project.mkdir(parents=True)
    world.home.mkdir(parents=True, exist_ok=True)
    scenario.build(world)
    out = Outcome(scenario.name, scenario.kind, scenario.split)
    base_env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("CTXMODE_", "CLAUDE_", "GEMINI_", "CODEX_", "XDG_"))
    }
    base_env |= {
        "HOME": str(world.home),
        "CTXMODE_DIR": str(world.data),
        "PYTHONPATH": str(HERE.parent),
    }
    command = ctxmode_command()
    contexts: dict[str, str] = {}
    try:
        for step in world.steps:
            if step.write is not None:
                _write(*step.write)
                continue
            payload = json.dumps(step.payload, ensure_ascii=False).encode("utf-8")
            code, stdout, wall, cpu = run_measured(
                [*command, "hook", step.platform, step.event],
                payload,
                base_env | step.env,
                world.project,
            )
            out.hook_ms.append(wall)
            out.hook_cpu_ms.append(cpu)
            out.calls += 1
            if code != 0:
                out.errors.append(f"{step.event}: exit {code}")
            context = _context_of(step.platform, stdout)
            if step.check is not None:
                contexts[step.check] = context
                if context:
                    out.injections.append(len(context.encode("utf-8")))
        for name, check in world.checks.items():
            context = contexts.get(name, "")
            out.shown[name] = context
            for fact in check.include:
                out.facts += 1
                if _has(context, fact):
                    out.found += 1
                else:
                    out.missed.append(f"{name}: {_label(fact)}")
            for fact in check.exclude:
                if _has(context, fact):
                    out.leaks += 1
                    out.leaked.append(f"{name}: {_label(fact)}")
        at_rest = b""
        for path in sorted(world.data.rglob("*")) if world.data.exists() else []:
            if path.is_file():
                at_rest += path.read_bytes()
        out.planted = len(world.secrets)
        for secret in world.secrets:
            if secret.encode("utf-8") in at_rest:
                out.secrets += 1
                out.secret_hits.append(secret[:12] + "…")
    finally:
        if not keep:
            shutil.rmtree(root, ignore_errors=True)
    return out


def load(split: str) -> list[Scenario]:
    import continuity_heldout
    import continuity_tuning

    chosen: list[Scenario] = []
    for name, module in (("tuning", continuity_tuning), ("heldout", continuity_heldout)):
        if split in (name, "all"):
            for s in module.SCENARIOS:
                s.split = name
                chosen.append(s)
    return chosen


# --------------------------------------------------------------------------- report


def _pct(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def summarise(outcomes: list[Outcome], split: str) -> dict[str, Any]:
    chosen = [o for o in outcomes if o.split == split]
    by_kind: dict[str, dict[str, int]] = {}
    for o in chosen:
        row = by_kind.setdefault(o.kind, {"facts": 0, "found": 0, "leaks": 0, "scenarios": 0})
        row["facts"] += o.facts
        row["found"] += o.found
        row["leaks"] += o.leaks
        row["scenarios"] += 1
    facts = sum(o.facts for o in chosen)
    found = sum(o.found for o in chosen)
    sizes = [b for o in chosen for b in o.injections]
    times = [t for o in chosen for t in o.hook_ms]
    cpu = [t for o in chosen for t in o.hook_cpu_ms]
    return {
        "split": split,
        "scenarios": len(chosen),
        "recall": found / facts if facts else 0.0,
        "facts": facts,
        "found": found,
        "leaks": sum(o.leaks for o in chosen),
        "secrets_at_rest": sum(o.secrets for o in chosen),
        "secrets_planted": sum(o.planted for o in chosen),
        "injection_bytes_mean": statistics.mean(sizes) if sizes else 0,
        "injection_bytes_max": max(sizes) if sizes else 0,
        "hook_calls": len(times),
        "hook_p50_ms": statistics.median(times) if times else 0.0,
        "hook_p95_ms": _pct(times, 0.95),
        "hook_cpu_p50_ms": statistics.median(cpu) if cpu else 0.0,
        "by_kind": {
            k: {**v, "recall": (v["found"] / v["facts"]) if v["facts"] else None}
            for k, v in sorted(by_kind.items(), key=lambda kv: KINDS.index(kv[0]))
        },
        "errors": [e for o in chosen for e in o.errors][:10],
    }


def print_summary(summary: dict[str, Any]) -> None:
    print(
        f"\n== {summary['split']}: {summary['scenarios']} scenarios, {summary['hook_calls']} hook"
        f" calls"
    )
    print(f"{'kind':<10} {'scen':>4} {'facts':>6} {'recall':>7} {'leaks':>6}")
    for kind, row in summary["by_kind"].items():
        recall = "-" if row["recall"] is None else f"{row['recall']:.2f}"
        print(f"{kind:<10} {row['scenarios']:>4} {row['facts']:>6} {recall:>7} {row['leaks']:>6}")
    print(
        f"{'all':<10} {summary['scenarios']:>4} {summary['facts']:>6}"
        f" {summary['recall']:>7.2f} {summary['leaks']:>6}"
    )
    print(
        f"secrets at rest {summary['secrets_at_rest']} of {summary['secrets_planted']};"
        " injection bytes mean"
        f" {summary['injection_bytes_mean']:.0f}, max {summary['injection_bytes_max']};"
        f" hook p50 {summary['hook_p50_ms']:.1f} ms, p95 {summary['hook_p95_ms']:.1f} ms,"
        f" CPU p50 {summary['hook_cpu_p50_ms']:.1f} ms (a bare interpreter start: p50"
        f" {summary['python_start_p50_ms']:.1f} ms, CPU {summary['python_start_cpu_ms']:.1f} ms)"
    )
    if summary["errors"]:
        print("hook errors:", summary["errors"])


def report(o: Outcome, verbose: bool, show: bool) -> None:
    status = f"{o.found}/{o.facts}" + (f" LEAKS {o.leaks}" if o.leaks else "")
    status += f" SECRETS {o.secrets}" if o.secrets else ""
    print(f"[{o.split:<7}] {o.kind:<9} {o.name:<34} {status}  ({o.calls} calls)", flush=True)
    if verbose or show:
        for m in o.missed:
            print(f"    missed  {m}")
        for m in o.leaked:
            print(f"    LEAKED  {m}")
        for m in o.secret_hits:
            print(f"    SECRET  {m}")
        for e in o.errors[:3]:
            print(f"    error   {e}")
    if show:
        for name, text in o.shown.items():
            print(f"  --- {name} ({len(text.encode('utf-8'))} bytes)\n{text}\n")


def interpreter_start_ms(runs: int = 21) -> tuple[float, float]:
    """p50 wall and CPU ms of starting the hook's interpreter and doing nothing: the
    machine's floor."""
    walls, cpus = [], []
    for _ in range(runs):
        _, _, wall, cpu = run_measured([python(), "-c", "pass"], b"", dict(os.environ), HERE)
        walls.append(wall)
        cpus.append(cpu)
    return statistics.median(walls), statistics.median(cpus)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", choices=("tuning", "heldout", "all"), default="all")
    parser.add_argument("--only", help="scenarios whose name or kind contains this")
    parser.add_argument("--jobs", type=int, default=2, help="scenarios run at once")
    parser.add_argument("--verbose", action="store_true", help="missed and leaked facts")
    parser.add_argument("--show", action="store_true", help="print every judged injection")
    parser.add_argument("--keep", action="store_true", help="keep the scratch directories")
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args(argv)
    # Bytecode as an installed package has it: without it every hook compiles ctxmode anew
    # (a fresh worktree's first runs), which is not what hosts see.
    subprocess.run([python(), "-m", "compileall", "-q", str(HERE.parent / "ctxmode")], check=False)
    scenarios = load(args.split)
    if args.only:
        scenarios = [s for s in scenarios if args.only in s.name or args.only == s.kind]
    began = time.perf_counter()
    outcomes: list[Outcome] = []
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        results = pool.map(lambda s: run_scenario(s, args.keep), scenarios)
        for o in results:
            outcomes.append(o)
            report(o, args.verbose, args.show)
    summaries = [summarise(outcomes, s) for s in ("tuning", "heldout")]
    summaries = [s for s in summaries if s["scenarios"]]
    bare, bare_cpu = interpreter_start_ms()
    for summary in summaries:
        summary["python_start_p50_ms"] = bare
        summary["python_start_cpu_ms"] = bare_cpu
    for summary in summaries:
        print_summary(summary)
    print(f"\n{time.perf_counter() - began:.0f} s")
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "summaries": summaries,
                    "scenarios": [
                        {
                            k: v
                            for k, v in vars(o).items()
                            if k not in ("shown", "hook_ms", "hook_cpu_ms")
                        }
                        for o in outcomes
                    ],
                },
                indent=2,
                ensure_ascii=False,
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
