"""Evaluating chunking settings: one config, a sweep, and how the best row is picked."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from nexus.chunking.pipeline import analyze_files, chunk_analyses
from nexus.config import ChunkConfig
from nexus.evaluation.experiments import (
    SweepCancelled,
    SweepStatus,
    best,
    describe,
    sweep,
    sweep_files,
)
from nexus.evaluation.query_sets import load_queries
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
    r1k: float = 0.0
    tokens: float = 0.0
    budgets: tuple[int, ...] = (1000, 2000, 4000)

    def metric(self, name: str, variant: str = "doc") -> float:
        return {"MRR@10": self.mrr, "lines@5": self.lines, "R@1k": self.r1k}[name]


def test_best_by_mrr_breaks_near_ties_by_fewer_lines_then_fewer_tiny_chunks():
    rows = [Row("a", 0.518, 120), Row("b", 0.515, 133), Row("c", 0.500, 60)]
    assert best(rows, choose_by="MRR@10").name == "a"
    rows = [Row("a", 0.514, 130), Row("b", 0.518, 140), Row("c", 0.400, 10)]
    assert best(rows, choose_by="MRR@10").name == "a"  # within 0.005 of the top and cheaper
    rows = [Row("a", 0.52, 100, under_32=30), Row("b", 0.52, 100, under_32=5)]
    assert best(rows, choose_by="MRR@10").name == "b"


def test_best_is_chosen_by_recall_within_the_smallest_budget_by_default():
    # The fat setting wins on MRR@10 but reads less of the targets within 1k tokens.
    fat, lean = Row("fat", 0.60, 300, r1k=0.55), Row("lean", 0.55, 80, r1k=0.70)
    assert best([fat, lean]).name == "lean"
    assert best([fat, lean], choose_by="MRR@10").name == "fat"
    with pytest.raises(KeyError):
        best([fat, lean], choose_by="R@9k")


def _sample():
    repo = open_repository(SAMPLE)
    analyses = analyze_files(repo.source_files(), ChunkConfig().encoding)
    return repo, analyses, load_queries(SAMPLE / "queries.jsonl")


def test_sweep_adds_the_setting_in_use_and_reports_progress_from_the_start():
    repo, analyses, queries = _sample()
    seen: list[SweepStatus] = []
    results = sweep(
        analyses,
        repo.name,
        ChunkConfig(),
        queries,
        FakeEmbedder(),
        [64, 256],
        [0],
        progress=seen.append,
        extra=[(512, 64), (256, 0)],
    )
    assert [describe(r.config) for r in results] == [
        "ast 64/0 auto",
        "ast 256/0 auto",
        "ast 512/64 auto",
    ]
    assert seen[0].what == "counting the chunks of setting 1 of 3" and seen[0].fraction == 0
    assert seen[-1].what == "done" and seen[-1].fraction == 1.0 and seen[-1].eta_s == 0
    embedding = [s for s in seen if not s.what.startswith("counting")]
    assert embedding[0].texts_done == 0 and embedding[-1].texts_done == embedding[0].texts
    fractions = [s.fraction for s in embedding]
    assert fractions == sorted(fractions)
    assert any(s.eta_s is not None and s.eta_s > 0 for s in embedding)  # reckoned while running
    assert "left" in next(s.summary() for s in embedding if s.eta_s)


def test_sweep_embeds_each_distinct_text_once_across_settings():
    repo, analyses, queries = _sample()
    embedder = FakeEmbedder()
    sweep(analyses, repo.name, ChunkConfig(), queries, embedder, [64, 128, 256, 512], [0, 32])
    texts = Counter(text for call in embedder.calls for text in call)
    assert texts and max(texts.values()) == 1, texts.most_common(3)
    chunk_texts = {
        c.embedding_text
        for hi, lo in [(64, 0), (64, 32), (128, 0), (128, 32), (256, 0), (512, 32)]
        for c in chunk_analyses(analyses, ChunkConfig(max_tokens=hi, min_tokens=lo), repo=repo.name)
    }
    assert chunk_texts <= set(texts)  # every setting's chunks were embedded, once


def test_sweep_runs_the_setting_in_use_first_then_the_largest_budgets():
    repo, analyses, queries = _sample()
    seen: list[str] = []
    sweep(
        analyses, repo.name, ChunkConfig(), queries, FakeEmbedder(), [64, 256], [0, 32],
        progress=lambda status: seen.append(status.what.split(":")[0]), extra=[(144, 32)],
    )  # fmt: skip
    order = list(dict.fromkeys(w for w in seen if w.startswith("max ")))
    assert order == ["max 144, min 32", "max 256, min 32", "max 256, min 0", "max 64, min 32",
                     "max 64, min 0"]  # fmt: skip


def test_a_cancelled_sweep_keeps_its_finished_settings_and_resumes_without_redoing_them():
    repo, analyses, queries = _sample()
    embedder = FakeEmbedder()
    finished: list[int] = []

    def cancel_after_two_settings() -> bool:
        return len(finished) >= 2

    def count(status: SweepStatus) -> None:
        if status.settings_done > len(finished):
            finished.append(status.settings_done)

    with pytest.raises(SweepCancelled) as stopped:
        sweep(
            analyses, repo.name, ChunkConfig(), queries, embedder, [64, 256, 512], [0],
            progress=count, cancel=cancel_after_two_settings,
        )  # fmt: skip
    kept = stopped.value.results
    assert sorted(kept) == [(256, 0), (512, 0)]  # the largest budgets run first
    first_run = {text for call in embedder.calls for text in call}
    embedder.calls.clear()
    results = sweep(
        analyses, repo.name, ChunkConfig(), queries, embedder, [64, 256, 512], [0],
        finished=kept,
    )  # fmt: skip
    assert [describe(r.config) for r in results] == ["ast 64/0 auto", "ast 256/0 auto",
                                                     "ast 512/0 auto"]  # fmt: skip
    assert results[1] is kept[(256, 0)] and results[2] is kept[(512, 0)]  # not recomputed
    resumed = {text for call in embedder.calls for text in call}
    small = {
        c.embedding_text
        for c in chunk_analyses(analyses, ChunkConfig(max_tokens=64, min_tokens=0), repo=repo.name)
    }
    assert resumed - {q.query for q in queries} <= small  # only the missing setting's chunks
    assert small - first_run <= resumed


def test_cancel_is_answered_between_batches_of_texts():
    repo, analyses, queries = _sample()
    embedder = FakeEmbedder()
    with pytest.raises(SweepCancelled) as stopped:
        sweep(
            analyses, repo.name, ChunkConfig(), queries, embedder, [64], [0],
            cancel=lambda: len(embedder.calls) >= 2,
        )  # fmt: skip
    assert stopped.value.results == {}
    assert len(embedder.calls) == 2  # the queries, and one batch of chunk texts


@pytest.mark.parametrize(
    ("status", "fraction", "eta"),
    [
        (SweepStatus("counting", 0, 4, 0, 0), 0.0, None),  # no pace yet: no ETA
        (SweepStatus("resumed", 2, 4, 0, 0, None, 3.0), 0.5, 6.0),  # settings' own work only
        (SweepStatus("x", 1, 4, 250, 1000, 0.1, 2.0), 0.25, 750 * 0.1 + 3 * 2.0),
        (SweepStatus("done", 4, 4, 1000, 1000, 0.1, 2.0), 1.0, 0.0),
    ],
)
def test_sweep_status_share_and_time_left(status, fraction, eta):
    assert status.fraction == pytest.approx(fraction)
    assert status.eta_s == (None if eta is None else pytest.approx(eta))


def test_sweep_files_keep_every_target_file_and_a_fixed_sample_of_the_others():
    repo = open_repository(SAMPLE)
    analyses = analyze_files(repo.source_files(), ChunkConfig().encoding)
    queries = load_queries(SAMPLE / "queries.jsonl")
    targets = {q.target.file for q in queries}
    paths = [a.source.info.path for a in analyses]
    others = [p for p in paths if p not in targets]
    assert targets and len(others) >= 2  # the fixture has files no query targets

    assert sweep_files(analyses, queries, None) == list(analyses)
    none = [a.source.info.path for a in sweep_files(analyses, queries, 0)]
    assert sorted(none) == sorted(targets & set(paths))
    one = [a.source.info.path for a in sweep_files(analyses, queries, 1)]
    assert set(one) - set(none) and len(one) == len(none) + 1
    assert one == [a.source.info.path for a in sweep_files(analyses, queries, 1)]  # fixed
    assert len(sweep_files(analyses, queries, 10_000)) == len(analyses)  # fewer than asked


@pytest.mark.parametrize(("kept", "chunkings"), [(10**9, 3), (0, 6)])
def test_sweep_chunks_each_setting_once_unless_past_the_kept_chunks(monkeypatch, kept, chunkings):
    """The counting pass's chunks are reused by the setting's run (within KEPT_CHUNKS)."""
    from nexus.evaluation import experiments

    repo, analyses, queries = _sample()
    calls = []
    real = experiments.chunk_analyses
    monkeypatch.setattr(
        experiments, "chunk_analyses", lambda *a, **k: calls.append(a[1]) or real(*a, **k)
    )
    monkeypatch.setattr(experiments, "KEPT_CHUNKS", kept)
    results = sweep(
        analyses, repo.name, ChunkConfig(), queries, FakeEmbedder(), [64, 256], [0, 128]
    )
    assert len(calls) == chunkings and len(results) == 3


class _PacedEmbedder(FakeEmbedder):
    """Each text it embeds takes ``SECONDS_PER_TEXT`` on a fake clock ``now``."""

    SECONDS_PER_TEXT = 0.01

    def __init__(self, now: list[float]) -> None:
        super().__init__()
        self.now = now
        self.texts = 0  # texts embedded so far

    def encode(self, texts, progress=None):  # noqa: ANN001, ANN201 - FakeEmbedder's
        self.now[0] += self.SECONDS_PER_TEXT * len(texts)
        self.texts += len(texts)
        return super().encode(texts, progress)


@pytest.mark.parametrize("cached_in_use", [False, True])
def test_the_sweep_time_left_counts_only_embedding_and_scoring_on_a_fake_clock(
    monkeypatch, tmp_path, cached_in_use
):
    """Each text the model embeds takes 0.01 s, scoring a setting 2 s, and chunking a
    setting 100 s (every setting is chunked again in its run): after each step the time
    left is the model's and the scoring's work left, exactly, so it never jumps, not
    even at a slow setting's chunking; the texts the cache holds (the setting in use,
    built before) take no model time."""
    from nexus.evaluation import experiments
    from nexus.retrieval.embedding import CachedEmbedder
    from nexus.retrieval.embedding_cache import EmbeddingCache

    repo, analyses, queries = _sample()
    now = [0.0]
    real_chunking, real_scoring = experiments.chunk_analyses, experiments.evaluate

    def chunking(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        now[0] += 100.0
        return real_chunking(*args, **kwargs)

    def scoring(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        now[0] += 2.0
        return real_scoring(*args, **kwargs)

    monkeypatch.setattr(experiments, "chunk_analyses", chunking)
    monkeypatch.setattr(experiments, "evaluate", scoring)
    monkeypatch.setattr(experiments, "KEPT_CHUNKS", 0)
    inner = _PacedEmbedder(now)
    embedder = CachedEmbedder(inner, EmbeddingCache(tmp_path / "cache.sqlite"))
    in_use = (512, 64)
    if cached_in_use:  # its index was built: its texts are in the cache
        config = ChunkConfig(max_tokens=in_use[0], min_tokens=in_use[1])
        embedder.encode([c.embedding_text for c in real_chunking(analyses, config, repo=repo.name)])
    seen: list[tuple[SweepStatus, int]] = []
    sweep(
        analyses, repo.name, ChunkConfig(), queries, embedder, [64, 256], [0],
        progress=lambda status: seen.append((status, inner.texts)), extra=[in_use],
        clock=lambda: now[0],
    )  # fmt: skip
    embedded = inner.texts
    timed = [(s, texts) for s, texts in seen if s.eta_s is not None]
    assert all(s.eta_s is None for s, _ in seen if s.settings_done == 0)  # no scoring pace yet
    assert len(timed) > 4
    for status, texts in timed:
        left = (embedded - texts) * _PacedEmbedder.SECONDS_PER_TEXT
        left += 2.0 * (status.settings - status.settings_done)
        assert status.eta_s == pytest.approx(left), status.summary()
    etas = [s.eta_s for s, _ in timed]
    assert all(b <= a + 1e-9 for a, b in zip(etas, etas[1:], strict=False))  # no jumps
    assert any(s.what.endswith("chunking") for s, _ in timed)  # the slow step was reported
    assert any(s.cached_left for s, _ in seen) == cached_in_use


class _Preferring(FakeEmbedder):
    """A quality model that reads every query as the ``preferred`` texts, and no other."""

    name = "preferring"

    def __init__(self, preferred: set[str]) -> None:
        super().__init__()
        self.preferred = preferred

    def encode(self, texts, progress=None):
        self.calls.append(list(texts))
        rows = np.zeros((len(texts), 2), dtype=np.float32)
        for row, text in zip(rows, texts, strict=True):
            row[0 if text in self.preferred else 1] = 1.0
        return rows


def test_rescored_answers_reorder_the_fast_hits_by_the_quality_models_cosine():
    from nexus.evaluation.rescoring import rescored_answers
    from nexus.retrieval.index import VectorIndex
    from nexus.retrieval.ranking import DEFAULT_RULES
    from nexus.retrieval.rescore import RESCORED_DENSE
    from nexus.retrieval.search import search

    repo, analyses, _ = _sample()
    fast = FakeEmbedder()
    index = VectorIndex.from_chunks(chunk_analyses(analyses, ChunkConfig(), repo=repo.name), fast)
    text = "charge a card payment"
    vector = fast.encode([text])
    before = search(index, vector[0], text, 10, rules=DEFAULT_RULES)
    fifth = (before[4].head or before[4].chunk).embedding_text
    quality = _Preferring({text, fifth})
    [after] = rescored_answers(index, [text], vector, DEFAULT_RULES, quality, depth=10)
    assert len(quality.calls) == 1  # the query and every hit to re-score: one call
    assert [h.key for h in after].index(before[4].key) < 4  # MiniLM's choice moved up
    assert all(h.parts[0].name == RESCORED_DENSE for h in after)
    assert [h.score for h in after] == sorted((h.score for h in after), reverse=True)
    assert {h.key for h in after} == {h.key for h in before}  # the same hits, re-ordered


def test_a_rescored_sweep_embeds_only_the_hits_each_once_and_scores_their_order():
    repo, analyses, queries = _sample()
    grid = ([128, 256], [0])
    plain = sweep(analyses, repo.name, ChunkConfig(), queries, FakeEmbedder(), *grid)
    quality = _Preferring({q.query for q in queries})  # all hits alike: dense drops out
    answered = sweep(
        analyses, repo.name, ChunkConfig(), queries, FakeEmbedder(), *grid, rescore_with=quality
    )
    texts = Counter(text for call in quality.calls for text in call)
    assert texts and max(texts.values()) == 1  # once for the whole sweep
    settings = [ChunkConfig(max_tokens=high, min_tokens=0) for high in grid[0]]
    chunk_texts = {
        c.embedding_text
        for config in settings
        for c in chunk_analyses(analyses, config, repo=repo.name)
    }
    hit_texts = set(texts) - {q.query for q in queries}
    assert hit_texts and hit_texts <= chunk_texts
    assert len({q.query for q in queries}) * 30 * len(grid[0]) >= len(hit_texts)
    mrr = [[r.metric("MRR@10") for r in results] for results in (plain, answered)]
    assert mrr[0] != mrr[1]  # the re-scored order is what was scored


def test_a_sweep_rescores_by_default_up_to_rescore_texts_hit_texts() -> None:
    from nexus.evaluation.experiments import RESCORE_TEXTS, rescore_affordable
    from nexus.retrieval.rescore import RESCORE_DEPTH

    most = RESCORE_TEXTS // (6 * RESCORE_DEPTH)  # queries six settings may re-score
    assert rescore_affordable(most, 6)
    assert not rescore_affordable(most + 1, 6)
    # ... fewer when MiniLM's cache holds most of the sweep's texts
    assert rescore_affordable(10 * most, 6, uncached=RESCORE_TEXTS)
    assert not rescore_affordable(10 * most, 6, uncached=RESCORE_TEXTS + 1)


class _Quality(FakeEmbedder):
    name = "fake-quality"


def test_a_sweep_rescores_when_minilms_cache_lacks_few_of_its_texts(tmp_path):
    """With a limit, a cold cache means the fast order (MiniLM never asked); once the cache
    holds the sweep's texts (as after the background job reads an index) the same sweep
    re-scores at no model call, and finished settings of the fast order run again."""
    from nexus.retrieval.embedding import CachedEmbedder
    from nexus.retrieval.embedding_cache import EmbeddingCache

    repo, analyses, queries = _sample()
    grid = ([128, 256], [0])
    quality = _Quality()
    minilm = CachedEmbedder(quality, EmbeddingCache(tmp_path))
    fast = FakeEmbedder()
    cold = sweep(
        analyses, repo.name, ChunkConfig(), queries, fast, *grid,
        rescore_with=minilm, rescore_limit=0,
    )  # fmt: skip
    assert not any(r.rescored for r in cold) and quality.calls == []
    settings = [ChunkConfig(max_tokens=high, min_tokens=0) for high in grid[0]]
    every_text = {
        c.embedding_text
        for config in settings
        for c in chunk_analyses(analyses, config, repo=repo.name)
    }
    minilm.encode([*every_text, *(q.query for q in queries)])
    embedded = sum(map(len, quality.calls))
    finished = {(r.config.max_tokens, r.config.min_tokens): r for r in cold}
    warm = sweep(
        analyses, repo.name, ChunkConfig(), queries, fast, *grid,
        rescore_with=minilm, rescore_limit=0, finished=finished,
    )  # fmt: skip
    assert all(r.rescored for r in warm)  # the fast order's rows ran again, re-scored
    assert sum(map(len, quality.calls)) == embedded  # every text from the cache
    forced = sweep(analyses, repo.name, ChunkConfig(), queries, fast, *grid, rescore_with=minilm)
    assert [r.metric("MRR@10") for r in warm] == [r.metric("MRR@10") for r in forced]
