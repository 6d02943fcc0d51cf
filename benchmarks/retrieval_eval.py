#!/usr/bin/env python3
"""Retrieval-quality evaluation of the knowledge base: ctxmode against upstream context-mode.

What it measures
    A fixed corpus of real text nobody on the team wrote (Python standard-library sources,
    installed packages' long descriptions and, for the natural-language sets, a few installed
    packages' own sources) is indexed, then a set of judged queries is run against it. Each
    query names the corpus file that answers it and ``answer``: one or more short substrings
    of the line that answers it (a definition line, the line raising an error message, the
    sentence of a docstring or README that says what the user asked).

    Query kinds: ``keyword`` (exact words of the text; category ``exact`` in the files),
    ``identifier``, ``fragment`` (an identifier's prefix), ``typo``, ``error`` (a pasted error
    message) and ``nl`` (a question in a user's words; category ``paraphrase`` in the main and
    held-out files, kind ``nl`` in the natural-language files).

    Judgements
      answer  (the headline) the hit's source is the expected file AND the text the agent
              sees for that hit contains one of the query's answer substrings (whitespace
              runs compared as one space). The text seen is rendered by ctx_search's own
              renderer (``ctxmode.server.render.render_search``) one hit at a time, without
              the ``## <query>`` line the agent wrote itself: ``--- [<source>:<lines>] ---``,
              ``### <title>``, a blank line and the snippet. A right file with the answering
              line elided from the snippet is a miss: the agent did not see the answer.
      strict  the hit's source ends with the expected file AND its title contains an expected
              name as a whole word (when the query gives ``title``);
      shown   strict, or the expected file with a snippet that shows the ``def <name>`` /
              ``class <name>`` line;
      file    only the file has to match.
      chunk   the expected file AND the hit's whole chunk (not only its excerpt) contains an
              answer substring: ``answer`` with perfect excerpts, the ceiling that ranking
              leaves (ours only; for upstream it is ``answer``).
    ``strict``, ``shown`` and ``file`` are the judgements of earlier runs, kept so figures
    stay comparable over time; ``answer`` is the one to read, ``chunk`` minus ``answer`` is
    what excerpts lose.

    Per judgement: hit@1 and MRR@10 over a limit-10 search, hit@2 over what ctx_search shows
    at its default limit (2 hits for the first calls of a window: ``DEFAULT_SEARCH_LIMIT`` 3
    capped at 2), and, for ``answer``, bytes per hit (a hit as rendered, at the default
    limit) and bytes per answer (the UTF-8 bytes of every default-limit reply, ``## <query>``
    line included, divided by the number of queries whose answer those replies showed).

Query sets (``--corpus-set``)
    main        ``retrieval_queries.json`` over the main corpus: ranking is tuned on it.
    heldout     ``retrieval_queries_heldout.json`` over a disjoint corpus (other stdlib files,
                other packages' descriptions): checks that tuning on main generalises.
    nl          ``retrieval_queries_nl.json``: natural-language questions (the tuning half).
    nl_heldout  ``retrieval_queries_nl_heldout.json``: the other half, NEVER to be tuned on.
    all         the four above, one after the other, then one table of all of them.
    ``nl`` and ``nl_heldout`` share one corpus: the main corpus plus a few more packages'
    descriptions and the sources listed in ``NL_PACKAGE_SOURCES``. Their questions were written
    before any engine was run on it, in other words than the answering text, and split into the
    two halves at random (``NL_SPLIT_SEED``; ``--verify`` checks the split). No file of the
    held-out corpus is in it.

Engines
    ours      ``ctxmode.store.ContentStore`` in process: ``index_file`` per corpus file, then
              ``search(query, limit=10)`` for the ranks and ``search(query, limit=2)`` for
              what ctx_search shows by default, rendered by ``render_search``.
    upstream  the context-mode MCP server (``peer.sh server`` from the bench harness), driven by
              ``upstream_search.py`` under the harness venv's Python (it needs ``mcp``). Upstream
              caps ctx_search at 2 results per query, so its MRR@10 is really MRR@2. A hit's
              shown text is rebuilt from its reply as ``--- [<source>] ---\\n### <title>\\n\\n
              <snippet>``; its bytes per answer count the whole reply text.

Corpus
    Copied into ``--corpus-dir`` (default: a temporary directory, removed afterwards) with
    stable names: ``stdlib/json/decoder.py``, ``stdlib/zipfile.py`` (whether the interpreter has
    ``zipfile.py`` or ``zipfile/__init__.py``), ``pkgdocs/rich.md`` (``.rst`` for packages whose
    description is reStructuredText), ``pkgsrc/rich/progress.py`` (a file of an installed
    package, by import name). Every stdlib file exists in Python 3.10 to 3.13; package files
    that are not installed are skipped, and so are the queries that need them, and so is a
    query none of whose answers is in the installed version of its file.

Run (from the repository root)::

    .venv/bin/python benchmarks/retrieval_eval.py --engines ours
    .venv/bin/python benchmarks/retrieval_eval.py --corpus-set all --engines ours
    .venv/bin/python benchmarks/retrieval_eval.py --corpus-set nl \\
        --upstream-python "$CTXMODE_BENCH_HOME/venv/bin/python" \\
        --peer ../shared/bench/peer.sh --out retrieval-results.json
    .venv/bin/python benchmarks/retrieval_eval.py --corpus-set all --verify

``--peer`` defaults to ``$CTXMODE_BENCH_PEER`` or ``../shared/bench/peer.sh`` next to the
repository; ``--upstream-python`` defaults to ``$CTXMODE_BENCH_HOME/venv/bin/python`` (with
the harness's default for ``CTXMODE_BENCH_HOME``). ``--verify`` only checks the query sets
against their corpus (expected file present, every answer and evidence text in it, a
definition or heading with the expected title, the natural-language split) and exits.
``--corpus-dir`` (one set only) is rebuilt on every run.

The upstream server runs with a private HOME/TMPDIR/project dir but no network sandbox (it
tries an npm registry update check at start; that does not affect search results). Upstream
numbers are deterministic for a given corpus; ours depend on the ctxmode checkout, whose git
commit (and whether ``ctxmode/`` had uncommitted changes) is recorded in the JSON.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import json
import os
import random
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
NL_QUERIES = HERE / "retrieval_queries_nl.json"
NL_HELDOUT_QUERIES = HERE / "retrieval_queries_nl_heldout.json"
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


# The natural-language corpus (``--corpus-set nl`` / ``nl_heldout``): the main corpus plus more
# packages' descriptions and some installed packages' own sources, by import name and path in
# the package (copied as ``pkgsrc/<import name>/<path>``). Nothing of the held-out corpus.
NL_PACKAGE_DOCS = (
    "anyio",
    "click",
    "starlette",
    "httpx2",
    "uvicorn",
    "sse-starlette",
    "truststore",
    "markdownify",
    "mcp",
    "attrs",
)
NL_PACKAGE_SOURCES: tuple[tuple[str, str], ...] = tuple(
    (pkg, path)
    for pkg, paths in (
        ("rich", "progress.py console.py logging.py traceback.py prompt.py live.py"),
        ("click", "core.py termui.py testing.py utils.py"),
        ("anyio", "to_thread.py _core/_fileio.py _core/_tasks.py _core/_synchronization.py"),
        (
            "starlette",
            "staticfiles.py responses.py background.py middleware/cors.py middleware/gzip.py"
            " middleware/sessions.py middleware/trustedhost.py middleware/httpsredirect.py",
        ),
        ("httpx2", "_config.py _client.py _auth.py"),
        ("pydantic", "config.py fields.py"),
        ("psutil", "__init__.py"),
        ("platformdirs", "api.py"),
        ("uvicorn", "main.py config.py"),
    )
    for path in paths.split()
)
# The natural-language questions were split into a tuning half and a held-out half by
# shuffling their ids (sorted) with this seed; the first half (rounded up) is the tuning one.
NL_SPLIT_SEED = 20260611


@dataclass(frozen=True)
class CorpusSpec:
    stdlib: list[tuple[str, tuple[str, ...]]]
    package_docs: tuple[str, ...]
    package_sources: tuple[tuple[str, str], ...] = ()


CORPORA: dict[str, CorpusSpec] = {
    "main": CorpusSpec(STDLIB_FILES, PACKAGE_DOCS),
    "heldout": CorpusSpec(HELDOUT_STDLIB_FILES, HELDOUT_PACKAGE_DOCS),
    "nl": CorpusSpec(STDLIB_FILES, PACKAGE_DOCS + NL_PACKAGE_DOCS, NL_PACKAGE_SOURCES),
}
# --corpus-set name: (corpus, default query file).
QUERY_SETS: dict[str, tuple[str, Path]] = {
    "main": ("main", DEFAULT_QUERIES),
    "heldout": ("heldout", HELDOUT_QUERIES),
    "nl": ("nl", NL_QUERIES),
    "nl_heldout": ("nl", NL_HELDOUT_QUERIES),
}

ENGINES = ("ours", "upstream")
# What ctx_search shows by default: DEFAULT_SEARCH_LIMIT (3) capped at 2 per query for the
# first calls of a window (ctxmode.server.tools.ctx_search); upstream has the same cap.
AGENT_LIMIT = 2
# Sets never tuned on: their per-query results are not printed (the --out JSON keeps them).
HELD_OUT_SETS = frozenset({"heldout", "nl_heldout"})


# --------------------------------------------------------------------------- corpus


@dataclass(frozen=True)
class CorpusFile:
    label: str  # relative path inside the corpus dir, also the source label
    path: Path  # absolute path of the copy
    bytes: int
    origin: str  # where it came from ("stdlib:json/decoder.py", "dist:rich 14.0.0")


def _package_dir(name: str) -> Path | None:
    """The directory of an installed top-level package, found without importing it."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    locations = list(spec.submodule_search_locations or []) if spec else []
    return Path(locations[0]) if locations else None


def _package_version(name: str) -> str:
    dists = importlib.metadata.packages_distributions().get(name) or [name]
    try:
        return f"{dists[0]} {importlib.metadata.version(dists[0])}"
    except importlib.metadata.PackageNotFoundError:
        return name


def build_corpus(root: Path, spec: CorpusSpec) -> tuple[list[CorpusFile], list[str]]:
    """Copy the spec's files into `root`; (files, notes about anything skipped)."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    files: list[CorpusFile] = []
    notes: list[str] = []

    def add(label: str, dest: Path, origin: str) -> None:
        files.append(CorpusFile(label, dest, dest.stat().st_size, origin))

    for label, alternatives in spec.stdlib:
        found = next((stdlib / alt for alt in alternatives if (stdlib / alt).is_file()), None)
        if found is None:
            notes.append(f"stdlib file missing: {label}")
            continue
        dest = root / "stdlib" / label
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(found, dest)
        add(f"stdlib/{label}", dest, f"stdlib:{found.relative_to(stdlib).as_posix()}")
    for name in spec.package_docs:
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
        add(f"pkgdocs/{name}{ext}", dest, f"dist:{name} {meta['Version']}")
    versions: dict[str, str] = {}
    for package, rel in spec.package_sources:
        base = _package_dir(package)
        if base is None or not (base / rel).is_file():
            notes.append(f"package file not installed, skipped: {package}/{rel}")
            continue
        if package not in versions:
            versions[package] = _package_version(package)
        dest = root / "pkgsrc" / package / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(base / rel, dest)
        add(f"pkgsrc/{package}/{rel}", dest, f"dist:{versions[package]}:{rel}")
    return files, notes


# --------------------------------------------------------------------------- queries

# Query kinds, in report order, by the category names the query files use.
KIND_OF = {
    "exact": "keyword",
    "keyword": "keyword",
    "identifier": "identifier",
    "fragment": "fragment",
    "typo": "typo",
    "error": "error",
    "paraphrase": "nl",
    "nl": "nl",
}
KINDS = ("keyword", "identifier", "fragment", "typo", "error", "nl")


@dataclass(frozen=True)
class Query:
    id: str
    category: str
    text: str
    file: str
    titles: tuple[str, ...] = ()
    evidence: str | None = None
    answers: tuple[str, ...] = ()

    @property
    def kind(self) -> str:
        return KIND_OF.get(self.category, self.category)


def _strings(value: object) -> tuple[str, ...]:
    if not value:
        return ()
    return (value,) if isinstance(value, str) else tuple(value)  # type: ignore[arg-type]


def load_queries(path: Path) -> list[Query]:
    data = json.loads(path.read_text(encoding="utf-8"))
    out = [
        Query(
            item["id"],
            item.get("category") or item["kind"],
            item["query"],
            item["file"],
            _strings(item.get("title")),
            item.get("evidence"),
            _strings(item.get("answer")),
        )
        for item in data["queries"]
    ]
    ids = [q.id for q in out]
    if len(set(ids)) != len(ids):
        raise SystemExit(f"{path}: duplicate query ids")
    return out


def source_matches(source: str, file: str) -> bool:
    return source == file or source.endswith("/" + file)


def title_matches(title: str, wanted: tuple[str, ...]) -> bool:
    """Any wanted name occurs in `title` with no identifier character touching it."""
    return any(re.search(rf"(?<!\w){re.escape(w)}(?!\w)", title) for w in wanted)


JUDGES = ("answer", "strict", "shown", "file", "chunk")


def squash(text: str) -> str:
    """Whitespace runs as one space: an answer is matched across re-indented lines."""
    return " ".join(text.split())


def answer_shown(shown: str, answers: tuple[str, ...]) -> bool:
    """The text an agent sees for a hit contains one of the answers."""
    seen = squash(shown)
    return any(squash(a) in seen for a in answers)


def definition_shown(snippet: str, wanted: tuple[str, ...]) -> bool:
    """The snippet shows the line defining one of the wanted names (``def x`` / ``class x``)."""
    return any(
        re.search(rf"^\W*(?:async\s+)?(?:def|class)\s+{re.escape(w)}(?!\w)", snippet, re.M)
        for w in wanted
    )


@dataclass(frozen=True)
class Hit:
    source: str
    title: str
    snippet: str
    shown: str  # everything the agent reads for this hit
    chunk: str  # the hit's whole chunk (what the agent reads, for upstream)


def is_correct(hit: Hit, q: Query, judge: str) -> bool:
    """Judge one hit; see JUDGES and the module docstring."""
    if not source_matches(hit.source, q.file):
        return False
    if judge == "answer":
        return answer_shown(hit.shown, q.answers)
    if judge == "chunk":
        return answer_shown(hit.chunk, q.answers)
    if judge == "file" or not q.titles:
        return True
    if title_matches(hit.title, q.titles):
        return True
    return judge == "shown" and definition_shown(hit.snippet, q.titles)


def first_correct_rank(ranked: list[Hit], q: Query, judge: str) -> int | None:
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


def nl_split(ids: list[str], seed: int = NL_SPLIT_SEED) -> tuple[set[str], set[str]]:
    """(tuning ids, held-out ids): the sorted ids shuffled with `seed`, first half tuning."""
    order = sorted(ids)
    random.Random(seed).shuffle(order)
    half = (len(order) + 1) // 2
    return set(order[:half]), set(order[half:])


_WORD = re.compile(r"[a-z0-9]+")
_STOP = set(
    "a an and are as at be by can do does for from get how i in is it its let make my me of"
    " on or so the this to what when where which while with without".split()
)


def shared_words(query: str, line: str) -> float:
    """Share of the query's content words that occur in the answering line."""
    words = {w for w in _WORD.findall(query.lower()) if w not in _STOP}
    return len(words & set(_WORD.findall(line.lower()))) / len(words) if words else 0.0


def _answer_lines(text: str, answer: str) -> str:
    """The line(s) of `text` holding `answer` (whitespace-squashed match)."""
    lines = text.split("\n")
    for width in (1, 2, 3, 4):
        for i in range(len(lines) - width + 1):
            chunk = "\n".join(lines[i : i + width])
            if squash(answer) in squash(chunk):
                return chunk
    return ""


def verify(files: list[CorpusFile], queries: list[Query]) -> int:
    """Check every query against the corpus; print problems; return their count."""
    by_label = {f.label: f for f in files}
    texts = {f.label: f.path.read_text(encoding="utf-8", errors="replace") for f in files}
    squashed = {label: squash(t) for label, t in texts.items()}
    problems = 0
    overlaps: list[tuple[float, str]] = []
    for q in queries:
        issues: list[str] = []
        f = by_label.get(q.file)
        if f is None:
            print(f"skip   {q.id}: {q.file} is not in this corpus")
            continue
        text = texts[q.file]
        if q.evidence and q.evidence not in text:
            issues.append(f"evidence {q.evidence!r} not in {q.file}")
        if not q.answers:
            issues.append("no answer")
        issues += [
            f"answer {answer!r} not in {q.file}"
            for answer in q.answers
            if squash(answer) not in squashed[q.file]
        ]
        if q.category == "nl" and q.answers:  # the first answer is the answering sentence
            overlaps.append((shared_words(q.text, _answer_lines(text, q.answers[0])), q.id))
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
    if overlaps:
        mean = sum(o for o, _ in overlaps) / len(overlaps)
        high = [f"{i} ({o:.2f})" for o, i in sorted(overlaps, reverse=True) if o > 0.5]
        print(
            f"nl: the answering sentence holds {mean:.0%} of a question's content words on average"
            + (f"; over half for {', '.join(high)}" if high else "")
        )
    print(f"verify: {len(queries)} queries, {problems} with problems")
    return problems


def verify_nl_split(tuning: Path = NL_QUERIES, heldout: Path = NL_HELDOUT_QUERIES) -> int:
    """The two natural-language files hold the seeded random split of their ids."""
    a = {q.id for q in load_queries(tuning)}
    b = {q.id for q in load_queries(heldout)}
    want_a, want_b = nl_split(sorted(a | b))
    if a & b:
        print(f"FAIL   nl split: ids in both halves: {', '.join(sorted(a & b))}")
        return 1
    if (a, b) != (want_a, want_b):
        moved = sorted((a - want_a) | (b - want_b))
        print(f"FAIL   nl split: not the seed-{NL_SPLIT_SEED} split; moved: {', '.join(moved)}")
        return 1
    print(f"nl split: {len(a)} tuning + {len(b)} held-out, the seed-{NL_SPLIT_SEED} split")
    return 0


def answerable(files: list[CorpusFile], queries: list[Query]) -> tuple[list[Query], list[str]]:
    """The queries this corpus can judge: their file is in it and (when they give answers)
    one of the answers is in the installed version of that file; (kept, skip notes)."""
    by_label = {f.label: f for f in files}
    kept: list[Query] = []
    notes: list[str] = []
    for q in queries:
        f = by_label.get(q.file)
        if f is None:
            notes.append(f"{q.id} (file not in corpus)")
            continue
        text = squash(f.path.read_text(encoding="utf-8", errors="replace"))
        if q.answers and not any(squash(a) in text for a in q.answers):
            notes.append(f"{q.id} (answer not in this version of {q.file})")
            continue
        kept.append(q)
    return kept, notes


# --------------------------------------------------------------------------- engines


def format_hits(hits: list[list[str]]) -> str:
    """What an agent reads for (source, title, snippet) hits, in upstream's ctx_search layout."""
    return "".join(f"--- [{s}] ---\n### {t}\n\n{snip}\n\n" for s, t, snip in hits)


def run_ours(files: list[CorpusFile], query_sets: dict[str, list[Query]], db_path: Path) -> dict:
    """Index the corpus into a fresh ContentStore once and run every set's queries at limit 10
    and at the default limit; {set name: raw results}."""
    sys.path.insert(0, str(REPO))
    import ctxmode
    from ctxmode.server.render import heading, render_search
    from ctxmode.store import ContentStore, RefreshReport, SearchResult

    def shown(query: str, hit: object) -> str:
        """One hit as ctx_search renders it, without the query's own `## <query>` line."""
        text = render_search([SearchResult(query, [hit], {}, RefreshReport())])  # type: ignore[list-item]
        head = f"## {heading(query)}\n\n"
        return text[len(head) :] if text.startswith(head) else text

    out: dict[str, dict] = {}
    with ContentStore(db_path) as store:

        def chunk(chunk_id: int) -> str:
            row = store.connection.execute(
                "SELECT title, content FROM chunks WHERE id = ?", (chunk_id,)
            ).fetchone()
            return f"{row[0]}\n{row[1]}" if row else ""

        t0 = time.perf_counter()
        chunks = sum(store.index_file(f.path, label=f.label).chunks for f in files)
        index_s = time.perf_counter() - t0
        for name, queries in query_sets.items():
            results = []
            for q in queries:
                t1 = time.perf_counter()
                res = store.search(q.text, limit=10)
                ms = (time.perf_counter() - t1) * 1000
                view = store.search(q.text, limit=AGENT_LIMIT)
                top2 = [[h.source, h.title, h.snippet] for h in view.hits]
                seen = [
                    [*hit, shown(q.text, h), chunk(h.chunk_id)]
                    for hit, h in zip(top2, view.hits, strict=True)
                ]
                results.append(
                    {
                        "id": q.id,
                        "ms": round(ms, 2),
                        "ranked": [
                            [h.source, h.title, h.snippet, shown(q.text, h), chunk(h.chunk_id)]
                            for h in res.hits
                        ],
                        "layers": [h.layer for h in res.hits],
                        "view": seen,
                        "bytes": len(format_hits(top2).encode("utf-8")),
                        "reply_bytes": len(render_search([view]).encode("utf-8")),
                        "corrections": res.corrections,
                    }
                )
            out[name] = {
                "engine": "ours",
                "version": getattr(ctxmode, "__version__", None),
                "git": _git_state(),
                "index": {"files": len(files), "chunks": chunks, "seconds": round(index_s, 2)},
                "bytes_definition": "bytes: the limit=2 hits formatted as '--- [<source>] ---"
                "\\n### <title>\\n\\n<snippet>\\n\\n' (earlier runs' figure); reply_bytes: the "
                "limit=2 reply as ctx_search renders it",
                "results": results,
            }
    return out


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
    workdir.mkdir(parents=True, exist_ok=True)
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


def _hits(rows: list[list[str]]) -> list[Hit]:
    """Hits from raw results: (source, title, snippet[, shown[, chunk]]). Without a rendered
    text (upstream) the shown text is rebuilt in upstream's layout from its parsed reply."""
    hits = []
    for r in rows:
        shown = r[3] if len(r) > 3 else f"--- [{r[0]}] ---\n### {r[1]}\n\n{r[2]}"
        hits.append(Hit(r[0], r[1], r[2], shown, r[4] if len(r) > 4 else shown))
    return hits


def score(engine: str, queries: list[Query], results: list[dict]) -> Scored:
    """Per-query ranks and metrics. A result's `view` is what an agent sees at the default
    limit (upstream: its capped `ranked` list)."""
    by_id = {r["id"]: r for r in results}
    scored = Scored(engine)
    for q in queries:
        r = by_id.get(q.id)
        if r is None:
            continue
        ranked = _hits(r["ranked"])[:10]
        view = _hits(r.get("view", r["ranked"]))[:AGENT_LIMIT]
        row: dict = {
            "id": q.id,
            "kind": q.kind,
            "category": q.category,
            "query": q.text,
            "error": r.get("error"),
        }
        for judge in JUDGES:
            rank = first_correct_rank(ranked, q, judge)
            rank2 = first_correct_rank(view, q, judge)
            row[f"rank_{judge}"] = rank
            row[f"hit1_{judge}"] = float(rank == 1)
            row[f"hit2_{judge}"] = float(rank2 is not None)
            row[f"mrr10_{judge}"] = _rr(rank, 10)
            row[f"mrr2_{judge}"] = _rr(rank2, 2)
        row["top1"] = [ranked[0].source, ranked[0].title] if ranked else None
        row["returned"] = [[h.source, h.title] for h in ranked]
        row["shown"] = [h.shown for h in view]
        row["hit_bytes"] = [len(h.shown.encode("utf-8")) for h in view]
        row["reply_bytes"] = r.get("reply_bytes", r["bytes"])
        row["bytes"] = r["bytes"]
        row["hits_bytes"] = r.get("hits_bytes", r["bytes"])
        scored.rows.append(row)
    return scored


def answer_summary(rows: list[dict]) -> dict:
    """The headline figures over `rows`: answer-shown hit@1, hit@2 (default limit), MRR@10,
    bytes per hit shown and bytes of replies per query whose reply showed the answer."""
    if not rows:
        return {"n": 0}

    def mean(key: str) -> float:
        return round(sum(r[key] for r in rows) / len(rows), 3)

    sizes = [b for r in rows for b in r["hit_bytes"]]
    answered = sum(r["hit2_answer"] for r in rows)
    return {
        "n": len(rows),
        "hit1": mean("hit1_answer"),
        "hit2": mean("hit2_answer"),
        "mrr10": mean("mrr10_answer"),
        "bytes_per_hit": round(sum(sizes) / len(sizes)) if sizes else None,
        "bytes_per_answer": round(sum(r["reply_bytes"] for r in rows) / answered)
        if answered
        else None,
    }


def summary(s: Scored) -> dict:
    out: dict = {
        "queries": len(s.rows),
        "mean_bytes_per_query": s.metric("bytes"),
        "mean_hit_bytes_per_query": s.metric("hits_bytes"),
        "answer_shown": {
            "all": answer_summary(s.rows),
            "by_kind": {
                k: answer_summary([r for r in s.rows if r["kind"] == k])
                for k in KINDS
                if any(r["kind"] == k for r in s.rows)
            },
        },
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


def _num(x: float | None, width: int) -> str:
    return f"{'-' if x is None else f'{x:.0f}':>{width}}"


ANSWER_HEAD = (
    f"  {'set':<11}{'engine':<10}{'kind':<11}{'n':>4}{'hit@1':>7}{'hit@2':>7}{'MRR@10':>8}"
    f"{'B/hit':>7}{'B/answer':>9}"
)


def answer_lines(set_name: str, sums: dict[str, dict]) -> list[str]:
    """Rows of the headline table for one set: per engine, per kind, then all kinds."""
    lines = []
    for engine, sm in sums.items():
        shown = sm["answer_shown"]
        parts = [*shown["by_kind"].items(), ("all", shown["all"])]
        for kind, m in parts:
            lines.append(
                f"  {set_name:<11}{engine:<10}{kind:<11}{m['n']:>4}{_fmt(m.get('hit1'))}"
                f"{_fmt(m.get('hit2'))}{_fmt(m.get('mrr10'), 8)}"
                f"{_num(m.get('bytes_per_hit'), 7)}{_num(m.get('bytes_per_answer'), 9)}"
            )
    return lines


ANSWER_NOTE = (
    "  answer = expected file, and the text shown for the hit (header, title, snippet as\n"
    "  ctx_search renders them) contains an answer substring. hit@1, MRR@10: limit-10 search;\n"
    f"  hit@2: what ctx_search shows by default ({AGENT_LIMIT} hits). B/hit: mean bytes of one"
    " hit as shown;\n  B/answer: bytes of all default replies / queries whose reply showed"
    " the answer.\n  upstream returns at most 2 hits, so its MRR@10 is MRR@2."
)


def print_report(set_name: str, scored: list[Scored], queries: list[Query]) -> None:
    sums = {s.engine: summary(s) for s in scored}
    print()
    print(f"== {set_name}: answer shown (headline), by kind")
    print(ANSWER_HEAD)
    print("\n".join(answer_lines(set_name, sums)))
    print(ANSWER_NOTE)
    print()
    print(f"{set_name}: all judgements (strict, shown, file: as in earlier runs; chunk: below)")
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
        "  strict = expected file, and the chunk title names the expected definition/heading;"
        "\n  shown = that, or the snippet shows its def line; file = expected file only;"
        "\n  chunk = answer anywhere in the hit's whole chunk (answer with perfect excerpts)."
        "\n  bytes/q: ours = the 2 hits in upstream's layout, upstream = its whole ctx_search"
        " reply."
    )
    print()
    print("hit@1 by category (" + " / ".join(JUDGES) + ")")
    print(f"  {'category':<12}{'n':>4}" + "".join(f"{s.engine:>30}" for s in scored))
    for cat in sorted({q.category for q in queries}):
        n = max(sums[s.engine]["by_category"].get(cat, {}).get("n", 0) for s in scored)
        cells = []
        for s in scored:
            c = sums[s.engine]["by_category"].get(cat)
            cell = " / ".join(f"{c[f'hit1_{j}']:.2f}" for j in JUDGES) if c else "-"
            cells.append(f"{cell:>30}")
        print(f"  {cat:<12}{n:>4}" + "".join(cells))
    if set_name in HELD_OUT_SETS:
        print()
        print(f"{set_name}: per-query misses not listed (a held-out set: never tune on them)")
        return
    by_id = {q.id: q for q in queries}
    for s in scored:
        misses = [r for r in s.rows if r["rank_answer"] != 1]
        print()
        print(f"{set_name} {s.engine}: {len(misses)} queries whose answer is not shown at rank 1")
        for r in misses:
            q = by_id[r["id"]]
            want = f"{q.file} [{' | '.join(q.answers)}]"
            got = f"{r['top1'][0]} [{r['top1'][1]}]" if r["top1"] else "(no results)"
            rank = r["rank_answer"]
            where = f"answer shown at rank {rank}" if rank else "answer not shown in the top 10"
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


def _prepare_dir(corpus_dir: Path) -> None:
    """Always rebuilt (the copy must match this interpreter), but only ever delete what looks
    like an earlier corpus."""
    if corpus_dir.exists() and any(corpus_dir.iterdir()):
        if {p.name for p in corpus_dir.iterdir()} - {"stdlib", "pkgdocs", "pkgsrc"}:
            raise SystemExit(
                f"--corpus-dir {corpus_dir} is not empty and not a corpus from this script"
            )
        shutil.rmtree(corpus_dir)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description="Retrieval quality of ctxmode's knowledge base vs upstream context-mode.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument(
        "--corpus-set",
        choices=(*QUERY_SETS, "all"),
        default="main",
        help="main: the set ranking is tuned on; heldout: a disjoint corpus and set; nl: the"
        " natural-language questions' tuning half; nl_heldout: their held-out half (never"
        " tune on it); all: the four (default main)",
    )
    ap.add_argument(
        "--queries",
        type=Path,
        help="judged query set (default: the --corpus-set's file; one set only)",
    )
    ap.add_argument("--corpus-dir", type=Path, help="build and keep the corpus here (one set)")
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
    ap.add_argument(
        "--upstream-results", type=Path, help="reuse a saved upstream_search.py JSON (one set)"
    )
    ap.add_argument("--out", type=Path, help="write the full results as JSON here")
    ap.add_argument("--keep-work", action="store_true", help="keep the scratch dir (DBs, state)")
    ap.add_argument("--verify", action="store_true", help="only check the queries, then exit")
    a = ap.parse_args(argv)

    engines = [e.strip() for e in a.engines.split(",") if e.strip()]
    unknown = set(engines) - set(ENGINES)
    if unknown:
        ap.error(f"unknown engine(s): {', '.join(sorted(unknown))}")
    set_names = list(QUERY_SETS) if a.corpus_set == "all" else [a.corpus_set]
    if len(set_names) > 1 and (a.queries or a.corpus_dir or a.upstream_results):
        ap.error("--queries, --corpus-dir and --upstream-results take one --corpus-set")
    if "upstream" in engines and not a.upstream_results and not a.verify:
        if a.peer is None or not Path(a.peer).exists():
            ap.error("upstream needs --peer (the bench harness's peer.sh)")
    query_files = {name: a.queries or QUERY_SETS[name][1] for name in set_names}
    corpora: dict[str, list[str]] = {}
    for name in set_names:
        corpora.setdefault(QUERY_SETS[name][0], []).append(name)

    work = Path(tempfile.mkdtemp(prefix="ctxmode-retrieval-"))
    problems = 0
    reports: dict[str, dict] = {}
    headline: list[str] = []
    try:
        for corpus_name, names in corpora.items():
            corpus_dir = a.corpus_dir.resolve() if a.corpus_dir else work / f"corpus-{corpus_name}"
            _prepare_dir(corpus_dir)
            files, notes = build_corpus(corpus_dir, CORPORA[corpus_name])
            for note in notes:
                print(f"[eval] {note}", file=sys.stderr)
            print(
                f"[eval] corpus {corpus_name}: {len(files)} files,"
                f" {sum(f.bytes for f in files):,} bytes in {corpus_dir}",
                file=sys.stderr,
            )
            sets = {name: load_queries(query_files[name]) for name in names}
            if a.verify:
                for name, queries in sets.items():
                    print(f"== {name} ({query_files[name].name})")
                    problems += verify(files, queries)
                continue
            skipped: dict[str, list[str]] = {}
            for name in names:
                sets[name], skipped[name] = answerable(files, sets[name])
                if skipped[name]:
                    print(f"[eval] {name}: skipped {', '.join(skipped[name])}", file=sys.stderr)
            raw: dict[str, dict[str, dict]] = {name: {} for name in names}
            if "ours" in engines:
                ours = run_ours(files, sets, work / f"ours-{corpus_name}.db")
                git = next(iter(ours.values()))["git"] or {}
                print(
                    f"[eval] ours: ctxmode {next(iter(ours.values()))['version']} at"
                    f" {git.get('commit', '?')}"
                    + (" + uncommitted ctxmode changes" if git.get("ctxmode_dirty") else ""),
                    file=sys.stderr,
                )
                for name in names:
                    raw[name]["ours"] = ours[name]
            if "upstream" in engines:
                for name in names:
                    if a.upstream_results:
                        up = json.loads(a.upstream_results.read_text(encoding="utf-8"))
                    else:
                        up = run_upstream(
                            corpus_dir,
                            sets[name],
                            work / f"upstream-{name}",
                            a.upstream_python,
                            Path(a.peer).resolve(),
                            a.keep_work,
                        )
                    raw[name]["upstream"] = up
            for name in names:
                scored = [score(e, sets[name], raw[name][e]["results"]) for e in raw[name]]
                print_report(name, scored, sets[name])
                sums = {s.engine: summary(s) for s in scored}
                headline += answer_lines(name, sums)
                reports[name] = {
                    "queries": {
                        "file": query_files[name].name,
                        "used": len(sets[name]),
                        "skipped": skipped[name],
                    },
                    "corpus": {
                        "name": corpus_name,
                        "files": [
                            {"label": f.label, "bytes": f.bytes, "origin": f.origin} for f in files
                        ],
                        "bytes": sum(f.bytes for f in files),
                        "notes": notes,
                    },
                    "summary": sums,
                    "per_query": {s.engine: s.rows for s in scored},
                    "engines": {
                        e: {k: v for k, v in r.items() if k not in ("results", "text")}
                        for e, r in raw[name].items()
                    },
                }
        if a.verify:
            if any(QUERY_SETS[n][0] == "nl" for n in set_names) and not a.queries:
                problems += verify_nl_split()
            return 1 if problems else 0
        if len(set_names) > 1:
            print()
            print("== answer shown (headline), every set")
            print(ANSWER_HEAD)
            print("\n".join(headline))
            print(ANSWER_NOTE)
        if a.out:
            report = {
                "python": sys.version.split()[0],
                "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                "judging": {
                    "answer": "source ends with the expected file and the hit's text as "
                    "ctx_search renders it (header, title, snippet; not the query line) contains "
                    "an answer substring, whitespace runs squashed (the headline)",
                    "strict": "source ends with the expected file and the title contains an "
                    "expected name as a whole word",
                    "shown": "strict, or the expected file and the snippet shows a "
                    "'def <name>' / 'class <name>' line",
                    "file": "source ends with the expected file",
                    "default_limit": f"{AGENT_LIMIT} hits per query, as ctx_search shows them",
                    "upstream_cap": "upstream ctx_search returns at most 2 results per query; "
                    "its MRR@10 is therefore MRR@2",
                },
                "sets": reports,
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
