"""The shortlist holds the best cosines of the full product, and a ranked search over it
gives what the ranking stage gives over the candidates picked from every chunk's scores."""

from __future__ import annotations

import numpy as np
import pytest

from nexus.retrieval.candidates import top_keyword_keys
from nexus.retrieval.index import VectorIndex
from nexus.retrieval.ranking import RankingRules, rank
from nexus.retrieval.search import search
from nexus.retrieval.shortlist import best_cosines
from tests import helpers


def _unit_rows(rows: int, dim: int, seed: int = 0) -> np.ndarray:
    vectors = np.random.default_rng(seed).normal(size=(rows, dim)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def _full_best(vectors: np.ndarray, query: np.ndarray, count: int) -> set[int]:
    return set(np.argpartition(-(vectors @ query), count - 1)[:count].tolist())


@pytest.mark.parametrize("seed", range(5))
def test_best_cosines_are_those_of_the_full_product(seed: int):
    vectors = _unit_rows(4000, 32, seed)
    for query in _unit_rows(5, 32, seed + 100):
        found = best_cosines(vectors, query, 20)
        assert len(found) == 20
        assert set(found.tolist()) == _full_best(vectors, query, 20)


def test_asking_for_more_rows_than_there_are_gives_every_row():
    vectors = _unit_rows(30, 8)
    query = vectors[3]
    assert sorted(best_cosines(vectors, query, 50).tolist()) == list(range(30))
    assert len(best_cosines(vectors[:0], query, 5)) == 0


_WORDS = [
    "parse",
    "cookie",
    "header",
    "route",
    "request",
    "session",
    "token",
    "cache",
    "retry",
    "upload",
    "image",
]


def _word_index() -> VectorIndex:
    """2,000 chunks made of five words (so that many tie on keywords at the cut, which
    ``rank`` must not break a second time) in 77 files."""
    rng = np.random.default_rng(7)
    chunks = []
    for i in range(2000):
        words = rng.choice(_WORDS[:5], size=3, replace=False)
        text = f"function {words[0]}{words[1].title()}() {{ {words[2]} }}"
        symbol = f"{words[0]}{words[1].title()}"
        file = f"src/{_WORDS[i % 11]}/{_WORDS[i % 7]}.js"
        chunks.append(helpers.make_chunk(f"c{i}", file=file, text=text, symbol=symbol))
    return VectorIndex.build(chunks, _unit_rows(2000, 16, seed=3))


@pytest.mark.parametrize(
    "query", ["parse the cookie header", "parseCookie", "retry an upload", "unrelated words"]
)
def test_ranked_search_matches_the_ranking_stage_over_every_chunk(query):
    index = _word_index()
    rules = RankingRules(candidates=120, feedback=0.0)  # one pass: the shortlist is checked
    for vector in _unit_rows(20, 16, seed=11):
        hits = search(index, vector, query, 10, rules=rules)
        dense, keyword = index.cosines(vector), index.keyword_scores(query)
        keys = np.union1d(np.argpartition(-dense, 119)[:120], top_keyword_keys(keyword, 120))
        chunks = [index.chunk(int(key)) for key in keys]
        reference = rank(
            chunks, dense[keys], keyword[keys], query, 10, rules.for_model(index.model)
        )
        assert [h.key for h in hits] == [keys[r.key] for r in reference]
        np.testing.assert_allclose([h.score for h in hits], [r.score for r in reference], atol=1e-6)
        for hit, ref in zip(hits, reference, strict=True):
            assert [p.name for p in hit.parts] == [p.name for p in ref.parts]
            np.testing.assert_allclose(
                [p.value for p in hit.parts], [p.value for p in ref.parts], atol=1e-6
            )
