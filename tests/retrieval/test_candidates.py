"""Candidate selection: each retriever's best, and for a symbol query the chunks that
define the name, from the symbol table over every chunk."""

from __future__ import annotations

import numpy as np

from nexus.retrieval.candidates import select
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
