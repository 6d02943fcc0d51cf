#!/usr/bin/env python3
"""Store-level benchmark of the knowledge base: index throughput, search latency, memory.

Run by hand, never from the test suite:

    .venv/bin/python benchmarks/bench_store.py                 # 10 MB index + 200 queries
    .venv/bin/python benchmarks/bench_store.py --bench-dir ../shared/bench --json out.json

Corpora and queries come from the side-by-side harness's generator (``bench_data.py`` in
``--bench-dir``) when it is available, so the figures describe exactly the work its
``mcp_bench.py`` gives upstream's ``ctx_index``/``ctx_search``; otherwise from a built-in
generator of the same shape (200 markdown documents with headings, prose, code blocks,
identifiers; queries: single words, heading phrases, identifiers, misspellings).

Measured:
* index MB/s (10^6 bytes) for the 10 MB corpus by content (one call per document) and by
  file path, each into a fresh database file, in a child process whose peak RSS (VmHWM) is
  reported;
* search p50/p95 over 200 queries on the 1 MB and 10 MB corpora (limit 2, as upstream's
  ctx_search returns at most 2 results), the hit rate (a result names a document containing
  the expected words) and the mean bytes of the answer rendered as ctx_search renders it.
"""

import argparse
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ctxmode.store import ContentStore  # noqa: E402


@dataclass(frozen=True)
class Doc:
    name: str
    text: str


@dataclass(frozen=True)
class Query:
    category: str
    text: str
    expect: str


# --------------------------------------------------------------------------- data

_WORDS = (
    "cache queue worker token session index shard replica cluster gateway router proxy "
    "schema migration tenant invoice payment ledger account profile upload bucket stream "
    "buffer socket packet latency throughput timeout retry backoff circuit breaker limiter "
    "scheduler cron pipeline artifact container volume secret config manifest rollout "
    "canary deployment health probe metric tracer span logger handler middleware adapter "
    "serializer validator parser compiler bundler resolver registry mirror snapshot"
).split()
_VERBS = "configure deploy debug monitor rotate migrate scale tune secure cache".split()


def _builtin_corpus(total: int, n_docs: int, seed: int) -> list[Doc]:
    rng = random.Random(f"corpus:{seed}:{total}:{n_docs}")
    per_doc = max(512, total // n_docs)
    docs = []
    for i in range(n_docs):
        parts = [f"# {rng.choice(_WORDS).title()} Guide {i:03d}"]
        while sum(len(p) + 2 for p in parts) < per_doc:
            parts.append(f"## {rng.choice(_VERBS).title()} {' '.join(rng.sample(_WORDS, 2))}")
            for _ in range(rng.randint(1, 3)):
                if rng.random() < 0.6:
                    parts.append(" ".join(rng.choice(_WORDS) for _ in range(60)) + ".")
                else:
                    a, b = rng.sample(_WORDS, 2)
                    parts.append(
                        f"```python\ndef {a}_{b}(value):\n    return {b.title()}{a.title()}"
                        f"(value, retries={rng.randint(1, 9)})\n```"
                    )
        docs.append(Doc(f"doc-{i:03d}.md", "\n\n".join(parts) + "\n"))
    return docs


def _builtin_queries(docs: list[Doc], n: int, seed: int) -> list[Query]:
    rng = random.Random(f"queries:{seed}:{n}")
    heads = sorted({ln[3:].lower() for d in docs for ln in d.text.splitlines() if ln[:3] == "## "})
    out = []
    for k in range(n):
        cat = ("single", "multi", "identifier", "misspelled")[k % 4]
        word = rng.choice(_WORDS)
        if cat == "single":
            out.append(Query(cat, word, word))
        elif cat == "multi":
            head = rng.choice(heads)
            out.append(Query(cat, head, head))
        elif cat == "identifier":
            ident = f"{word}_{rng.choice(_WORDS)}"
            out.append(Query(cat, ident, ident))
        else:
            i = rng.randrange(1, len(word) - 1)
            out.append(Query(cat, word[:i] + word[i + 1 :], word))
    return out


def load_data(bench_dir: Path | None, size: int, n_docs: int, seed: int, n_queries: int):
    if bench_dir is not None and (bench_dir / "bench_data.py").exists():
        sys.path.insert(0, str(bench_dir))
        import bench_data  # type: ignore[import-not-found]

        corpus = bench_data.generate_corpus(size, n_docs=n_docs, seed=seed)
        docs = [Doc(d.name, d.text) for d in corpus.docs]
        queries = [
            Query(q.category, q.text, q.expect)
            for q in bench_data.generate_queries(corpus, n=n_queries, seed=seed)
        ]
        return docs, queries, "bench_data.py"
    docs = _builtin_corpus(size, n_docs, seed)
    return docs, _builtin_queries(docs, n_queries, seed), "built-in"


# --------------------------------------------------------------------------- measures


def _vm_hwm_mb() -> float | None:
    try:
        for line in Path("/proc/self/status").read_text(encoding="utf-8").splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


def index_child(mode: str, corpus_dir: Path, db_path: Path) -> dict[str, float | None]:
    files = sorted(corpus_dir.glob("*.md"))
    texts = [(f, f.read_text(encoding="utf-8")) for f in files] if mode == "content" else []
    total = sum(f.stat().st_size for f in files)
    started = time.perf_counter()
    with ContentStore(db_path) as store:
        if mode == "content":
            for f, text in texts:
                store.index_text(text, f.name)
        else:
            for f in files:
                store.index_file(f, f.name)
    elapsed = time.perf_counter() - started
    return {
        "mb_per_s": total / 1e6 / elapsed,
        "seconds": elapsed,
        "bytes": total,
        "peak_rss_mb": _vm_hwm_mb(),
        "db_mb": db_path.stat().st_size / 1e6,
    }


def run_index(mode: str, corpus_dir: Path, work: Path) -> dict[str, float | None]:
    db_path = work / f"index-{mode}.db"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db_path}{suffix}").unlink(missing_ok=True)
    proc = subprocess.run(
        [sys.executable, __file__, "--child-index", mode, str(corpus_dir), str(db_path)],
        capture_output=True,
        text=True,
        encoding="utf-8",
        check=True,
    )
    return json.loads(proc.stdout)


def render_answer(hits) -> str:
    """The answer as ctx_search lays it out, to count the bytes an agent receives."""
    return "\n\n".join(f"--- [{h.source}] ---\n### {h.title}\n\n{h.snippet}" for h in hits)


def run_search(docs: list[Doc], queries: list[Query], work: Path, tag: str) -> dict:
    db_path = work / f"search-{tag}.db"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db_path}{suffix}").unlink(missing_ok=True)
    lowered = {d.name: d.text.lower() for d in docs}
    with ContentStore(db_path) as store:
        for d in docs:
            store.index_text(d.text, d.name)
        for q in queries[:5]:  # warm-up, unmeasured
            store.search(q.text, limit=2)
        times, sizes, hits = [], [], 0
        per_cat: dict[str, list[int]] = {}
        for q in queries:
            t0 = time.perf_counter()
            result = store.search(q.text, limit=2)
            times.append((time.perf_counter() - t0) * 1000)
            sizes.append(len(render_answer(result.hits).encode("utf-8")))
            terms = q.expect.lower().split()
            ok = any(all(t in lowered[h.source] for t in terms) for h in result.hits)
            hits += ok
            per_cat.setdefault(q.category, []).append(int(ok))
    times.sort()
    return {
        "queries": len(queries),
        "p50_ms": statistics.median(times),
        "p95_ms": times[int(0.95 * (len(times) - 1))],
        "mean_result_bytes": statistics.mean(sizes),
        "hit_rate": hits / len(queries),
        "hit_rate_by_category": {c: sum(v) / len(v) for c, v in sorted(per_cat.items())},
    }


def main() -> int:
    if len(sys.argv) == 5 and sys.argv[1] == "--child-index":
        print(json.dumps(index_child(sys.argv[2], Path(sys.argv[3]), Path(sys.argv[4]))))
        return 0
    default_bench = ROOT.parent / "shared" / "bench"
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--bench-dir",
        type=Path,
        default=default_bench if default_bench.exists() else None,
        help="the side-by-side harness folder (for its corpus/query generator)",
    )
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--docs", type=int, default=200)
    ap.add_argument("--index-mb", type=float, default=10.0)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--json", type=Path, help="write the results here too")
    args = ap.parse_args()

    results: dict[str, object] = {"python": sys.version.split()[0]}
    with tempfile.TemporaryDirectory(prefix="ctxmode-bench-") as tmp:
        work = Path(tmp)
        big, big_queries, origin = load_data(
            args.bench_dir, int(args.index_mb * 1e6), args.docs, args.seed, args.queries
        )
        small, small_queries, _ = load_data(
            args.bench_dir, int(1e6), args.docs, args.seed, args.queries
        )
        results["data"] = origin
        corpus_dir = work / "corpus"
        corpus_dir.mkdir()
        for d in big:
            (corpus_dir / d.name).write_text(d.text, encoding="utf-8")
        for mode in ("content", "path"):
            results[f"index_{args.index_mb:g}MB_{mode}"] = run_index(mode, corpus_dir, work)
        results["search_1MB"] = run_search(small, small_queries, work, "1mb")
        results[f"search_{args.index_mb:g}MB"] = run_search(big, big_queries, work, "big")

    for key, value in results.items():
        if isinstance(value, dict):
            shown = {k: (round(v, 3) if isinstance(v, float) else v) for k, v in value.items()}
            print(f"{key}: {json.dumps(shown)}")
        else:
            print(f"{key}: {value}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
