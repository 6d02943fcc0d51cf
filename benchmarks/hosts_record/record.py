"""Record continuity sessions from the real Claude Code (and Gemini CLI), headless.

Each session of ``sessions.py`` runs in a fresh scratch dir (``drive.HostRun`` of
the host harness (``$CTXMODE_SHARED_HOSTS``, default ``../shared/hosts`` beside the
repository): a fake HOME, CTXMODE_DIR, a git project set up with ``ctxmode setup
<host>``) against a fake model API on 127.0.0.1 that plays the session's script of tool calls
(``fake_scripted.py`` / ``fake_gemini_scripted.py``); the host executes them for real. The
``ctxmode`` on the host's PATH is ``hook_recorder.py``, which logs every hook call and runs the
real ctxmode. Afterwards the log and the host's transcripts are turned into one replayable
file, ``benchmarks/continuity_recorded/<session>.json`` (``.json.gz`` when large), with the
scratch paths replaced by ``{project}``, ``{home}``, ``{data}``, ``{root}`` (and the dashed
forms Claude Code uses for its project folders), and the session's expected facts.

Setup's MCP server entry is removed again (``unregister_mcp``), so no ``ctxmode serve`` runs
and the recording does not depend on the server's start-up race; the replay, which runs no
server, gets the same host settings files (``settings_files``), so ctxmode sees the same
"not registered" state in both.

    .venv/bin/python benchmarks/hosts_record/record.py                 # every session
    .venv/bin/python benchmarks/hosts_record/record.py --only b1,g --keep   # name prefixes

By default the run re-executes itself in a loopback-only network namespace (``unshare
--net``), as ``check.sh`` does; ``--no-netns`` skips that.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
BENCH = HERE.parent
REPO = BENCH.parent
HOSTS = Path(
    os.environ.get(
        "CTXMODE_SHARED_HOSTS", str(Path(__file__).resolve().parents[3] / "shared" / "hosts")
    )
)
OUT = BENCH / "continuity_recorded"
sys.dont_write_bytecode = True
sys.path[:0] = [str(HOSTS), str(HERE)]
import drive  # noqa: E402
import procs  # noqa: E402
import sessions  # noqa: E402

HOST_TIMEOUT = 900
GZIP_ABOVE = 2_000_000
MAX_FIELD = 64_000  # longest string kept in a payload (a host sends the whole output)
CLAUDE_TOOLS = "Bash,Write,Edit,Read,Grep,Glob,TodoWrite"


# --------------------------------------------------------------------------- set-up


def reexec_in_netns(argv: list[str]) -> None:
    """Run again inside a loopback-only network namespace (when that works)."""
    if os.environ.get("REC_IN_NETNS") == "1" or "--no-netns" in argv:
        return
    ip = shutil.which("ip") or "/usr/sbin/ip"
    userns = [] if os.getuid() == 0 else ["--map-root-user"]
    probe = subprocess.run(
        ["unshare", "--net", *userns, ip, "link", "set", "lo", "up"], capture_output=True
    )
    if probe.returncode != 0:
        print("note: no loopback-only network namespace; host network", file=sys.stderr)
        return
    os.environ["REC_IN_NETNS"] = "1"
    script = '"$1" link set lo up && shift && exec "$@"'
    inner = [sys.executable, str(Path(__file__).resolve()), *argv]
    os.execvp("unshare", ["unshare", "--net", *userns, "--", "bash", "-c", script, "_", ip, *inner])


def host_binaries() -> dict[str, str]:
    """Node dir, Claude Code binary and Gemini CLI script, as ``hosts_env.sh`` finds them."""
    shell = f'. "{HOSTS}/hosts_env.sh"; hosts_node_dir; claude_bin || echo; gemini_bin || echo'
    lines = subprocess.run(["bash", "-c", shell], capture_output=True, text=True).stdout
    node, claude, gemini = (lines.splitlines() + ["", "", ""])[:3]
    return {"node": node, "claude": claude, "gemini": gemini}


def cargo_line() -> str | None:
    """The shim line for ``cargo`` (None when there is none): rustup's proxy finds its
    toolchains under RUSTUP_HOME, which defaults to the HOME the host replaces, so the
    shim pins it to this machine's (a read-only use; the sessions build without
    dependencies, ``--offline``)."""
    cargo = shutil.which("cargo")
    if not cargo:
        return None
    rustup_home = os.environ.get("RUSTUP_HOME") or str(Path.home() / ".rustup")
    pin = f'export RUSTUP_HOME="{rustup_home}"; ' if Path(rustup_home).is_dir() else ""
    return f'{pin}exec "{cargo}" "$@"'


def write_shims(bin_dir: Path, real: str) -> Path:
    """``ctxmode`` (the recorder, running `real`), ``python``/``mypy``/``pytest`` (the
    repo's venv) and ``cargo`` (see ``cargo_line``) shims."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    venv = REPO / ".venv" / "bin"
    recorder = f'exec "{sys.executable}" "{HERE / "hook_recorder.py"}" "$@"'
    targets = {
        "rec-ctxmode": f'export REC_REAL_CTXMODE="${{REC_REAL_CTXMODE:-{real}}}"; {recorder}',
        "python": f'exec "{venv / "python"}" "$@"',
        "python3": f'exec "{venv / "python"}" "$@"',
        "mypy": f'exec "{venv / "python"}" -m mypy "$@"',
        "pytest": f'exec "{venv / "python"}" -m pytest "$@"',
    }
    cargo = cargo_line()
    if cargo:
        targets["cargo"] = cargo
    for name, line in targets.items():
        path = bin_dir / name
        path.write_text(f"#!/bin/sh\n{line}\n")
        path.chmod(0o755)
    return bin_dir / "rec-ctxmode"


def write_files(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def dashed(path: str) -> str:
    """How Claude Code names a project's folder under ~/.claude/projects."""
    return re.sub(r"[^A-Za-z0-9]", "-", path)


def placeholders(hr: drive.HostRun) -> list[tuple[str, str]]:
    """(real path, placeholder) pairs, longest real path first."""
    named = {
        "{project}": hr.d["proj"],
        "{home}": hr.d["home"],
        "{data}": hr.d["data"],
        "{root}": hr.dir,
        "{scratch}": hr.root,
    }
    pairs = [(real, name) for name, real in named.items()]
    pairs += [(dashed(real), name[:-1] + "_dash}") for name, real in named.items()]
    return sorted(pairs, key=lambda p: -len(p[0]))


def substitute(value: Any, pairs: list[tuple[str, str]]) -> Any:
    """`value` with every real path replaced by its placeholder (recursively)."""
    if isinstance(value, str):
        for real, name in pairs:
            value = value.replace(real, name)
        return value
    if isinstance(value, list):
        return [substitute(v, pairs) for v in value]
    if isinstance(value, dict):
        return {substitute(k, pairs): substitute(v, pairs) for k, v in value.items()}
    return value


def expand(value: Any, names: dict[str, str]) -> Any:
    """`value` with placeholders (``{project}``, ``{port}``, ...) filled in."""
    if isinstance(value, str):
        for name, real in names.items():
            value = value.replace(name, real)
        return value
    if isinstance(value, list):
        return [expand(v, names) for v in value]
    if isinstance(value, dict):
        return {k: expand(v, names) for k, v in value.items()}
    return value


def clip(value: Any) -> Any:
    """Strings longer than MAX_FIELD cut to that length (marked)."""
    if isinstance(value, str) and len(value) > MAX_FIELD:
        return value[:MAX_FIELD] + f"\n[... {len(value) - MAX_FIELD} characters cut]"
    if isinstance(value, list):
        return [clip(v) for v in value]
    if isinstance(value, dict):
        return {k: clip(v) for k, v in value.items()}
    return value


# --------------------------------------------------------------------------- hosts


def setup(hr: drive.HostRun, proj: Path, global_: bool) -> int:
    """``ctxmode setup <host>`` in the project, or with ``--global`` (Claude Code reads a
    project's .claude/settings.json only when started in the project root), as
    ``HostRun.setup`` runs it."""
    if not global_:
        return hr.setup(str(proj), "")
    env = hr.env(TMPDIR=hr.d["setup-tmp"])
    with open(Path(hr.d["logs"]) / "setup.out", "w") as out:
        argv = ["timeout", "-k", "5", "60", "ctxmode", "setup", hr.host, "--global"]
        return subprocess.run(
            argv, cwd=proj, env=env, stdout=out, stderr=subprocess.STDOUT
        ).returncode


def unregister_mcp(hr: drive.HostRun, proj: Path) -> None:
    """Drop the MCP server entry setup wrote (``.mcp.json``; ``mcpServers.ctxmode`` in
    ``~/.claude.json`` for a global setup, ``mcpServers.ctxmode`` in
    ``.gemini/settings.json``): no ``ctxmode serve`` runs while recording, as none
    runs in the replay, and ctxmode sees the same "not registered" settings in both."""
    (proj / ".mcp.json").unlink(missing_ok=True)
    for path in (Path(hr.d["home"]) / ".claude.json", proj / ".gemini" / "settings.json"):
        if not path.exists():
            continue
        data = json.loads(path.read_text(encoding="utf-8"))
        servers = data.get("mcpServers")
        if isinstance(servers, dict) and servers.pop("ctxmode", None) is not None:
            if not servers:
                del data["mcpServers"]
            path.write_text(json.dumps(data, indent=2), encoding="utf-8")


def host_env(hr: drive.HostRun, real: str, **extra: str) -> dict[str, str]:
    """The host's environment: drive.py's, plus what the recorder needs."""
    log = str(Path(hr.d["logs"]) / "hooks.jsonl")
    return hr.env(REC_REAL_CTXMODE=real, REC_HOOK_LOG=log, **sessions.GIT_IDENTITY, **extra)


def script_for(spec: sessions.Session, names: dict[str, str]) -> dict[str, Any]:
    """What the fake model plays: per prompt its tool calls (placeholders filled in)."""
    prompts = []
    for turn in spec.turns:
        if turn.prompt.startswith("/"):
            continue  # a slash command (/compact) is the host's, not the model's
        steps = [{"tool": s["tool"], "input": expand(s["input"], names)} for s in turn.steps]
        prompts.append({"match": turn.prompt, "steps": steps, "final": turn.final})
    return {"prompts": prompts, "summary": spec.summary}


def run_claude(spec: sessions.Session, hr: drive.HostRun, real: str, bins: dict[str, str]) -> None:
    """Every turn of `spec` as one ``claude -p`` invocation (``--continue`` after the first)."""
    proj = Path(hr.d["proj"])
    hr.fake = drive.Fake(str(HERE / "fake_scripted.py"), hr.d["logs"], str(proj))
    names = {"{project}": str(proj), "{home}": hr.d["home"], "{port}": str(hr.fake.port)}
    (Path(hr.d["logs"]) / "script.json").write_text(json.dumps(script_for(spec, names)))
    env = host_env(
        hr,
        real,
        ANTHROPIC_BASE_URL=hr.fake.url,
        ANTHROPIC_API_KEY="dummy",
        DISABLE_TELEMETRY="1",
        DISABLE_AUTOUPDATER="1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        DISABLE_ERROR_REPORTING="1",
        DISABLE_BUG_COMMAND="1",
        # Claude Code 2.1 offers TaskCreate/TaskUpdate; this brings back TodoWrite.
        CLAUDE_CODE_ENABLE_TASKS="false",
        CLAUDE_CODE_ENABLE_TODO_TOOLS="true",
    )
    common = ["--output-format", "json", "--verbose", "--debug", "--allowedTools", CLAUDE_TOOLS]
    for i, turn in enumerate(spec.turns):
        extra = ["--continue"] if i else []
        argv = [bins["claude"], "-p", turn.prompt, *extra, *common]
        hr.invoke(f"run{i + 1}", argv, turn.prompt, str(proj / spec.cwd), env)


def record_session(
    spec: sessions.Session, root: Path, real: str, bins: dict[str, str]
) -> tuple[drive.HostRun, list[str]]:
    """Run one session in `root`; (its HostRun, problems seen)."""
    shim = write_shims(root / "shim", real)
    hr = drive.HostRun(spec.host, str(root), str(shim), bins["node"])
    for name in ("python", "python3", "mypy", "pytest", "cargo"):
        if (root / "shim" / name).exists():
            os.symlink(root / "shim" / name, Path(hr.d["bin"]) / name)
    proj = Path(hr.d["proj"])
    write_files(proj, spec.files)
    hr.git_project(str(proj))
    problems = []
    if setup(hr, proj, spec.global_setup) != 0:
        problems.append("ctxmode setup failed")
    unregister_mcp(hr, proj)
    try:
        if spec.host == "claude-code":
            run_claude(spec, hr, real, bins)
        else:
            import gemini_record

            gemini_record.run_gemini(spec, hr, real, bins)
    finally:
        if hr.fake:
            hr.fake.stop()
        procs.kill_leftovers(str(root))
        hr.save()
    problems.extend(
        f"{run['name']} exited {run.get('rc')}"
        for run in hr.runs
        if run.get("kind") == "invoke" and run.get("rc") != 0
    )
    return hr, problems


# --------------------------------------------------------------------------- the recording


def hook_calls(hr: drive.HostRun) -> list[dict[str, Any]]:
    """The recorder's log, in the order the hooks started."""
    path = Path(hr.d["logs"]) / "hooks.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    return sorted((json.loads(line) for line in lines if line.strip()), key=lambda e: e["t0"])


def _payload(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


REDACTED = "[ctxmode hook output, not kept in the recording]"


def hook_outputs(calls: list[dict[str, Any]]) -> list[str]:
    """What ctxmode answered (whole stdout and each additionalContext), longest first."""
    found = set()
    for c in calls:
        out = c["stdout"].strip()
        if not out:
            continue
        found.add(out)
        data = _payload(out)
        specific = data.get("hookSpecificOutput") if isinstance(data, dict) else None
        if isinstance(specific, dict) and isinstance(specific.get("additionalContext"), str):
            text = specific["additionalContext"]
            # Gemini CLI escapes < and > before it adds the context to the conversation.
            found |= {text, text.replace("<", "&lt;").replace(">", "&gt;")}
    return sorted((f for f in found if len(f) > 20), key=len, reverse=True)


def redact(value: Any, outputs: list[str]) -> Any:
    """`value` with ctxmode's own answers cut out: hosts copy hook output into their
    transcripts, and a replay must not be fed what the recording's ctxmode said."""
    if isinstance(value, str):
        for out in outputs:
            if out in value:
                value = value.replace(out, REDACTED)
        return value
    if isinstance(value, list):
        return [redact(v, outputs) for v in value]
    if isinstance(value, dict):
        return {k: redact(v, outputs) for k, v in value.items()}
    return value


def transcripts(calls: list[dict[str, Any]]) -> dict[str, list[Any]]:
    """Final content of every Claude transcript a hook saw: one parsed object per line,
    ctxmode's answers redacted."""
    outputs = hook_outputs(calls)
    out: dict[str, list[Any]] = {}
    for path in sorted(
        {p for c in calls for p, v in c["transcripts"].items() if isinstance(v, int)}
    ):
        lines = Path(path).read_text(encoding="utf-8").splitlines()
        out[path] = [clip(redact(_payload(line), outputs)) for line in lines if line.strip()]
    return out


def chats(hr: drive.HostRun, calls: list[dict[str, Any]]) -> dict[str, Any]:
    """Gemini chat files by digest, as the recorder saved them."""
    store = Path(hr.d["logs"]) / "chats"
    outputs = hook_outputs(calls)
    digests = {v for c in calls for v in c["transcripts"].values() if isinstance(v, str)}
    return {
        d: redact(_payload((store / d).read_text(encoding="utf-8")), outputs)
        for d in sorted(digests)
    }


def project_files(hr: drive.HostRun) -> dict[str, str]:
    """The host settings files (``ctxmode setup`` wrote them, in the project or the home)."""
    proj = Path(hr.d["proj"])
    found = {}
    for rel in (".claude/settings.json", ".gemini/settings.json"):
        if (proj / rel).exists():
            found["{project}/" + rel] = (proj / rel).read_text(encoding="utf-8")
    home = Path(hr.d["home"])
    user_files = (".claude.json", ".claude/settings.json", ".gemini/settings.json")
    for rel in (*user_files, ".gemini/trustedFolders.json"):
        if (home / rel).exists():
            found["{home}/" + rel] = (home / rel).read_text(encoding="utf-8")
    return found


def versions(bins: dict[str, str], real: str) -> dict[str, str]:
    def first_line(argv: list[str]) -> str:
        try:
            out = subprocess.run(argv, capture_output=True, text=True, timeout=60).stdout
        except (OSError, subprocess.TimeoutExpired):
            return "?"
        return (out.strip().splitlines() or ["?"])[0]

    found = {"ctxmode": first_line([real, "--version"])}
    if bins.get("claude"):
        found["claude-code"] = first_line([bins["claude"], "--version"])
    return found


def compressing_calls(hr: drive.HostRun, calls: list[dict[str, Any]]) -> set[int]:
    """Gemini: the PreCompress calls that a real compression followed (Gemini CLI fires
    PreCompress before every request, whether or not it then compresses): the last one that
    started before each summariser request the fake answered."""
    if hr.host != "gemini-cli":
        return set()
    import gemini_record

    marked = set()
    for when in gemini_record.compression_times(hr):
        before = [
            i for i, c in enumerate(calls) if c["argv"][2] == "precompress" and c["t0"] < when
        ]
        if before:
            marked.add(before[-1])
    return marked


def build_recording(
    spec: sessions.Session, hr: drive.HostRun, about: dict[str, str]
) -> dict[str, Any]:
    """The replayable file: calls, transcripts, settings, expected facts; paths replaced."""
    pairs = placeholders(hr)
    calls = hook_calls(hr)
    items = []
    compressed = compressing_calls(hr, calls)
    for i, c in enumerate(calls):
        items.append(
            {
                "platform": c["argv"][1],
                "event": c["argv"][2],
                "cwd": c["cwd"],
                "env": c["env"],
                "payload": clip(_payload(c["stdin"])),
                "transcripts": c["transcripts"],
                "rc": c["rc"],
                "stdout_bytes": len(c["stdout"].encode("utf-8")),
            }
            | ({"compressed": True} if i in compressed else {})
        )
    body = {
        "name": spec.name,
        "host": spec.host,
        "description": spec.description,
        "recorded": {"date": time.strftime("%Y-%m-%d"), **about},
        "git": True,
        "settings_files": project_files(hr),
        "calls": items,
        "transcripts": transcripts(calls),
        "chats": chats(hr, calls),
        "expect": spec.expect,
        "leaks": spec.leaks,
        "secrets": spec.secrets,
    }
    return substitute(body, pairs)


def check_recording(spec: sessions.Session, hr: drive.HostRun, rec: dict[str, Any]) -> list[str]:
    """What would make the recording useless: leftover scratch paths, secrets that never
    reached a hook, a scripted command whose outcome differs from the script's, no compact."""
    problems = []
    text = json.dumps(rec, ensure_ascii=False)
    if hr.root in text or dashed(hr.root) in text:
        problems.append("a scratch path is left in the recording")
    kept = json.dumps(rec["transcripts"]) + json.dumps(rec["chats"])
    if "<session_resume" in kept or "&lt;session_resume" in kept:
        problems.append("ctxmode output is left in a transcript")
    problems += sessions.check_grounded(spec, rec["calls"])
    payloads = json.dumps([c["payload"] for c in rec["calls"]], ensure_ascii=False)
    problems += [
        f"secret {s[:10]}… never reached a hook" for s in spec.secrets if s not in payloads
    ]
    problems += sessions.check_outcomes(spec, rec["calls"])
    if spec.host == "claude-code" and not any(
        sessions.source_of(c) == "compact" for c in rec["calls"]
    ):
        problems.append("no SessionStart(compact) was recorded")
    if spec.host == "gemini-cli" and not any(c.get("compressed") for c in rec["calls"]):
        problems.append("Gemini CLI did not compress the history")
    return problems


def save(rec: dict[str, Any]) -> Path:
    """Write ``<name>.json`` (or ``.json.gz`` above GZIP_ABOVE bytes), removing the other."""
    OUT.mkdir(parents=True, exist_ok=True)
    data = json.dumps(rec, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    plain, packed = OUT / f"{rec['name']}.json", OUT / f"{rec['name']}.json.gz"
    target = packed if len(data) > GZIP_ABOVE else plain
    for stale in (plain, packed):
        stale.unlink(missing_ok=True)
    target.write_bytes(gzip.compress(data, mtime=0) if target is packed else data)
    return target


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", help="sessions whose name starts with one of these (a,b,...)")
    parser.add_argument("--ctxmode", default=str(REPO / ".venv" / "bin" / "ctxmode"))
    parser.add_argument("--keep", action="store_true", help="keep the scratch dirs")
    parser.add_argument("--no-netns", action="store_true")
    parser.add_argument("--dry", action="store_true", help="record, check, but do not save")
    args = parser.parse_args(argv)
    reexec_in_netns(argv)
    drive.HOST_TIMEOUT = HOST_TIMEOUT
    bins = host_binaries()
    real = os.path.abspath(args.ctxmode)
    about = versions(bins, real)
    prefixes = tuple(args.only.split(",")) if args.only else ("",)
    chosen = [s for s in sessions.SESSIONS if s.name.startswith(prefixes)]
    failed = 0
    for spec in chosen:
        if spec.host == "gemini-cli" and not bins["gemini"]:
            print(f"{spec.name}: skipped (Gemini CLI not installed)", file=sys.stderr)
            continue
        root = Path(os.path.realpath(tempfile.mkdtemp(prefix=f"ctxrec-{spec.name}-")))
        began = time.time()
        try:
            hr, problems = record_session(spec, root, real, bins)
            rec = build_recording(spec, hr, about)
            problems += check_recording(spec, hr, rec)
            where = "(not saved)" if args.dry or problems else save(rec)
        finally:
            if not args.keep:
                shutil.rmtree(root, ignore_errors=True)
        status = "; ".join(problems) if problems else "ok"
        print(
            f"{spec.name}: {len(rec['calls'])} hook calls, {time.time() - began:.0f} s,"
            f" {status} {where}" + (f" [kept {root}]" if args.keep else ""),
            flush=True,
        )
        failed += bool(problems)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
