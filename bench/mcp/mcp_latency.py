"""MCP latency: first answer from cold, warm p95, and edit-to-fresh, through a real client.

Run: ``.venv/bin/python bench/mcp/mcp_latency.py --repo sample_repos/express-images
--repo /tmp/nexus-questions/knex`` (``--help``).

For each repository, a copy is served by ``nexus mcp COPY`` (fast tier, the default)
over stdio and driven with the MCP SDK's own client, as an agent would:

* **cold**: from spawning the server to the first ``search`` answer, with an empty
  embedding cache and no saved index (the fast tier's distilled model is linked in
  from ``$NEXUS_CACHE_DIR/models``, as on a machine where it was distilled once);
* **warm**: ``search`` latency over ``--n`` distinct queries (the repository's own
  hand-written questions first, then others), p50 / p95 / max;
* **fresh**: a unique comment appended to a file, then ``search`` for its word: the
  seconds of that call (it re-reads, chunks and embeds the changed file first), and
  whether the first answer after the edit already holds the new text;
* **restart**: a new server on the same cache, the edits undone: the first answer from
  the saved index;
* **restart after an edit**: a comment appended to one file, then a new server on the
  same cache: the first answer (a search for the comment's word) and whether it holds
  it. The server opens the index saved before the edit and chunks only that file again
  (``Workspace.index(refresh_saved=True)``).

Figures go to stdout and to ``bench/results/mcp_latency.json`` and ``.md``. The machine
is shared: the load average is printed beside each figure. Never asserts times.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "bench" / "results"
QUESTIONS = ROOT / "bench" / "questions" / "repos"
COMMENT = {".py": "#", ".rb": "#"}  # every other language here takes //
#: Whether the server indexes at start (``nexus mcp``'s default) or at the first call
#: (``--no-warm``, this benchmark's default: the cold figure is then the first call's).
SERVER_WARMS = False


def _queries(repo: Path, n: int) -> list[str]:
    """``n`` distinct queries: the repository's own (sample set or hand-written questions)
    first, then the other question sets'."""
    own = [repo / "queries.jsonl", QUESTIONS / f"{repo.name}.jsonl"]
    files = [f for f in own if f.is_file()] + sorted(QUESTIONS.glob("*.jsonl"))
    found: dict[str, None] = {}
    for file in files:
        for line in file.read_text().splitlines():
            if line.strip():
                found.setdefault(json.loads(line)["query"], None)
    return list(found)[:n]


def _edit_target(repo: Path) -> Path:
    """A chunked source file to edit: the largest of the first hundred sources."""
    sources = [
        p
        for p in sorted(repo.rglob("*"))
        if p.suffix in {".py", ".js", ".ts", ".go", ".rs", ".java"} and "test" not in str(p)
    ][:100]
    return max(sources, key=lambda p: p.stat().st_size)


def _params(repo: Path, cache: Path):
    from mcp.client.stdio import StdioServerParameters

    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "NEXUS_CACHE_DIR": str(cache),
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
    }
    warm = "--warm" if SERVER_WARMS else "--no-warm"
    args = ["-m", "nexus.cli", "mcp", str(repo), warm, "--cache", str(cache)]
    return StdioServerParameters(command=sys.executable, args=args, env=env)


def _load() -> float:
    return os.getloadavg()[0]


async def _session(repo: Path, cache: Path, queries: list[str], edits: int) -> dict:
    from mcp.client import Client

    began = time.perf_counter()
    async with Client(_params(repo, cache), read_timeout_seconds=3600) as client:
        first = await client.call_tool("search", {"query": queries[0]})
        cold = time.perf_counter() - began
        assert not first.is_error, first.content
        status = (await client.call_tool("index_status", {})).structured_content
        warm = []
        for query in queries:
            start = time.perf_counter()
            result = await client.call_tool("search", {"query": query, "top_k": 5})
            warm.append(time.perf_counter() - start)
            assert not result.is_error, result.content
        fresh, seen = [], []
        target = _edit_target(repo)
        original = target.read_bytes()
        for number in range(edits):
            word = f"zqxfreshmarker{number}"
            _append_word(repo, word)
            start = time.perf_counter()
            result = await client.call_tool("search", {"query": word, "top_k": 3})
            fresh.append(time.perf_counter() - start)
            hits = (result.structured_content or {}).get("hits", [])
            seen.append(any(word in hit["text"] for hit in hits))
        target.write_bytes(original)  # the restart finds the files as they were indexed
    return {"cold_s": cold, "warm_s": warm, "fresh_s": fresh, "fresh_seen": seen, "status": status}


async def _restart(repo: Path, cache: Path, query: str) -> tuple[float, bool]:
    """Seconds from spawning a server to its first answer, and whether a hit's text
    holds ``query``."""
    from mcp.client import Client

    began = time.perf_counter()
    async with Client(_params(repo, cache), read_timeout_seconds=3600) as client:
        result = await client.call_tool("search", {"query": query})
        seconds = time.perf_counter() - began
        assert not result.is_error, result.content
        hits = (result.structured_content or {}).get("hits", [])
        return seconds, any(query in hit["text"] for hit in hits)


def _append_word(repo: Path, word: str) -> None:
    target = _edit_target(repo)
    with target.open("a") as f:
        f.write(f"\n{COMMENT.get(target.suffix, '//')} {word} appended by the benchmark\n")


def measure(repo: Path, n: int, edits: int, models: Path, reuse: Path | None = None) -> dict:
    with tempfile.TemporaryDirectory(prefix="nexus-mcp-bench-") as scratch:
        copy = Path(scratch) / repo.name
        shutil.copytree(repo, copy, symlinks=True)
        cache = Path(scratch) / "cache"
        if reuse is not None:  # a cache that holds this repository's saved index already
            cache.symlink_to(reuse.resolve())
        else:
            cache.mkdir()
        if reuse is None and models.is_dir():
            (cache / "models").symlink_to(models)
        queries = _queries(repo, n)
        load_before = _load()
        run = asyncio.run(_session(copy, cache, queries, edits))
        restart, _ = asyncio.run(_restart(copy, cache, queries[1]))
        _append_word(copy, "zqxrestartmarker")
        edited, edit_seen = asyncio.run(_restart(copy, cache, "zqxrestartmarker"))
    warm = sorted(run["warm_s"])
    status = run.get("status") or {}
    status = status.get("result", status)
    return {
        "repo": repo.name,
        "files": status.get("files"),
        "chunks": status.get("chunks"),
        "queries": len(warm),
        "cold_first_answer_s": round(run["cold_s"], 2) if reuse is None else "(reused)",
        "warm_p50_ms": round(1000 * statistics.median(warm), 1),
        "warm_p95_ms": round(1000 * warm[max(0, int(0.95 * len(warm)) - 1)], 1),
        "warm_max_ms": round(1000 * warm[-1], 1),
        "fresh_median_ms": round(1000 * statistics.median(run["fresh_s"]), 1),
        "fresh_max_ms": round(1000 * max(run["fresh_s"]), 1),
        "fresh_seen_on_first_answer": all(run["fresh_seen"]),
        "restart_first_answer_s": round(restart, 2),
        "restart_after_edit_s": round(edited, 2),
        "restart_edit_seen": edit_seen,
        "load_before": round(load_before, 1),
        "load_after": round(_load(), 1),
    }


COLUMNS = [
    ("repo", "repository"),
    ("files", "files"),
    ("chunks", "chunks"),
    ("cold_first_answer_s", "cold: first answer (s)"),
    ("restart_first_answer_s", "restart: first answer (s)"),
    ("restart_after_edit_s", "restart after an edit: first answer (s)"),
    ("restart_edit_seen", "edit seen after restart"),
    ("warm_p50_ms", "warm p50 (ms)"),
    ("warm_p95_ms", "warm p95 (ms)"),
    ("fresh_median_ms", "edit to fresh, median (ms)"),
    ("fresh_max_ms", "edit to fresh, max (ms)"),
    ("fresh_seen_on_first_answer", "edit seen at once"),
    ("load_before", "load avg"),
]


def markdown(rows: list[dict], n: int) -> str:
    head = "| " + " | ".join(title for _, title in COLUMNS) + " |"
    rule = "|" + "---|" * len(COLUMNS)
    body = ["| " + " | ".join(str(row[key]) for key, _ in COLUMNS) + " |" for row in rows]
    return "\n".join(
        [
            "# MCP latency (`bench/mcp/mcp_latency.py`)",
            "",
            f"`nexus mcp` over stdio, fast tier, the SDK's client; warm figures over {n} "
            "distinct queries (top 5); fresh: a comment appended to one file, then a search "
            "for its word. The machine is shared (2 cores; see the load average): "
            "figures are inflated by the load.",
            "",
            head,
            rule,
            *body,
            "",
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", action="append", required=True, help="repository (repeat)")
    parser.add_argument("--n", type=int, default=50, help="warm queries per repository")
    parser.add_argument("--edits", type=int, default=5, help="edits for the freshness figure")
    parser.add_argument(
        "--reuse-cache",
        help="a cache holding the repositories' saved indexes: no cold figure, the rest measured",
    )
    parser.add_argument("--out", default=str(RESULTS / "mcp_latency"), help="results, no suffix")
    parser.add_argument(
        "--server-warms",
        action="store_true",
        help="the server indexes at start, as nexus mcp does by default (else --no-warm)",
    )
    args = parser.parse_args()
    global SERVER_WARMS
    SERVER_WARMS = args.server_warms
    from nexus.retrieval.tiers import models_dir  # $NEXUS_CACHE_DIR, else the user's

    shared = models_dir()
    rows = []
    for repo in args.repo:
        reuse = Path(args.reuse_cache) if args.reuse_cache else None
        row = measure(Path(repo).resolve(), args.n, args.edits, shared.resolve(), reuse)
        print(json.dumps(row), flush=True)
        rows.append(row)
    out = Path(args.out)
    out.with_suffix(".json").write_text(json.dumps(rows, indent=2) + "\n")
    out.with_suffix(".md").write_text(markdown(rows, args.n))
    print(markdown(rows, args.n))


if __name__ == "__main__":
    main()
