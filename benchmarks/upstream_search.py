#!/usr/bin/env python3
"""Index a corpus into upstream context-mode's MCP server and record its ctx_search results.

The upstream half of ``retrieval_eval.py``, which runs it; it can also run alone. It needs the
MCP Python SDK (``mcp``), so run it with the bench harness venv's Python::

    "$CTXMODE_BENCH_HOME/venv/bin/python" benchmarks/upstream_search.py \\
        --peer-cmd "../shared/bench/peer.sh server" --corpus-dir DIR \\
        --queries benchmarks/retrieval_queries.json --out upstream.json

What it does
    * Starts the server command over stdio with a private state directory: fresh HOME, TMPDIR
      and project dir (the server's cwd), and none of the CLAUDE_* / CONTEXT_MODE_* variables of
      an agent session this may run inside. ``CTXMODE_BENCH_HOME`` is passed on (computed from
      the real HOME when unset), because ``peer.sh`` finds the installed peer through it.
    * Indexes every file under ``--corpus-dir`` with ``ctx_index {"path": <abs>, "source":
      <path relative to the corpus dir>}`` (falling back to ``content`` if a path is refused).
    * Runs each query as ``ctx_search {"queries": [q], "limit": 10}``. Upstream throttles
      ctx_search per process (calls 1-3 in 60 s return at most 2 results, 4-8 return 1, later
      calls are BLOCKED), so the server is restarted on the same state after every
      ``--per-server`` (3) searches: every query gets the 2-result cap. A BLOCKED reply, should
      one happen anyway, causes a restart and one retry.
    * Parses the reply text (``--- [<origin> | <source>] ---`` / ``### <title>`` / blank line /
      snippet) into a ranked list of (source, title) and records the UTF-8 bytes of the whole
      reply, plus the bytes of just the hits in the layout retrieval_eval.py uses for ctxmode.

Output JSON: ``{"engine": "upstream", "server": {...}, "index": {...}, "search": {...},
"results": [{"id", "query", "ms", "ranked": [[source, title, snippet], ...], "bytes",
"hits_bytes", "throttle_call", "error", "text"}]}``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import shlex
import shutil
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

# Variables that would tie the server to a real agent session or project; never passed on.
LEAKY_PREFIXES = ("CLAUDE_", "CONTEXT_MODE_", "CTX_", "GEMINI_", "CODEX_", "CURSOR_", "MCP_")

HEADER = re.compile(r"^--- \[(?P<inner>.*)\] ---$", re.M)
FOOTERS = ("\n\n> Throttle: call #", "\n\n⚠ search call #")
THROTTLE = re.compile(r"call #(\d+)/\d+")


def bench_home() -> str:
    env = os.environ.get("CTXMODE_BENCH_HOME")
    if env:
        return env
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return str(Path(cache) / "ctxmode-bench")


class State:
    """HOME, TMPDIR and project dir of the server; kept across restarts."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.home, self.tmp, self.project = root / "home", root / "tmp", root / "project"
        for p in (self.home, self.tmp, self.project):
            p.mkdir(parents=True, exist_ok=True)

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(LEAKY_PREFIXES)}
        env.update(
            HOME=str(self.home),
            TMPDIR=str(self.tmp),
            PWD=str(self.project),
            CTXMODE_BENCH_HOME=bench_home(),
        )
        return env


def result_text(res: Any) -> str:
    """Everything in a tools/call result that reaches the model: text blocks + structured."""
    parts = []
    for item in getattr(res, "content", None) or []:
        text = getattr(item, "text", None)
        parts.append(text if isinstance(text, str) else item.model_dump_json())
    structured = getattr(res, "structured_content", None)
    if structured:
        parts.append(json.dumps(structured))
    return "\n".join(parts)


def parse_hits(text: str) -> list[tuple[str, str, str]]:
    """(source, title, snippet) per hit, in the order shown."""
    body = text
    for footer in FOOTERS:
        cut = body.rfind(footer)
        if cut >= 0:
            body = body[:cut]
    heads = list(HEADER.finditer(body))
    hits = []
    for i, m in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(body)
        segment = body[m.end() : end].lstrip("\n")
        title, _, rest = segment.partition("\n")
        title = title[4:] if title.startswith("### ") else title
        snippet = rest.strip("\n")
        if snippet.endswith("\n\n---"):  # separator between query sections
            snippet = snippet[: -len("\n\n---")]
        source = m.group("inner").split(" | ")[-1]
        hits.append((source, title, snippet.strip("\n")))
    return hits


def hits_text(hits: list[tuple[str, str, str]]) -> str:
    return "".join(f"--- [{s}] ---\n### {t}\n\n{snip}\n\n" for s, t, snip in hits)


@contextlib.asynccontextmanager
async def server(argv: list[str], state: State, errlog: Any) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(
        command=argv[0], args=argv[1:], env=state.env(), cwd=str(state.project)
    )
    async with stdio_client(params, errlog=errlog) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            yield session


async def call(session: ClientSession, tool: str, args: dict, timeout: float) -> tuple[bool, str]:
    res = await asyncio.wait_for(session.call_tool(tool, args), timeout=timeout)
    return bool(getattr(res, "is_error", False)), result_text(res)


async def run(a: argparse.Namespace) -> dict:
    argv = shlex.split(a.peer_cmd)
    corpus = a.corpus_dir.resolve()
    files = sorted(p for p in corpus.rglob("*") if p.is_file())
    queries = json.loads(a.queries.read_text(encoding="utf-8"))["queries"]
    root = Path(a.state_dir).resolve() if a.state_dir else Path(tempfile.mkdtemp(prefix="cm-"))
    state = State(root)
    errlog = open(root / "server-stderr.log", "a", encoding="utf-8", errors="replace")
    out: dict = {"engine": "upstream", "server": {"command": a.peer_cmd}, "results": []}
    try:
        t0 = time.perf_counter()
        indexed = chunks = fallbacks = 0
        async with server(argv, state, errlog) as s:
            init_info = getattr(s, "server_info", None)
            if init_info is not None:
                out["server"]["info"] = init_info.model_dump(exclude_none=True)
            for f in files:
                label = f.relative_to(corpus).as_posix()
                err, text = await call(s, "ctx_index", {"path": str(f), "source": label}, a.timeout)
                if err:
                    fallbacks += 1
                    content = f.read_text(encoding="utf-8", errors="replace")
                    err, text = await call(
                        s, "ctx_index", {"content": content, "source": label}, a.timeout
                    )
                if err:
                    raise SystemExit(f"ctx_index failed for {label}: {text[:300]}")
                indexed += 1
                m = re.search(r"Indexed (\d+) sections", text)
                chunks += int(m.group(1)) if m else 0
        out["index"] = {
            "files": indexed,
            "sections": chunks,
            "content_fallbacks": fallbacks,
            "seconds": round(time.perf_counter() - t0, 2),
        }
        print(f"[upstream] indexed {indexed} files, {chunks} sections", file=sys.stderr)

        pending = list(queries)
        starts = retries = unreadable = 0
        while pending:
            starts += 1
            async with server(argv, state, errlog) as s:
                done_here = 0
                while pending and done_here < a.per_server:
                    q = pending[0]
                    args = {"queries": [q["query"]], "limit": 10}
                    t1 = time.perf_counter()
                    try:
                        err, text = await call(s, "ctx_search", args, a.search_timeout)
                    except TimeoutError:
                        # 1.0.169 can cut a reply inside a JSON escape: the client drops
                        # the line and never sees an answer. Scored as an empty reply.
                        err, text = True, f"no readable reply in {a.search_timeout:g} s"
                        unreadable += 1
                    ms = (time.perf_counter() - t1) * 1000
                    done_here += 1
                    if err and text.startswith("BLOCKED") and not q.get("_retried"):
                        q["_retried"] = True
                        retries += 1
                        break
                    hits = [] if err else parse_hits(text)
                    throttle = THROTTLE.search(text)
                    out["results"].append(
                        {
                            "id": q["id"],
                            "query": q["query"],
                            "ms": round(ms, 2),
                            "ranked": [list(hit) for hit in hits],
                            "bytes": len(text.encode("utf-8")),
                            "hits_bytes": len(hits_text(hits).encode("utf-8")),
                            "throttle_call": int(throttle.group(1)) if throttle else None,
                            "error": text[:200] if err else None,
                            "text": text,
                        }
                    )
                    pending.pop(0)
            print(
                f"[upstream] searched {len(out['results'])}/{len(queries)}",
                file=sys.stderr,
                flush=True,
            )
        calls = [r["throttle_call"] for r in out["results"] if r["throttle_call"] is not None]
        out["search"] = {
            "server_starts": starts,
            "blocked_retries": retries,
            "unreadable_replies": unreadable,
            "per_server": a.per_server,
            "max_throttle_call": max(calls, default=None),
            "mean_hits_bytes": round(
                sum(r["hits_bytes"] for r in out["results"]) / max(1, len(out["results"]))
            ),
        }
    finally:
        errlog.close()
        if not a.state_dir:
            shutil.rmtree(root, ignore_errors=True)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--peer-cmd", required=True, help='server command, e.g. "peer.sh server"')
    ap.add_argument("--corpus-dir", type=Path, required=True)
    ap.add_argument("--queries", type=Path, required=True, help='JSON {"queries": [{id, query}]}')
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--state-dir", help="keep the server's HOME/TMPDIR/project here")
    ap.add_argument("--per-server", type=int, default=3, help="searches per server process")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds per tool call")
    ap.add_argument(
        "--search-timeout", type=float, default=30.0, help="seconds per ctx_search call"
    )
    a = ap.parse_args()
    result = asyncio.run(run(a))
    a.out.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"[upstream] wrote {a.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
