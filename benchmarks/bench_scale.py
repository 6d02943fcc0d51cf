#!/usr/bin/env python3
"""Scale benchmark of the knowledge base: 1k, 10k and 100k small files through the CLI.

Run by hand, never from the test suite (the 100k run takes a few minutes):

    .venv/bin/python benchmarks/bench_scale.py                        # 1k, 10k, 100k
    .venv/bin/python benchmarks/bench_scale.py --sizes 1000,10000 --json out.json
    .venv/bin/python benchmarks/bench_scale.py --sizes 100000 --cli-queries 10

For each size a tree of small files is generated (deterministic seed: about 45% markdown,
the rest Python, JavaScript, Go, Rust and plain text, 150 B to 4 KB each, at most 100 files
per directory, words drawn from a Zipf-weighted vocabulary of common and rare words) in a
temporary directory that holds the project's data too (``XDG_DATA_HOME``), and left 2 s
to age (a file read within a timestamp tick of its last change has its mtime distrusted, and
is hashed again by the next check: a tree is normally written well before it is indexed),
then:

* ``ctxmode index TREE`` runs as a process: wall time, peak RSS of that process (its
  ``ru_maxrss``), the size of the database (with its ``-wal``);
* ``ctxmode search --json`` runs as a process once per query (``--cli-queries``, 50 by
  default): p50/p95 wall time, what a hook or a shell user pays per search;
* the same queries through one `ContentStore` opened in this process the way the MCP server
  opens it (its deny check and sweep interval): p50/p95, what ``ctx_search`` pays;
* ``ctxmode index TREE`` again over the unchanged tree: wall time, peak RSS, and what the
  index report says was unchanged;
* a staleness check: a file that a query finds is deleted, another one's text is changed,
  and one CLI search each must not show the old text.

Queries (deterministic): a rare word of one file, two words of one file, an identifier,
a heading's words, a misspelt rare word; hit@5 (the file a query was drawn from is among the
first 5 hits) is printed as a sanity check, not as a retrieval figure.
"""

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
CTXMODE = [sys.executable, "-m", "ctxmode"]

_COMMON = (
    "the a of to and in is for on with that this it as be by are from or at an not can "
    "file value data list name path error config request response user client server "
    "cache queue worker token session index shard replica cluster gateway router proxy "
    "schema migration tenant invoice payment ledger account profile upload bucket stream "
    "buffer socket packet latency throughput timeout retry backoff circuit breaker limiter "
    "scheduler pipeline artifact container volume secret manifest rollout deployment "
    "health probe metric tracer span logger handler middleware adapter serializer parser "
    "get set read write open close start stop load save parse build run test check update "
    "create delete find make use return new default option field type result state event"
).split()
_SYLLABLES = (
    "ka lo mi ne ru ta shi vo pe za qu ix ob ul en ar os ti fa gre blu dra kel mor "
    "nix pra sto tev wun yor zel bex cra fli gor hup jin lum"
).split()
_KINDS = [("md", 45), ("py", 20), ("js", 12), ("go", 10), ("rs", 6), ("txt", 7)]


@dataclass(frozen=True)
class Query:
    kind: str
    text: str
    label: str  # the file it was drawn from


class Vocabulary:
    def __init__(self, rng: random.Random, rare: int) -> None:
        seen: set[str] = set(_COMMON)
        words: list[str] = []
        while len(words) < rare:
            word = "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 4)))
            if word not in seen:
                seen.add(word)
                words.append(word)
        self.words = _COMMON + words
        weights = [1.0 / (rank + 1) ** 1.05 for rank in range(len(self.words))]
        total = 0.0
        self.cum: list[float] = []
        for w in weights:
            total += w
            self.cum.append(total)
        self.rng = rng

    def draw(self, k: int) -> list[str]:
        return self.rng.choices(self.words, cum_weights=self.cum, k=k)


def _sentence(vocab: Vocabulary, rng: random.Random, words: int) -> str:
    text = " ".join(vocab.draw(words))
    return text[0].upper() + text[1:] + "."


def _file_text(
    kind: str, vocab: Vocabulary, rng: random.Random, size: int
) -> tuple[str, list[str], str]:
    """The text, its identifiers, its first heading or name."""
    parts: list[str] = []
    idents: list[str] = []
    heading = " ".join(vocab.draw(3))
    if kind == "md":
        parts.append(f"# {heading.title()}\n")
        while sum(map(len, parts)) < size:
            roll = rng.random()
            if roll < 0.2:
                parts.append(f"## {' '.join(vocab.draw(2)).title()}\n")
            elif roll < 0.3:
                a, b = vocab.draw(2)
                idents.append(f"{a}_{b}")
                parts.append(f"```python\n{a}_{b}(config, timeout=30)\n```\n")
            else:
                parts.append(_sentence(vocab, rng, rng.randint(8, 30)) + "\n")
    elif kind == "txt":
        parts.append(f"{heading}\n")
        while sum(map(len, parts)) < size:
            parts.append(_sentence(vocab, rng, rng.randint(8, 25)) + "\n")
    else:
        while sum(map(len, parts)) < size:
            a, b = vocab.draw(2)
            doc = _sentence(vocab, rng, rng.randint(5, 14))
            body = " ".join(vocab.draw(3))
            if kind == "py":
                name = f"{a}_{b}"
                parts.append(
                    f'def {name}(value, {body.split()[0]}=None):\n    """{doc}"""\n'
                    f"    return value  # {body}\n\n"
                )
            elif kind == "js":
                name = f"{a}{b.title()}"
                parts.append(
                    f"// {doc}\nexport function {name}(value) {{\n  return value; // {body}\n}}\n\n"
                )
            elif kind == "go":
                name = f"{a.title()}{b.title()}"
                parts.append(
                    f"// {name}: {doc}\nfunc {name}(value string) string {{\n"
                    f"\treturn value // {body}\n}}\n\n"
                )
            else:
                name = f"{a}_{b}"
                parts.append(f"/// {doc}\npub fn {name}(value: &str) -> &str {{\n    value\n}}\n\n")
            idents.append(name)
        heading = idents[0]
    return "".join(parts), idents, heading


def generate_tree(root: Path, n: int, seed: int, n_queries: int) -> list[Query]:
    """`n` files under `root` and `n_queries` queries drawn from some of them."""
    rng = random.Random(f"tree:{seed}:{n}")
    vocab = Vocabulary(rng, rare=max(2000, n // 2))
    kinds = [k for k, _ in _KINDS]
    kind_weights = [w for _, w in _KINDS]
    common = set(_COMMON)
    picks = set(rng.sample(range(n), min(n, n_queries)))
    queries: list[Query] = []
    for i in range(n):
        kind = rng.choices(kinds, weights=kind_weights)[0]
        size = min(4000, max(150, int(rng.lognormvariate(6.6, 0.6))))
        text, idents, heading = _file_text(kind, vocab, rng, size)
        rel = f"pkg{i // 10000:02d}/mod{i // 100 % 100:02d}/f{i:06d}_{vocab.draw(1)[0]}.{kind}"
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        if i in picks:
            queries.append(_query(len(queries), rng, text, idents, heading, rel, common))
    return queries


def _query(
    n: int,
    rng: random.Random,
    text: str,
    idents: list[str],
    heading: str,
    label: str,
    common: set[str],
) -> Query:
    words = [w.strip(".,#`()").lower() for w in text.split()]
    rare = sorted({w for w in words if w.isalpha() and w not in common and len(w) > 4})
    kind = ("rare", "pair", "identifier", "heading", "typo")[n % 5]
    if kind == "identifier" and idents:
        return Query(kind, rng.choice(idents), label)
    if kind == "heading":
        return Query(kind, heading.replace("_", " "), label)
    if kind == "typo" and rare:
        word = rng.choice(rare)
        cut = rng.randrange(1, len(word) - 1)
        return Query(kind, word[:cut] + word[cut + 1 :], label)
    if kind == "pair" and len(rare) >= 2:
        return Query(kind, " ".join(rng.sample(rare, 2)), label)
    if rare:
        return Query("rare", rng.choice(rare), label)
    return Query("heading", heading.replace("_", " "), label)


# --------------------------------------------------------------------------- measures


def run_cli(args: list[str], env: dict[str, str]) -> tuple[float, float, str, int]:
    """(seconds, peak RSS MB, stdout, exit code) of one ctxmode process."""
    with tempfile.TemporaryFile() as out:
        started = time.perf_counter()
        proc = subprocess.Popen(
            CTXMODE + args, stdout=out, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, env=env
        )
        _, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        text = out.read().decode("utf-8", "replace")
    return elapsed, usage.ru_maxrss / 1024, text, proc.returncode


def _pct(times: list[float]) -> dict[str, float]:
    times = sorted(times)
    return {
        "p50_ms": round(statistics.median(times) * 1000, 1),
        "p95_ms": round(times[int(0.95 * (len(times) - 1))] * 1000, 1),
    }


def _db_mb(db: Path) -> float:
    return round(sum(p.stat().st_size for p in db.parent.glob(db.name + "*")) / 1e6, 1)


def _index_totals(stdout: str) -> dict[str, object]:
    try:
        data = json.loads(stdout).get("data", {})
    except ValueError:
        return {}
    totals = dict(data.get("totals", {}))
    totals["skipped"] = len(data.get("skipped", []))
    return totals


def _store(db: Path, tree: Path):  # noqa: ANN202 - a ContentStore as the server opens it
    from ctxmode.security import load_policy, path_deny_check
    from ctxmode.server import state
    from ctxmode.store import ContentStore

    deny = path_deny_check(load_policy(tree), tree)
    interval = getattr(state, "SWEEP_INTERVAL_S", 2.0)
    return ContentStore(db, deny=deny, sweep_interval=interval)


def bench_size(n: int, args: argparse.Namespace, work: Path) -> dict[str, object]:
    tree = work / f"tree{n}"
    data = work / f"data{n}"
    tree.mkdir()
    env = dict(os.environ, XDG_DATA_HOME=str(data))
    env.pop("CTXMODE_PROJECT_DIR", None)
    os.environ["XDG_DATA_HOME"] = str(data)
    from ctxmode import paths

    db = paths.project_paths(tree).content_db
    started = time.perf_counter()
    queries = generate_tree(tree, n, args.seed, args.queries)
    time.sleep(2.1)
    result: dict[str, object] = {
        "files": n,
        "tree_mb": round(sum(f.stat().st_size for f in tree.rglob("*") if f.is_file()) / 1e6, 1),
        "generate_s": round(time.perf_counter() - started, 1),
    }
    print(f"[{n}] tree generated in {result['generate_s']} s", file=sys.stderr)

    project = ["--project", str(tree)]
    seconds, rss, out, code = run_cli(["index", *project, str(tree), "--json"], env)
    result["index"] = {
        "s": round(seconds, 1),
        "peak_rss_mb": round(rss),
        "db_mb": _db_mb(db),
        "exit": code,
        **_index_totals(out),
    }
    print(f"[{n}] index: {result['index']}", file=sys.stderr)

    cli_queries = queries[: args.cli_queries] if args.cli_queries else queries
    times, found = [], 0
    for query in cli_queries:
        seconds, _, out, code = run_cli(["search", *project, "--json", "-n", "5", query.text], env)
        times.append(seconds)
        hits = json.loads(out)["data"]["hits"] if code == 0 else []
        found += any(h["source"] == query.label for h in hits)
    result["search_cli"] = {"queries": len(times), **_pct(times), "hit@5": found / len(times)}
    print(f"[{n}] search (CLI): {result['search_cli']}", file=sys.stderr)

    store_queries = queries[: args.store_queries] if args.store_queries else queries
    times, found = [], 0
    store = _store(db, tree)
    with store:
        for query in store_queries:
            t0 = time.perf_counter()
            hits = store.search(query.text, limit=5).hits
            times.append(time.perf_counter() - t0)
            found += any(h.source == query.label for h in hits)
    result["search_store"] = {"queries": len(times), **_pct(times), "hit@5": found / len(times)}
    print(f"[{n}] search (store): {result['search_store']}", file=sys.stderr)

    seconds, rss, out, code = run_cli(["index", *project, str(tree), "--json"], env)
    result["reindex"] = {"s": round(seconds, 1), "peak_rss_mb": round(rss), "exit": code}
    result["reindex"].update(_index_totals(out))
    print(f"[{n}] re-index: {result['reindex']}", file=sys.stderr)

    result["stale_served"] = stale_check(tree, queries, project, env)
    print(f"[{n}] stale served: {result['stale_served']}", file=sys.stderr)
    return result


def stale_check(tree: Path, queries: list[Query], project: list[str], env: dict) -> int:
    """Delete the file of one query and rewrite another's: how many of the two searches
    still show what is gone (0 is right)."""
    stale = 0
    picked = [q for q in queries if q.kind in ("rare", "pair")][:2]
    if len(picked) < 2:
        return 0
    gone, changed = picked
    (tree / gone.label).unlink()
    _, _, out, code = run_cli(["search", *project, "--json", "-n", "20", gone.text], env)
    hits = json.loads(out)["data"]["hits"] if code == 0 else []
    stale += any(h["source"] == gone.label for h in hits)
    path = tree / changed.label
    path.write_text(f"# Rewritten\n\n{changed.text} now says zyzzogeton\n", encoding="utf-8")
    _, _, out, code = run_cli(["search", *project, "--json", "-n", "20", changed.text], env)
    hits = json.loads(out)["data"]["hits"] if code == 0 else []
    mine = [h for h in hits if h["source"] == changed.label]
    stale += any("zyzzogeton" not in h["snippet"] for h in mine) or not mine
    return stale


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1000,10000,100000", help="comma-separated file counts")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--queries", type=int, default=50)
    ap.add_argument("--cli-queries", type=int, default=0, help="fewer CLI searches (0: all)")
    ap.add_argument("--store-queries", type=int, default=0, help="fewer store searches (0: all)")
    ap.add_argument("--work", type=Path, help="work here (kept) instead of a temp dir")
    ap.add_argument("--json", type=Path, help="write the results here too")
    args = ap.parse_args()

    results: dict[str, object] = {"python": sys.version.split()[0], "sizes": {}}
    if args.work:
        args.work.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix="scale-", dir=args.work))
    else:
        work = Path(tempfile.mkdtemp(prefix="ctxmode-scale-"))
    try:
        for size in (int(s) for s in args.sizes.split(",")):
            results["sizes"][str(size)] = bench_size(size, args, work)  # type: ignore[index]
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)

    print(
        "| files | index s | DB MB | peak RSS MB | CLI search p50/p95 ms | store search "
        "p50/p95 ms | re-index s | stale served |"
    )
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for size, r in results["sizes"].items():  # type: ignore[union-attr]
        i, c, s, x = r["index"], r["search_cli"], r["search_store"], r["reindex"]
        print(
            f"| {size} | {i['s']} | {i['db_mb']} | {i['peak_rss_mb']} | "
            f"{c['p50_ms']:.0f} / {c['p95_ms']:.0f} | {s['p50_ms']:.1f} / {s['p95_ms']:.1f} | "
            f"{x['s']} | {r['stale_served']} |"
        )
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
