#!/usr/bin/env python3
"""Retrieval-quality evaluation of the knowledge base: ctxmode against upstream context-mode.

What it measures
    A fixed corpus of real text nobody on the team wrote (Python standard-library sources plus
    the long descriptions of a few installed packages) is indexed, then a set of judged queries
    (``retrieval_queries.json``: exact words, identifiers, identifier fragments, typos, error
    messages, paraphrased questions) is run against it. Each query names the corpus file that
    answers it and, optionally, a substring of the answering chunk's title (a definition name
    or a heading). Per engine the script reports hit@1, hit@2, MRR@10 and the mean bytes an
    agent would read per query, per category, and lists the queries missed at rank 1.

    Three judgements are scored:
      strict  the hit's source ends with the expected file AND its title contains an expected
              name as a whole word (when the query gives one); the number to tune ours on;
      shown   strict, or the expected file with a snippet that shows the ``def <name>`` /
              ``class <name>`` line: the agent sees the definition even if the title is vague;
      file    only the file has to match.
    Upstream chunks .py files as markdown, so its titles come from ``#`` comments and rarely
    name a definition: compare engines on ``shown`` and ``file``, not ``strict``.

Engines
    ours      ``ctxmode.store.ContentStore`` in process: ``index_file`` per corpus file, then
              ``search(query, limit=10)``. Bytes per query are measured on a ``limit=2`` search
              formatted like upstream's ctx_search text: ``--- [<source>] ---\\n### <title>\\n\\n
              <snippet>\\n\\n`` per hit.
    upstream  the context-mode MCP server (``peer.sh server`` from the bench harness), driven by
              ``upstream_search.py`` under the harness venv's Python (it needs ``mcp``). Upstream
              caps ctx_search at 2 results per query, so its MRR@10 is really MRR@2; ours is
              also shown restricted to its top 2 for a like-for-like comparison. Its bytes per
              query are the UTF-8 bytes of the whole ctx_search result text.

Corpus
    Copied into ``--corpus-dir`` (default: a temporary directory, removed afterwards) with
    stable names: ``stdlib/json/decoder.py``, ``stdlib/zipfile.py`` (whether the interpreter has
    ``zipfile.py`` or ``zipfile/__init__.py``), ``pkgdocs/rich.md`` (``.rst`` for packages whose
    description is reStructuredText). Every file exists in Python 3.10 to 3.13; package
    descriptions that are not installed are skipped, and so are the queries that need them.

    ``--corpus-set heldout`` swaps in a disjoint corpus (other standard-library files, other
    packages' descriptions) judged by ``retrieval_queries_heldout.json``, which becomes the
    default ``--queries``. Ranking is tuned on the main set; the held-out set checks that the
    tuning generalises.

Run (from the repository root)::

    .venv/bin/python benchmarks/retrieval_eval.py --engines ours
    .venv/bin/python benchmarks/retrieval_eval.py \\
        --upstream-python "$CTXMODE_BENCH_HOME/venv/bin/python" \\
        --peer ../shared/bench/peer.sh --out retrieval-results.json
    .venv/bin/python benchmarks/retrieval_eval.py --corpus-set heldout --engines ours

``--peer`` defaults to ``$CTXMODE_BENCH_PEER`` or ``../shared/bench/peer.sh`` next to the
repository; ``--upstream-python`` defaults to ``$CTXMODE_BENCH_HOME/venv/bin/python`` (with
the harness's default for ``CTXMODE_BENCH_HOME``). ``--verify`` only checks the query set
against the corpus (expected file present, evidence text in it, a definition or heading with
the expected title) and exits. ``--corpus-dir`` is rebuilt on every run.

The upstream server runs with a private HOME/TMPDIR/project dir but no network sandbox (it
tries an npm registry update check at start; that does not affect search results). Upstream
numbers are deterministic for a given corpus; ours depend on the ctxmode checkout, whose git
commit (and whether ``ctxmode/`` had uncommitted changes) is recorded in the JSON.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
DEFAULT_QUERIES = HERE / "retrieval_queries.json"
HELDOUT_QUERIES = HERE / "retrieval_queries_heldout.json"
UPSTREAM_RUNNER = HERE / "upstream_search.py"

# Standard-library files, by label under stdlib/. Alternatives cover layout changes between
# Python versions (zipfile became a package in 3.12). All exist in 3.10, 3.11, 3.12 and 3.13.
STDLIB_FILES: list[tuple[str, tuple[str, ...]]] = [
    (name, tuple(alts.split("|")) if alts else (name,))
    for name, alts in (
        ("argparse.py", ""),
        ("ast.py", ""),
        ("asyncio/tasks.py", ""),
        ("base64.py", ""),
        ("bisect.py", ""),
        ("collections/__init__.py", ""),
        ("concurrent/futures/thread.py", ""),
        ("configparser.py", ""),
        ("contextlib.py", ""),
        ("copy.py", ""),
        ("csv.py", ""),
        ("dataclasses.py", ""),
        ("difflib.py", ""),
        ("email/utils.py", ""),
        ("enum.py", ""),
        ("fnmatch.py", ""),
        ("functools.py", ""),
        ("glob.py", ""),
        ("gzip.py", ""),
        ("heapq.py", ""),
        ("http/client.py", ""),
        ("http/server.py", ""),
        ("inspect.py", ""),
        ("ipaddress.py", ""),
        ("json/__init__.py", ""),
        ("json/decoder.py", ""),
        ("json/encoder.py", ""),
        ("logging/__init__.py", ""),
        ("logging/handlers.py", ""),
        ("mimetypes.py", ""),
        ("posixpath.py", ""),
        ("pprint.py", ""),
        ("queue.py", ""),
        ("random.py", ""),
        ("secrets.py", ""),
        ("shlex.py", ""),
        ("shutil.py", ""),
        ("smtplib.py", ""),
        ("sqlite3/__init__.py", ""),
        ("statistics.py", ""),
        ("string.py", ""),
        ("subprocess.py", ""),
        ("tarfile.py", ""),
        ("tempfile.py", ""),
        ("textwrap.py", ""),
        ("threading.py", ""),
        ("tokenize.py", ""),
        ("traceback.py", ""),
        ("typing.py", ""),
        ("unittest/mock.py", ""),
        ("urllib/parse.py", ""),
        ("urllib/request.py", ""),
        ("uuid.py", ""),
        ("zipfile.py", "zipfile.py|zipfile/__init__.py"),
    )
]

# Installed distributions whose long description (the METADATA body) joins the corpus.
PACKAGE_DOCS = ("typer", "rich", "platformdirs", "psutil", "pytest")

# The held-out corpus (``--corpus-set heldout``): standard-library files and package
# descriptions that share nothing with the lists above, judged by retrieval_queries_heldout.json.
# Ranking is tuned on the main set; this one checks that the tuning generalises. Every file
# exists in Python 3.10 to 3.13.
HELDOUT_STDLIB_FILES: list[tuple[str, tuple[str, ...]]] = [
    (name, (name,))
    for name in (
        "asyncio/locks.py",
        "asyncio/queues.py",
        "asyncio/streams.py",
        "calendar.py",
        "cmd.py",
        "codecs.py",
        "concurrent/futures/_base.py",
        "email/message.py",
        "filecmp.py",
        "fileinput.py",
        "fractions.py",
        "ftplib.py",
        "getopt.py",
        "getpass.py",
        "gettext.py",
        "graphlib.py",
        "hashlib.py",
        "hmac.py",
        "html/__init__.py",
        "html/parser.py",
        "http/cookiejar.py",
        "http/cookies.py",
        "imaplib.py",
        "importlib/metadata/__init__.py",
        "locale.py",
        "netrc.py",
        "operator.py",
        "optparse.py",
        "pdb.py",
        "pickle.py",
        "platform.py",
        "plistlib.py",
        "profile.py",
        "sched.py",
        "selectors.py",
        "shelve.py",
        "socketserver.py",
        "sqlite3/dump.py",
        "timeit.py",
        "trace.py",
        "unittest/case.py",
        "urllib/robotparser.py",
        "warnings.py",
        "weakref.py",
        "xml/dom/minidom.py",
        "xml/etree/ElementTree.py",
        "zoneinfo/_zoneinfo.py",
    )
]
HELDOUT_PACKAGE_DOCS = (
    "ruff",
    "pydantic",
    "pathspec",
    "annotated-types",
    "markdown-it-py",
    "pluggy",
    "shellingham",
    "packaging",
)

# --corpus-set name: (stdlib files, package descriptions, default query file).
CORPUS_SETS: dict[str, tuple[list[tuple[str, tuple[str, ...]]], tuple[str, ...], Path]] = {
    "main": (STDLIB_FILES, PACKAGE_DOCS, DEFAULT_QUERIES),
    "heldout": (HELDOUT_STDLIB_FILES, HELDOUT_PACKAGE_DOCS, HELDOUT_QUERIES),
}

ENGINES = ("ours", "upstream")


# --------------------------------------------------------------------------- corpus


@dataclass(frozen=True)
class CorpusFile:
    label: str  # relative path inside the corpus dir, also the source label
    path: Path  # absolute path of the copy
    bytes: int
    origin: str  # where it came from ("stdlib:json/decoder.py", "dist:rich 14.0.0")


def build_corpus(
    root: Path,
    stdlib_files: list[tuple[str, tuple[str, ...]]] = STDLIB_FILES,
    package_docs: tuple[str, ...] = PACKAGE_DOCS,
) -> tuple[list[CorpusFile], list[str]]:
    """Copy the fixed file lists into `root`; (files, notes about anything skipped)."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    files: list[CorpusFile] = []
    notes: list[str] = []
    for label, alternatives in stdlib_files:
        found = next((stdlib / alt for alt in alternatives if (stdlib / alt).is_file()), None)
        if found is None:
            notes.append(f"stdlib file missing: {label}")
            continue
        dest = root / "stdlib" / label
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(found, dest)
        origin = f"stdlib:{found.relative_to(stdlib).as_posix()}"
        files.append(CorpusFile(f"stdlib/{label}", dest, dest.stat().st_size, origin))
    for name in package_docs:
        try:
            meta = importlib.metadata.metadata(name)
        except importlib.metadata.PackageNotFoundError:
            notes.append(f"package not installed, description skipped: {name}")
            continue
        body = meta.get_payload() or meta.get("Description") or ""  # type: ignore[attr-defined]
        if not body.strip():
            notes.append(f"package has no long description, skipped: {name}")
            continue
        kind = (meta.get("Description-Content-Type") or "").lower()
        ext = ".rst" if "rst" in kind else ".md"
        dest = root / "pkgdocs" / f"{name}{ext}"
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(body if body.endswith("\n") else body + "\n", encoding="utf-8")
        origin = f"dist:{name} {meta['Version']}"
        files.append(CorpusFile(f"pkgdocs/{name}{ext}", dest, dest.stat().st_size, origin))
    return files, notes


# --------------------------------------------------------------------------- queries


@dataclass(frozen=True)
class Query:
    id: str
    category: str
    text: str
    file: str
    titles: tuple[str, ...] = ()
    evidence: str | None = None


def load_queries(path: Path) -> list[Query]:
    data = json.loads(path.read_text(encoding="utf-8"))
    out: list[Query] = []
    for item in data["queries"]:
        title = item.get("title") or ()
        titles = (title,) if isinstance(title, str) else tuple(title)
        out.append(
            Query(
                item["id"],
                item["category"],
                item["query"],
                item["file"],
                titles,
                item.get("evidence"),
            )
        )
    ids = [q.id for q in out]
    if len(set(ids)) != len(ids):
        raise SystemExit(f"{path}: duplicate query ids")
    return out


def source_matches(source: str, file: str) -> bool:
    return source == file or source.endswith("/" + file)


def title_matches(title: str, wanted: tuple[str, ...]) -> bool:
    """Any wanted name occurs in `title` with no identifier character touching it."""
    return any(re.search(rf"(?<!\w){re.escape(w)}(?!\w)", title) for w in wanted)


JUDGES = ("strict", "shown", "file")


def definition_shown(snippet: str, wanted: tuple[str, ...]) -> bool:
    """The snippet shows the line defining one of the wanted names (``def x`` / ``class x``)."""
    return any(
        re.search(rf"^\W*(?:async\s+)?(?:def|class)\s+{re.escape(w)}(?!\w)", snippet, re.M)
        for w in wanted
    )


def is_correct(hit: tuple[str, ...], q: Query, judge: str) -> bool:
    """Judge one hit (source, title[, snippet]); see JUDGES and the module docstring."""
    source, title = hit[0], hit[1]
    if not source_matches(source, q.file):
        return False
    if judge == "file" or not q.titles:
        return True
    if title_matches(title, q.titles):
        return True
    return judge == "shown" and len(hit) > 2 and definition_shown(hit[2], q.titles)


def first_correct_rank(ranked: list[tuple[str, ...]], q: Query, judge: str) -> int | None:
    """1-based rank of the first correct hit, or None."""
    for i, hit in enumerate(ranked, 1):
        if is_correct(hit, q, judge):
            return i
    return None


def _python_names(text: str) -> set[str]:
    import ast

    try:
        tree = ast.parse(text)
    except SyntaxError:  # newer syntax than this interpreter; fall back to a regex
        return set(re.findall(r"^\s*(?:async\s+)?(?:def|class)\s+(\w+)", text, re.M))
    kinds = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    return {n.name for n in ast.walk(tree) if isinstance(n, kinds)}


def verify(files: list[CorpusFile], queries: list[Query]) -> int:
    """Check every query against the corpus; print problems; return their count."""
    by_label = {f.label: f for f in files}
    texts = {f.label: f.path.read_text(encoding="utf-8", errors="replace") for f in files}
    problems = 0
    for q in queries:
        issues: list[str] = []
        f = by_label.get(q.file)
        if f is None:
            print(f"skip   {q.id}: {q.file} is not in this corpus")
            continue
        text = texts[q.file]
        if q.evidence and q.evidence not in text:
            issues.append(f"evidence {q.evidence!r} not in {q.file}")
        if q.titles:
            if q.file.endswith(".py"):
                names = _python_names(text)
                if not any(t in names for t in q.titles):
                    issues.append(f"no def/class named {' or '.join(q.titles)} in {q.file}")
            elif not any(re.search(rf"^#+ .*{re.escape(t)}", text, re.M) for t in q.titles):
                issues.append(f"no heading with {' or '.join(q.titles)} in {q.file}")
        if q.evidence:
            others = [lb for lb, t in texts.items() if lb != q.file and q.evidence in t]
            if others:
                print(f"note   {q.id}: evidence also in {', '.join(others)}")
        problems += bool(issues)
        for issue in issues:
            print(f"FAIL   {q.id}: {issue}")
    print(f"verify: {len(queries)} queries, {problems} with problems")
    return problems


# --------------------------------------------------------------------------- engines


def format_hits(hits: list[list[str]]) -> str:
    """What an agent reads for (source, title, snippet) hits, in upstream's ctx_search layout."""
    return "".join(f"--- [{s}] ---\n### {t}\n\n{snip}\n\n" for s, t, snip in hits)


def run_ours(files: list[CorpusFile], queries: list[Query], workdir: Path) -> dict:
    """Index the corpus into a fresh ContentStore and run every query (limit 10 and limit 2)."""
    sys.path.insert(0, str(REPO))
    import ctxmode
    from ctxmode.store import ContentStore

    db_path = workdir / "ours.db"
    results = []
    with ContentStore(db_path) as store:
        t0 = time.perf_counter()
        chunks = 0
        for f in files:
            chunks += store.index_file(f.path, label=f.label).chunks
        index_s = time.perf_counter() - t0
        for q in queries:
            t1 = time.perf_counter()
            res = store.search(q.text, limit=10)
            ms = (time.perf_counter() - t1) * 1000
            top2 = store.search(q.text, limit=2)
            shown = [[h.source, h.title, h.snippet] for h in top2.hits]
            results.append(
                {
                    "id": q.id,
                    "ms": round(ms, 2),
                    "ranked": [[h.source, h.title, h.snippet] for h in res.hits],
                    "layers": [h.layer for h in res.hits],
                    "top2": shown,
                    "bytes": len(format_hits(shown).encode("utf-8")),
                    "corrections": res.corrections,
                }
            )
    return {
        "engine": "ours",
        "version": getattr(ctxmode, "__version__", None),
        "git": _git_state(),
        "index": {"files": len(files), "chunks": chunks, "seconds": round(index_s, 2)},
        "bytes_definition": "UTF-8 bytes of the limit=2 hits formatted as "
        "'--- [<source>] ---\\n### <title>\\n\\n<snippet>\\n\\n'",
        "results": results,
    }


def _git_state() -> dict | None:
    """Commit and dirtiness of the ctxmode checkout the 'ours' numbers come from."""
    try:
        head = subprocess.run(
            ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(REPO), "status", "--porcelain", "--", "ctxmode"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None
    return {"commit": head, "ctxmode_dirty": bool(dirty)}


def run_upstream(
    corpus_dir: Path, queries: list[Query], workdir: Path, python: str, peer: Path, keep: bool
) -> dict:
    """Run upstream_search.py under the bench venv's Python and load its JSON."""
    qfile = workdir / "upstream-queries.json"
    qfile.write_text(
        json.dumps({"queries": [{"id": q.id, "query": q.text} for q in queries]}, indent=1),
        encoding="utf-8",
    )
    out = workdir / "upstream-results.json"
    cmd = [
        python,
        str(UPSTREAM_RUNNER),
        "--peer-cmd",
        f"{peer} server",
        "--corpus-dir",
        str(corpus_dir),
        "--queries",
        str(qfile),
        "--out",
        str(out),
    ]
    if keep:
        cmd += ["--state-dir", str(workdir / "upstream-state")]
    print(f"[eval] upstream: {' '.join(cmd)}", file=sys.stderr, flush=True)
    subprocess.run(cmd, check=True)
    return json.loads(out.read_text(encoding="utf-8"))


# --------------------------------------------------------------------------- scoring


@dataclass
class Scored:
    engine: str
    rows: list[dict] = field(default_factory=list)  # one per query

    def metric(self, key: str, rows: list[dict] | None = None) -> float | None:
        rows = self.rows if rows is None else rows
        vals = [r[key] for r in rows if r.get(key) is not None]
        return round(sum(vals) / len(vals), 3) if vals else None


def _rr(rank: int | None, cutoff: int) -> float:
    return 1.0 / rank if rank is not None and rank <= cutoff else 0.0


def score(engine: str, queries: list[Query], results: list[dict], two_key: str) -> Scored:
    """Per-query ranks and metrics. `two_key` names the list an agent sees at limit 2."""
    by_id = {r["id"]: r for r in results}
    scored = Scored(engine)
    for q in queries:
        r = by_id.get(q.id)
        if r is None:
            continue
        ranked = [tuple(x) for x in r["ranked"]][:10]
        two = [tuple(x) for x in r[two_key]][:2]
        row: dict = {"id": q.id, "category": q.category, "query": q.text, "error": r.get("error")}
        for judge in JUDGES:
            rank = first_correct_rank(ranked, q, judge)
            rank2 = first_correct_rank(two, q, judge)
            row[f"rank_{judge}"] = rank
            row[f"hit1_{judge}"] = float(rank == 1)
            row[f"hit2_{judge}"] = float(rank2 is not None)
            row[f"mrr10_{judge}"] = _rr(rank, 10)
            row[f"mrr2_{judge}"] = _rr(rank2, 2)
        row["top1"] = list(ranked[0][:2]) if ranked else None
        row["returned"] = [list(x[:2]) for x in ranked]
        row["bytes"] = r["bytes"]
        row["hits_bytes"] = r.get("hits_bytes", r["bytes"])
        scored.rows.append(row)
    return scored


def summary(s: Scored) -> dict:
    out: dict = {
        "queries": len(s.rows),
        "mean_bytes_per_query": s.metric("bytes"),
        "mean_hit_bytes_per_query": s.metric("hits_bytes"),
    }
    for judge in JUDGES:
        out[judge] = {m: s.metric(f"{m}_{judge}") for m in ("hit1", "hit2", "mrr10", "mrr2")}
    cats: dict = {}
    for cat in sorted({r["category"] for r in s.rows}):
        rows = [r for r in s.rows if r["category"] == cat]
        cats[cat] = {"n": len(rows), **{f"hit1_{j}": s.metric(f"hit1_{j}", rows) for j in JUDGES}}
    out["by_category"] = cats
    return out


def _fmt(x: float | None, width: int = 7) -> str:
    return f"{'-' if x is None else f'{x:.3f}':>{width}}"


# Which judgement each engine's rank-1 miss list uses: upstream chunks .py files as markdown
# (titles come from `#` comments), so for it only the file-level misses say much.
MISS_JUDGE = {"ours": "strict", "upstream": "file"}


def print_report(scored: list[Scored], queries: list[Query]) -> None:
    sums = {s.engine: summary(s) for s in scored}
    print()
    print("Retrieval quality, by judgement:")
    print("  strict = expected file, and the chunk title names the expected definition/heading")
    print("  shown  = expected file, and the title names it or the snippet shows its def line")
    print("  file   = expected file only")
    head = f"  {'engine':<10}{'judge':<8}{'hit@1':>7}{'hit@2':>7}{'MRR@10':>8}{'MRR@2':>7}"
    print(head + f"{'bytes/q':>9}{'n':>5}")
    for s in scored:
        sm = sums[s.engine]
        for judge in JUDGES:
            m = sm[judge]
            print(
                f"  {s.engine:<10}{judge:<8}{_fmt(m['hit1'])}{_fmt(m['hit2'])}"
                f"{_fmt(m['mrr10'], 8)}{_fmt(m['mrr2'])}"
                f"{sm['mean_bytes_per_query'] or 0:>9.0f}{sm['queries']:>5}"
            )
    print(
        "  hit@2, MRR@2 and bytes/q are over what an agent sees at limit 2 (ours: a limit=2"
        " search;\n  upstream: its 2-result cap). MRR@10 is over ours' top 10; upstream returns"
        " at most 2\n  results, so its MRR@10 is really MRR@2. bytes/q: ours = the 2 hits in"
        " upstream's layout,\n  upstream = its whole ctx_search reply (headers and throttle"
        " notice included)."
    )
    for s in scored:
        sm = sums[s.engine]
        if sm["mean_hit_bytes_per_query"] != sm["mean_bytes_per_query"]:
            print(
                f"  {s.engine}: {sm['mean_hit_bytes_per_query']:.0f} bytes/q counting only its hits"
                " in ours' layout."
            )
    print()
    print("hit@1 by category (" + " / ".join(JUDGES) + ")")
    print(f"  {'category':<12}{'n':>4}" + "".join(f"{s.engine:>22}" for s in scored))
    for cat in sorted({q.category for q in queries}):
        n = max(sums[s.engine]["by_category"].get(cat, {}).get("n", 0) for s in scored)
        cells = []
        for s in scored:
            c = sums[s.engine]["by_category"].get(cat)
            cell = " / ".join(f"{c[f'hit1_{j}']:.2f}" for j in JUDGES) if c else "-"
            cells.append(f"{cell:>22}")
        print(f"  {cat:<12}{n:>4}" + "".join(cells))
    by_id = {q.id: q for q in queries}
    for s in scored:
        judge = MISS_JUDGE.get(s.engine, "strict")
        misses = [r for r in s.rows if r[f"rank_{judge}"] != 1]
        print()
        print(f"{s.engine}: {len(misses)} queries not answered at rank 1 ({judge})")
        for r in misses:
            q = by_id[r["id"]]
            want = q.file + (f" [{' | '.join(q.titles)}]" if q.titles else "")
            got = f"{r['top1'][0]} [{r['top1'][1]}]" if r["top1"] else "(no results)"
            rank = r[f"rank_{judge}"]
            where = f"correct at rank {rank}" if rank else "correct not returned"
            if rank is None and r["rank_file"]:
                where += f"; file at rank {r['rank_file']}"
            if r.get("error"):
                where += f"; error: {r['error']}"
            print(f"  {r['id']:<9} {q.text!r}")
            print(f"            want {want}")
            print(f"            got  {got}  ({where})")


# --------------------------------------------------------------------------- main


def _bench_home() -> Path:
    env = os.environ.get("CTXMODE_BENCH_HOME")
    if env:
        return Path(env)
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "ctxmode-bench"


def _default_peer() -> Path | None:
    env = os.environ.get("CTXMODE_BENCH_PEER")
    if env:
        return Path(env)
    guess = REPO.parent / "shared" / "bench" / "peer.sh"
    return guess if guess.exists() else None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description="Retrieval quality of ctxmode's knowledge base vs upstream context-mode.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument(
        "--corpus-set",
        choices=tuple(CORPUS_SETS),
        default="main",
        help="main: the corpus ranking is tuned on; heldout: a disjoint one to check that the"
        " tuning generalises (default main)",
    )
    ap.add_argument(
        "--queries",
        type=Path,
        help="judged query set (default: retrieval_queries.json, or"
        " retrieval_queries_heldout.json with --corpus-set heldout)",
    )
    ap.add_argument("--corpus-dir", type=Path, help="build and keep the corpus here")
    ap.add_argument(
        "--engines", default="ours,upstream", help="comma-separated: ours, upstream (default both)"
    )
    ap.add_argument(
        "--upstream-python",
        default=str(_bench_home() / "venv" / "bin" / "python"),
        help="Python with `mcp` for upstream_search.py (default: the bench harness venv)",
    )
    ap.add_argument(
        "--peer",
        type=Path,
        default=_default_peer(),
        help="the bench harness's peer.sh (default $CTXMODE_BENCH_PEER or ../shared/bench)",
    )
    ap.add_argument("--upstream-results", type=Path, help="reuse a saved upstream_search.py JSON")
    ap.add_argument("--out", type=Path, help="write the full results as JSON here")
    ap.add_argument("--keep-work", action="store_true", help="keep the scratch dir (DBs, state)")
    ap.add_argument("--verify", action="store_true", help="only check the queries, then exit")
    a = ap.parse_args(argv)

    engines = [e.strip() for e in a.engines.split(",") if e.strip()]
    unknown = set(engines) - set(ENGINES)
    if unknown:
        ap.error(f"unknown engine(s): {', '.join(sorted(unknown))}")
    set_stdlib, set_packages, set_queries = CORPUS_SETS[a.corpus_set]
    if a.queries is None:
        a.queries = set_queries
    all_queries = load_queries(a.queries)

    work = Path(tempfile.mkdtemp(prefix="ctxmode-retrieval-"))
    corpus_dir = a.corpus_dir.resolve() if a.corpus_dir else work / "corpus"
    if corpus_dir.exists() and any(corpus_dir.iterdir()):
        # Always rebuilt (the copy must match this interpreter), but only ever delete what
        # looks like an earlier corpus.
        if {p.name for p in corpus_dir.iterdir()} - {"stdlib", "pkgdocs"}:
            ap.error(f"--corpus-dir {corpus_dir} is not empty and not a corpus from this script")
        shutil.rmtree(corpus_dir)
    try:
        files, notes = build_corpus(corpus_dir, set_stdlib, set_packages)
        for note in notes:
            print(f"[eval] {note}", file=sys.stderr)
        print(
            f"[eval] corpus: {len(files)} files, {sum(f.bytes for f in files):,} bytes"
            f" in {corpus_dir}" + ("" if a.corpus_set == "main" else f" ({a.corpus_set} set)"),
            file=sys.stderr,
        )
        if a.verify:
            return 1 if verify(files, all_queries) else 0
        labels = {f.label for f in files}
        queries = [q for q in all_queries if q.file in labels]
        skipped = [q.id for q in all_queries if q.file not in labels]
        if skipped:
            print(f"[eval] skipped (file not in corpus): {', '.join(skipped)}", file=sys.stderr)

        raw: dict[str, dict] = {}
        scored: list[Scored] = []
        if "ours" in engines:
            raw["ours"] = run_ours(files, queries, work)
            git = raw["ours"]["git"] or {}
            print(
                f"[eval] ours: ctxmode {raw['ours']['version']} at {git.get('commit', '?')}"
                + (" + uncommitted ctxmode changes" if git.get("ctxmode_dirty") else ""),
                file=sys.stderr,
            )
            scored.append(score("ours", queries, raw["ours"]["results"], "top2"))
        if "upstream" in engines:
            if a.upstream_results:
                raw["upstream"] = json.loads(a.upstream_results.read_text(encoding="utf-8"))
            else:
                if a.peer is None or not Path(a.peer).exists():
                    ap.error("upstream needs --peer (the bench harness's peer.sh)")
                raw["upstream"] = run_upstream(
                    corpus_dir,
                    queries,
                    work,
                    a.upstream_python,
                    Path(a.peer).resolve(),
                    a.keep_work,
                )
            scored.append(score("upstream", queries, raw["upstream"]["results"], "ranked"))
        print_report(scored, queries)

        if a.out:
            report = {
                "python": sys.version.split()[0],
                "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                "corpus": {
                    **({} if a.corpus_set == "main" else {"set": a.corpus_set}),
                    "files": [
                        {"label": f.label, "bytes": f.bytes, "origin": f.origin} for f in files
                    ],
                    "bytes": sum(f.bytes for f in files),
                    "notes": notes,
                },
                "queries": {"file": a.queries.name, "used": len(queries), "skipped": skipped},
                "judging": {
                    "strict": "source ends with the expected file and the title contains an "
                    "expected name as a whole word",
                    "shown": "strict, or the expected file and the snippet shows a "
                    "'def <name>' / 'class <name>' line",
                    "file": "source ends with the expected file",
                    "upstream_cap": "upstream ctx_search returns at most 2 results per query; "
                    "its MRR@10 is therefore MRR@2",
                },
                "summary": {s.engine: summary(s) for s in scored},
                "per_query": {s.engine: s.rows for s in scored},
                "engines": {
                    name: {k: v for k, v in r.items() if k != "results"} for name, r in raw.items()
                },
            }
            a.out.write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n", "utf-8")
            print(f"\n[eval] wrote {a.out}", file=sys.stderr)
        return 0
    finally:
        if a.keep_work:
            print(f"[eval] kept scratch dir {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
