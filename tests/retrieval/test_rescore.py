"""Re-scoring the fast tier's best hits with MiniLM's cosine (``nexus.retrieval.rescore``)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zlib
from concurrent.futures import Future
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from nexus.retrieval.ranking import RankingRules, ScorePart, rules_for
from nexus.retrieval.rescore import (
    RESCORE_DEPTH,
    RESCORE_PENDING,
    RESCORED,
    RESCORED_DENSE,
    rescore,
    rescore_texts,
)
from nexus.retrieval.search import Hit
from nexus.runtime.rescore_vectors import compute_vectors
from nexus.workspace import Settings, Workspace
from tests import helpers

SAMPLES = Path(__file__).resolve().parents[2] / "sample_repos"
RULES = RankingRules(contextual_dense=0.6, symbol_dense=0.3)


def _hit(name: str, rank: int, dense: float, keyword: float, head=None) -> Hit:
    parts = (ScorePart("dense", dense), ScorePart("keyword", keyword))
    chunk = helpers.make_chunk(name, f"src/{name}.ts", text=f"function {name}() {{}}")
    return Hit(chunk, dense + keyword, rank, rank - 1, parts, head)


def _hits() -> list[Hit]:
    """``generic`` leads on the static model's cosine; MiniLM prefers ``cookie``."""
    return [
        _hit("generic", 1, 0.5, 0.3),
        _hit("cookie", 2, 0.2, 0.4),
        _hit("other", 3, 0.1, 0.1),
        _hit("deep", 4, 0.0, 0.05),
    ]


def test_the_quality_models_cosine_reorders_the_best_hits() -> None:
    hits = rescore(_hits(), [0.2, 0.6, 0.1], "parse the cookie header", RULES)
    assert [h.chunk.id for h in hits] == ["cookie", "generic", "other", "deep"]
    assert [h.rank for h in hits] == [1, 2, 3, 4]
    first = hits[0]
    assert first.parts[0] == ScorePart(RESCORED_DENSE, 0.6)  # the best cosine: the full share
    assert "dense" not in [p.name for p in first.parts]
    assert first.score == pytest.approx(sum(p.value for p in first.parts)) == 1.0
    assert hits[2].parts[0] == ScorePart(RESCORED_DENSE, 0.0)  # the lowest of the three
    assert hits[3] == replace(_hits()[3], rank=4)  # past the cosines given: untouched


def test_re_scoring_shows_another_files_close_hit_before_a_files_second() -> None:
    def hit(name: str, file: str, rank: int) -> Hit:
        chunk = helpers.make_chunk(name, file, rank * 10, rank * 10 + 5)
        parts = (ScorePart("dense", 0.5), ScorePart("keyword", 1.0))
        return Hit(chunk, 1.5, rank, rank - 1, parts)

    files = [("a1", "src/a.ts"), ("b", "src/b.ts"), ("a2", "src/a.ts"), ("c", "src/c.ts")]
    hits = [hit(name, file, rank) for rank, (name, file) in enumerate(files, start=1)]
    # Re-scored: a1 1.6, a2 1.3, b 1.27 (within 95% of a2), c 1.0.
    cosines = [1.0, 0.45, 0.5, 0.0]
    shown = rescore(hits, cosines, "parse the cookie header", RULES)
    assert [h.chunk.id for h in shown] == ["a1", "b", "a2", "c"]
    assert [h.rank for h in shown] == [1, 2, 3, 4]
    alone = rescore(hits, cosines, "parse the cookie header", RULES.without("other files first"))
    assert [h.chunk.id for h in alone] == ["a1", "a2", "b", "c"]


def test_a_name_query_gives_the_cosine_the_symbol_share() -> None:
    hits = rescore(_hits(), [0.2, 0.6, 0.1], "parseCookie", RULES)
    assert hits[0].parts[0] == ScorePart(RESCORED_DENSE, 0.3)
    assert [h.chunk.id for h in hits][:2] == ["cookie", "generic"]  # 0.7 against 0.42


def test_hits_without_parts_or_cosines_stay_as_they_are() -> None:
    bare = [Hit(h.chunk, h.score, h.rank, h.key) for h in _hits()]
    assert rescore(bare, [0.1, 0.9, 0.5], "parse the cookie", RULES) == bare
    assert rescore(_hits(), [0.9], "parse the cookie", RULES) == _hits()


def test_a_window_is_embedded_as_the_chunk_that_ranked() -> None:
    head = helpers.make_chunk("head", "src/w.ts", text="function parse() {}")
    window = _hit("window", 1, 0.5, 0.3, head=head)
    assert rescore_texts([window, _hit("alone", 2, 0.1, 0.1)], 5) == [
        head.embedding_text,
        _hit("alone", 2, 0.1, 0.1).chunk.embedding_text,
    ]
    assert len(rescore_texts(_hits(), 2)) == 2


def _fast_workspace(static_model_dir: Path, tmp_path: Path, **settings) -> Workspace:
    repo = tmp_path / "ts-payments"
    shutil.copytree(SAMPLES / "ts-payments", repo)
    cache = tmp_path / "cache"
    shutil.copytree(static_model_dir, cache / "models" / static_model_dir.name)
    return Workspace.open(repo, Settings(tier="fast", cache_dir=cache, **settings))


class Counting:
    """A stand-in for MiniLM: a fixed random unit vector per text, and every call kept."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.dim = 384
        self.max_seq_length = 256
        self.calls: list[list[str]] = []

    def encode(self, texts, progress=None) -> np.ndarray:
        self.calls.append(list(texts))
        rows = [np.random.default_rng(zlib.crc32(t.encode())).normal(size=self.dim) for t in texts]
        vectors = np.array(rows, dtype=np.float32).reshape(-1, self.dim)
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)

    def count_wordpieces(self, texts) -> list[int]:
        return [len(t.split()) for t in texts]


def test_a_first_query_answers_from_the_fast_tier_and_says_so(static_model_dir, tmp_path):
    workspace = _fast_workspace(static_model_dir, tmp_path)
    answer = workspace.search("refund a payment", 5)
    assert answer.rescore == RESCORE_PENDING and answer.rescored_by == ""
    assert all(hit.parts[0].name == "dense" for hit in answer.hits)
    assert answer.hits[0].chunk.file == "src/services/refund.ts"


def test_once_the_vectors_exist_a_query_is_rescored_without_embedding_a_chunk(
    static_model_dir, tmp_path, monkeypatch
):
    from nexus.runtime import rescorer as rescorer_module

    query = "refund a payment"
    workspace = _fast_workspace(static_model_dir, tmp_path)
    fast = workspace.search(query, RESCORE_DEPTH)  # the fast tier's order, not re-scored
    workspace.wait_for_saves()
    rescorer = workspace._rescorers["ast"]
    chunks, queries = Counting(rescorer.name), Counting("query model")
    compute_vectors(rescorer.folder, chunks)  # what the background job does
    assert len(chunks.calls) == 1
    monkeypatch.setattr(rescorer_module, "onnx_model_at", lambda cache: tmp_path)
    monkeypatch.setattr(rescorer_module, "query_model", lambda graph, words: queries)

    answer = workspace.search(query, 5)
    assert answer.rescore == RESCORED and answer.rescored_by == rescorer.name
    assert all(hit.parts[0].name == RESCORED_DENSE for hit in answer.hits)
    assert len(chunks.calls) == 1  # no chunk embedded on the query path
    assert queries.calls == [[query]]  # the query alone, once
    workspace.search(query, 5)
    assert len(queries.calls) == 1  # a query asked again is not embedded again
    stored = chunks.encode(rescore_texts(fast.hits)).astype(np.float16).astype(np.float32)
    cosines = (stored @ queries.encode([query])[0]).tolist()
    expected = rescore(list(fast.hits), cosines, query, rules_for(workspace.config))
    assert [h.chunk.id for h in answer.hits] == [h.chunk.id for h in expected[:5]]


class _AtOnce:
    """An executor that runs what it is given when it is given, and says so in ``events``."""

    def __init__(self, events: list[str]) -> None:
        self.events = events

    def submit(self, embed, query) -> Future:
        self.events.append(f"embed {query}")
        done: Future = Future()
        done.set_result(embed(query))
        return done


def test_the_query_model_embeds_every_query_of_a_batch_once_before_its_hits_are_ranked(
    static_model_dir, tmp_path, monkeypatch
):
    from nexus.runtime import rescorer as rescorer_module
    from nexus.workspace.overlay import LiveIndex

    workspace = _fast_workspace(static_model_dir, tmp_path)
    workspace.search("refund a payment", 5)
    workspace.wait_for_saves()
    rescorer = workspace._rescorers["ast"]
    compute_vectors(rescorer.folder, Counting(rescorer.name))
    queries, events = Counting("query model"), []
    monkeypatch.setattr(rescorer_module, "onnx_model_at", lambda cache: tmp_path)
    monkeypatch.setattr(rescorer_module, "query_model", lambda graph, words: queries)
    monkeypatch.setattr(rescorer_module, "_QUERY_THREAD", _AtOnce(events))
    ranked_by_the_fast_tier = LiveIndex.search

    def ranking(self, vector, query, *args):
        events.append(f"rank {query}")
        return ranked_by_the_fast_tier(self, vector, query, *args)

    monkeypatch.setattr(LiveIndex, "search", ranking)
    batch = ["refund a payment", "charge a card", "refund a payment", "list invoices"]
    answers = workspace.search_many(batch, 5)
    assert all(answer.rescore == RESCORED for answer in answers)
    assert events == [
        "embed refund a payment",
        "embed charge a card",
        "embed list invoices",
        *(f"rank {query}" for query in batch),
    ]
    assert queries.calls == [["refund a payment"], ["charge a card"], ["list invoices"]]
    workspace.search("charge a card", 5)
    assert events[-1] == "rank charge a card" and len(queries.calls) == 3  # not embedded again


def test_the_fast_tier_keeps_its_order_when_told(static_model_dir, tmp_path):
    plain = _fast_workspace(static_model_dir, tmp_path / "plain", rescore=False)
    answer = plain.search("refund a payment", 5)
    assert answer.rescored_by == "" and answer.rescore == ""
    assert answer.hits[0].parts[0].name == "dense"


def test_a_failed_vectors_job_is_said_and_the_fast_tier_answers(
    static_model_dir, tmp_path, monkeypatch
):
    from nexus.runtime import rescore_vectors

    def failing(argv, log):
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_text("ModelUnavailableError: no model here\n")
        return subprocess.Popen([sys.executable, "-c", "raise SystemExit(1)"])

    monkeypatch.setattr(rescore_vectors, "spawn", failing)
    workspace = _fast_workspace(static_model_dir, tmp_path)
    workspace.search("refund a payment", 5)
    workspace._rescorers["ast"]._job.process.wait()
    answer = workspace.search("refund a payment", 5)
    assert answer.rescore == "not re-scored: ModelUnavailableError: no model here"
    assert answer.rescored_by == "" and answer.hits[0].parts[0].name == "dense"


def test_the_search_page_says_which_model_scored_the_hits_again() -> None:
    from nexus.ui.search_views import answered_by
    from nexus.workspace import Freshness, SearchAnswer

    answer = SearchAnswer("q", "ast", (), (), None, "fast", "static+dual", Freshness())
    assert answered_by(answer) == "Answered by the fast tier (`static+dual`)."
    rescored = replace(answer, rescored_by="all-MiniLM-L6-v2+dual")
    assert answered_by(rescored) == (
        "Answered by the fast tier (`static+dual`), its best 30 hits scored again by the "
        "quality tier's model (`all-MiniLM-L6-v2+dual`)."
    )
    pending = replace(answer, rescore="not re-scored yet")
    assert answered_by(pending) == "Answered by the fast tier (`static+dual`); not re\\-scored yet."


def test_the_search_page_says_why_a_lower_score_comes_first() -> None:
    from nexus.ui.search_views import ranking_caption

    hits = [_hit("a", 1, 0.5, 0.3), _hit("b", 2, 0.2, 0.4), _hit("c", 3, 0.1, 0.1)]
    assert "other files first" not in ranking_caption("parse the cookie header", hits)
    waited = [hits[0], hits[2], hits[1]]  # 0.2 shown before 0.6
    assert ranking_caption("parse the cookie header", waited).endswith("(other files first).")


NAME = "all-MiniLM-L6-v2+dual"


@pytest.fixture
def vectors_at_once(monkeypatch, tmp_path) -> Counting:
    """The background job done at once in this process (stand-in vectors), and the query
    model a ``Counting`` one (returned)."""
    from nexus.runtime import rescore_vectors
    from nexus.runtime import rescorer as rescorer_module

    queries = Counting("query model")

    def compute_here(argv, log):
        compute_vectors(Path(argv[3]), Counting(NAME))

    monkeypatch.setattr(rescore_vectors, "spawn", compute_here)
    monkeypatch.setattr(rescorer_module, "onnx_model_at", lambda cache: tmp_path)
    monkeypatch.setattr(rescorer_module, "query_model", lambda graph, words: queries)
    return queries


def _cli_setup(static_model_dir: Path, tmp_path: Path) -> tuple[Path, Path]:
    repo = tmp_path / "ts-payments"
    shutil.copytree(SAMPLES / "ts-payments", repo)
    cache = tmp_path / "cache"
    shutil.copytree(static_model_dir, cache / "models" / static_model_dir.name)
    return repo, cache


def test_eval_scores_the_rescored_order_unless_told_otherwise(
    static_model_dir, tmp_path, vectors_at_once, capsys
):
    import json

    from nexus.cli import main

    repo, cache = _cli_setup(static_model_dir, tmp_path)
    questions = tmp_path / "questions.jsonl"
    targets = [{"file": "src/services/refund.ts"}]
    record = {"id": "q", "query": "refund a payment", "category": "semantic", "targets": targets}
    questions.write_text(json.dumps(record) + "\n")
    argv = ["eval", str(repo), "--queries", str(questions), "--tier", "fast", "--cache", str(cache)]
    assert main(argv) == 0
    assert f"scoring Workspace.search's answers (re-scored by {NAME})" in capsys.readouterr().err
    assert vectors_at_once.calls == [["refund a payment"]]
    assert main([*argv, "--fast-order"]) == 0
    assert "(the index's own order)" in capsys.readouterr().err
    assert vectors_at_once.calls == [["refund a payment"]]  # MiniLM was not asked


def test_eval_of_doc_queries_scores_the_rescored_order_unless_told_otherwise(
    static_model_dir, tmp_path, vectors_at_once, capsys
):
    from nexus.cli import main
    from nexus.evaluation.query_sets import load_queries

    repo, cache = _cli_setup(static_model_dir, tmp_path)
    queries = SAMPLES / "ts-payments" / "queries.jsonl"
    texts = sorted({q.query for q in load_queries(queries)})
    argv = ["eval", str(repo), "--queries", str(queries), "--tier", "fast", "--cache", str(cache)]
    assert main(argv) == 0
    assert f"scoring Workspace.search's answers (re-scored by {NAME})" in capsys.readouterr().err
    assert sorted(text for call in vectors_at_once.calls for text in call) == texts
    assert main([*argv, "--fast-order"]) == 0
    assert "scoring Workspace.search" not in capsys.readouterr().err
    assert len(vectors_at_once.calls) == len(texts)  # MiniLM was not asked again


def test_index_on_the_fast_tier_waits_for_the_minilm_vectors(
    static_model_dir, tmp_path, vectors_at_once, capsys
):
    from nexus.cli import main

    repo, cache = _cli_setup(static_model_dir, tmp_path)
    argv = ["index", str(repo), "--tier", "fast", "--cache", str(cache)]
    assert main(argv) == 0
    assert "re-scoring: re-scored" in capsys.readouterr().out
    assert list((cache / "indexes").glob(f"*/rescore-{NAME}.npy"))
    assert main([*argv, "--no-rescore"]) == 0
    assert "re-scoring" not in capsys.readouterr().out
