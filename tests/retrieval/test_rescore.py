"""Re-scoring the fast tier's best hits with MiniLM's cosine (``nexus.retrieval.rescore``)."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from nexus.retrieval.embedding import ModelUnavailableError
from nexus.retrieval.ranking import RankingRules, ScorePart
from nexus.retrieval.rescore import RESCORED_DENSE, rescore, rescore_texts
from nexus.retrieval.search import Hit
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


@pytest.mark.model
def test_the_fast_tier_answers_with_its_best_hits_scored_by_minilm(static_model_dir, tmp_path):
    workspace = _fast_workspace(static_model_dir, tmp_path)
    answer = workspace.search("refund a payment", 5)
    assert answer.tier == "fast" and answer.rescored_by.startswith("all-MiniLM-L6-v2")
    assert all(hit.parts[0].name == RESCORED_DENSE for hit in answer.hits)
    assert [hit.rank for hit in answer.hits] == [1, 2, 3, 4, 5]
    scores = [hit.score for hit in answer.hits]
    assert scores == sorted(scores, reverse=True)
    again = workspace.search("refund a payment", 5)
    assert workspace._rescorer_embedder.last_misses == 0  # the chunks' vectors were cached
    assert [h.chunk.id for h in again.hits] == [h.chunk.id for h in answer.hits]
    other = Workspace(workspace.repo, workspace.settings, workspace.embedder)
    assert other._rescorer() is workspace._rescorer()  # MiniLM loads once per process


def test_the_fast_tier_keeps_its_order_when_told_or_without_the_model(
    static_model_dir, tmp_path, monkeypatch
):
    plain = _fast_workspace(static_model_dir, tmp_path / "plain", rescore=False)
    answer = plain.search("refund a payment", 5)
    assert answer.rescored_by == "" and answer.hits[0].parts[0].name == "dense"

    class Missing:
        name = "missing"

        def encode(self, texts):
            raise ModelUnavailableError("no model here")

    unavailable = _fast_workspace(static_model_dir, tmp_path / "missing")
    unavailable._rescorer_embedder = Missing()
    same = unavailable.search("refund a payment", 5)
    assert same.rescored_by == ""
    assert [h.chunk.id for h in same.hits] == [h.chunk.id for h in answer.hits]
    assert unavailable._no_rescorer == "no model here"
    assert unavailable._rescorer() is None  # not tried again on every query


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
