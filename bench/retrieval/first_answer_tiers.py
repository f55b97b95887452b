"""Is the fast tier a better first answer on Search while the MiniLM index builds?

While a fresh index builds, Search shows keyword (BM25) hits over every chunk and dense
hits over the chunks MiniLM has embedded so far. The fast tier could instead answer
densely over every chunk within seconds. On each doc-comment set (dev, held-out, check;
``ChunkConfig()`` chunks, ranking stage on, doc variant) this scores:

* ``keyword only``: every chunk, the dense part flat (a constant vector), so the ranking
  stage sorts by keywords and its boosts: what Search has before any vector;
* ``quality over the first P%``: MiniLM over the first P% of the chunks in build order
  (path order), keywords over the same share: the partial dense answer at that moment;
* ``fast over all``: the static model over every chunk;
* ``quality over all``: the finished index.

It also times the fast tier over every chunk of the scale corpus (``bench/speed/scale.py``'s,
if present) against MiniLM's rate, to say what share MiniLM holds when the fast tier is done.

    nice -n 5 .venv/bin/python bench/retrieval/first_answer_tiers.py

Results: ``bench/results/first_answer_tiers.{json,md}``.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Sequence
from datetime import date
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bench.machine import machine  # noqa: E402
from bench.retrieval.eval_sets import check_set, dev_set, heldout_set  # noqa: E402
from nexus.chunking.pipeline import analyze_files, chunk_analyses  # noqa: E402
from nexus.config import ChunkConfig  # noqa: E402
from nexus.evaluation.query_sets import load_queries  # noqa: E402
from nexus.evaluation.runs import evaluate  # noqa: E402
from nexus.ingest.sources import open_repository  # noqa: E402
from nexus.retrieval.embedding import CachedEmbedder, EmbeddingCache  # noqa: E402
from nexus.retrieval.index import VectorIndex  # noqa: E402
from nexus.retrieval.ranking import rules_for  # noqa: E402
from nexus.retrieval.tiers import FAST, QUALITY, tier_embedder  # noqa: E402

RESULTS = ROOT / "bench" / "results"
SETS = {"dev": dev_set, "heldout": heldout_set, "check": check_set}
SHARES = (0.1, 0.25, 0.5)
SCALE = Path(os.environ.get("NEXUS_BENCH_DIR", "/tmp/nexus-bench")) / "scale" / "corpus"


class FlatEmbedder:
    """Every text the same unit vector: dense scores tie, keywords decide."""

    name = "flat"
    dim = 8
    max_seq_length = 512

    def encode(self, texts: Sequence[str], progress=None) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        out[:, 0] = 1.0
        return out

    def count_wordpieces(self, texts: Sequence[str]) -> list[int]:
        return [0] * len(texts)


def doc_mrr(queries, chunks, embedder) -> float:
    index = VectorIndex.from_chunks(chunks, embedder)
    config = ChunkConfig()
    report = evaluate(
        queries, index, embedder, lexical_weight=config.lexical_weight, ranking=rules_for(config)
    )
    return round(report.metric("doc", "MRR@10"), 3)


def score_set(name: str, fast, quality) -> dict[str, float]:
    query_set = SETS[name]()
    queries = load_queries(query_set.queries)
    repo = open_repository(query_set.corpus, name=name)
    analyses = analyze_files(repo.source_files(), ChunkConfig().encoding)
    chunks = chunk_analyses(analyses, ChunkConfig(), repo=repo.name)
    row = {"chunks": len(chunks), "keyword only": doc_mrr(queries, chunks, FlatEmbedder())}
    for share in SHARES:
        part = chunks[: max(1, round(share * len(chunks)))]
        row[f"quality over the first {share:.0%}"] = doc_mrr(queries, part, quality)
    row["fast over all"] = doc_mrr(queries, chunks, fast)
    row["quality over all"] = doc_mrr(queries, chunks, quality)
    print(f"[{name}] {row}", flush=True)
    return row


def scale_timing(fast) -> dict[str, object]:
    """Seconds for the fast tier (no cache) over every default chunk of the scale corpus."""
    if not SCALE.is_dir():
        return {}
    repo = open_repository(SCALE, name="scale")
    start = time.perf_counter()
    analyses = analyze_files(repo.source_files(), ChunkConfig().encoding)
    chunks = chunk_analyses(analyses, ChunkConfig(), repo=repo.name)
    chunk_s = time.perf_counter() - start
    start = time.perf_counter()
    fast.encode([c.embedding_text for c in chunks])
    embed_s = time.perf_counter() - start
    return {
        "chunks": len(chunks),
        "parse_and_chunk_s": round(chunk_s, 1),
        "fast_embed_s": round(embed_s, 1),
        "fast_chunks_per_s": round(len(chunks) / embed_s),
        "load_after": " ".join(f"{x:.1f}" for x in os.getloadavg()),
    }


def main() -> None:
    fast = tier_embedder(FAST)
    quality = CachedEmbedder(tier_embedder(QUALITY), EmbeddingCache())
    sets = {name: score_set(name, fast, quality) for name in SETS}
    summary = {
        "date": date.today().isoformat(),
        "machine": ", ".join(f"{k} {v}" for k, v in machine().items()),
        "load": " ".join(f"{x:.1f}" for x in os.getloadavg()),
        "sets": sets,
        "scale": scale_timing(fast),
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "first_answer_tiers.json").write_text(json.dumps(summary, indent=2) + "\n")
    columns = list(next(iter(sets.values())))
    lines = [
        f"# First answer while the MiniLM index builds: fast tier vs partial MiniLM "
        f"({summary['date']})",
        "",
        f"{summary['machine']}; load {summary['load']} (shared). Doc MRR@10, `ChunkConfig()` "
        "chunks, ranking stage on. `quality over the first P%`: MiniLM and keywords over the "
        "first P% of chunks in build order.",
        "",
        "| set | " + " | ".join(columns) + " |",
        "|---|" + "---|" * len(columns),
        *(
            f"| {name} | " + " | ".join(str(row[c]) for c in columns) + " |"
            for name, row in sets.items()
        ),
    ]
    if summary["scale"]:
        s = summary["scale"]
        lines += [
            "",
            f"Scale corpus: {s['chunks']} chunks (parse + chunk {s['parse_and_chunk_s']} s); "
            f"the fast tier embeds them all (both views) in {s['fast_embed_s']} s "
            f"({s['fast_chunks_per_s']} chunks/s; load after {s['load_after']}).",
        ]
    text = "\n".join(lines) + "\n"
    (RESULTS / "first_answer_tiers.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
