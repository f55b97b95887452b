"""The fast tier's build embeds and counts keyword terms in the chunking workers: the
index it makes scores exactly as one embedded through the cache, on one process or two."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import numpy as np

from nexus.config import ChunkConfig
from nexus.ingest.sources import open_repository
from nexus.retrieval.embedding import CachedEmbedder, DualView
from nexus.retrieval.embedding_cache import EmbeddingCache
from nexus.retrieval.index import VectorIndex
from nexus.retrieval.lexical import LexicalIndex, term_counts
from nexus.retrieval.tiers import StaticEmbedder
from nexus.runtime.embed_in_workers import EmbedInWorkers
from nexus.runtime.stream import stream_chunks
from nexus.workspace import Settings, Workspace

SAMPLES = Path(__file__).resolve().parents[2] / "sample_repos"
QUERIES = ["refund a payment", "validate the card number", "PaymentError"]


def _copy_with_model(static_model_dir: Path, tmp_path: Path) -> tuple[Path, Path]:
    """A copy of ts-payments and a cache folder holding the fast tier's model."""
    repo = tmp_path / "ts-payments"
    shutil.copytree(SAMPLES / "ts-payments", repo)
    cache = tmp_path / "cache"
    shutil.copytree(static_model_dir, cache / "models" / static_model_dir.name)
    return repo, cache


def test_workers_embed_and_count_as_the_parent_would(static_model_dir):
    repo = open_repository(SAMPLES / "ts-payments")
    prepare = EmbedInWorkers(str(static_model_dir))
    one = list(stream_chunks(repo, ChunkConfig(), workers=1, prepare=prepare))
    two = list(stream_chunks(repo, ChunkConfig(), workers=2, prepare=prepare))
    assert one == two and sum(r.n_chunks for r in one) > 10
    embedder = DualView(StaticEmbedder(static_model_dir))
    for a, b in zip(one, two, strict=True):
        texts = [c.embedding_text for c in a.chunks]
        if not texts:
            assert a.vectors is None and a.term_counts == ()
            continue
        np.testing.assert_array_equal(a.vectors, b.vectors)
        expected = embedder.encode(texts).astype(np.float16).astype(np.float32)
        np.testing.assert_array_equal(a.vectors, expected)  # as the cache stores them
        assert list(a.term_counts) == [term_counts(t) for t in texts]


def test_a_fast_tier_build_scores_as_one_through_the_cache(static_model_dir, tmp_path):
    repo, cache = _copy_with_model(static_model_dir, tmp_path)
    workspace = Workspace.open(repo, Settings(tier="fast", cache_dir=cache))
    (built,) = workspace.index()
    assert workspace.embedder.last_misses == len(built.index.chunks)
    assert EmbeddingCache(cache).count() == 0  # the vectors skipped the cache

    through_cache = CachedEmbedder(
        DualView(StaticEmbedder(static_model_dir)), EmbeddingCache(tmp_path / "other")
    )
    expected = VectorIndex.from_chunks(built.index.chunks, through_cache)
    assert expected.model == built.index.model
    np.testing.assert_array_equal(built.index.vectors, expected.vectors)
    rebuilt = LexicalIndex([c.embedding_text for c in built.index.chunks])
    for query in QUERIES:
        np.testing.assert_array_equal(
            built.index.keyword_scores(query), expected.keyword_scores(query)
        )
        np.testing.assert_array_equal(built.index.keywords().scores(query), rebuilt.scores(query))
    workspace.wait_for_saves()  # saved on a thread, after the first answer
    reopened = Workspace.open(repo, Settings(tier="fast", cache_dir=cache))
    (saved,) = reopened.index()
    assert saved.reused and saved.folder == built.folder
    for query in QUERIES:
        assert reopened.search(query, 5).hits == workspace.search(query, 5).hits


def test_a_first_build_chunks_the_files_as_the_walk_finds_them(
    static_model_dir, tmp_path, monkeypatch
):
    """With no index of the repository saved, its files are chunked while the folder is
    still being read; the index is the one a build of the whole repository makes."""
    from nexus.runtime import stream

    repo, cache = _copy_with_model(static_model_dir, tmp_path)
    settings = Settings(tier="fast", cache_dir=cache, workers=1)
    workspace = Workspace.open(repo, settings)
    walk_done: list[bool] = []
    real = stream.chunk_ref

    def chunk_ref(ref, *args, **kwargs):
        walk_done.append(workspace._scan.chunkable_files() is not None)
        return real(ref, *args, **kwargs)

    monkeypatch.setattr(stream, "chunk_ref", chunk_ref)
    monkeypatch.setattr(stream, "POOL_MIN_FILES_PER_WORKER", 1)  # read one file ahead
    (built,) = workspace.index()
    assert walk_done[0] is False and not built.reused
    assert len(walk_done) == len(workspace.repo.chunkable_files())

    whole = Workspace(open_repository(repo), settings)  # read first, then chunked
    (expected,) = whole.index(rebuild=True, folder=tmp_path / "whole")
    assert [c.id for c in built.index.chunks] == [c.id for c in expected.index.chunks]
    np.testing.assert_array_equal(built.index.vectors, expected.index.vectors)
    for query in QUERIES:
        np.testing.assert_array_equal(
            built.index.keyword_scores(query), expected.index.keyword_scores(query)
        )

    # Saved under the identity of the files read: the next open chunks nothing.
    workspace.wait_for_saves()
    walk_done.clear()
    (reopened,) = Workspace.open(repo, settings).index()
    assert reopened.reused and reopened.folder == built.folder and walk_done == []


def test_a_closing_workspace_saves_without_waiting_for_a_pause(
    static_model_dir, tmp_path, monkeypatch
):
    """``finish_saves`` (a server whose client has gone) starts the saves that wait for
    answers to pause (an index with edits merged in) at once, and returns once the index
    is written."""
    import threading

    from nexus.retrieval.index import MANIFEST
    from nexus.workspace import saving as module

    monkeypatch.setattr(module, "SAVE_WHEN_IDLE_S", 3600.0)  # a pause that never comes
    repo, cache = _copy_with_model(static_model_dir, tmp_path)
    settings = Settings(tier="fast", cache_dir=cache, workers=1)
    first = Workspace.open(repo, settings)
    first.index()
    first.wait_for_saves()  # a first build is saved at once
    refund = repo / "src" / "services" / "refund.ts"
    refund.write_text(refund.read_text() + "\nexport function settleLedgerDrift() {}\n")
    workspace = Workspace.open(repo, settings)
    (reopened,) = workspace.index(refresh_saved=True)  # the edit merged in, saved after a pause

    def saved() -> set[Path]:
        return {manifest.parent for manifest in (cache / "indexes").glob(f"*/{MANIFEST}")}

    assert reopened.stale and saved() == {reopened.folder}
    closing = threading.Thread(target=workspace.finish_saves, daemon=True)
    closing.start()
    closing.join(timeout=120)  # liveness only: a save of a sample repository takes well under
    assert not closing.is_alive()
    assert len(saved() - {reopened.folder}) == 1  # the index with the edit


def test_a_first_build_is_saved_while_questions_keep_coming(static_model_dir, tmp_path):
    """The first build's save does not wait for a pause in questions (issue 41: a server
    killed right after its first answer built everything again), and is said once it is
    written, not before."""
    repo, cache = _copy_with_model(static_model_dir, tmp_path)
    said: list[str] = []
    workspace = Workspace.open(repo, Settings(tier="fast", cache_dir=cache), say=said.append)
    (built,) = workspace.index()
    assert "saving in the background" in built.describe("ast")
    manifest = built.folder / "manifest.json"
    deadline = time.monotonic() + 30
    while not manifest.is_file() and time.monotonic() < deadline:
        workspace.search("refund a payment", 3)  # never a pause of a second
    assert manifest.is_file()
    workspace.wait_for_saves()
    assert said == [f"saved the index in {built.folder} ({said[0].rsplit('(', 1)[1]}"]
