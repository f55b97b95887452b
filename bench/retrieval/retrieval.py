"""Retrieval benchmark: line windows vs Nexus AST chunks, on the dev and held-out sets.

For each query set (``bench/retrieval/eval_sets.py``: the shared dev set, and our held-out set of
other packages built by the same rules), with all-MiniLM-L6-v2 and exact cosine top 10:
  * fixed 50-line windows as the reference study embeds them (plain text), and with
    Nexus's embedder (context line + dual view), to separate the two effects;
  * Nexus AST at the defaults, as plain text, without the context line, without the
    words view;
  * a grid of max_tokens x min_tokens.
The defaults must be the grid's best row by doc MRR@10 averaged over both sets (rows
within 0.005 are ties, won by fewer lines in the top 5, then fewer chunks under 32
tokens): a setting that fits only the dev packages does not win.
Also: embedding throughput and the cache hit rate after a slider change; query latency
p50/p95 at 10k and 100k vectors, usearch vs exact numpy.

    .venv/bin/python bench/retrieval/retrieval.py [--quick] [--dev-only]

Results: ``bench/results/retrieval.{json,md}``. Embeddings are cached in
``$NEXUS_CACHE_DIR`` (default ``.nexus-cache/embeddings``); a second run takes a few minutes.

The third set, check (axios, preact, ramda), is only reported: no setting is chosen on it.
Rows per set: 50-line windows as plain text (reproduces the reference 0.416 on dev) and with
Nexus's embedding and keyword scores; Nexus AST at the defaults as plain text without
keywords, without the context line, without the words view, at keyword weights 0, 0.1 and 0.3,
and as shipped. Latency rows: usearch, exact numpy cosine, and hybrid (numpy cosine + BM25
over real chunk texts repeated to the size). The first run embeds about 10k texts (roughly
15 minutes on 2 cores).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bench.retrieval.eval_sets import QuerySet, check_set, dev_set, heldout_set  # noqa: E402
from nexus.chunking.pipeline import analyze_files, chunk_analyses  # noqa: E402
from nexus.config import ChunkConfig  # noqa: E402
from nexus.evaluation.experiments import ConfigResult, best, describe, evaluate_config  # noqa: E402
from nexus.evaluation.query_sets import load_queries  # noqa: E402
from nexus.ingest.sources import open_repository  # noqa: E402
from nexus.retrieval.embedding import CachedEmbedder, EmbeddingCache, default_embedder  # noqa: E402

RESULTS = ROOT / "bench" / "results"
GRID_MAX = (256, 384, 512, 768, 1024)
GRID_MIN = (0, 16, 32, 64, 96)
VARIANTS = ("doc", "name", "calls")


@dataclass(frozen=True)
class JointResult:
    """One grid setting over several query sets: metrics are the sets' means."""

    config: ChunkConfig
    parts: tuple[ConfigResult, ...]

    @property
    def chunks(self) -> int:
        return sum(p.chunks for p in self.parts)

    @property
    def under_32(self) -> int:
        return sum(p.under_32 for p in self.parts)

    def metric(self, name: str, variant: str = "doc") -> float:
        return sum(p.metric(name, variant) for p in self.parts) / len(self.parts)


#: The budget metrics beside the rank ones (``nexus.evaluation.budget``): the share of
#: targets read within 1k/2k/4k tokens, the median tokens to the first hit, top-10 cost.
BUDGET_NAMES = ("R@1k", "R@2k", "R@4k", "tokens to first hit", "lines@10", "tokens@10")


def row(label: str, result: ConfigResult | JointResult) -> dict[str, object]:
    out: dict[str, object] = {"run": label, "chunks": result.chunks, "under_32": result.under_32}
    for variant in VARIANTS:
        for name in ("R@1", "R@5", "R@10", "MRR@10", "lines@5", *BUDGET_NAMES):
            out[f"{variant}:{name}"] = round(result.metric(name, variant), 3)
    return out


def budget_cells(r: dict[str, object], variant: str = "doc") -> str:
    """The budget columns of one table row (``BUDGET_HEADER``)."""
    return (
        " | ".join(f"{r[f'{variant}:{n}']:.3f}" for n in BUDGET_NAMES[:3])
        + f" | {r[f'{variant}:tokens to first hit']:.0f} | {r[f'{variant}:tokens@10']:.0f}"
    )


BUDGET_HEADER = "doc R@1k | doc R@2k | doc R@4k | doc tokens to 1st hit | doc tokens@10"


def evaluate_set(
    query_set: QuerySet, configs: dict[str, ChunkConfig], embedders: dict[str, CachedEmbedder]
) -> dict[str, ConfigResult]:
    """Every labelled config on one set (``label -> result``); labels name the embedder."""
    queries = load_queries(query_set.queries)
    repo = open_repository(query_set.corpus, name=query_set.name)
    analyses = analyze_files(repo.source_files(), ChunkConfig().encoding)
    results = {}
    for label, config in configs.items():
        embedder = embedders["plain" if not config.words_view else "nexus"]
        result = evaluate_config(analyses, repo.name, config, queries, embedder)
        results[label] = result
        print(
            f"[{query_set.name}] {label:40} chunks {result.chunks:5}  "
            f"doc MRR@10 {result.metric('MRR@10'):.3f}  R@5 {result.metric('R@5'):.3f}  "
            f"lines@5 {result.metric('lines@5'):6.1f}",
            flush=True,
        )
    return results


def latency(
    n: int, texts: list[str], query_texts: list[str], dim: int = 384, queries: int = 200
) -> dict[str, float]:
    """p50/p95 milliseconds of one top-10 query: usearch (HNSW), exact numpy cosine, and
    hybrid (numpy cosine + BM25 over ``texts`` repeated to ``n`` chunks, the default
    keyword weight)."""
    from usearch.index import Index

    from nexus.retrieval.lexical import LexicalIndex

    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((n, dim)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    index = Index(ndim=dim, metric="cos", dtype="f32")
    index.add(np.arange(n), vectors)
    lexical = LexicalIndex([texts[i % len(texts)] for i in range(n)])
    weight = np.float32(ChunkConfig().lexical_weight)
    probes = vectors[rng.integers(0, n, queries)] + 0.01
    timings: dict[str, list[float]] = {"usearch": [], "numpy": [], "hybrid": []}
    for number, probe in enumerate(probes):
        start = time.perf_counter()
        index.search(probe, 10)
        timings["usearch"].append(time.perf_counter() - start)
        start = time.perf_counter()
        scores = vectors @ probe
        np.argpartition(-scores, 10)[:10]
        timings["numpy"].append(time.perf_counter() - start)
        start = time.perf_counter()
        text = query_texts[number % len(query_texts)]
        scores = vectors @ probe + weight * lexical.relative_scores(text)
        np.argpartition(-scores, 10)[:10]
        timings["hybrid"].append(time.perf_counter() - start)
    return {
        f"{name}_{p}_ms": round(float(np.percentile(t, p)) * 1000, 3)
        for name, t in timings.items()
        for p in (50, 95)
    }


def latency_texts(query_set: QuerySet, config: ChunkConfig) -> tuple[list[str], list[str]]:
    """Real chunk texts and doc queries of a set, for the keyword part of the latency."""
    repo = open_repository(query_set.corpus, name=query_set.name)
    analyses = analyze_files(repo.source_files(), config.encoding)
    chunks = chunk_analyses(analyses, config, repo=repo.name)
    queries = [q.query for q in load_queries(query_set.queries) if q.variant == "doc"]
    return [c.embedding_text for c in chunks], queries


def embedding_figures(query_set: QuerySet, default: ChunkConfig) -> tuple[float, float]:
    """Chunks/s on a fresh cache, and the hit rate after moving max_tokens by 128."""
    repo = open_repository(query_set.corpus, name=query_set.name)
    analyses = analyze_files(repo.source_files(), default.encoding)
    fresh = CachedEmbedder(default_embedder(), EmbeddingCache(Path("/tmp/nexus-bench-cache")))
    fresh.cache.clear()
    texts = [c.embedding_text for c in chunk_analyses(analyses, default, repo=repo.name)]
    start = time.perf_counter()
    fresh.encode(texts)
    throughput = len(texts) / (time.perf_counter() - start)
    moved = default.with_(max_tokens=default.max_tokens + 128)
    fresh.encode([c.embedding_text for c in chunk_analyses(analyses, moved, repo=repo.name)])
    return throughput, fresh.last_hits / max(fresh.last_hits + fresh.last_misses, 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small grid, no 100k latency")
    parser.add_argument(
        "--dev-only", action="store_true", help="skip the held-out and the check set"
    )
    args = parser.parse_args()

    sets = [dev_set()] if args.dev_only else [dev_set(), heldout_set()]
    cache = EmbeddingCache()  # $NEXUS_CACHE_DIR, else .nexus-cache/embeddings
    embedders = {
        "plain": CachedEmbedder(default_embedder(words_view=False), cache),
        "nexus": CachedEmbedder(default_embedder(), cache),
    }
    default = ChunkConfig()
    plain = default.with_(context_header=False, words_view=False, lexical_weight=0.0)
    ablations = {
        "fixed 50 lines, plain text (reference)": plain.with_(strategy="lines"),
        "fixed 50 lines, nexus embedding text + keywords": default.with_(strategy="lines"),
        "nexus AST default, plain text, no keywords": plain,
        "nexus AST default, no context line": default.with_(context_header=False),
        "nexus AST default, no words view": default.with_(words_view=False),
        **{
            f"nexus AST default, keyword weight {w}": default.with_(lexical_weight=w)
            for w in (0.0, 0.1, 0.3)
        },
        "nexus AST default": default,
    }
    grid_max = (384, 512, 768) if args.quick else GRID_MAX
    grid_min = (16, 64) if args.quick else GRID_MIN
    grid = {
        f"grid {describe(c)}": c
        for c in (default.with_(max_tokens=hi, min_tokens=lo) for hi in grid_max for lo in grid_min)
    }
    per_set = {s.name: evaluate_set(s, {**ablations, **grid}, embedders) for s in sets}
    # The check set is only reported: nothing above looks at it.
    checked = {} if args.dev_only else {"check": evaluate_set(check_set(), ablations, embedders)}

    joint = [
        JointResult(config, tuple(per_set[s.name][label] for s in sets))
        for label, config in grid.items()
    ]
    winner = best(joint, choose_by="MRR@10")  # this bench's rule; R@1k's pick is reported
    default_is_best = describe(winner.config) == describe(default)
    print(
        f"best grid row over {[s.name for s in sets]}: {describe(winner.config)}; "
        f"default is best: {default_is_best}"
    )

    throughput, hit_rate = embedding_figures(sets[0], default)
    print(
        f"embedding throughput {throughput:.1f} chunks/s (dual view: two passes each); "
        f"cache hit rate after max_tokens +128: {hit_rate:.1%}"
    )
    sizes = (10_000,) if args.quick else (10_000, 100_000)
    texts, query_texts = latency_texts(sets[0], default)
    latencies = {str(n): latency(n, texts, query_texts) for n in sizes}
    for n, figures in latencies.items():
        print(f"query latency at {n} vectors: {figures}")

    summary = {
        "date": date.today().isoformat(),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores",
        "model": embedders["nexus"].name,
        "sets": [s.name for s in sets],
        "default": describe(default),
        "best_grid_row": describe(winner.config),
        "best_grid_row_by_R@1k": describe(best(joint, choose_by="R@1k").config),
        "default_is_best": default_is_best,
        "runs": {
            name: [row(label, result) for label, result in results.items()]
            for name, results in per_set.items()
        },
        "check_runs": {
            name: [row(label, result) for label, result in results.items()]
            for name, results in checked.items()
        },
        "joint_grid": [row(describe(j.config), j) for j in joint],
        "embedding_chunks_per_s": round(throughput, 1),
        "cache_hit_rate_after_slider_change": round(hit_rate, 3),
        "query_latency": latencies,
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "retrieval.json").write_text(json.dumps(summary, indent=2) + "\n")
    (RESULTS / "retrieval.md").write_text(markdown(summary))
    print(f"wrote {RESULTS / 'retrieval.json'} and {RESULTS / 'retrieval.md'}")


def table(rows: list[dict[str, object]]) -> list[str]:
    lines = [
        "| run | chunks | <32 tok | doc R@1 | doc R@5 | doc MRR@10 | doc lines@5 | "
        f"name MRR | calls MRR | {BUDGET_HEADER} |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['run']} | {r['chunks']} | {r['under_32']} | {r['doc:R@1']:.3f} | "
            f"{r['doc:R@5']:.3f} | **{r['doc:MRR@10']:.3f}** | {r['doc:lines@5']:.1f} | "
            f"{r['name:MRR@10']:.3f} | {r['calls:MRR@10']:.3f} | {budget_cells(r)} |"
        )
    return lines


def markdown(summary: dict) -> str:
    lines = [
        f"# Retrieval benchmark ({summary['date']}, {summary['machine']})",
        "",
        f"Model `{summary['model']}` (all-MiniLM-L6-v2; `+dual`: each text embedded as "
        "written and as words, averaged), exact cosine top 10, overlap>=50% rule. Sets: "
        f"{', '.join(summary['sets'])} (doc comments stripped; see bench/retrieval/eval_sets.py).",
        "",
        f"Default `{summary['default']}`; best grid row by mean doc MRR@10 over the sets: "
        f"`{summary['best_grid_row']}` (default is best: {summary['default_is_best']}); "
        f"by mean doc R@1k (share of targets read within 1,000 tokens): "
        f"`{summary.get('best_grid_row_by_R@1k', '-')}`.",
    ]
    for name, rows in summary["runs"].items():
        lines += ["", f"## {name}", "", *table(rows)]
    lines += ["", "## grid, mean over the sets", "", *table(summary["joint_grid"])]
    for name, rows in summary["check_runs"].items():
        lines += [
            "",
            f"## {name} (never used to choose a setting)",
            "",
            "axios, preact, ramda: built by the same rules, reported only "
            "(bench/retrieval/eval_sets.py).",
            "",
            *table(rows),
        ]
    lines += [
        "",
        f"Embedding throughput: {summary['embedding_chunks_per_s']} chunks/s on 2 CPU cores "
        "(dual view: two model passes per chunk). Cache hit rate after a max_tokens change: "
        f"{summary['cache_hit_rate_after_slider_change']:.1%}.",
        "",
        "Top-10 query latency (ms; hybrid = numpy cosine + BM25 over real chunk texts "
        "repeated to the size, the default keyword weight):",
        "",
        "| vectors | usearch p50 | usearch p95 | numpy p50 | numpy p95 | hybrid p50 | hybrid p95 |",
        "|---|---|---|---|---|---|---|",
    ]
    for n, f in summary["query_latency"].items():
        lines.append(
            f"| {n} | {f['usearch_50_ms']} | {f['usearch_95_ms']} | "
            f"{f['numpy_50_ms']} | {f['numpy_95_ms']} | {f['hybrid_50_ms']} | {f['hybrid_95_ms']} |"
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
