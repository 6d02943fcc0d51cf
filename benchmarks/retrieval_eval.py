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

    Two judgements are scored:
      strict  the hit's source ends with the expected file AND its title contains the expected
              title substring (when the query gives one); this is the headline number;
      file    only the file has to match (upstream chunks .py files as markdown, so its chunk
              titles rarely name the definition; the file-level score is the fairer comparison).

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

Run (from the repository root)::

    .venv/bin/python benchmarks/retrieval_eval.py --engines ours
    .venv/bin/python benchmarks/retrieval_eval.py \\
        --upstream-python "$CTXMODE_BENCH_HOME/venv/bin/python" \\
        --peer ../shared/bench/peer.sh --out retrieval-results.json

``--peer`` defaults to ``$CTXMODE_BENCH_PEER`` or ``../shared/bench/peer.sh`` next to the
repository; ``--upstream-python`` defaults to ``$CTXMODE_BENCH_HOME/venv/bin/python`` (with
the harness's default for ``CTXMODE_BENCH_HOME``). ``--verify`` only checks the query set
against the corpus (expected file present, title text present in it) and exits.
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

ENGINES = ("ours", "upstream")


# --------------------------------------------------------------------------- corpus


@dataclass(frozen=True)
class CorpusFile:
    label: str  # relative path inside the corpus dir, also the source label
    path: Path  # absolute path of the copy
    bytes: int
    origin: str  # where it came from ("stdlib:json/decoder.py", "dist:rich 14.0.0")


def build_corpus(root: Path) -> tuple[list[CorpusFile], list[str]]:
    """Copy the fixed file list into `root`; (files, notes about anything skipped)."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    files: list[CorpusFile] = []
    notes: list[str] = []
    for label, alternatives in STDLIB_FILES:
        found = next((stdlib / alt for alt in alternatives if (stdlib / alt).is_file()), None)
        if found is None:
            notes.append(f"stdlib file missing: {label}")
            continue
        dest = root / "stdlib" / label
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(found, dest)
        origin = f"stdlib:{found.relative_to(stdlib).as_posix()}"
        files.append(CorpusFile(f"stdlib/{label}", dest, dest.stat().st_size, origin))
    for name in PACKAGE_DOCS:
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
        files.append(
            CorpusFile(f"pkgdocs/{name}{ext}", dest, dest.stat().st_size, f"dist:{name} {meta['Version']}")
        )
    return files, notes
