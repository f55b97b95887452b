"""Background index builds: batches reach the cache as they go, a resumed build
embeds nothing twice, requesters share one build, an idle build stops."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import numpy as np
import pytest
from helpers import GatedEmbedder, make_chunk

from nexus.retrieval.embedding import CachedEmbedder, EmbeddingCache
from nexus.retrieval.index import VectorIndex
from nexus.retrieval.search import search
from nexus.runtime import build_manager, builds, progress
from nexus.runtime.lru import ByteLRU
from nexus.ui.fake_embedder import HashingEmbedder

CHUNKS = [make_chunk(f"f{i}", text=f"function f{i}() {{ return {i} }}") for i in range(10)]


@pytest.fixture
def cache(tmp_path: Path) -> EmbeddingCache:
    return EmbeddingCache(tmp_path / "cache")


def test_a_build_commits_each_batch_and_ends_searchable(cache: EmbeddingCache) -> None:
    inner = HashingEmbedder(dim=16)
    build = builds.IndexBuild(CHUNKS, CachedEmbedder(inner, cache), batch=3).start()
    build.join(10)
    progress = build.progress()
    assert (progress.phase, progress.done, progress.total) == ("done", 10, 10)
    assert progress.embedded == 10
    assert cache.count(inner.name) == 10
    index = build.index()
    assert index is not None and len(index) == 10
    assert search(index, inner.encode([CHUNKS[4].embedding_text])[0], k=1)[0].chunk.id == "f4"


def test_the_final_index_holds_every_chunk_after_a_snapshot_near_the_end(
    cache: EmbeddingCache,
) -> None:
    """A page that polls while the last batch is embedded gets a snapshot of 9 of 10
    chunks, fresh enough for polling; the build's final index must not be that one
    (its vectors are released after it: later reads failed to rebuild)."""
    inner = GatedEmbedder()
    done: list[VectorIndex] = []
    build = builds.IndexBuild(CHUNKS, CachedEmbedder(inner, cache), batch=3)
    build.on_done = done.append
    build.start()
    for _ in range(3):
        inner.step()
    assert inner.waiting.acquire(timeout=10)  # batches 1-3 committed, the last one waits
    assert len(build.index() or []) == 9
    inner.gate.release()
    build.join(10)
    assert build.progress().phase == "done"
    assert [len(index) for index in done] == [10]
    assert len(build.index() or []) == 10


def test_cancelled_build_resumed_embeds_nothing_twice(cache: EmbeddingCache) -> None:
    inner = GatedEmbedder()
    build = builds.IndexBuild(CHUNKS, CachedEmbedder(inner, cache), batch=3).start()
    inner.step()
    inner.step()
    assert inner.waiting.acquire(timeout=10)  # the third batch is waiting: cancel it
    build.cancel()
    inner.gate.release()
    build.join(10)
    partial = build.progress()
    assert partial.phase == "cancelled" and partial.done == 9
    assert len(build.index() or []) == 9  # the partial index answers queries
    assert cache.count(inner.name) == 9

    resumed = builds.IndexBuild(CHUNKS, CachedEmbedder(inner, cache), batch=3).start()
    inner.step()  # the only batch with a text the cache lacks
    resumed.join(10)
    assert resumed.progress().phase == "done"
    assert resumed.progress().embedded == 1
    assert len(inner.embedded) == len(set(inner.embedded)) == 10  # none embedded twice


def test_two_requesters_share_one_build(cache: EmbeddingCache) -> None:
    manager = build_manager.BuildManager()
    inner = HashingEmbedder(dim=16)
    asked: list[int] = []

    def chunks() -> list:
        asked.append(1)
        return CHUNKS

    first = manager.request("key", chunks, CachedEmbedder(inner, cache))
    second = manager.request("key", chunks, CachedEmbedder(inner, cache))
    assert first is second and asked == [1]
    assert manager.get("key") is first
    first.join(10)
    assert manager.request("key", chunks, CachedEmbedder(inner, cache)) is first


def test_a_build_nobody_asks_about_stops_and_a_request_resumes_it(
    cache: EmbeddingCache,
) -> None:
    now = [0.0]
    manager = build_manager.BuildManager(idle_after=60, batch=3, clock=lambda: now[0])
    inner = GatedEmbedder()
    build = manager.request("key", lambda: CHUNKS, CachedEmbedder(inner, cache))
    inner.step()
    assert inner.waiting.acquire(timeout=10)
    now[0] = 61.0  # nobody touched it for a minute
    inner.gate.release()
    build.join(10)
    assert build.progress().phase == progress.IDLE
    assert build.progress().done == 6

    again = manager.request("key", lambda: CHUNKS, CachedEmbedder(inner, cache))
    assert again is not build
    inner.step()
    inner.step()
    again.join(10)
    assert again.progress().phase == "done" and again.progress().embedded == 4
    assert len(inner.embedded) == len(set(inner.embedded)) == 10


def test_cancelled_build_is_not_restarted_unless_resumed(cache: EmbeddingCache) -> None:
    manager = build_manager.BuildManager(batch=3)
    inner = GatedEmbedder()
    build = manager.request("key", lambda: CHUNKS, CachedEmbedder(inner, cache))
    assert inner.waiting.acquire(timeout=10)
    build.cancel()
    inner.gate.release()
    build.join(10)
    assert build.progress().phase == "cancelled"
    assert manager.request("key", lambda: CHUNKS, CachedEmbedder(inner, cache)) is build
    resumed = manager.request("key", lambda: CHUNKS, CachedEmbedder(inner, cache), resume=True)
    assert resumed is not build
    for _ in range(3):
        inner.step()
    resumed.join(10)
    assert resumed.progress().phase == "done"
    assert len(inner.embedded) == 10


def test_a_failing_embedder_is_reported(cache: EmbeddingCache) -> None:
    class Broken(HashingEmbedder):
        def encode(self, texts, progress=None):
            raise RuntimeError("model crashed")

    build = builds.IndexBuild(CHUNKS, CachedEmbedder(Broken(), cache)).start()
    build.join(10)
    assert build.progress().phase == "failed" and "model crashed" in build.progress().error


def test_keyword_hits_answer_before_any_vector(cache: EmbeddingCache) -> None:
    inner = GatedEmbedder()
    chunks = [*CHUNKS, make_chunk("pay", text="function refundPayment(payment) {}")]
    build = builds.IndexBuild(chunks, CachedEmbedder(inner, cache), batch=3).start()
    assert inner.waiting.acquire(timeout=10)  # chunks made, the first batch held
    inner.waiting.release()
    assert build.index() is None  # nothing embedded yet
    hits = build.keyword_hits("refund payment", 3)
    assert [h.chunk.id for h in hits] == ["pay"] and hits[0].rank == 1
    build.cancel()
    inner.step()
    build.join(10)


def test_progress_summary_tells_phase_speed_and_time_left() -> None:
    loading = progress.BuildProgress(progress.LOADING, 0, 500, 0, None)
    assert loading.summary().startswith("Loading the embedding model")
    running = progress.BuildProgress(progress.EMBEDDING, 100, 500, 60, rate=4.0)
    text = running.summary()
    assert "100/500 chunks (20%)" in text and "4.0 chunks/s" in text
    assert "about 2 min left" in text and "40 from the cache" in text
    assert "left" not in progress.BuildProgress(progress.DONE, 500, 500, 0, 4.0).summary()


def test_the_chunk_estimate_follows_the_bytes_chunked_not_the_files() -> None:
    # 2 small files of 50,000 bytes in all gave 40 chunks; 500,000 bytes in 100 files
    # are to be chunked: about 400 chunks (per file it would say 2,000).
    early = progress.BuildProgress(
        progress.CHUNKING, 0, 40, 0, None, files_done=2, files=100, bytes_done=50_000, bytes=500_000
    )
    assert early.expected_total == 400
    assert "0/about 400 chunks embedded" in early.summary()


def test_the_cache_share_is_said_of_the_build_once_it_is_over() -> None:
    running = progress.BuildProgress(progress.EMBEDDING, 100, 500, 76, rate=4.0).summary()
    assert "76 embedded by the model so far, 24 from the cache" in running
    done = progress.BuildProgress(progress.DONE, 100, 100, 76, rate=4.0).summary()
    assert "the build embedded 76 with the model and took 24 from the cache" in done
    opened = progress.BuildProgress(progress.OPENED, 100, 100, 0, None).summary()
    assert opened == "opened the saved index from disk (100 chunks, nothing embedded)"


def test_builds_count_against_the_memory_budget(cache: EmbeddingCache) -> None:
    memory = ByteLRU(10_000_000)
    manager = build_manager.BuildManager(batch=3, memory=lambda: memory)
    inner = GatedEmbedder()
    running = manager.request("a", lambda: CHUNKS, CachedEmbedder(inner, cache))
    assert inner.waiting.acquire(timeout=10)  # chunks made, the first batch waits
    inner.waiting.release()
    assert manager.get("a") is running
    assert memory.used == running.nbytes() > 0
    memory.put("other work", object(), memory.budget)  # pushes the build's entry out
    assert manager.get("a") is running  # a running build is kept and put back
    assert ("build", "a") in memory
    for _ in range(4):
        inner.step()
    running.join(10)
    assert manager.get("a") is running
    assert memory.get(("build", "a")) is running and memory.used >= running.nbytes()
    memory.put("more work", object(), memory.budget)  # now a finished build goes
    assert manager.get("a") is None and manager.builds() == []


def test_a_stream_is_chunked_on_the_build_thread_and_answers_from_its_first_files(
    cache: EmbeddingCache,
) -> None:
    more = threading.Event()
    words = [
        "alpha",
        "bravo",
        "charlie",
        "delta",
        "echo",
        "foxtrot",
        "golf",
        "hotel",
        "india",
        "juliet",
    ]
    chunks = [make_chunk(w, text=f"function {w}() {{ return 1 }}") for w in words]

    def files():
        yield chunks[:2]  # the first file; the others wait for the test
        assert more.wait(10)
        for i in range(2, 10, 2):
            yield chunks[i : i + 2]

    stream = builds.ChunkStream(files(), sizes=[100] * 5)
    build = builds.IndexBuild(stream, CachedEmbedder(HashingEmbedder(dim=16), cache), batch=2)
    build.start()
    deadline = time.monotonic() + 10
    while build.progress().files_done < 1 and time.monotonic() < deadline:
        time.sleep(0.01)
    progress = build.progress()
    assert progress.chunking and progress.total == 2 and progress.expected_total == 10
    assert "1/5 files chunked, 2 chunks so far" in progress.summary()
    assert [h.chunk.id for h in build.keyword_hits("bravo", 1)] == ["bravo"]
    more.set()
    build.join(10)
    done = build.progress()
    assert (done.phase, done.done, done.total, done.files_done) == ("done", 10, 10, 5)
    assert [h.chunk.id for h in build.keyword_hits("hotel", 1)] == ["hotel"]


def test_queries_embedded_during_a_build_do_not_change_its_counts(cache: EmbeddingCache) -> None:
    inner = GatedEmbedder()
    build = builds.IndexBuild(CHUNKS, CachedEmbedder(inner, cache), batch=3).start()
    assert inner.waiting.acquire(timeout=10)  # the first batch is in the model
    build.query_embedder.encode(["a query"])  # a page asks meanwhile: one text for the model
    inner.gate.release()
    while build.progress().running:
        if inner.waiting.acquire(timeout=1):
            inner.gate.release()
    build.join(10)
    progress = build.progress()
    assert (progress.phase, progress.done, progress.embedded) == ("done", 10, 10)


def test_an_opened_index_answers_by_keywords_from_its_saved_table(
    cache: EmbeddingCache, tmp_path: Path
) -> None:
    chunks = [*CHUNKS, make_chunk("pay", text="function refundPayment(payment) {}")]
    VectorIndex.build(chunks, np.ones((len(chunks), 4)), "m").save(tmp_path / "idx")
    opened = VectorIndex.load(tmp_path / "idx")
    build = builds.IndexBuild.opened(opened, CachedEmbedder(HashingEmbedder(dim=4), cache))
    hits = build.keyword_hits("refund payment", 3)
    assert [(h.chunk.id, h.key) for h in hits] == [("pay", 10)]
    assert build._keywords is None  # no table built: the saved one answered


class _ClockedEmbedder(HashingEmbedder):
    """Each batch takes the next of ``seconds`` on a fake clock."""

    def __init__(self, now: list[float], seconds: list[float]) -> None:
        super().__init__(dim=16)
        self.now, self.seconds = now, list(seconds)

    def encode(self, texts, progress=None):  # noqa: ANN001, ANN201 - HashingEmbedder's
        if threading.current_thread().name == builds.BUILD_THREAD:
            self.now[0] += self.seconds.pop(0)
        return super().encode(texts, progress)


def test_the_rate_counts_embedding_time_only_and_is_frozen_when_done(
    cache: EmbeddingCache,
) -> None:
    """Chunking takes 100 s of the fake clock, the two batches 2 s each: 12 chunks in
    4 s of embedding is 3 chunks/s, however long ago the build finished."""
    now = [0.0]
    chunks = [make_chunk(f"g{i}", text=f"const g{i} = {i}") for i in range(12)]

    def slow_parts():  # noqa: ANN202
        for chunk in chunks:
            now[0] += 100 / len(chunks)
            yield [chunk]

    stream = builds.ChunkStream(slow_parts(), [10] * len(chunks))
    embedder = CachedEmbedder(_ClockedEmbedder(now, [2.0, 2.0]), cache)
    build = builds.IndexBuild(stream, embedder, batch=6, clock=lambda: now[0], idle_after=1e9)
    build.first_batch = 6
    build.start().join(10)
    done = build.progress()
    assert done.phase == "done" and done.rate == pytest.approx(3.0)
    now[0] += 3600
    assert build.progress().rate == pytest.approx(3.0)


def test_the_pace_weighs_each_step_by_the_model_time_it_took() -> None:
    """A steady 1 s a chunk for a minute; then a short step twice as slow moves the pace
    by its share of the time (half a second of thirty), not a fifth of the way; a lasting
    change is followed within a window of model time, whatever the steps' sizes."""
    pace = progress.Pace()
    assert pace.after(0, 5.0) == pace  # nothing embedded by the model: no news
    for _ in range(60):
        pace = pace.after(1, 1.0)
    assert pace.seconds_per_item == pytest.approx(1.0)
    bumped = pace.after(1, 2.0).seconds_per_item
    assert 1.0 < bumped < 1.07
    slower = pace
    for _ in range(30):  # the model now takes 2 s a chunk, in steps of 4
        slower = slower.after(4, 8.0)
    assert slower.seconds_per_item == pytest.approx(2.0, rel=0.01)
    big_steps = pace.after(60, 120.0)  # the same minute in one step: the same answer
    assert big_steps.seconds_per_item == pytest.approx(2.0, rel=0.02)


class _PacedEmbedder(HashingEmbedder):
    """Each text the model embeds (not the cache) takes ``seconds(n)`` on a fake clock,
    ``n`` counting the texts so far; ``on_call`` runs first, on the build's thread."""

    def __init__(self, now: list[float], seconds, on_call=None) -> None:  # noqa: ANN001
        super().__init__(dim=16)
        self.now, self.seconds, self.on_call = now, seconds, on_call
        self.calls: list[tuple[int, float]] = []  # (texts, seconds) per call

    def encode(self, texts, progress=None):  # noqa: ANN001, ANN201 - HashingEmbedder's
        if threading.current_thread().name == builds.BUILD_THREAD:
            if self.on_call is not None:
                self.on_call()
            before = sum(texts for texts, _ in self.calls)
            took = sum(self.seconds(before + i) for i in range(len(texts)))
            self.calls.append((len(texts), took))
            self.now[0] += took
        return super().encode(texts, progress)


def paced_build(cache, seconds, n=60, on_call=None, chunks=None):  # noqa: ANN001, ANN201
    now = [0.0]
    inner = _PacedEmbedder(now, seconds, on_call)
    chunks = chunks or [make_chunk(f"p{i}", text=f"const p{i} = {i}") for i in range(n)]
    build = builds.IndexBuild(
        chunks,
        CachedEmbedder(inner, cache),
        clock=lambda: now[0],
        idle_after=1e9,
        step_s=builds.STEP_S,
    )
    return build, inner


def test_steps_last_about_step_s_so_cancel_waits_for_little(cache: EmbeddingCache) -> None:
    """At 0.1 s a chunk the first step probes two chunks, the next ones take five
    (half a second): a Cancel is polled between them, so it waits for one of those,
    not for a batch of 64 (21 s on sentry)."""
    build, inner = paced_build(cache, lambda i: 0.1)
    build.start().join(10)
    sizes = [texts for texts, _ in inner.calls]
    assert sizes[0] == builds.PROBE_CHUNKS and set(sizes[1:-1]) == {5}
    assert max(seconds for _, seconds in inner.calls) <= builds.STEP_S + 1e-9

    # The model slows down tenfold midway: the next step is sized by the slower pace.
    chunks = [make_chunk(f"q{i}", text=f"let q{i} = {i}") for i in range(40)]
    build, inner = paced_build(cache, lambda i: 0.1 if i < 20 else 1.0, chunks=chunks)
    build.start().join(10)
    slow = [seconds for _, seconds in inner.calls]
    assert max(slow) <= 5 * 1.0  # the one step that met the change
    assert sorted(slow)[-2] <= 1.0  # every other step: Cancel within 2 s with the redraw
    assert [texts for texts, _ in inner.calls][-3:] == [1, 1, 1]


def test_a_cancel_stops_the_build_after_the_step_in_flight(cache: EmbeddingCache) -> None:
    def cancel_on_third_call() -> None:
        if len(inner.calls) == 2:
            build.cancel()

    build, inner = paced_build(cache, lambda i: 0.2, on_call=cancel_on_third_call)
    build.start().join(10)
    done = build.progress()
    assert done.phase == progress.CANCELLED
    assert len(inner.calls) == 3 and done.done == sum(texts for texts, _ in inner.calls)
    assert inner.calls[-1][1] <= builds.STEP_S + 1e-9  # the wait after the click


def test_the_time_left_does_not_swing_on_the_fake_clock(cache: EmbeddingCache) -> None:
    """Chunks alternate between quick and three times slower (short and long ones):
    the time left, read before each step, goes down without jumps."""
    etas: list[float] = []
    build, inner = paced_build(
        cache,
        lambda i: 0.1 if (i // 7) % 2 else 0.3,
        n=200,
        on_call=lambda: etas.append(build.progress().eta_s),
    )
    build.start().join(10)
    assert etas[0] is None  # before the first step: unknown, not "0 s"
    steady = [eta for eta in etas[3:] if eta is not None]
    assert len(steady) > 20
    for before, after in zip(steady, steady[1:], strict=False):
        assert after <= before * 1.1, (before, after)  # no 45 s -> 4 min
    assert build.progress().phase == progress.DONE


def test_a_build_reckons_its_time_left_from_the_model_not_the_cache(
    cache: EmbeddingCache,
) -> None:
    """The cached chunks come first, a batch at a time, and take no model time: the
    pace (and the time left) comes from the chunks the model embeds, never from the
    cache's speed; while only the cache has answered, the time left is unknown."""
    CachedEmbedder(HashingEmbedder(dim=16), cache).encode([c.embedding_text for c in CHUNKS[:6]])
    seen: list[progress.BuildProgress] = []
    build, inner = paced_build(
        cache, lambda i: 1.0, chunks=CHUNKS, on_call=lambda: seen.append(build.progress())
    )
    build.batch = 3
    build.start().join(10)
    done = build.progress()
    assert (done.cached_first, done.embedded, done.interrupted) == (6, 4, False)
    assert done.rate == pytest.approx(1.0)  # the model's 4 chunks in 4 s, not 10 in 4 s
    assert "the model embeds 1.0 chunks/s" in done.summary()
    assert seen[0].done == 6 and seen[0].eta_s is None  # the cache read, the model not yet
    assert seen[1].eta_s == pytest.approx(2.0)  # 2 chunks left at 1 s each
    assert "Resumed" not in done.summary()  # a first build: the cache held others' work


def test_resumed_only_after_a_build_of_the_same_key_was_interrupted(tmp_path: Path) -> None:
    """A first build whose chunks other builds cached says nothing of a resume; after a
    Cancel (or a server that went down) the next build of that key says "Resumed";
    a finished build leaves nothing behind to resume."""
    model = HashingEmbedder(dim=16)
    shared = EmbeddingCache(tmp_path)
    CachedEmbedder(model, shared).encode([c.embedding_text for c in CHUNKS[:7]])
    manager = build_manager.BuildManager(batch=3)
    first = manager.request("key", lambda: CHUNKS, CachedEmbedder(model, shared))
    first.join(10)
    assert first.progress().phase == progress.DONE and first.progress().cached_first == 7
    assert "Resumed" not in first.progress().summary()

    gated = GatedEmbedder()
    more = [*CHUNKS, *(make_chunk(f"m{i}", text=f"let m{i} = {i}") for i in range(4))]
    other = manager.request("other", lambda: more, CachedEmbedder(gated, shared))
    assert gated.waiting.acquire(timeout=10)  # the cached ones are in, a new one held
    assert "Resumed" not in other.progress().summary()
    other.cancel()
    gated.gate.release()
    other.join(10)
    committed = other.progress().done  # every chunk done is in the cache
    assert other.progress().phase == progress.CANCELLED and 10 < committed < 14
    again = manager.request("other", lambda: more, CachedEmbedder(model, shared), resume=True)
    again.join(10)
    assert again.progress().interrupted
    note = f"Resumed: {committed} of 14 chunks were already embedded"
    assert note in again.progress().summary()

    manager.forget("other")  # finished: a later build of it is a first one again
    later = manager.request("other", lambda: more, CachedEmbedder(model, shared))
    later.join(10)
    assert not later.progress().interrupted and "Resumed" not in later.progress().summary()


def test_keyword_search_covers_a_file_embedded_last(cache: EmbeddingCache) -> None:
    """Every file is chunked before the first batch: keyword hits cover the file that
    comes last in path order and is embedded last (docs after sources) while the first
    batch is still in the model."""
    guide = make_chunk("guide", file="website/docs/guide.md", text="configureTunnelProxy()")
    sources = [make_chunk(f"s{i}", file=f"src/s{i}.js", text=f"s{i}()") for i in range(6)]
    files = [*([chunk] for chunk in sources), [guide]]
    inner = GatedEmbedder()
    stream = builds.ChunkStream(iter(files), sizes=[100] * len(files))
    build = builds.IndexBuild(stream, CachedEmbedder(inner, cache), batch=2).start()
    assert inner.waiting.acquire(timeout=10)  # the first batch is in the model, held
    inner.waiting.release()
    progress = build.progress()
    assert (progress.files_done, progress.done, progress.files_embedded) == (7, 0, 0)
    assert [h.chunk.id for h in build.keyword_hits("configure tunnel proxy", 3)] == ["guide"]
    while build.progress().running:
        if inner.waiting.acquire(timeout=1):
            inner.gate.release()
    build.join(10)
    index = build.index()
    assert index is not None and index.chunks[-1].id == "guide"  # embedded last
    assert inner.embedded[-1] == guide.embedding_text
    assert build.progress().files_embedded == 7


def test_a_build_after_a_restart_resumes_from_the_cache_and_says_so(tmp_path: Path) -> None:
    """A new server (new manager, new cache handle on the same folder) finds the batches
    the old one committed: they are embedded first, from the cache, and the progress
    says how many there were."""
    inner = GatedEmbedder()
    before = build_manager.BuildManager(batch=3)
    first = before.request("key", lambda: CHUNKS, CachedEmbedder(inner, EmbeddingCache(tmp_path)))
    inner.step()
    inner.step()
    assert inner.waiting.acquire(timeout=10)  # two batches committed, the third held
    first.cancel()  # the server goes down: the batch in the model is committed, no more
    inner.gate.release()
    first.join(10)
    assert first.progress().done == 9

    after = build_manager.BuildManager(batch=3)
    model = HashingEmbedder(dim=16)
    resumed = after.request("key", lambda: CHUNKS, CachedEmbedder(model, EmbeddingCache(tmp_path)))
    resumed.join(10)
    progress = resumed.progress()
    assert (progress.phase, progress.cached_first, progress.embedded) == ("done", 9, 1)
    assert progress.interrupted
    assert "Resumed: 9 of 10 chunks were already embedded" in progress.summary()
    fresh = builds.IndexBuild(CHUNKS[:2], CachedEmbedder(model, EmbeddingCache(tmp_path / "new")))
    fresh.start().join(10)
    assert fresh.progress().phase == "done" and "Resumed" not in fresh.progress().summary()


def test_a_slow_chunking_embeds_one_early_batch_of_the_files_chunked_so_far(
    cache: EmbeddingCache,
) -> None:
    """Past ``EARLY_BATCH_AFTER_S`` of chunking, one batch of what is chunked so far is
    embedded (a first dense answer) before the rest is chunked; nothing twice after."""
    now = [0.0]
    files = [[make_chunk(f"s{i}", file=f"src/s{i}.js", text=f"s{i}()")] for i in range(6)]

    def slow_stream():
        for i, part in enumerate(files):
            if i == 3:
                now[0] += builds.EARLY_BATCH_AFTER_S + 1  # three files took long
            yield part

    inner = GatedEmbedder()
    stream = builds.ChunkStream(slow_stream(), sizes=[100] * len(files))
    build = builds.IndexBuild(
        stream, CachedEmbedder(inner, cache), batch=2, clock=lambda: now[0]
    ).start()
    assert inner.waiting.acquire(timeout=10)  # the early batch is in the model, held
    during = build.progress()
    assert (during.phase, during.files_done) == (progress.CHUNKING, 4)
    assert build.index() is None  # the batch is not done yet
    inner.gate.release()
    while build.progress().running:
        if inner.waiting.acquire(timeout=1):
            inner.gate.release()
    build.join(10)
    index = build.index()
    assert build.progress().phase == progress.DONE
    assert index is not None and [c.id for c in index.chunks[:2]] == ["s0", "s1"]
    assert sorted(inner.embedded) == sorted(c[0].embedding_text for c in files)  # once each
