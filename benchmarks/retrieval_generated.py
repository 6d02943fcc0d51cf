#!/usr/bin/env python3
"""Generated retrieval sets: thousands of pseudo-queries nobody can tune to one by one.

``retrieval_eval.py`` judges ~200 hand-written questions; a change can fit them and still
show worse passages elsewhere. These sets are made by rule from text nobody here wrote
(installed packages' sources, the READMEs of the npm packages the bench harness installs
and of installed Python packages), so each item stands for its class, not for itself:

``docstring``   a function's or class's docstring summary (its first sentence) finds the
                definition in a copy of the sources with every docstring removed: a
                question in the text's own words, answered by code. Answer: the ``def
                name(`` / ``class name`` line is shown.
``definition``  a definition's name (unique in the corpus, an identifier of two or more
                parts) finds its docstring: the answer is the docstring's first sentence,
                shown, not only the signature.
``section``     a Markdown section's heading (three to twelve words, unique) finds its body:
                the answer is the body's first sentence, shown, not only the heading.
``html``        the same over an HTML documentation site (the Rust and Cargo books that
                ``rustup`` installs; skipped where they are absent).
``changelog``   an entry of a Debian changelog (``/usr/share/doc/*/changelog.Debian.gz``)
                finds its release: the answer is the ``package (version)`` line, shown.
``json``        a name in a JSON document (the ``iso-codes`` package's country, currency
                and script lists) finds its object: the answer is its code, shown.

Every item is judged by ``retrieval_eval``'s own judge (``answer``: the expected file and
the answer text in what the agent is shown, as ctx_search renders it), comparing words only
(case, punctuation and markup ignored: ``*Raw identifiers* are`` shows ``Raw identifiers
are``). Items are split into
two halves by a hash of their id: ``--half tuning`` (default) reports the first, ``--half
held-out`` the other, to be read once, at the end of a round.

Run (from the repository root)::

    .venv/bin/python benchmarks/retrieval_generated.py                  # ours, tuning half
    .venv/bin/python benchmarks/retrieval_generated.py --engines ours,upstream --half both
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import importlib.metadata
import json
import re
import shutil
import sys
import tempfile
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import retrieval_eval as ev  # noqa: E402


def _words(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.lower()))


ev.squash = _words  # the judge compares words: markup and punctuation are not the answer

# Installed packages whose sources make the code corpora (import names); at most
# FILES_PER_PACKAGE of each package's largest modules.
PACKAGES = (
    "click",
    "rich",
    "anyio",
    "httpx2",
    "starlette",
    "jsonschema",
    "markdown_it",
    "packaging",
    "pluggy",
    "platformdirs",
    "psutil",
    "mcp",
    "attr",
    "uvicorn",
    "typer",
    "pathspec",
)
FILES_PER_PACKAGE = 6
PER_FILE = 12  # items per file and set, so no one file dominates
SET_NAMES = ("docstring", "definition", "section", "html", "changelog", "json")
CHANGELOGS = 60  # Debian changelogs, the first by package name
CHANGELOG_BYTES = 48_000  # of each, cut at an entry
JSON_PER_FILE = 60
HTML_BOOKS = ("book", "cargo")  # under rustup's share/doc/rust/html
HTML_FILES = 90
SENTENCE = re.compile(r"^(.+?[.!?])(?:\s|$)", re.S)


def _half(item_id: str) -> str:
    return "tuning" if int(hashlib.sha1(item_id.encode()).hexdigest(), 16) % 2 == 0 else "held-out"


def _first_sentence(text: str) -> str | None:
    paragraph = " ".join(text.strip().split("\n\n", 1)[0].split())
    m = SENTENCE.match(paragraph)
    sentence = (m.group(1) if m else paragraph).strip()
    words = sentence.split()
    if not 5 <= len(words) <= 30 or not re.search(r"[a-z]", sentence):
        return None
    if any(mark in sentence for mark in (">>>", "::", "|", "`")):
        return None
    return sentence


def _sources() -> list[tuple[str, Path]]:
    """(label, path) of the package modules the code sets use."""
    out = []
    for package in PACKAGES:
        base = ev._package_dir(package)
        if base is None:
            continue
        files = sorted(
            (p for p in base.rglob("*.py") if "test" not in p.parts and p.stat().st_size > 4000),
            key=lambda p: -p.stat().st_size,
        )[:FILES_PER_PACKAGE]
        out += [(f"{package}/{p.relative_to(base).as_posix()}", p) for p in files]
    return out


def _definitions(tree: ast.AST) -> list[ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef]:
    kinds = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    return [n for n in ast.walk(tree) if isinstance(n, kinds)]


def _docstring_lines(tree: ast.AST) -> list[tuple[int, int, int]]:
    """(first line, last line, indent) of every docstring, 1-based."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Module)):
            body = node.body
            if (
                body
                and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)
            ):
                expr = body[0]
                out.append((expr.lineno, expr.end_lineno or expr.lineno, expr.col_offset))
    return out


def _strip_docstrings(text: str, tree: ast.AST) -> str:
    lines = text.split("\n")
    for first, last, indent in sorted(_docstring_lines(tree), reverse=True):
        lines[first - 1 : last] = [" " * indent + "..."]
    return "\n".join(lines)


def build_code_sets(root: Path) -> tuple[dict[str, list[ev.CorpusFile]], dict[str, list]]:
    """The corpora (sources with and without docstrings) and the docstring / definition
    items."""
    kept, stripped = root / "code", root / "nodoc"
    files: dict[str, list[ev.CorpusFile]] = {"definition": [], "docstring": []}
    items: dict[str, list] = {"definition": [], "docstring": []}
    parsed = []
    for label, path in _sources():
        text = path.read_text(encoding="utf-8", errors="replace")
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        parsed.append((label, text, tree))
    names = Counter(d.name for _, _, tree in parsed for d in _definitions(tree))
    for label, text, tree in parsed:
        for base, key, body in ((kept, "definition", text), (stripped, "docstring", None)):
            dest = base / label
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_text(body if body is not None else _strip_docstrings(text, tree), "utf-8")
            files[key].append(ev.CorpusFile(label, dest, dest.stat().st_size, f"pkg:{label}"))
        taken = {"definition": 0, "docstring": 0}
        for node in _definitions(tree):
            doc = ast.get_docstring(node)
            summary = _first_sentence(doc or "")
            if summary is None or node.name.startswith("__"):
                continue
            keyword = "class" if isinstance(node, ast.ClassDef) else "def"
            item_id = f"{label}:{node.name}:{node.lineno}"
            if taken["docstring"] < PER_FILE:
                taken["docstring"] += 1
                items["docstring"].append(
                    ev.Query(
                        item_id, "docstring", summary, label, (), None, (f"{keyword} {node.name}",)
                    )
                )
            parts = [p for p in re.split(r"_|(?<=[a-z])(?=[A-Z])", node.name) if p]
            if names[node.name] == 1 and len(parts) >= 2 and taken["definition"] < PER_FILE:
                taken["definition"] += 1
                items["definition"].append(
                    ev.Query(item_id, "definition", node.name, label, (), None, (summary[:80],))
                )
    return files, items


_HEADING = re.compile(r"^(#{1,4})\s+(.+?)\s*#*\s*$")


def _readmes() -> list[tuple[str, str]]:
    """(label, markdown) of the bench harness's npm packages' READMEs and of installed
    Python distributions' Markdown descriptions."""
    out = []
    peer = ev._bench_home() / "peer" / "node_modules"
    for readme in sorted(peer.rglob("README.md")) if peer.is_dir() else []:
        if readme.stat().st_size > 3000:
            rel = readme.relative_to(peer).as_posix()
            out.append((f"npm/{rel}", readme.read_text(encoding="utf-8", errors="replace")))
    for dist in importlib.metadata.distributions():
        meta = dist.metadata
        if "markdown" in (meta.get("Description-Content-Type") or "").lower():
            body = meta.get_payload() or ""  # type: ignore[attr-defined]
            if len(body) > 3000:
                out.append((f"pypi/{meta['Name']}.md", body))
    return out


def build_section_set(root: Path) -> tuple[list[ev.CorpusFile], list[ev.Query]]:
    docs = root / "docs"
    files, items = [], []
    seen_labels: set[str] = set()
    headings: Counter[str] = Counter()
    parsed = []
    for label, text in _readmes():
        if label in seen_labels:
            continue
        seen_labels.add(label)
        dest = docs / label
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(text, encoding="utf-8")
        files.append(ev.CorpusFile(label, dest, dest.stat().st_size, label))
        lines = text.split("\n")
        for i, line in enumerate(lines):
            m = _HEADING.match(line)
            if m:
                headings[m.group(2).strip().lower()] += 1
                parsed.append((label, lines, i, m.group(2).strip()))
    taken: Counter[str] = Counter()
    in_fence = False
    for label, lines, i, heading in parsed:
        words = re.findall(r"[A-Za-z][\w'-]*", heading)
        if headings[heading.lower()] > 1 or not 3 <= len(words) <= 12 or taken[label] >= PER_FILE:
            continue
        body: list[str] = []
        in_fence = False
        for line in lines[i + 1 : i + 40]:
            if _HEADING.match(line):
                break
            if line.strip().startswith(("```", "~~~")):
                in_fence = not in_fence
                continue
            if in_fence or line.strip().startswith(("<", "|", "!", "[!", "-", "*", ">")):
                if body:
                    break
                continue
            if not line.strip():
                if body:
                    break
                continue
            body.append(line.strip())
        sentence = _first_sentence(" ".join(body))
        if sentence is None or "http" in sentence or "](" in sentence:
            continue
        taken[label] += 1
        items.append(
            ev.Query(f"{label}:{i + 1}", "section", heading, label, (), None, (sentence[:80],))
        )
    return files, items


def _html_sections(text: str) -> list[tuple[str, str]]:
    """(heading, the first paragraph after it) of an HTML page's h2/h3 headings."""
    from html.parser import HTMLParser

    out: list[tuple[str, str]] = []

    class Reader(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.mode: str | None = None
            self.buffer: list[str] = []
            self.heading: str | None = None

        def handle_starttag(self, tag: str, attrs: list) -> None:
            if tag in ("h2", "h3"):
                self.mode, self.buffer = "h", []
            elif tag == "p" and self.heading is not None:
                self.mode, self.buffer = "p", []

        def handle_endtag(self, tag: str) -> None:
            text = " ".join("".join(self.buffer).split())
            if tag in ("h2", "h3") and self.mode == "h":
                self.heading, self.mode = text, None
            elif tag == "p" and self.mode == "p":
                if self.heading:
                    out.append((self.heading, text))
                self.heading, self.mode = None, None

        def handle_data(self, data: str) -> None:
            if self.mode:
                self.buffer.append(data)

    Reader().feed(text)
    return out


def build_html_set(root: Path) -> tuple[list[ev.CorpusFile], list[ev.Query]]:
    home = Path.home() / ".rustup" / "toolchains"
    pages: list[Path] = []
    for toolchain in sorted(home.glob("stable-*")) if home.is_dir() else []:
        for book in HTML_BOOKS:
            base = toolchain / "share" / "doc" / "rust" / "html" / book
            pages += sorted(
                p
                for p in base.glob("*.html")
                if 8000 < p.stat().st_size < 1_000_000 and p.name != "print.html"
            )[:HTML_FILES]
        break
    files, items, texts = [], [], []
    for page in pages:
        label = f"rust/{page.parent.name}/{page.name}"
        dest = root / "html" / label
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(page, dest)
        files.append(ev.CorpusFile(label, dest, dest.stat().st_size, label))
        texts.append((label, page.read_text(encoding="utf-8", errors="replace")))
    sections = [(label, h, p) for label, text in texts for h, p in _html_sections(text)]
    counts = Counter(h.lower() for _, h, _ in sections)
    taken: Counter[str] = Counter()
    for label, heading, paragraph in sections:
        words = re.findall(r"[A-Za-z][\w'-]*", heading)
        sentence = _first_sentence(paragraph)
        if counts[heading.lower()] > 1 or not 2 <= len(words) <= 12 or sentence is None:
            continue
        if taken[label] >= PER_FILE:
            continue
        taken[label] += 1
        items.append(
            ev.Query(f"{label}#{heading}", "html", heading, label, (), None, (sentence[:80],))
        )
    return files, items


_DEBIAN_ENTRY = re.compile(r"^(\S+ \([^)]+\)) [^;]+; urgency=", re.M)


def build_changelog_set(root: Path) -> tuple[list[ev.CorpusFile], list[ev.Query]]:
    import gzip

    logs = sorted(Path("/usr/share/doc").glob("*/changelog.Debian.gz"))[:CHANGELOGS]
    files, entries = [], []
    for log in logs:
        try:
            text = gzip.open(log, "rt", encoding="utf-8", errors="replace").read()
        except OSError:
            continue
        if len(text) > CHANGELOG_BYTES:
            cut = text.rfind("\n\n", 0, CHANGELOG_BYTES)
            text = text[: cut if cut > 0 else CHANGELOG_BYTES] + "\n"
        label = f"debian/{log.parent.name}/changelog.Debian"
        dest = root / "changelog" / label
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(text, encoding="utf-8")
        files.append(ev.CorpusFile(label, dest, dest.stat().st_size, label))
        heads = [(m.start(), m.group(1)) for m in _DEBIAN_ENTRY.finditer(text)]
        for m in re.finditer(r"^  \* (.+(?:\n    .+)*)", text, re.M):
            release = next((h for at, h in reversed(heads) if at < m.start()), None)
            bullet = " ".join(m.group(1).split())
            if release and 6 <= len(bullet.split()) <= 30 and "closes" not in bullet.lower():
                entries.append((label, release, bullet))
    counts = Counter(b for _, _, b in entries)
    taken: Counter[str] = Counter()
    items = []
    for label, release, bullet in entries:
        if counts[bullet] > 1 or taken[label] >= PER_FILE:
            continue
        taken[label] += 1
        query = " ".join(bullet.split()[:12])
        items.append(
            ev.Query(f"{label}:{release}:{query}", "changelog", query, label, (), None, (release,))
        )
    return files, items


def build_json_set(root: Path) -> tuple[list[ev.CorpusFile], list[ev.Query]]:
    base = Path("/usr/share/iso-codes/json")
    files, entries = [], []
    for name in ("iso_3166-1.json", "iso_4217.json", "iso_15924.json", "iso_639-5.json"):
        path = base / name
        if not path.is_file():
            continue
        dest = root / "json" / name
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, dest)
        files.append(ev.CorpusFile(name, dest, dest.stat().st_size, f"iso-codes:{name}"))
        data = json.loads(path.read_text(encoding="utf-8"))
        for rows in data.values():
            for row in rows:
                code = next((k for k in ("alpha_3", "alpha_4", "alpha_2") if k in row), None)
                for field in ("official_name", "name"):
                    if code and row.get(field):
                        entries.append((name, row[field], f'"{code}": "{row[code]}"'))
                        break
    counts = Counter(text.lower() for _, text, _ in entries)
    items = []
    by_file: dict[str, list] = {}
    for entry in entries:
        if counts[entry[1].lower()] == 1:
            by_file.setdefault(entry[0], []).append(entry)
    for rows in by_file.values():
        step = max(1, len(rows) // JSON_PER_FILE)
        for label, text, answer in rows[::step][:JSON_PER_FILE]:
            items.append(ev.Query(f"{label}:{text}", "json", text, label, (), None, (answer,)))
    return files, items


def _label_share(rows: list[dict]) -> float:
    """The share of the shown bytes that are labels: each hit's ``--- [source] ---`` and
    ``### title`` lines (and the blank line under them)."""
    total = labels = 0
    for row in rows:
        for shown in row["shown"]:
            head = shown.split("\n", 3)
            total += len(shown.encode("utf-8"))
            labels += sum(len(line.encode("utf-8")) + 1 for line in head[:3])
    return labels / total if total else 0.0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--engines", default="ours", help="comma-separated: ours, upstream")
    ap.add_argument("--half", choices=("tuning", "held-out", "both"), default="tuning")
    ap.add_argument("--sets", default=",".join(SET_NAMES), help="comma-separated set names")
    ap.add_argument("--upstream-python", default=str(ev._bench_home() / "venv" / "bin" / "python"))
    ap.add_argument("--peer", type=Path, default=ev._default_peer())
    ap.add_argument("--out", type=Path, help="write the per-set summaries as JSON here")
    a = ap.parse_args(argv)
    engines = [e for e in a.engines.split(",") if e]
    wanted = [s for s in a.sets.split(",") if s]
    halves = ("tuning", "held-out") if a.half == "both" else (a.half,)
    work = Path(tempfile.mkdtemp(prefix="ctxmode-generated-"))
    report: dict[str, dict] = {}
    try:
        code_files, code_items = build_code_sets(work)
        section_files, section_items = build_section_set(work)
        corpora = {
            "docstring": (work / "nodoc", code_files["docstring"], code_items["docstring"]),
            "definition": (work / "code", code_files["definition"], code_items["definition"]),
            "section": (work / "docs", section_files, section_items),
            "html": (work / "html", *build_html_set(work)),
            "changelog": (work / "changelog", *build_changelog_set(work)),
            "json": (work / "json", *build_json_set(work)),
        }
        for name in wanted:
            corpus_dir, files, items = corpora[name]
            if not files:
                print(f"[generated] {name}: no material on this machine, skipped", file=sys.stderr)
                continue
            for half in halves:
                queries = [q for q in items if _half(q.id) == half]
                key = f"{name}/{half}"
                print(
                    f"[generated] {key}: {len(queries)} items over {len(files)} files",
                    file=sys.stderr,
                    flush=True,
                )
                scored = []
                if "ours" in engines:
                    raw = ev.run_ours(files, {key: queries}, work / f"ours-{name}-{half}.db")
                    scored.append(ev.score("ours", queries, raw[key]["results"]))
                if "upstream" in engines:
                    up = ev.run_upstream(
                        corpus_dir,
                        queries,
                        work / f"up-{name}-{half}",
                        a.upstream_python,
                        Path(a.peer).resolve(),
                        False,
                    )
                    scored.append(ev.score("upstream", queries, up["results"]))
                report[key] = {
                    s.engine: {**ev.answer_summary(s.rows), "labels": _label_share(s.rows)}
                    for s in scored
                }
        print(
            f"{'set':<22}{'engine':<10}{'n':>6}{'hit@1':>7}{'hit@2':>7}{'MRR@10':>8}"
            f"{'B/hit':>7}{'B/answer':>9}"
        )
        for key, engines_row in report.items():
            for engine, m in engines_row.items():
                print(
                    f"{key:<22}{engine:<10}{m['n']:>6}{m.get('hit1', 0):>7.3f}"
                    f"{m.get('hit2', 0):>7.3f}{m.get('mrr10', 0):>8.3f}"
                    f"{m.get('bytes_per_hit') or 0:>7}{m.get('bytes_per_answer') or 0:>9}"
                    f"{m['labels']:>8.0%}"
                )
        if a.out:
            a.out.write_text(json.dumps(report, indent=1), encoding="utf-8")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
