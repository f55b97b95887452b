"""VectorIndex: usearch against numpy brute force, the key table, save/load."""

from __future__ import annotations

import numpy as np
import pytest

from nexus.retrieval.index import VectorIndex
from nexus.retrieval.search import search
from nexus.types import Chunk
from tests import helpers


def make_chunk(i: int, file: str = "src/a.js", start: int = 1, end: int = 10) -> Chunk:
    return helpers.make_chunk(
        f"c{i}", file, start, end, symbol=f"f{i}", symbols=(f"f{i}",), imports=("fs",)
    )


@pytest.fixture(scope="module")
def random_index() -> tuple[VectorIndex, np.ndarray]:
    rng = np.random.default_rng(7)
    vectors = rng.normal(size=(200, 32)).astype(np.float32)
    chunks = [make_chunk(i, start=i + 1, end=i + 3) for i in range(200)]
    return VectorIndex.build(chunks, vectors, model="random"), vectors


def brute_force(vectors: np.ndarray, query: np.ndarray) -> np.ndarray:
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    return unit @ (query / np.linalg.norm(query))


@pytest.mark.parametrize("exact", [True, False])
def test_search_matches_brute_force(random_index, exact: bool) -> None:
    index, vectors = random_index
    rng = np.random.default_rng(11)
    agree = 0
    for _ in range(20):
        query = rng.normal(size=32).astype(np.float32)
        scores = brute_force(vectors, query)
        expected = np.argsort(-scores)[:10]
        hits = search(index, query, k=10, exact=exact)
        assert [h.rank for h in hits] == list(range(1, 11))
        got = [index.key_of(h.chunk.id) for h in hits]
        if exact:
            assert got == list(expected)
            np.testing.assert_allclose([h.score for h in hits], scores[expected], atol=1e-5)
        agree += len(set(got) & set(expected))
    assert agree >= 190  # HNSW on 200 vectors: (nearly) exact


def test_cosines_are_the_brute_force_ones(random_index) -> None:
    index, vectors = random_index
    query = np.arange(32, dtype=np.float32)
    np.testing.assert_allclose(index.cosines(query), brute_force(vectors, query), atol=1e-5)


def test_key_table_and_duplicates() -> None:
    index = VectorIndex.build([make_chunk(0), make_chunk(1)], np.eye(2, 4), model="m")
    index.add([make_chunk(2)], np.array([[0, 0, 1, 0]]))
    assert len(index) == 3
    assert [index.key_of(f"c{i}") for i in range(3)] == [0, 1, 2]
    assert index.chunk(2).id == "c2"
    assert search(index, np.array([0, 0, 1, 0]), k=1)[0].chunk.id == "c2"
    with pytest.raises(ValueError, match="already in the index"):
        index.add([make_chunk(1)], np.ones((1, 4)))
    with pytest.raises(ValueError, match="2 chunks but 1 embeddings"):
        index.add([make_chunk(5), make_chunk(6)], np.ones((1, 4)))


def test_k_larger_than_index_and_empty_index() -> None:
    index = VectorIndex.build([make_chunk(0)], np.ones((1, 3)))
    assert len(search(index, np.ones(3), k=10)) == 1
    assert search(VectorIndex(3), np.ones(3), k=5) == []


def test_save_load_round_trip(random_index, tmp_path) -> None:
    index, _ = random_index
    search(index, np.ones(32, dtype=np.float32), k=1)  # builds the usearch graph: saved too
    index.save(tmp_path / "idx")
    loaded = VectorIndex.load(tmp_path / "idx")
    assert loaded.model == "random" and loaded.dim == 32 and len(loaded) == 200
    assert tuple(loaded.chunks) == index.chunks  # tuples restored, every field equal
    query = np.linspace(-1, 1, 32).astype(np.float32)
    assert search(loaded, query, k=5) == search(index, query, k=5)
    np.testing.assert_array_equal(loaded.cosines(query), index.cosines(query))


def test_chunk_dict_round_trip() -> None:
    chunk = make_chunk(3)
    assert Chunk.from_dict(chunk.to_dict()) == chunk


def test_the_usearch_graph_is_built_on_the_first_approximate_query_only(tmp_path) -> None:
    rng = np.random.default_rng(3)
    vectors = rng.normal(size=(50, 8)).astype(np.float32)
    index = VectorIndex.build([make_chunk(i, start=i + 1, end=i + 1) for i in range(50)], vectors)
    query = rng.normal(size=8).astype(np.float32)
    exact = [h.key for h in search(index, query, k=5, exact=True)]
    index.save(tmp_path / "plain")
    assert not (tmp_path / "plain" / "index.usearch").exists()  # ranked and exact need none
    opened = VectorIndex.load(tmp_path / "plain")
    assert [h.key for h in search(opened, query, k=5, exact=False)] == exact  # built on demand
    search(index, query, k=5, exact=False)
    index.save(tmp_path / "graph")
    assert (tmp_path / "graph" / "index.usearch").exists()
    assert [h.key for h in search(VectorIndex.load(tmp_path / "graph"), query, k=5)] == exact
    index.add([make_chunk(99, start=200, end=201)], rng.normal(size=(1, 8)))
    index.save(tmp_path / "graph")  # the old graph does not match the new vectors
    assert not (tmp_path / "graph" / "index.usearch").exists()


def test_a_saved_index_keeps_the_chunks_it_parsed_up_to_a_bound(tmp_path, monkeypatch):
    from nexus.retrieval import index as index_module

    monkeypatch.setattr(index_module, "PARSED_KEPT", 2)
    built = VectorIndex.build([make_chunk(i) for i in range(4)], np.eye(4), model="m")
    built.save(tmp_path / "saved")
    saved = VectorIndex.load(tmp_path / "saved")
    first = saved.chunk(0)
    assert first == built.chunk(0) and saved.chunk(0) is first  # parsed once
    saved.chunk(1), saved.chunk(2)  # past the bound: the oldest is dropped
    assert saved.chunk(0) == first and saved.chunk(0) is not first
    assert [c.id for c in saved.chunks] == [c.id for c in built.chunks]
