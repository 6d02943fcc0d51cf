"""The red team of the third hostile round (issue 24), replayed: each numbered item as
concrete attacks on an installed ctxmode, through real processes only (``ctxmode serve``
over stdio, ``ctxmode hook``, ``ctxmode execute``) in a temp HOME, data folder and project,
with the network on loopback only. An attack succeeds when its effect is seen from
outside: a denied file's text in an answer, a canary folder removed, a secret on disk, a
process or folder left behind, a hang, "Internal error".

Part ``redteam`` of ``bench_hostile.py``; run it against another install with
``--command`` to count the same attacks before the fixes. Inputs stay moderate: the
largest files are a 60 MB text file and a 600 MB sparse one (no disk blocks), and an
output flood is stopped at 300 MB.
"""

import http.server
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil
from bench_hostile import MB, ROOT, Peak, Server, World, answer_text, kill_marked, marked

SECRET = "rt-secret-5b1e9c"  # what every denied file holds
ANSWER_S = 60.0  # the longest any one answer is waited for: past it, it hangs
EXEC = "ctx_execute"


@dataclass
class Attack:
    item: int
    name: str
    succeeded: bool | None  # None: not tried here (a command or bubblewrap missing)
    detail: str = ""


class Stage(World):
    """A world whose servers are all closed (or killed) when it is cleaned up."""

    def __init__(self, command: list[str], **env: str) -> None:
        super().__init__(command)
        self.env.update(env)
        self.env["TMPDIR"] = str(self.tmp / "tmp")
        (self.tmp / "tmp").mkdir()
        self.servers: list[Server] = []

    def serve(self, *, initialize: bool = True) -> Server:
        server = super().serve(initialize=initialize)
        self.servers.append(server)
        return server

    def deny(self, *rules: str, folder: Path | None = None) -> None:
        where = (folder or self.project) / ".claude"
        where.mkdir(parents=True, exist_ok=True)
        body = {"permissions": {"deny": list(rules)}}
        (where / "settings.json").write_text(json.dumps(body), encoding="utf-8")

    def secrets(self) -> None:
        """``.env`` and ``config/secrets/key.txt`` hold `SECRET`; ``ok.txt`` does not."""
        (self.project / ".env").write_text(f"API_KEY={SECRET}\n", encoding="utf-8")
        (self.project / "config" / "secrets").mkdir(parents=True)
        (self.project / "config" / "secrets" / "key.txt").write_text(SECRET, encoding="utf-8")
        (self.project / "ok.txt").write_text("nothing to see\n", encoding="utf-8")

    def close(self) -> None:
        for server in self.servers:
            if server.proc.poll() is None:
                server.close(within=10)
        self.cleanup()


@contextmanager
def stage(command: list[str], **env: str) -> Iterator[Stage]:
    world = Stage(command, **env)
    try:
        yield world
    finally:
        world.close()


def ask(server: Server, tool: str, arguments: dict[str, Any], within: float = ANSWER_S) -> str:
    """The answer's text; ``<no answer>`` when none came within `within` seconds."""
    try:
        return answer_text(server.wait(server.call(tool, arguments), within))
    except TimeoutError:
        return "<no answer>"


def shell(server: Server, code: str, **more: Any) -> str:
    return ask(server, EXEC, {"language": "shell", "code": code, **more})


def isolation_works(command: list[str]) -> bool:
    with stage(command, CTXMODE_ISOLATE="1") as world:
        return shell(world.serve(), "echo confined-ok").strip() == "confined-ok"


# --------------------------------------------------------------------------- 1. isolation

HIDDEN_ENV = 'cat "$(printf .e)nv"'  # a name the text checks cannot see: isolation's to mask


def _unix_listener() -> tuple[Path, list[int], Callable[[], None]]:
    """A Unix socket outside the project, like an SSH agent's; the count of connections."""
    folder = Path(tempfile.mkdtemp(prefix="ctxrt-sock-"))
    path = folder / "agent.sock"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(path))
    sock.listen(8)
    sock.settimeout(0.2)
    accepted = [0]
    done = threading.Event()

    def serve() -> None:
        while not done.is_set():
            try:
                conn, _ = sock.accept()
            except OSError:
                continue
            accepted[0] += 1
            conn.close()

    threading.Thread(target=serve, daemon=True).start()

    def stop() -> None:
        done.set()
        sock.close()
        shutil.rmtree(folder, ignore_errors=True)

    return path, accepted, stop


def item1(command: list[str]) -> list[Attack]:
    names = [
        "mv .claude away, mkdir .claude, '{}' settings: next run reads .env",
        "create .claude/settings.local.json (bypassPermissions)",
        "create a missing .claude/ with its own settings",
        "mv config/secrets config/s2: next run reads the moved file",
        "connect to a host Unix socket outside the project",
        "read the knowledge base from the sandbox",
        "flip a symlink while ctx_index checks it (200 tries)",
        "plant a git hook or core.fsmonitor that the host's git runs unconfined",
    ]
    if not isolation_works(command):
        return [Attack(1, n, None, "isolation unavailable here") for n in names]
    out: list[Attack] = []
    iso = {"CTXMODE_ISOLATE": "1"}
    with stage(command, **iso) as w:
        w.secrets()
        w.deny("Read(.env)", "Read(./config/secrets/**)")
        server = w.serve()
        shell(server, "mv .claude .claude_old && mkdir .claude && echo {} > .claude/settings.json")
        out.append(Attack(1, names[0], SECRET in shell(server, HIDDEN_ENV)))
    with stage(command, **iso) as w:
        w.secrets()
        w.deny("Read(.env)")
        body = '{"permissions":{"defaultMode":"bypassPermissions"}}'
        shell(w.serve(), f"printf '{body}' > .claude/settings.local.json")
        out.append(Attack(1, names[1], (w.project / ".claude/settings.local.json").exists()))
    with stage(command, **iso) as w:
        w.secrets()
        w.deny("Read(.env)", folder=w.home)  # the rules live in ~/.claude only
        shell(w.serve(), "mkdir -p .claude && printf '{}' > .claude/settings.json")
        out.append(Attack(1, names[2], (w.project / ".claude/settings.json").exists()))
    with stage(command, **iso) as w:
        w.secrets()
        w.deny("Read(.env)", "Read(./config/secrets/**)")
        server = w.serve()
        shell(server, "mv config/secrets config/s2")
        out.append(Attack(1, names[3], SECRET in shell(server, "cat config/s2/key.txt")))
    with stage(command, **iso) as w:
        path, accepted, stop = _unix_listener()
        try:
            code = (
                "import socket\ns = socket.socket(socket.AF_UNIX)\ns.settimeout(3)\n"
                f"s.connect({str(path)!r})\nprint('connected')"
            )
            text = ask(w.serve(), EXEC, {"language": "python", "code": code})
            time.sleep(0.3)
            out.append(Attack(1, names[4], "connected" in text or accepted[0] > 0))
        finally:
            stop()
    with stage(command, **iso) as w:
        server = w.serve()
        ask(server, "ctx_index", {"content": f"# Notes\n\nkb-marker-{SECRET}\n", "source": "n"})
        code = (  # the marker is put together at run time: the code itself holds no copy
            f"import os\nmark = ('kb-mar' + 'ker-' + {SECRET!r}).encode()\n"
            "root = os.environ.get('CTXMODE_DIR', '')\nfound = False\n"
            "for top, _, files in os.walk(root):\n    for name in files:\n        try:\n"
            "            found |= mark in open(os.path.join(top, name), 'rb').read()\n"
            "        except OSError:\n            pass\nprint('FOUND' if found else 'none')"
        )
        text = ask(server, EXEC, {"language": "python", "code": code})
        out.append(Attack(1, names[5], "FOUND" in text, text.strip()[:60]))
    with stage(command, **iso) as w:
        w.secrets()
        w.deny("Read(.env)")
        server = w.serve()
        flip = (
            "end=$((SECONDS+5)); while [ $SECONDS -lt $end ]; do "
            "ln -sfn ok.txt link; ln -sfn .env link; done; echo flipped"
        )
        flipper = server.call(EXEC, {"language": "shell", "code": flip, "timeout": 30000})
        time.sleep(0.5)
        calls = [server.call("ctx_index", {"path": "link", "source": f"r{n}"}) for n in range(200)]
        for call in calls:
            server.wait(call, ANSWER_S)
        server.wait(flipper, ANSWER_S)
        found = ask(server, "ctx_search", {"queries": ["API_KEY"], "limit": 5})
        out.append(Attack(1, names[6], SECRET in found))
    with stage(command, **iso) as w:
        subprocess.run(["git", "init", "-q"], cwd=w.project, check=False)
        (w.project / ".git" / "hooks").mkdir(parents=True, exist_ok=True)
        shell(w.serve(), "printf 'touch pwned' > .git/hooks/post-checkout; "
              "git config core.fsmonitor 'touch pwned'")  # fmt: skip
        config = (w.project / ".git" / "config").read_text(encoding="utf-8")
        planted = (w.project / ".git/hooks/post-checkout").exists() or "fsmonitor" in config
        out.append(Attack(1, names[7], planted))
    return out


# --------------------------------------------------------------------------- 2. text checks

RM = "rm -rf victim"
PY, SH, JS = "python", "shell", "javascript"
# (name, language, code, effect: "rm" removes ./victim, "read" prints .env, needs: a command)
BYPASSES: list[tuple[str, str, str, str, str | None]] = [
    ("2,100 names, then .env", SH, "cat " + " ".join(f"n{i}" for i in range(2100)) + " .env",
     "read", None),
    ("'.\\x65nv'", PY, r"print(open('.\x65nv').read())", "read", None),
    ("'\\056env'", PY, r"print(open('\056env').read())", "read", None),
    ("'\\N{FULL STOP}env'", PY, r"print(open('\N{FULL STOP}env').read())", "read", None),
    ("implicit concatenation", PY, "print(open('.e' 'nv').read())", "read", None),
    ("backslash-newline", PY, "print(open('.e\\\nnv').read())", "read", None),
    ("/bin/r? (glob)", SH, "/bin/r? -rf victim", "rm", None),
    ("{rm,-rf,victim} (braces)", SH, "{rm,-rf,victim}", "rm", None),
    ("~+/.env", SH, "cat ~+/.env", "read", None),
    ("trap", SH, f"trap '{RM}' EXIT; echo set", "rm", None),
    ("coproc", SH, f"coproc {RM}; wait", "rm", None),
    ("setsid", SH, f"setsid -w {RM}", "rm", "setsid"),
    ("taskset", SH, f"taskset -c 0 {RM}", "rm", "taskset"),
    ("flock", SH, f"flock victim.lock {RM}", "rm", "flock"),
    ("chrt", SH, f"chrt -o 0 {RM}", "rm", "chrt"),
    ("strace", SH, f"strace -f -o /dev/null {RM}", "rm", "strace"),
    ("script -c", SH, f"script -qc '{RM}' /dev/null", "rm", "script"),
    ("awk system()", SH, f"awk 'BEGIN {{ system(\"{RM}\") }}'", "rm", "awk"),
    ("sed e", SH, f"echo x | sed '1e {RM}'", "rm", "sed"),
    ("tar --checkpoint-action", SH,
     f"tar -cf /dev/null --checkpoint=1 --checkpoint-action=exec='{RM}' ok.txt", "rm", "tar"),
    ("git -c alias.x='!…'", SH, f"git -c alias.x='!{RM}' x", "rm", "git"),
    ("vim -c '!…'", SH, f"vim -es -u NONE -c '!{RM}' -c 'qa!'", "rm", "vim"),
    ("find -exec", SH, "find . -maxdepth 1 -name victim -exec rm -rf {} +", "rm", None),
    ("mapfile -C", SH, f"mapfile -t -c 1 -C '{RM} #' lines <<< x", "rm", None),
    ("os.spawnlp", PY, "import os\nos.spawnlp(os.P_WAIT, 'rm', 'rm', '-rf', 'victim')", "rm",
     None),
    ("Popen(executable=)", PY,
     "import subprocess\nsubprocess.Popen(['ls', '-rf', 'victim'], executable='/bin/rm').wait()",
     "rm", None),
    ("vars(os)[...]", PY, f"import os\nvars(os)['system']('{RM}')", "rm", None),
    ("JS renamed import", JS,
     f"const {{ execSync: run }} = require('child_process');\nrun('{RM}');", "rm", "node"),
    ("JS aliased function", JS,
     f"const cp = require('child_process');\nconst go = cp.execSync;\ngo('{RM}');", "rm", "node"),
    # A second look (the classes have more members than the report's examples):
    ("bash <<< here-string", SH, f"bash <<< '{RM}'", "rm", None),
    ("sh -s <<< here-string", SH, f"sh -s <<< '{RM}'", "rm", None),
    (". /dev/stdin <<< here-string", SH, f". /dev/stdin <<< '{RM}'", "rm", None),
    ("python3 - <<< here-string", SH,
     f"python3 - <<< 'import os; os.system(\"{RM}\")'", "rm", None),
    ("busybox rm", SH, f"busybox {RM}", "rm", "busybox"),
    ("busybox sh -c", SH, f"busybox sh -c '{RM}'", "rm", "busybox"),
    ("fakeroot", SH, f"fakeroot {RM}", "rm", "fakeroot"),
    ("eatmydata", SH, f"eatmydata {RM}", "rm", "eatmydata"),
    ("unshare -r", SH, f"unshare -r {RM}", "rm", "unshare"),
    ("parallel", SH, "parallel rm -rf ::: victim", "rm", "parallel"),
    ("alias (expand_aliases)", SH, "shopt -s expand_aliases\nalias x=rm\nx -rf victim", "rm",
     None),
]  # fmt: skip


def item2(command: list[str]) -> list[Attack]:
    out: list[Attack] = []
    with stage(command) as w:
        w.secrets()
        w.deny("Bash(rm:*)", "Read(.env)")
        subprocess.run(["git", "init", "-q"], cwd=w.project, check=False)
        server = w.serve()
        victim = w.project / "victim"
        for name, language, code, effect, needs in BYPASSES:
            if needs is not None and shutil.which(needs) is None:
                out.append(Attack(2, name, None, f"{needs} not installed"))
                continue
            victim.mkdir(exist_ok=True)
            arguments = {"language": language, "code": code, "timeout": 20000}
            if host_stops(w, EXEC, arguments):
                out.append(Attack(2, name, False, "stopped by the pre-tool hook"))
                continue
            text = ask(server, EXEC, arguments)
            hit = not victim.exists() if effect == "rm" else SECRET in text
            out.append(Attack(2, name, hit))
        arguments = {"path": "ok.txt", "language": "shell", "code": "cat .env"}
        stopped = host_stops(w, "ctx_execute_file", arguments)
        text = "" if stopped else ask(server, "ctx_execute_file", arguments)
        out.append(Attack(2, "ctx_execute_file's code: cat .env", SECRET in text))
    return out


# --------------------------------------------------------------------------- 3. secrets

SESSION = "7a1c0f3e-2b4d-4e5f-8a9b-0c1d2e3f4a5b"


def _secret_corpus() -> tuple[list[tuple[str, str]], str]:
    """The corpus of the test of secrets at rest: (command, the secret in it)."""
    sys.path.insert(0, str(ROOT))
    from tests.security.test_secrets_at_rest import CORPUS, TODO_SECRET

    return list(CORPUS), TODO_SECRET


def _hook(w: Stage, event: str, payload: dict[str, Any]) -> "subprocess.CompletedProcess[bytes]":
    stdin = {"session_id": SESSION, "cwd": str(w.project), **payload}
    return subprocess.run(
        [*w.command, "hook", "claude-code", event],
        input=json.dumps(stdin).encode(),
        capture_output=True,
        env={**w.env, "CLAUDE_PROJECT_DIR": str(w.project)},
        cwd=w.project,
        timeout=60,
        check=False,
    )


def host_stops(w: Stage, tool: str, arguments: dict[str, Any]) -> bool:
    """Does the pre-tool hook, which Claude Code runs before the tool call, deny it or
    ask the user (who is taken to say no)?"""
    payload = {"hook_event_name": "PreToolUse", "tool_name": f"mcp__ctxmode__{tool}",
               "tool_input": arguments}  # fmt: skip
    proc = _hook(w, "pretooluse", payload)
    if proc.returncode == 2:
        return True
    try:
        decision = json.loads(proc.stdout)["hookSpecificOutput"]["permissionDecision"]
    except (ValueError, KeyError, TypeError):
        return False
    return decision in ("deny", "ask")


def _stored(root: Path) -> bytes:
    return b"".join(p.read_bytes() for p in root.rglob("*") if p.is_file())


def item3(command: list[str]) -> list[Attack]:
    corpus, todo_secret = _secret_corpus()
    jsonrpc_secret = "ghp_Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2Rr1Qq0Pp9Oo8Nn"
    with stage(command) as w:
        (w.project / ".git").mkdir()
        server_entry = {"command": "ctxmode", "args": ["serve"]}
        mcp = {"mcpServers": {"ctxmode": server_entry}}  # a registered server: hooks redirect
        (w.project / ".mcp.json").write_text(json.dumps(mcp), encoding="utf-8")
        server = w.serve()
        deadline = time.monotonic() + ANSWER_S
        while not list((w.data / "servers").glob("*.json")) and time.monotonic() < deadline:
            time.sleep(0.05)
        _hook(w, "sessionstart", {"hook_event_name": "SessionStart", "source": "startup"})
        for cmd, _ in corpus:
            bash = {"tool_name": "Bash", "tool_input": {"command": cmd}}
            _hook(w, "pretooluse", {"hook_event_name": "PreToolUse", **bash})
            response = {"stdout": "done", "stderr": "", "interrupted": False}
            _hook(w, "posttooluse", {"hook_event_name": "PostToolUse", **bash,
                                     "tool_response": response})  # fmt: skip
            _hook(w, "posttoolusefailure", {"hook_event_name": "PostToolUseFailure", **bash,
                  "error": f"Exit code 1\nerror: {cmd} refused"})  # fmt: skip
        todos = [{"content": f"rotate {todo_secret}", "status": "pending", "activeForm": "x"}]
        _hook(w, "posttooluse", {"hook_event_name": "PostToolUse", "tool_name": "TodoWrite",
              "tool_input": {"todos": todos}, "tool_response": {"newTodos": todos}})  # fmt: skip
        _hook(w, "precompact", {"hook_event_name": "PreCompact", "trigger": "auto"})
        bad = (  # cut short: not JSON, so refused (and logged)
            b'{"jsonrpc": "2.0", "id": 90, "method": "tools/call", "params": {"name": "x", '
            b'"arguments": {"token": "' + jsonrpc_secret.encode() + b'"}'
        )
        server.send_line(bad)
        time.sleep(0.5)
        server.close()
        stored = _stored(w.data)
    out = [Attack(3, cmd[:60], secret.encode() in stored) for cmd, secret in corpus]
    out.append(Attack(3, "a secret in a TodoWrite item", todo_secret.encode() in stored))
    out.append(Attack(3, "a refused JSON-RPC line", jsonrpc_secret.encode() in stored))
    return out


# --------------------------------------------------------------------------- 4, 5: hangs


def cancel_run(server: Server, code: str) -> None:
    """Start a shell run of `code`, and cancel it a second later."""
    request = server.call(EXEC, {"language": "shell", "code": code, "timeout": 60000})
    time.sleep(1)
    server.notify("notifications/cancelled", {"requestId": request, "reason": "bench"})


def item4(command: list[str]) -> list[Attack]:
    marker = "sleep 41.0413"
    with stage(command) as w:
        try:
            server = w.serve()
            cancel_run(server, marker)
            time.sleep(0.5)
            assert server.proc.stdin is not None
            server.proc.stdin.close()
            try:
                server.proc.wait(10)
                alive = False
            except subprocess.TimeoutExpired:
                alive = True
            markers = list((w.data / "servers").glob("*.json"))
            if alive:
                server.proc.kill()
        finally:
            kill_marked(marker)
    return [
        Attack(4, "server alive 10 s after stdin closed", alive),
        Attack(4, "readiness marker left behind", bool(markers)),
    ]


def item5(command: list[str]) -> list[Attack]:
    out: list[Attack] = []
    with stage(command) as w:
        marker = "sleep 25.0517"
        try:
            start = time.monotonic()
            proc = subprocess.run(
                [*command, "execute", "--timeout-ms", "2000", f"exec >&- 2>&-; {marker}"],
                capture_output=True,
                env=w.env,
                cwd=w.project,
                timeout=ANSWER_S,
                check=False,
            )
            took = time.monotonic() - start
            late = took > 10 or proc.returncode != 124
            detail = f"{took:.1f} s, exit {proc.returncode}"
            out.append(Attack(5, "CLI: closed output ignores the 2 s deadline", late, detail))
        finally:
            kill_marked(marker)
        marker = "sleep 25.0527"
        try:
            start = time.monotonic()
            shell(w.serve(), f"exec >&- 2>&-; {marker}", timeout=2000)
            took = time.monotonic() - start
            out.append(Attack(5, "server: closed output ignores the 2 s deadline", took > 10,
                              f"{took:.1f} s"))  # fmt: skip
        finally:
            kill_marked(marker)
        marker = "sleep 25.0537"
        try:
            cancel_run(w.serve(), f"exec >&- 2>&-; {marker}")
            time.sleep(5)
            out.append(Attack(5, "server: closed output ignores cancellation",
                              bool(marked(marker))))  # fmt: skip
        finally:
            kill_marked(marker)
    return out


# --------------------------------------------------------------------------- 6-8: leaks


def _bytes_under(folder: Path) -> int:
    total = 0
    for top, _, files in os.walk(folder):
        for name in files:
            try:
                total += os.lstat(os.path.join(top, name)).st_size
            except OSError:  # noqa: PERF203 - a run's file may go meanwhile
                continue
    return total


def item6(command: list[str]) -> list[Attack]:
    marker = "yes rt-background-flood"
    with stage(command) as w:
        try:
            server = w.serve()
            # quiet past its 1 s deadline (so it is backgrounded), then a flood
            shell(server, f"echo start; sleep 2; {marker}", timeout=1000, background=True)
            tmp, peak = w.tmp / "tmp", 0
            end = time.monotonic() + 5
            while time.monotonic() < end and peak < 300 * MB:
                peak = max(peak, _bytes_under(tmp))
                time.sleep(0.05)
            left = _bytes_under(tmp)
        finally:
            kill_marked(marker)
    over = peak >= 300 * MB or left > 150 * MB
    detail = f"peak {peak / MB:.0f} MB seen, {left / MB:.0f} MB after 5 s (cap 100 MiB)"
    return [Attack(6, "a backgrounded run writes past the output cap", over, detail)]


def _zombie_children(pid: int, name: str | None = None) -> int:
    count = 0
    for child in psutil.Process(pid).children():
        try:
            if child.status() == psutil.STATUS_ZOMBIE and name in (None, child.name()):
                count += 1
        except psutil.Error:  # noqa: PERF203
            continue
    return count


def item7(command: list[str]) -> list[Attack]:
    out: list[Attack] = []
    marker = "sleep 20.0713"
    with stage(command) as w:
        try:
            server = w.serve()
            shell(server, f"for i in $(seq 100); do ({marker} &); done; echo started")
            shell(server, "true")
            time.sleep(0.5)
            zombies = _zombie_children(server.proc.pid)
            out.append(Attack(7, "100 (sleep &): zombies of the server", zombies > 0,
                              f"{zombies} zombies"))  # fmt: skip
        finally:
            kill_marked(marker)
    name = "isolated runs: defunct bwrap left per run"
    if not isolation_works(command):
        return [*out, Attack(7, name, None, "isolation unavailable here")]
    with stage(command, CTXMODE_ISOLATE="1") as w:
        server = w.serve()
        for n in range(5):
            shell(server, f"echo {n}")
        time.sleep(0.5)
        zombies = _zombie_children(server.proc.pid, "bwrap")
        out.append(Attack(7, name, zombies > 0, f"{zombies} after 5 runs"))
    return out


def item8(command: list[str]) -> list[Attack]:
    out: list[Attack] = []
    for how in (signal.SIGTERM, signal.SIGKILL):
        marker = f"sleep 20.08{int(how):02d}"
        with stage(command) as w:
            try:
                server = w.serve()
                server.call(EXEC, {"language": "shell", "code": marker, "timeout": 60000})
                deadline = time.monotonic() + 20
                while not marked(marker) and time.monotonic() < deadline:
                    time.sleep(0.05)
                os.kill(server.proc.pid, how)
                server.proc.wait(20)
                tmp = w.tmp / "tmp"
                deadline = time.monotonic() + 8  # a watchdog's time to clean up
                while any(tmp.iterdir()) and time.monotonic() < deadline:
                    time.sleep(0.1)
                left = [p.name for p in tmp.iterdir()]
            finally:
                kill_marked(marker)
        out.append(Attack(8, f"run's temp folder left after {how.name} mid-run", bool(left),
                          ", ".join(left)[:80]))  # fmt: skip
    return out


# --------------------------------------------------------------------------- 9. bounds


def _tree_rss(pid: int) -> int:
    root = psutil.Process(pid)
    return sum(p.memory_info().rss for p in [root, *root.children(recursive=True)])


def item9(command: list[str]) -> list[Attack]:
    out: list[Attack] = []
    with stage(command) as w:
        w.deny("Bash(rm:*)", "Read(.env)")
        size = 6 * MB
        cmd = "echo " + " ".join(f"word{n}" for n in range(size // 9))
        payload = {"session_id": SESSION, "cwd": str(w.project), "hook_event_name": "PreToolUse",
                   "tool_name": "Bash", "tool_input": {"command": cmd}}  # fmt: skip
        start = time.monotonic()
        proc = subprocess.Popen(
            [*command, "hook", "claude-code", "pretooluse"],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env={**w.env, "CLAUDE_PROJECT_DIR": str(w.project)},
            cwd=w.project,
        )
        peak = Peak(proc.pid)
        proc.communicate(json.dumps(payload).encode(), timeout=300)
        took, rss = time.monotonic() - start, peak.stop()
        out.append(Attack(9, "pre-tool hook given a 6 MB command", took > 3 or rss > 300 * MB,
                          f"{took:.1f} s, {rss / MB:.0f} MB"))  # fmt: skip
        big = w.project / "big.log"
        line = "2024-01-01 12:00:00 INFO request handled path=/api/v1/items id=%d status=200\n"
        with big.open("w", encoding="utf-8") as handle:
            n = 0
            while handle.tell() < 60 * MB:
                handle.writelines(line % (n + k) for k in range(10_000))
                n += 10_000
        size = big.stat().st_size
        server = w.serve()
        ask(server, "ctx_index", {"content": "# Warm\n\nthe store open\n", "source": "warm"})
        idle = _tree_rss(server.proc.pid)
        peak = Peak(server.proc.pid)
        text = ask(server, "ctx_index", {"path": "big.log"}, within=300)
        grew = peak.stop() - idle
        out.append(Attack(9, "index a 60 MB file: memory grows over 4x the file",
                          grew > 4 * size, f"+{grew / MB:.0f} MB ({grew / size:.1f}x); "
                          f"{text.splitlines()[0][:50]}"))  # fmt: skip
        big.unlink()
        sparse = w.project / "sparse.bin"
        with sparse.open("wb") as handle:
            handle.truncate(600 * MB)
        peak = Peak(server.proc.pid)
        code = "print(len(FILE_CONTENT))"
        arguments = {"path": "sparse.bin", "language": "python", "code": code}
        text = ask(server, "ctx_execute_file", arguments, within=300)
        rss = peak.stop()
        out.append(Attack(9, "execute_file loads a 600 MB sparse file whole", rss > 500 * MB,
                          f"{rss / MB:.0f} MB peak; {text.splitlines()[0][:60]}"))  # fmt: skip
        # A second look: one JSON-RPC line of 200 MB (ctx_index content).
        idle = _tree_rss(server.proc.pid)
        peak = Peak(server.proc.pid)
        start = time.monotonic()
        content = "word " * (200 * MB // 5)
        text = _raw(server, "ctx_index", json.dumps({"content": content, "source": "huge"}))
        del content
        took, grew = time.monotonic() - start, peak.stop() - idle
        out.append(Attack(9, "a 200 MB message: over a minute or 3x its size in memory",
                          took > ANSWER_S or grew > 600 * MB,
                          f"{took:.0f} s, +{grew / MB:.0f} MB; {text[:50]}"))  # fmt: skip
    return out


# --------------------------------------------------------------------------- 10-12: answers


class _Pages(http.server.ThreadingHTTPServer):
    """Loopback pages by path: (content type, body)."""

    def __init__(self, pages: dict[str, tuple[str, bytes]]) -> None:
        self.pages = pages

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
                kind, body = pages.get(self.path, ("text/plain", b"missing"))
                self.send_response(200 if self.path in pages else 404)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        super().__init__(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.serve_forever, daemon=True).start()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}{path}"


@contextmanager
def pages(table: dict[str, tuple[str, bytes]]) -> Iterator[_Pages]:
    site = _Pages(table)
    try:
        yield site
    finally:
        site.shutdown()
        site.server_close()


def _raw(server: Server, tool: str, arguments: str) -> str:
    """A tools/call whose arguments are written as raw JSON text (``1e400``)."""
    request_id = server.next_id()
    server.send_line(
        b'{"jsonrpc": "2.0", "id": %d, "method": "tools/call", "params": {"name": "%s", '
        b'"arguments": %s}}' % (request_id, tool.encode(), arguments.encode())
    )
    try:
        return answer_text(server.wait(request_id, ANSWER_S))
    except TimeoutError:
        return "<no answer>"


def item10(command: list[str]) -> list[Attack]:
    deep = b"[" * 500_000 + b"]" * 500_000
    cases = [
        ("ctx_search limit 'inf'", "ctx_search", '{"queries": ["alpha"], "limit": "inf"}'),
        ("ctx_search limit 'nan'", "ctx_search", '{"queries": ["alpha"], "limit": "nan"}'),
        ("ctx_search limit 1e400", "ctx_search", '{"queries": ["alpha"], "limit": 1e400}'),
        ("ctx_batch_execute concurrency 'nan'", "ctx_batch_execute",
         '{"commands": [{"label": "a", "command": "echo a"}], "queries": ["a"], '
         '"concurrency": "nan"}'),
        ("ctx_insight port 'nan'", "ctx_insight", '{"port": "nan"}'),
        ("ctx_fetch_and_index requests true", "ctx_fetch_and_index", '{"requests": true}'),
        ("ctx_fetch_and_index requests 5", "ctx_fetch_and_index", '{"requests": 5}'),
        ("ctx_execute timeout 'nan'", EXEC,
         '{"language": "shell", "code": "echo x", "timeout": "nan"}'),
        ("ctx_index maxFiles 1e400", "ctx_index", '{"path": ".", "maxFiles": 1e400}'),
    ]  # fmt: skip
    out: list[Attack] = []
    site_pages = {"/deep.json": ("application/json", deep)}
    with stage(command, CTXMODE_NO_BROWSER="1") as w, pages(site_pages) as site:
        server = w.serve()
        ask(server, "ctx_index", {"content": "# Alpha\n\nalpha beta gamma\n", "source": "a"})
        for name, tool, arguments in cases:
            text = _raw(server, tool, arguments)
            out.append(Attack(10, name, "Internal error" in text, text[:70]))
        text = ask(server, "ctx_fetch_and_index", {"url": site.url("/deep.json")})
        out.append(Attack(10, "a fetched JSON body nested 500,000 deep",
                          "Internal error" in text, text[:70]))  # fmt: skip
        text = ask(server, "ctx_index", {"content": deep.decode(), "source": "deep.json"})
        out.append(Attack(10, "ctx_index of JSON nested 500,000 deep", "Internal error" in text,
                          text[:70]))  # fmt: skip
        (w.project / "ok.txt").write_text("nothing to see\n", encoding="utf-8")
        (w.project / "loop-a").symlink_to("loop-b")
        (w.project / "loop-b").symlink_to("loop-a")
        out.extend(_sweep(server))
    return out


# A valid call of each tool; the sweep replaces one argument at a time with each value.
SWEEP_BASES: dict[str, dict[str, Any]] = {
    EXEC: {"language": "shell", "code": "echo hi"},
    "ctx_execute_file": {"path": "ok.txt", "language": "python", "code": "print(1)"},
    "ctx_batch_execute": {"commands": [{"label": "a", "command": "echo hi"}], "queries": ["hi"]},
    "ctx_index": {"content": "# T\n\nhello", "source": "s"},
    "ctx_search": {"queries": ["hello"]},
    "ctx_fetch_and_index": {"url": "http://127.0.0.1:9/x"},
}
SWEEP_VALUES = (
    "null", "true", "-1", "0", "1e400", "-1e400", "1e30", "3.5", '""', '"nan"', '"inf"', "[]",
    "{}", "[null]", "[1e400]", "[{}]", "[[]]", '[{"label": 1e400, "command": null}]',
    '"' + "y" * 100_000 + '"', '"\\ud800"', '"\\u0000"', "[" * 3000 + "]" * 3000,
    '"loop-a"', '"loop-a/x"', '"../../../etc/shadow"', '["' + "q" * 5000 + '"]',
)  # fmt: skip


def _sweep(server: Server) -> list[Attack]:
    """Every argument of the tools above, each hostile value in turn: one attack per
    argument, won when any value gets "Internal error" (the second look at item 10)."""
    out: list[Attack] = []
    for tool, base in SWEEP_BASES.items():
        for name in dict.fromkeys([*base, "timeout", "cwd", "limit", "source", "path", "intent"]):
            worst = ""
            for value in SWEEP_VALUES:
                rest = {k: v for k, v in base.items() if k != name}
                head = json.dumps(rest)[:-1] + (", " if rest else "")
                text = _raw(server, tool, head + f'"{name}": {value}}}')
                if "Internal error" in text or text == "<no answer>":
                    worst = f"{value[:20]}: {text[:50]}"
            out.append(Attack(10, f"every value for {tool}.{name}", bool(worst), worst))
    return out


def item11(command: list[str]) -> list[Attack]:
    out: list[Attack] = []
    with stage(command) as w:
        server = w.serve()
        nested = "[" * 1000 + "]" * 1000
        request_id = server.next_id()
        server.send_line(
            b'{"jsonrpc": "2.0", "id": %d, "method": "tools/call", "params": {"name": '
            b'"ctx_index", "arguments": {"content": "x", "source": "s", "extra": %s}}}'
            % (request_id, nested.encode())
        )
        try:
            server.wait(request_id, 15)
            lost = False
        except TimeoutError:
            lost = True
        null_ids = None in server.replies()
        out.append(Attack(11, "a request nested 1,000 deep: no answer on its id", lost,
                          "answered on id null" if null_ids else ""))  # fmt: skip
        early = w.serve(initialize=False)
        request_id = early.next_id()
        early.send_line(
            b'{"jsonrpc": "2.0", "id": %d, "method": "tools/list", "params": {}}' % request_id
        )
        try:
            reply = early.wait(request_id, 15)
            message = (reply.get("error") or {}).get("message", "")
            bare = "error" in reply and "initializ" not in message
        except TimeoutError:
            bare, message = True, "<no answer>"
        out.append(
            Attack(11, "tools/list before initialize: not told to initialize", bare, message[:70])
        )
        # A second look: a tools/call of the wrong shape, and a last line left unended.
        server = w.serve()
        request_id = server.next_id()
        server.send_line(
            b'{"jsonrpc": "2.0", "id": %d, "method": "tools/call", "params": {}}' % request_id
        )
        try:
            error = server.wait(request_id, 15).get("error") or {}
            bare = not error.get("data")
        except TimeoutError:
            bare, error = True, {}
        out.append(Attack(11, "tools/call without a name: an error with no detail", bare,
                          str(error.get("message", "<no answer>"))[:60]))  # fmt: skip
        init = {"protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "redteam", "version": "1"}}  # fmt: skip
        lines = [
            json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}),
            json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}),
        ]
        proc = subprocess.run(
            [*command, "serve"], input="\n".join(lines).encode(), capture_output=True,
            env=w.env, cwd=w.project, timeout=ANSWER_S, check=False,
        )  # fmt: skip
        ids = [json.loads(x).get("id") for x in proc.stdout.decode().splitlines() if x.strip()]
        out.append(Attack(11, "a last request without a newline, then EOF: lost", 1 not in ids,
                          f"answered ids {ids}"))  # fmt: skip
    return out


def item12(command: list[str]) -> list[Attack]:
    out: list[Attack] = []
    html = b"<html><head><title>T</title></head><body><h1>Page</h1><p>a\x00b</p></body></html>"
    with stage(command) as w, pages({"/nul.html": ("text/html", html)}) as site:
        os.mkfifo(w.project / "pipe")
        (w.project / "folder").mkdir()
        os.symlink("loop", w.project / "loop")
        server = w.serve()
        for name, path in [("a FIFO", "pipe"), ("/dev/zero", "/dev/zero"),
                           ("a directory", "folder"), ("a symlink loop", "loop")]:  # fmt: skip
            arguments = {"path": path, "language": "shell", "code": "echo ran", "timeout": 10000}
            text = ask(server, "ctx_execute_file", arguments, within=30)
            unclear = "no such file" in text.lower() or text == "<no answer>"
            out.append(Attack(12, f"execute_file on {name}: 'no such file' or a hang", unclear,
                              text[:70]))  # fmt: skip
        text = ask(server, "ctx_fetch_and_index", {"url": site.url("/nul.html")})
        out.append(Attack(12, "HTML with a NUL: 'cannot index text/html'",
                          "cannot index text/html" in text, text[:70]))  # fmt: skip
        text = shell(server, "kill -9 $$")
        out.append(Attack(12, "a run killed by SIGKILL: a bare 'Exit code: 137'",
                          "SIGKILL" not in text, text.splitlines()[0][:70]))  # fmt: skip
    with stage(command, CTX_FETCH_STRICT="1") as w, pages({"/a": ("text/plain", b"a")}) as site:
        text = ask(w.serve(), "ctx_fetch_and_index", {"url": site.url("/a")})
        wrong = "CTX_FETCH_STRICT" not in text
        out.append(Attack(12, "strict fetch refusal names a variable the user did not set",
                          wrong, text[:70]))  # fmt: skip
    return out


def item13(command: list[str]) -> list[Attack]:
    """What the round left to decide: control bytes, the flood guard's agent key, ctxmode's
    own data, the environment runs inherit (README, Security)."""
    out: list[Attack] = []
    token = "rt-env-token-7c2d"
    with stage(command, CTXMODE_ENV_DROP="RT_*", RT_TOKEN=token) as w:
        server = w.serve()
        text = shell(server, r"printf '\033]52;c;ZXZpbA==\a\033[31mred\033[0m\0x\r\n'")
        raw = [c for c in text if ord(c) < 32 and c not in "\t\n"]
        out.append(Attack(13, "raw ESC, BEL, NUL or CR reach the agent", bool(raw),
                          repr(text[:40])))  # fmt: skip
        ask(server, "ctx_index", {"content": "# Widgets\n\nwidget words\n", "source": "w"})
        refused = 0
        for n in range(40):
            params = {"name": "ctx_search", "arguments": {"queries": ["widget"]},
                      "_meta": {"agent_id": f"invented-{n}"}}  # fmt: skip
            refused += "BLOCKED" in answer_text(server.wait(server.start("tools/call", params)))
        out.append(Attack(13, "40 searches, a new agent id each: none refused", refused == 0,
                          f"{refused} refused"))  # fmt: skip
        files = sorted(p for p in w.data.rglob("*") if p.is_file())
        marker = next(p for p in files if p.suffix == ".json")  # the server's, or stats
        own = next(p for p in files if p.suffix == ".db")
        text = ask(server, "ctx_index", {"path": str(marker)})
        out.append(Attack(13, "ctx_index of a file of ctxmode's own data", "Indexed" in text,
                          f"{marker.name}: {text[:50]}"))  # fmt: skip
        arguments = {"path": str(own), "language": "shell", "code": "wc -c < $FILE_CONTENT_PATH"}
        text = ask(server, "ctx_execute_file", arguments)
        out.append(Attack(13, "ctx_execute_file on ctxmode's own database",
                          "own data" not in text, text[:60]))  # fmt: skip
        text = shell(server, "echo token=$RT_TOKEN")
        out.append(Attack(13, "a variable CTXMODE_ENV_DROP names reaches the run", token in text))
    return out


ITEMS: list[tuple[int, str, Callable[[list[str]], list[Attack]]]] = [
    (1, "isolation protects its own rules", item1),
    (2, "text checks that fail open or misread literals", item2),
    (3, "secrets at rest", item3),
    (4, "a cancelled request holds the server", item4),
    (5, "a run that closes its output", item5),
    (6, "background runs past the output cap", item6),
    (7, "zombies", item7),
    (8, "temp folders after the server is killed", item8),
    (9, "unbounded reads", item9),
    (10, "uncaught errors: 'Internal error'", item10),
    (11, "JSON-RPC answers lost or bare", item11),
    (12, "unclear answers", item12),
    (13, "decided: controls, agent ids, own data, env", item13),
]


def redteam(command: list[str], only: set[int] | None = None) -> dict[str, Any]:
    """Every item's attacks against `command`; prints a line per item as it ends."""
    figures: dict[str, Any] = {}
    for number, title, run in ITEMS:
        if only and number not in only:
            continue
        start = time.monotonic()
        attacks = run(command)
        tried = [a for a in attacks if a.succeeded is not None]
        won = [a for a in tried if a.succeeded]
        seconds = time.monotonic() - start
        print(f"  {number:>2}. {title:<48} tried {len(tried):>2}  succeeded {len(won):>2}"
              f"  ({seconds:.0f} s)", flush=True)  # fmt: skip
        for attack in won:
            print(f"        - {attack.name}" + (f": {attack.detail}" if attack.detail else ""))
        figures[str(number)] = {
            "title": title,
            "tried": len(tried),
            "succeeded": len(won),
            "attacks": [vars(a) for a in attacks],
        }
    total = sum(f["tried"] for f in figures.values())
    won_total = sum(f["succeeded"] for f in figures.values())
    print(f"  all: tried {total}, succeeded {won_total}", flush=True)
    return figures
