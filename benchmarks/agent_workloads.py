#!/usr/bin/env python3
"""Agent workloads: what an agent is shown, ctxmode against upstream, in the same run.

Each workload is real material with known facts buried in it; both servers get the same
MCP calls over stdio, and a fact counts as found only if it is in the text the agent is
shown (whitespace-normalised substring; a docs answer word by word, markup aside).
Reported per workload: facts found of needed, the bytes shown, and bytes per found fact.

Workloads (built under a scratch directory; nothing is committed):

- pytest (tuning): more-itertools 10.5.0's sdist from PyPI (~660 tests) with bug set A;
  ctx_batch_execute of `pytest -q`, `git log`, `git diff` with three queries.
- unittest (held-out): the same sdist with bug set B, `python -m unittest`; the same calls.
- node (tuning): a generated node:test suite (60 tests, 6 failing); ctx_batch_execute.
- cargo (held-out): a generated crate (40 tests, 5 failing); ctx_batch_execute.
- mypy (held-out): the sdist with injected type errors; ctx_execute of mypy.
- log-N (tuning: 1 and 20 MB; held-out: 5 and 50 MB): a generated application log with four
  kinds of error at known places; ctx_execute `cat` with an intent, ctx_search for the four,
  ctx_index by path, ctx_search scoped to it.
- build (tuning): a generated crate with three compile errors (rustc E0308, E0425, E0061)
  among 40 warnings; ctx_execute of `cargo build`.
- docs-N (tuning: the Rustonomicon; held-out: the 2021 edition guide): five pages of a Rust
  book rustup installs, served on 127.0.0.1; ctx_fetch_and_index of each, then ctx_search
  with five questions in a user's words (`DOCS`).

The needed facts come from ground truth neither server sees: pytest's JUnit XML, a
unittest result recorded by a runner of our own, mypy's and cargo's JSON output, the
generators' own lists, `git diff`'s changed lines, the docs answers above. They are
written to `<scratch>/facts.json` before any server runs.

    .venv/bin/python benchmarks/agent_workloads.py                  # both servers, both halves
    .venv/bin/python benchmarks/agent_workloads.py --engines ours --half tuning

Upstream runs through the side-by-side harness (`$CTXMODE_BENCH_DIR/peer.sh server`,
default `../shared/bench`); it needs its `setup.sh` to have run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from upstream_search import State, call, server  # noqa: E402

SDIST = "more-itertools==10.5.0"
BUGS_A = [
    ("more_itertools/more.py", "stop += q + 1 if i <= r else q", "stop += q + 1 if i < r else q"),
    (
        "more_itertools/more.py",
        "            yield from cache\n            cache_clear()\n            yield x",
        "            yield from cache[1:]\n            cache_clear()\n            yield x",
    ),
    (
        "more_itertools/recipes.py",
        "        return zip_longest(*args, fillvalue=fillvalue)",
        "        return zip_longest(*args[:-1], fillvalue=fillvalue)",
    ),
]
BUGS_B = [
    ("more_itertools/recipes.py", "    limit = math.isqrt(n) + 1\n", "    limit = math.isqrt(n)\n"),
    (
        "more_itertools/more.py",
        "    if n is None:\n        return iterable_with_repeat\n    elif n < 1:",
        "    if n is None:\n        return iterable_with_repeat\n    elif n <= 1:",
    ),
    (
        "more_itertools/recipes.py",
        "    return next(islice(iterable, n, None), default)",
        "    return next(islice(iterable, n + 1, None), default)",
    ),
]
TYPE_BUGS = [
    (
        "more_itertools/more.py",
        "def chunked(iterable, n, strict=False):",
        "def chunked(iterable, n: int = 'two', strict=False) -> int:",
    ),
    (
        "more_itertools/recipes.py",
        "def take(n, iterable):",
        "def take(n: int, iterable) -> str:\n    return 5\n\ndef _take(n, iterable):",
    ),
]


def norm(text: str) -> str:
    return " ".join(text.split())


def plain_words(text: str) -> str:
    """A docs answer as words: the page's markup (``*always*``, backticks) is not the answer."""
    return " " + " ".join(re.findall(r"\w+", text.lower())) + " "


def sh(argv: list[str], cwd: Path, **kw: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, **kw)


def git_init(repo: Path) -> None:
    for argv in (
        ["git", "init", "-q"],
        ["git", "add", "-A"],
        ["git", "-c", "user.email=b@b", "-c", "user.name=bench", "commit", "-qm", "base"],
    ):
        sh(argv, repo, check=True)


def apply(repo: Path, bugs: list[tuple[str, str, str]]) -> None:
    for rel, old, new in bugs:
        path = repo / rel
        text = path.read_text()
        assert old in text, (rel, old)
        path.write_text(text.replace(old, new, 1))


def changed_lines(repo: Path) -> list[str]:
    diff = sh(["git", "diff"], repo).stdout
    return [ln for ln in diff.splitlines() if ln[:1] in "+-" and not ln.startswith(("+++", "---"))]


def sdist(scratch: Path) -> Path:
    cache = scratch / "sdist"
    cache.mkdir(exist_ok=True)
    if not list(cache.glob("*.tar.gz")):
        sh(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "-q",
                "--no-deps",
                "--no-binary",
                ":all:",
                SDIST,
                "-d",
                str(cache),
            ],
            scratch,
            check=True,
        )
    return next(cache.glob("*.tar.gz"))


def fresh(path: Path) -> Path:
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    return path


def unpack(archive: Path, dest: Path) -> Path:
    fresh(dest)
    with tarfile.open(archive) as tar:
        tar.extractall(dest, filter="data")
    return next(p for p in dest.iterdir() if p.is_dir())


# ----------------------------------------------------------------------- workloads


def pytest_workload(scratch: Path, archive: Path) -> dict[str, Any]:
    repo = unpack(archive, scratch / "pytest")
    git_init(repo)
    apply(repo, BUGS_A)
    junit = scratch / "junit.xml"
    run = sh(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            f"--junitxml={junit}",
            "tests",
        ],
        repo,
    )
    count = re.findall(r"^\d+ failed.*$", run.stdout, re.M)[-1]
    facts: list[tuple[str, str]] = [("count", count.split(" in ")[0])]
    seen = set()
    for case in ET.parse(junit).getroot().iter("testcase"):
        failure = case.find("failure")
        if failure is None:
            failure = case.find("error")
        if failure is None:
            continue
        test_id = f"{case.get('classname', '').split('.')[-1]}::{case.get('name')}"
        if test_id not in seen:
            seen.add(test_id)
            facts.append(("id", test_id))
            message = (failure.get("message") or "").split("\n")[0]
            facts.append(("message", message[:60]))
    facts += [("diff", ln) for ln in changed_lines(repo)]
    py = sys.executable
    return {
        "name": "pytest",
        "half": "tuning",
        "dir": str(repo),
        "facts": facts,
        "calls": [
            (
                "ctx_batch_execute",
                {
                    "commands": [
                        {
                            "label": "tests",
                            "command": f"{py} -m pytest -q -p no:cacheprovider tests",
                        },
                        {"label": "log", "command": "git log --oneline -5"},
                        {"label": "diff", "command": "git diff"},
                    ],
                    "queries": ["failing tests", "AssertionError", "divide"],
                    "timeout": 300000,
                },
            ),
        ],
    }


UNITTEST_RUNNER = r"""
import json, sys, unittest
suite = unittest.defaultTestLoader.discover("tests", top_level_dir=".")
result = unittest.TestResult()
suite.run(result)
out = []
for test, tb in result.failures + result.errors:
    out.append([str(test), tb.strip().splitlines()[-1]])  # as unittest prints it
json.dump(out, open(sys.argv[1], "w"))
"""


def unittest_workload(scratch: Path, archive: Path) -> dict[str, Any]:
    repo = unpack(archive, scratch / "unittest")
    git_init(repo)
    apply(repo, BUGS_B)
    truth = scratch / "unittest.json"
    sh([sys.executable, "-c", UNITTEST_RUNNER, str(truth)], repo)
    facts: list[tuple[str, str]] = []
    ran = sh([sys.executable, "-m", "unittest", "discover", "-s", "tests", "-t", "."], repo)
    facts.append(("count", re.findall(r"^FAILED \(.*\)$", ran.stderr, re.M)[-1]))
    seen = set()
    for fact, last in json.loads(truth.read_text()):
        if fact in seen:
            continue
        seen.add(fact)
        facts += [("id", fact), ("message", last[:60])]
    facts += [("diff", ln) for ln in changed_lines(repo)]
    py = sys.executable
    return {
        "name": "unittest",
        "half": "held-out",
        "dir": str(repo),
        "facts": facts,
        "calls": [
            (
                "ctx_batch_execute",
                {
                    "commands": [
                        {"label": "tests", "command": f"{py} -m unittest discover -s tests -t ."},
                        {"label": "log", "command": "git log --oneline -5"},
                        {"label": "diff", "command": "git diff"},
                    ],
                    "queries": ["failing tests", "AssertionError", "sieve"],
                    "timeout": 300000,
                },
            ),
        ],
    }


def node_workload(scratch: Path) -> dict[str, Any]:
    repo = fresh(scratch / "node")
    rnd = random.Random(7)
    tests, facts = [], []
    failing = set(rnd.sample(range(60), 6))
    for i in range(60):
        a, b = rnd.randint(1, 99), rnd.randint(1, 99)
        expected = a + b + (1 if i in failing else 0)
        tests.append(
            f"test('sums case {i}', () => {{ assert.equal(add({a}, {b}), {expected}); }});"
        )
        if i in failing:
            facts += [("id", f"sums case {i}"), ("message", f"{a + b} !== {expected}")]
    (repo / "calc.test.mjs").write_text(
        "import test from 'node:test';\nimport assert from 'node:assert/strict';\n"
        "const add = (a, b) => a + b;\n" + "\n".join(tests) + "\n"
    )
    facts.insert(0, ("count", "fail 6"))
    return {
        "name": "node",
        "half": "tuning",
        "dir": str(repo),
        "facts": facts,
        "calls": [
            (
                "ctx_batch_execute",
                {
                    "commands": [{"label": "tests", "command": "node --test"}],
                    "queries": ["failing tests", "AssertionError"],
                    "timeout": 120000,
                },
            )
        ],
    }


def cargo_workload(scratch: Path) -> dict[str, Any]:
    repo = fresh(scratch / "cargo")
    (repo / "src").mkdir()
    (repo / "Cargo.toml").write_text(
        '[package]\nname = "calc"\nversion = "0.1.0"\nedition = "2021"\n'
    )
    rnd = random.Random(11)
    failing = set(rnd.sample(range(40), 5))
    tests, facts = [], []
    for i in range(40):
        a, b = rnd.randint(1, 99), rnd.randint(1, 99)
        expected = a * b + (1 if i in failing else 0)
        tests.append(f"    #[test] fn product_{i}() {{ assert_eq!(mul({a}, {b}), {expected}); }}")
        if i in failing:
            facts += [("id", f"tests::product_{i}"), ("message", f"left: {a * b}")]
    (repo / "src" / "lib.rs").write_text(
        "pub fn mul(a: i64, b: i64) -> i64 { a * b }\n"
        "#[cfg(test)]\nmod tests {\n    use super::*;\n" + "\n".join(tests) + "\n}\n"
    )
    facts.insert(0, ("count", "35 passed; 5 failed"))
    return {
        "name": "cargo",
        "half": "held-out",
        "dir": str(repo),
        "facts": facts,
        "calls": [
            (
                "ctx_batch_execute",
                {
                    "commands": [{"label": "tests", "command": "cargo test --offline 2>&1"}],
                    "queries": ["failing tests", "panicked"],
                    "timeout": 300000,
                },
            )
        ],
    }


def mypy_workload(scratch: Path, archive: Path) -> dict[str, Any]:
    repo = unpack(archive, scratch / "mypy")
    for stub in (repo / "more_itertools").glob("*.pyi"):
        stub.unlink()  # mypy would check the stubs and not the code
    (repo / "setup.cfg").unlink()
    apply(repo, TYPE_BUGS)
    mypy = Path(sys.executable).with_name("mypy")
    out = sh([str(mypy), "--no-incremental", "-O", "json", "more_itertools"], repo).stdout
    facts = []
    for line in out.splitlines():
        if not line.startswith("{"):
            continue
        row = json.loads(line)
        if row.get("severity") == "error":
            facts.append(("error", f"{row['file']}:{row['line']}: error: {row['message'][:50]}"))
            facts.append(("code", f"[{row['code']}]"))
    return {
        "name": "mypy",
        "half": "held-out",
        "dir": str(repo),
        "facts": facts,
        "calls": [
            (
                "ctx_execute",
                {"language": "shell", "code": f"{mypy} --no-incremental more_itertools"},
            )
        ],
    }


def build_workload(scratch: Path) -> dict[str, Any] | None:
    """A crate that does not compile: three errors of different codes among warnings."""
    if shutil.which("cargo") is None:
        return None
    repo = fresh(scratch / "build")
    (repo / "src").mkdir()
    (repo / "Cargo.toml").write_text(
        '[package]\nname = "ledger"\nversion = "0.1.0"\nedition = "2021"\n'
    )
    body = [
        f"pub fn helper_{i}(x: i64) -> i64 {{ let unused_{i} = x; x + {i} }}" for i in range(40)
    ]
    body[9] = 'pub fn total(xs: &[i64]) -> i64 { let s: i64 = "zero"; s + xs.len() as i64 }'
    body[23] = "pub fn average(xs: &[i64]) -> i64 { sum / xs.len() as i64 }"
    body[31] = "pub fn scaled(x: i64) -> i64 { helper_1(x, 2) }"
    (repo / "src" / "lib.rs").write_text("\n".join(body) + "\n")
    cargo = ["cargo", "build", "--offline", "--message-format=json"]
    messages = [json.loads(ln) for ln in sh(cargo, repo).stdout.splitlines() if ln.startswith("{")]
    facts = []
    for m in messages:
        msg = m.get("message") or {}
        if (
            m.get("reason") == "compiler-message"
            and msg.get("level") == "error"
            and msg.get("code")
        ):
            span = next(s for s in msg["spans"] if s["is_primary"])
            facts.append(("code", f"error[{msg['code']['code']}]: {msg['message']}"))
            facts.append(
                ("where", f"{span['file_name']}:{span['line_start']}:{span['column_start']}")
            )
    return {
        "name": "build",
        "half": "tuning",
        "dir": str(repo),
        "facts": facts,
        "calls": [
            (
                "ctx_execute",
                {"language": "shell", "code": "cargo build --offline 2>&1", "timeout": 300000},
            )
        ],
    }


# Docs sites: pages of the Rust books rustup installs, served on 127.0.0.1, fetched and
# indexed, then five questions asked in a user's words. The answers (a phrase of the
# sentence that answers, as the page says it) were written from the pages before either
# server ran on them.
DOCS = {
    "tuning": (
        "nomicon",
        ["transmutes", "poisoning", "drop-flags", "leaking", "exotic-sizes"],
        [
            (
                "is it ok to transmute a shared reference into a mutable reference",
                "always Undefined Behavior",
            ),
            ("when does a Mutex get poisoned", "is dropped during a panic"),
            (
                "how does Rust track at runtime whether a variable needs to be dropped",
                "drop flag for that variable is toggled",
            ),
            ("does Rust prevent resource leaks", "In practice, this is basically true"),
            ("what information completes a trait object pointer", "is the vtable pointer"),
        ],
    ),
    "held-out": (
        "edition-guide/rust-2021",
        [
            "prelude",
            "default-cargo-resolver",
            "disjoint-capture-in-closures",
            "panic-macro-consistency",
            "reserved-syntax",
        ],
        [
            (
                "which traits were added to the prelude in Rust 2021",
                "FromIterator traits are now part of the prelude",
            ),
            (
                "which Cargo feature resolver does edition 2021 use by default",
                "Starting in Rust 2021, this will be the default",
            ),
            ("what does a closure capture in Rust 2021", "will only capture the fields they use"),
            (
                "how do I panic with a value that is not a string",
                "to panic with a non-string payload",
            ),
            (
                "how to avoid errors from the reserved prefix syntax",
                "Insert whitespace between the identifier",
            ),
        ],
    ),
}


def _docs_root() -> Path | None:
    rustc = shutil.which("rustc")
    if rustc is None:
        return None
    sysroot = sh([rustc, "--print", "sysroot"], Path.cwd()).stdout.strip()
    root = Path(sysroot) / "share" / "doc" / "rust" / "html"
    return root if (root / "nomicon").is_dir() else None


def _serve(root: Path) -> str:
    """Serve `root` on 127.0.0.1 for the rest of this process; its base URL."""
    import functools
    import http.server
    import threading

    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
    handler.log_message = lambda *a, **k: None  # type: ignore[attr-defined]
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{httpd.server_address[1]}"


def docs_workload(scratch: Path, half: str) -> dict[str, Any] | None:
    root = _docs_root()
    if root is None:
        return None
    book, pages, questions = DOCS[half]
    base = _serve(root)
    repo = fresh(scratch / f"docs-{half}")
    calls: list[tuple[str, dict[str, Any]]] = [
        ("ctx_fetch_and_index", {"url": f"{base}/{book}/{page}.html", "source": page})
        for page in pages
    ]
    calls.append(("ctx_search", {"queries": [q for q, _ in questions]}))
    return {
        "name": f"docs-{book.split('/')[0]}",
        "half": half,
        "dir": str(repo),
        "facts": [("answer", a) for _, a in questions],
        "calls": calls,
    }


LOG_ERRORS = [
    (
        0.13,
        "ERROR [db-pool] connection refused: host=pg-primary port=5432 attempt=3",
        "connection refused pg-primary",
    ),
    (
        0.41,
        "ERROR [payments] charge declined: card_network_timeout after 30000ms order=ORD-77812",
        "charge declined card_network_timeout",
    ),
    (
        0.66,
        "FATAL [worker-3] OutOfMemoryError: heap exhausted while resizing image cache",
        "OutOfMemoryError heap exhausted",
    ),
    (
        0.88,
        "ERROR [auth] token signature mismatch for issuer=https://id.example.test kid=k9",
        "token signature mismatch",
    ),
]


def log_workload(scratch: Path, mb: float, half: str) -> dict[str, Any]:
    repo = fresh(scratch / f"log{mb:g}")
    rnd = random.Random(int(mb * 10))
    target = int(mb * 1024 * 1024)
    pending = list(LOG_ERRORS)
    size = n = 0
    with open(repo / "app.log", "w") as f:
        while size < target:
            n += 1
            if pending and size >= pending[0][0] * target:
                line = (
                    f"2026-11-03T10:{n % 60:02d}:{n % 60:02d}.{n % 1000:03d}Z {pending.pop(0)[1]}"
                )
            else:
                line = (
                    f"2026-11-03T10:{n % 60:02d}:{(n * 7) % 60:02d}.{n % 1000:03d}Z INFO  "
                    f"[api-{n % 8}] req={rnd.getrandbits(64):016x} "
                    f"GET /v1/items/{rnd.randint(1, 99999)} "
                    f"status=200 dur_ms={rnd.randint(1, 900)}"
                )
            f.write(line + "\n")
            size += len(line) + 1
    facts = [("error", text.split("] ", 1)[1][:48]) for _, text, _ in LOG_ERRORS]
    queries = [q for _, _, q in LOG_ERRORS]
    return {
        "name": f"log-{mb:g}MB",
        "half": half,
        "dir": str(repo),
        "facts": facts,
        "calls": [
            (
                "ctx_execute",
                {"language": "shell", "code": "cat app.log", "intent": "errors", "timeout": 600000},
            ),
            ("ctx_search", {"queries": queries}),
            ("ctx_index", {"path": str(repo / "app.log"), "source": "applog"}),
            ("ctx_search", {"queries": queries, "source": "applog"}),
        ],
    }


def build(scratch: Path, halves: set[str]) -> list[dict[str, Any]]:
    archive = sdist(scratch)
    makers = [
        ("tuning", lambda: pytest_workload(scratch, archive)),
        ("held-out", lambda: unittest_workload(scratch, archive)),
        ("tuning", lambda: node_workload(scratch)),
        ("held-out", lambda: cargo_workload(scratch)),
        ("held-out", lambda: mypy_workload(scratch, archive)),
        ("tuning", lambda: log_workload(scratch, 1, "tuning")),
        ("tuning", lambda: log_workload(scratch, 20, "tuning")),
        ("held-out", lambda: log_workload(scratch, 5, "held-out")),
        ("held-out", lambda: log_workload(scratch, 50, "held-out")),
        ("tuning", lambda: build_workload(scratch)),
        ("tuning", lambda: docs_workload(scratch, "tuning")),
        ("held-out", lambda: docs_workload(scratch, "held-out")),
    ]
    needed = [
        ("node", shutil.which("node")),
        ("cargo", shutil.which("cargo")),
    ]
    missing = {name for name, path in needed if path is None}
    out = []
    for half, make in makers:
        if half in halves:
            workload = make()
            if workload is not None and workload["name"] not in missing:
                out.append(workload)
    return out


# ----------------------------------------------------------------------- running


async def run_engine(argv: list[str], workload: dict[str, Any], root: Path) -> dict[str, Any]:
    state = State(root)
    project = Path(workload["dir"])
    env_project = {"CLAUDE_PROJECT_DIR": str(project)}
    state.project = project
    errlog = open(root / "stderr.log", "a", encoding="utf-8", errors="replace")
    old_env = state.env

    def env() -> dict[str, str]:
        values = old_env()
        values.update(env_project, PWD=str(project))
        real_home = Path.home()  # the toolchains stay where they are installed
        values.setdefault("CARGO_HOME", str(real_home / ".cargo"))
        values.setdefault("RUSTUP_HOME", str(real_home / ".rustup"))
        return values

    state.env = env  # type: ignore[method-assign]
    shown: list[str] = []
    seconds = []
    async with server(argv, state, errlog) as session:
        for tool, args in workload["calls"]:
            started = time.perf_counter()
            try:
                _, text = await call(session, tool, args, 900)
            except Exception as exc:  # a timeout or a dead server: shown nothing
                text = f"[call failed: {exc!r}]"
            seconds.append(round(time.perf_counter() - started, 2))
            shown.append(text)
    text = "\n".join(shown)
    flat, words = norm(text), plain_words(text)
    found = [
        f
        for f in workload["facts"]
        if (plain_words(f[1]) in words if f[0] == "answer" else norm(f[1]) in flat)
    ]
    return {
        "found": len(found),
        "needed": len(workload["facts"]),
        "bytes": len(text.encode("utf-8")),
        "seconds": seconds,
        "missed": [f for f in workload["facts"] if f not in found][:12],
        "text": text,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--engines", default="ours,upstream")
    parser.add_argument("--half", choices=["tuning", "held-out", "both"], default="both")
    parser.add_argument("--ours", default=str(Path(sys.executable).with_name("ctxmode")) + " serve")
    default_peer = Path(
        os.environ.get(
            "CTXMODE_BENCH_DIR", Path(__file__).resolve().parents[2] / "shared" / "bench"
        )
    )
    parser.add_argument("--peer", default=f"{default_peer / 'peer.sh'} server")
    parser.add_argument("--scratch", type=Path)
    parser.add_argument("--only", help="workloads whose names start with these (comma list)")
    parser.add_argument("--out", type=Path)
    a = parser.parse_args()
    halves = {"tuning", "held-out"} if a.half == "both" else {a.half}
    scratch = a.scratch or Path(tempfile.mkdtemp(prefix="ctxmode-workloads-"))
    scratch.mkdir(parents=True, exist_ok=True)
    workloads = build(scratch, halves)
    if a.only:
        workloads = [w for w in workloads if w["name"].startswith(tuple(a.only.split(",")))]
    (scratch / "facts.json").write_text(
        json.dumps({w["name"]: w["facts"] for w in workloads}, indent=1)
    )
    engines = {"ours": a.ours.split(), "upstream": a.peer.split()}
    rows = []
    for workload in workloads:
        row: dict[str, Any] = {"workload": workload["name"], "half": workload["half"]}
        for name in a.engines.split(","):
            root = Path(tempfile.mkdtemp(prefix=f"{name}-", dir=scratch))
            row[name] = asyncio.run(run_engine(engines[name], workload, root))
            r = row[name]
            print(
                f"{workload['name']:<12} {name:<8} {r['found']}/{r['needed']} facts, "
                f"{r['bytes'] / 1024:.1f} KB, {r['seconds']} s",
                file=sys.stderr,
            )
        rows.append(row)
    print(
        "\n| workload | half | "
        + " | ".join(f"{e} found | {e} KB | {e} B/fact" for e in a.engines.split(","))
        + " |"
    )
    print("|---|---|" + "---:|---:|---:|" * len(a.engines.split(",")))
    totals: dict[str, list[int]] = {}
    for row in rows:
        cells = []
        for e in a.engines.split(","):
            r = row[e]
            t = totals.setdefault(f"{e}:{row['half']}", [0, 0, 0])
            t[0] += r["found"]
            t[1] += r["needed"]
            t[2] += r["bytes"]
            per = r["bytes"] / r["found"] if r["found"] else float("inf")
            cells.append(f"{r['found']}/{r['needed']} | {r['bytes'] / 1024:.1f} | {per:,.0f}")
        print(f"| {row['workload']} | {row['half']} | " + " | ".join(cells) + " |")
    for key, (found, needed, nbytes) in sorted(totals.items()):
        print(
            f"{key}: {found}/{needed} = {found / max(1, needed):.2f} of needed facts,"
            f" {nbytes / 1024:.1f} KB"
        )
    if a.out:
        a.out.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
