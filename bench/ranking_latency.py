"""Query latency with the ranking stage at 100k chunks, against the score before it.

The chunks and vectors of the question set's AST indexes (``bench/questions_index.py``)
are repeated, each copy in its own folder and with a little noise on its vectors, to
100,000 chunks; the 240 questions are the queries. Timed per query, query embedding
excluded (the same for both): ``VectorIndex.search`` with the ranking stage, and with
cosine + 0.2 x BM25 (today's hybrid before the stage).

    .venv/bin/python bench/ranking_latency.py [--chunks 100000]

Writes ``bench/results/ranking_latency.{md,json}``.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from dataclasses import replace
from datetime import date
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.questions_eval import INDEXES, load_questions  # noqa: E402
from bench.questions_index import index_folder  # noqa: E402
from nexus.retrieval.embedding import CachedEmbedder, EmbeddingCache, default_embedder  # noqa: E402
from nexus.retrieval.index import VectorIndex  # noqa: E402
from nexus.retrieval.ranking import DEFAULT_RULES  # noqa: E402

RESULTS = ROOT / "bench" / "results"


def grown_index(size: int) -> VectorIndex:
    """The question set's chunks and vectors, repeated (each copy in its own folder)."""
    chunks, vectors = [], []
    for repo in load_questions("all"):
        index = VectorIndex.load(index_folder(INDEXES, repo, "ast"))
        chunks += list(index.chunks)
        vectors.append(np.asarray(index.vectors))
    base = np.concatenate(vectors)
    rng = np.random.default_rng(0)
    grown, rows = [], []
    for copy in range(-(-size // len(chunks))):
        for chunk in chunks:
            if len(grown) == size:
                break
            grown.append(replace(chunk, id=f"{copy}:{chunk.id}", file=f"copy{copy}/{chunk.file}"))
        rows.append(base[: len(grown) - len(rows) * len(chunks)])
    noisy = np.concatenate(rows) + rng.normal(0, 0.01, (size, base.shape[1])).astype(np.float32)
    return VectorIndex.build(grown, noisy)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=100_000)
    args = parser.parse_args()
    questions = [q.query for qs in load_questions("all").values() for q in qs]
    embedder = CachedEmbedder(default_embedder(), EmbeddingCache(INDEXES / "cache"))
    vectors = embedder.encode(questions)
    index = grown_index(args.chunks)
    index.keywords()  # built once, as a saved index loads it
    runs = {
        "ranking stage": lambda v, q: index.search(v, 10, True, q, 0.2, DEFAULT_RULES),
        "cosine + 0.2 x BM25": lambda v, q: index.search(v, 10, True, q, 0.2),
    }
    figures: dict[str, dict[str, float]] = {}
    for name, run in runs.items():
        run(vectors[0], questions[0])  # warm
        times = []
        for vec, query in zip(vectors, questions, strict=True):
            start = time.perf_counter()
            run(vec, query)
            times.append(time.perf_counter() - start)
        figures[name] = {
            f"p{p}_ms": round(float(np.percentile(times, p)) * 1000, 2) for p in (50, 95, 99)
        }
        print(f"{name:22} {figures[name]}", flush=True)
    report = {
        "date": str(date.today()),
        "machine": platform.processor() or platform.machine(),
        "chunks": len(index),
        "queries": len(questions),
        "figures": figures,
    }
    (RESULTS / "ranking_latency.json").write_text(json.dumps(report, indent=1) + "\n")
    lines = [
        "# Query latency with the ranking stage",
        "",
        f"`bench/ranking_latency.py`, {date.today()}: {len(index):,} chunks (the question "
        f"set's AST chunks repeated), {len(questions)} questions, query embedding excluded.",
        "",
        "| search | p50 ms | p95 ms | p99 ms |",
        "|---|---|---|---|",
        *(
            f"| {name} | {f['p50_ms']} | {f['p95_ms']} | {f['p99_ms']} |"
            for name, f in figures.items()
        ),
    ]
    (RESULTS / "ranking_latency.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
