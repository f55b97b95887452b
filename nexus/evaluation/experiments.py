"""Evaluate chunking settings on a query set: one config, both strategies, or a sweep.

The benchmark, the ``nexus eval`` command and the dashboard's Evaluate page all
run through these functions, so their numbers agree.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from nexus.chunking.analysis import FileAnalysis
from nexus.chunking.pipeline import chunk_analyses
from nexus.config import ChunkConfig
from nexus.evaluation.metrics import EvalReport, Query, evaluate
from nexus.retrieval.embedding import Embedder
from nexus.retrieval.index import VectorIndex
from nexus.retrieval.ranking import rules_for

HEADLINE_VARIANT = "doc"


@dataclass(frozen=True)
class ConfigResult:
    """One chunking config evaluated on a query set."""

    config: ChunkConfig
    chunks: int
    over_window: int  # chunks whose embedding text exceeds the model's window
    under_32: int  # chunks under 32 tokens
    report: EvalReport

    def metric(self, name: str, variant: str = HEADLINE_VARIANT) -> float:
        group = variant if variant in self.report.metrics else "all"
        return self.report.metric(group, name)


def evaluate_config(
    analyses: Sequence[FileAnalysis],
    repo: str,
    config: ChunkConfig,
    queries: Sequence[Query],
    embedder: Embedder,
    query_vectors: np.ndarray | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> ConfigResult:
    """Chunk with ``config``, embed (through whatever cache ``embedder`` has), score."""
    chunks = chunk_analyses(analyses, config, repo=repo)
    index = VectorIndex.from_chunks(chunks, embedder, progress)
    window = embedder.max_seq_length
    over = sum(
        1 for n in embedder.count_wordpieces([c.embedding_text for c in chunks]) if n > window
    )
    report = evaluate(
        queries,
        index,
        embedder,
        query_vectors=query_vectors,
        label=describe(config),
        lexical_weight=config.lexical_weight,
        ranking=rules_for(config),
    )
    under = sum(1 for c in chunks if c.token_count < 32)
    return ConfigResult(config, len(chunks), over, under, report)


def describe(config: ChunkConfig) -> str:
    """A short label: ``lines 50/0`` or ``ast 512/16 auto``."""
    if config.strategy == "lines":
        return f"lines {config.line_window}/{config.line_overlap}"
    return f"ast {config.max_tokens}/{config.min_tokens} {config.profile}"


#: ``progress(share_done, what)``: the share of the sweep done (0..1) and what runs now.
SweepProgress = Callable[[float, str], None]


def sweep(
    analyses: Sequence[FileAnalysis],
    repo: str,
    base: ChunkConfig,
    queries: Sequence[Query],
    embedder: Embedder,
    max_tokens: Sequence[int],
    min_tokens: Sequence[int] = (0,),
    progress: SweepProgress | None = None,
    extra: Sequence[tuple[int, int]] = (),
) -> list[ConfigResult]:
    """Every (max, min) pair with ``min < max``, then the ``extra`` pairs not in the grid
    (the setting in use, so a sweep always has it as a row); the queries are embedded
    once. ``progress`` is told from the start, embedding included, not only after
    each setting."""
    report: SweepProgress = progress or (lambda share, what: None)
    grid = [(hi, lo) for hi in max_tokens for lo in min_tokens if lo < hi]
    grid += [pair for pair in dict.fromkeys(extra) if pair not in grid and pair[1] <= pair[0]]
    report(0.0, f"embedding {len(queries)} queries")
    query_vectors = embedder.encode([q.query for q in queries])
    results = []
    for done, (hi, lo) in enumerate(grid):
        what = f"setting {done + 1} of {len(grid)} (max {hi}, min {lo})"
        report(done / len(grid), what)

        def embedding(n: int, total: int, done: int = done, what: str = what) -> None:
            report((done + n / max(total, 1)) / len(grid), f"{what}: embedding {n}/{total}")

        config = base.with_(strategy="ast", max_tokens=hi, min_tokens=lo)
        results.append(
            evaluate_config(analyses, repo, config, queries, embedder, query_vectors, embedding)
        )
    report(1.0, "done")
    return results


def best(
    results: Sequence[ConfigResult], variant: str = HEADLINE_VARIANT, tolerance: float = 0.005
) -> ConfigResult:
    """The row with the highest MRR@10. Rows within ``tolerance`` of it (about one query's
    rank in a few hundred) are ties, won by fewer lines in the top 5 (the context a
    prompt pays for), then by fewer chunks under 32 tokens."""
    top = max(r.metric("MRR@10", variant) for r in results)
    tied = [r for r in results if r.metric("MRR@10", variant) >= top - tolerance]
    return min(tied, key=lambda r: (r.metric("lines@5", variant), r.under_32 / max(r.chunks, 1)))
