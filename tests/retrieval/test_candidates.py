"""Candidate selection: each retriever's best, and for a symbol query the chunks that
define the name, from the symbol table over every chunk."""

from __future__ import annotations

import numpy as np
import pytest

from nexus.retrieval.candidates import candidates_for, select
from nexus.retrieval.index import VectorIndex
from nexus.retrieval.ranking import RankingRules
from nexus.retrieval.search import search
from tests import helpers


def _index() -> VectorIndex:
    """Chunk 0 defines ``Router.add``; ten others mention ``add`` and sit nearer the
    query vector, so neither retriever's best three hold the definition."""
    chunks = [
        helpers.make_chunk(
            "def", "src/router.ts", text="add(path) { this.routes.push(path) }", symbol="Router.add"
        )
    ]
    chunks += [
        helpers.make_chunk(f"use{i}", f"src/u{i}.ts", text=f"add add add x{i}", symbol=f"use{i}")
        for i in range(10)
    ]
    vectors = np.zeros((11, 4), dtype=np.float32)
    vectors[0] = [0, 0, 0, 1]
    vectors[1:] = [1, 0.1, 0, 0]
    return VectorIndex.build(chunks, vectors)


def test_a_symbol_query_finds_the_definition_neither_retriever_proposes() -> None:
    index, query = _index(), np.array([1, 0, 0, 0], dtype=np.float32)
    without = select(index, query, "add", 3)
    assert 0 not in without.keys.tolist()
    found = select(index, query, "add", 3, definitions=5)
    assert 0 in found.keys.tolist()
    rules = RankingRules(candidates=3, definition_lookup=5)
    assert "def" in [h.chunk.id for h in search(index, query, "add", 10, rules=rules)]
    rules = RankingRules(candidates=3)
    assert "def" not in [h.chunk.id for h in search(index, query, "add", 10, rules=rules)]


def test_a_sentence_does_not_consult_the_symbol_table() -> None:
    index, query = _index(), np.array([1, 0, 0, 0], dtype=np.float32)
    assert 0 not in select(index, query, "how does add work", 3, definitions=5).keys


def test_the_symbol_table_matches_the_units_own_name_in_any_case() -> None:
    index = _index()
    assert index.defining_keys(["ADD"]).tolist() == [0]
    assert index.defining_keys(["Router"]).tolist() == []
    assert index.defining_keys(["use3", "add"]).tolist() == [0, 4]


def _feedback_index(model: str = "words-static64") -> VectorIndex:
    """The query's vector is nearest ``dense`` (a distractor); ``parseCookie`` matches
    its words, and ``helper`` sits next to ``parseCookie`` in vector space only."""
    chunks = [
        helpers.make_chunk("named", "src/a.ts", text="cookie parse", symbol="parseCookie"),
        helpers.make_chunk("dense", "src/b.ts", text="render the page", symbol="render"),
        helpers.make_chunk("helper", "src/c.ts", text="split on semicolons", symbol="split"),
    ]
    vectors = np.array(
        [[0, 1, 0, 0], [1, 0, 0, 0.3], [0.6, 0.8, 0, 0]],
        dtype=np.float32,
    )
    return VectorIndex.build(chunks, vectors, model)


def test_query_feedback_brings_in_the_neighbours_of_the_best_hit() -> None:
    index, query = _feedback_index(), np.array([1, 0, 0, 0], dtype=np.float32)
    text = "parse the cookie"
    one_pass = RankingRules(candidates=1, feedback=0.0)
    moved = RankingRules(candidates=1, feedback=1.0, feedback_hits=1)
    assert candidates_for(index, query, text, one_pass).keys.tolist() == [0, 1]
    assert candidates_for(index, query, text, moved).keys.tolist() == [0, 2]
    assert "helper" not in [h.chunk.id for h in search(index, query, text, 3, rules=one_pass)]
    assert "helper" in [h.chunk.id for h in search(index, query, text, 3, rules=moved)]


def test_query_feedback_leaves_a_contextual_models_vectors_and_a_name_query_alone() -> None:
    query = np.array([1, 0, 0, 0], dtype=np.float32)
    moved = RankingRules(candidates=1, feedback=1.0, feedback_hits=1)
    minilm = _feedback_index("all-MiniLM-L6-v2+dual")
    assert candidates_for(minilm, query, "parse the cookie", moved).keys.tolist() == [0, 1]
    static = _feedback_index()
    assert candidates_for(static, query, "parseCookie", moved).keys.tolist() == [0, 1]


def test_query_feedback_keeps_the_keyword_candidates_and_an_empty_index_empty() -> None:
    index, query = _feedback_index(), np.array([1, 0, 0, 0], dtype=np.float32)
    found = candidates_for(index, query, "parse the cookie", RankingRules(candidates=1))
    assert found.keyword.tolist()[0] > 0  # ``named`` matched by its words, both passes
    empty = VectorIndex.build([], np.zeros((0, 4), dtype=np.float32), "words-static64")
    assert len(candidates_for(empty, query, "parse", RankingRules())) == 0


def test_a_contextual_models_cosine_earns_the_larger_share_of_a_sentence() -> None:
    """MiniLM reads the sentence itself: its cosine gets ``contextual_dense`` of the
    fusion (0.6), a static model's ``natural_dense`` (0.5), so the keyword match
    ``parseCookie`` leads over the static index and the nearest vector over MiniLM's."""
    query, text = np.array([1, 0, 0, 0], dtype=np.float32), "parse the cookie"
    rules = RankingRules(feedback=0.0)
    static = search(_feedback_index(), query, text, 3, rules=rules)
    minilm = search(_feedback_index("all-MiniLM-L6-v2"), query, text, 3, rules=rules)
    assert [h.chunk.id for h in static][:2] == ["named", "dense"]
    assert [h.chunk.id for h in minilm][:2] == ["dense", "named"]
    assert {p.name: p.value for p in minilm[0].parts}["dense"] == pytest.approx(0.6)
    assert {p.name: p.value for p in static[1].parts}["dense"] == pytest.approx(0.5)
    assert rules.for_model("all-MiniLM-L6-v2").for_model("all-MiniLM-L6-v2") == rules.for_model(
        "all-MiniLM-L6-v2"
    )
