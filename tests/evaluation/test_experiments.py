"""Evaluating chunking settings: one config, a sweep, and how the best row is picked."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from nexus.chunking.pipeline import analyze_files
from nexus.config import ChunkConfig
from nexus.evaluation.experiments import best, describe, sweep
from nexus.evaluation.metrics import load_queries
from nexus.ingest.sources import open_repository
from tests.retrieval.test_embedding import FakeEmbedder

SAMPLE = Path(__file__).resolve().parents[2] / "sample_repos" / "ts-payments"


def test_sweep_runs_every_valid_pair_and_counts_chunks():
    repo = open_repository(SAMPLE)
    analyses = analyze_files(repo.source_files(), ChunkConfig().encoding)
    queries = load_queries(SAMPLE / "queries.jsonl")
    results = sweep(
        analyses, repo.name, ChunkConfig(), queries, FakeEmbedder(), [64, 256], [0, 128]
    )
    assert [describe(r.config) for r in results] == [
        "ast 64/0 auto",
        "ast 256/0 auto",
        "ast 256/128 auto",
    ]
    small, large = results[0], results[1]
    assert small.chunks > large.chunks
    assert all(0 <= r.metric("MRR@10") <= 1 for r in results)
    assert best(results) in results


@dataclass
class Row:
    name: str
    mrr: float
    lines: float
    under_32: int = 0
    chunks: int = 100

    def metric(self, name: str, variant: str = "doc") -> float:
        return {"MRR@10": self.mrr, "lines@5": self.lines}[name]


def test_best_breaks_near_ties_by_fewer_lines_then_fewer_tiny_chunks():
    rows = [Row("a", 0.518, 120), Row("b", 0.515, 133), Row("c", 0.500, 60)]
    assert best(rows).name == "a"
    rows = [Row("a", 0.514, 130), Row("b", 0.518, 140), Row("c", 0.400, 10)]
    assert best(rows).name == "a"  # within 0.005 of the top and cheaper
    rows = [Row("a", 0.52, 100, under_32=30), Row("b", 0.52, 100, under_32=5)]
    assert best(rows).name == "b"


def test_sweep_adds_the_setting_in_use_and_reports_progress_from_the_start():
    repo = open_repository(SAMPLE)
    analyses = analyze_files(repo.source_files(), ChunkConfig().encoding)
    queries = load_queries(SAMPLE / "queries.jsonl")
    seen: list[tuple[float, str]] = []
    results = sweep(
        analyses,
        repo.name,
        ChunkConfig(),
        queries,
        FakeEmbedder(),
        [64, 256],
        [0],
        progress=lambda share, what: seen.append((share, what)),
        extra=[(512, 64), (256, 0)],
    )
    assert [describe(r.config) for r in results] == [
        "ast 64/0 auto",
        "ast 256/0 auto",
        "ast 512/64 auto",
    ]
    assert seen[0] == (0.0, f"embedding {len(queries)} queries")  # before any setting ran
    assert seen[-1] == (1.0, "done")
    shares = [share for share, _ in seen]
    assert shares == sorted(shares)
