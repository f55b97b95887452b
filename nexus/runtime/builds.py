"""Index builds in the background: one thread per repository + settings + model,
resumable through the embedding cache.

A build chunks every file first (keyword hits then cover the whole repository), then
embeds in ``embed_order`` order: what the cache holds (a resume after a restart), then
the most useful files. It embeds in batches through a ``CachedEmbedder`` (each batch
committed to the cache as it is done), so a cancelled, idle-stopped or killed build
resumed later embeds nothing twice. A build nobody has asked about for ``idle_after``
seconds stops. No streamlit here: the pages poll ``IndexBuild.progress()`` (a
``progress.BuildProgress``) and ``IndexBuild.index()``; the builds are kept by key, and
shared, by a ``build_manager.BuildManager``.
"""

from __future__ import annotations

import bisect
import contextlib
import itertools
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from nexus.retrieval.candidates import Candidates, top_keyword_keys
from nexus.retrieval.embedding import CachedEmbedder
from nexus.retrieval.embedding_cache import text_key
from nexus.retrieval.index import VectorIndex, keyword_text
from nexus.retrieval.lexical import LexicalIndex
from nexus.retrieval.ranking import RankingRules, rank
from nexus.retrieval.search import Hit, ranked_hits
from nexus.runtime import embed_order, footprint
from nexus.runtime.progress import (
    CANCELLED,
    CHUNKING,
    DONE,
    EMBEDDING,
    FAILED,
    IDLE,
    LOADING,
    OPENED,
    QUEUED,
    RUNNING_PHASES,
    BuildProgress,
    Pace,
)
from nexus.types import Chunk

#: Seconds without a ``touch`` after which a build stops (the browser has gone).
IDLE_AFTER = 120.0

#: Chunks per batch at most: each is committed to the cache and shows in the progress
#: (256 take ~20 s on two busy cores, 64 ~5 s; sentry's long chunks, 64 in 21 s).
BUILD_BATCH = 64
#: Seconds of model time a step takes at the measured pace (the dashboard's
#: ``IndexBuild.step_s``): Cancel is polled between steps, so it takes effect within
#: about this plus the page's one-second redraw (21 s on sentry with 64-chunk batches).
STEP_S = 0.5
#: Chunks in the first step the model embeds, before its pace is known.
PROBE_CHUNKS = 2
#: Chunks in the first batch, which the first dense answer waits for: a quarter of a
#: batch, so that answer comes seconds sooner on a cold cache.
FIRST_BATCH = 16
#: Seconds of chunking after which, the model being loaded, one batch of the files
#: chunked so far (the most useful, ``ChunkStream`` order) is embedded before the rest
#: is chunked: on a large repository a first dense answer then comes in seconds, not
#: after the whole repository is chunked (about a minute for 6,400 files on two cores).
EARLY_BATCH_AFTER_S = 8.0

#: The name of every build thread.
BUILD_THREAD = "nexus-index-build"

#: While a build runs, the searchable snapshot is rebuilt only once it is this much
#: behind (rebuilding the graph of 50,000 chunks every second would slow the build).
SNAPSHOT_GROWTH = 1.25

_SERIALS = itertools.count(1)


@dataclass(frozen=True)
class ChunkStream:
    """Chunks made file by file on the build's thread (one list per file), so the page
    answers from the first files while the rest are still being chunked; ``sizes`` are
    the files' bytes, in the same order (the progress estimates the chunks to come)."""

    parts: Iterable[Sequence[Chunk]]
    sizes: Sequence[int]

    @property
    def files(self) -> int:
        return len(self.sizes)


class IndexBuild:
    """Chunks every file (when given a ``ChunkStream``), then embeds batch by batch on a
    thread into a growing ``VectorIndex``; the model loads on a second thread meanwhile.

    Keyword hits cover every chunk as soon as the files are chunked (seconds), before
    any vector: the chunks are then put in ``embed_order.embedding_order`` (cached ones
    first, then the most useful files), so dense hits cover the sources first.

    Args:
        chunks: what to index (their ``embedding_text`` is embedded): a list, or a
            ``ChunkStream`` read on the build's thread.
        embedder: a ``CachedEmbedder``: every batch reaches the cache before the next.
        batch: chunks per step at most (one cache commit each); the first has at most
            ``FIRST_BATCH``.
        idle_after: stop when ``touch`` has not been called for this many seconds.
        clock: seconds, monotonic (tests pass a fake one).
        on_done: called with the finished index (the dashboard saves it).
        step_s: seconds of model time per step at the smoothed pace (the first step
            ``PROBE_CHUNKS``): what Cancel waits for at most (the dashboard's builds use
            ``STEP_S``). None: steps of ``batch`` whatever they take.
        interrupted: an earlier build of the same chunks began and never finished.
        unfinished: a file that exists while this build has not finished (its key's
            marker in ``build_manager.UNFINISHED``; see ``BuildManager``).
    """

    def __init__(
        self,
        chunks: Sequence[Chunk] | ChunkStream,
        embedder: CachedEmbedder,
        batch: int = BUILD_BATCH,
        idle_after: float = IDLE_AFTER,
        clock: Callable[[], float] = time.monotonic,
        on_done: Callable[[VectorIndex], object] | None = None,
        step_s: float | None = None,
        interrupted: bool = False,
        unfinished: Path | None = None,
    ) -> None:
        self._stream = chunks if isinstance(chunks, ChunkStream) else ChunkStream([chunks], [0])
        self.chunks: list[Chunk] | Sequence[Chunk] = []  # grows as files are chunked
        self._files_done = self._bytes_done = 0
        self._bytes = sum(self._stream.sizes)
        self.on_done = on_done
        self.embedder = embedder
        # Queries go through a handle of their own: ``last_misses`` of the build's
        # handle must count the build's batch, not a page's query embedded meanwhile.
        self.query_embedder = CachedEmbedder(embedder.inner, embedder.cache)
        self.batch = batch
        self.first_batch = min(FIRST_BATCH, batch)
        self.step_s = step_s
        self._interrupted = interrupted
        self._unfinished = unfinished
        self.idle_after = idle_after
        self._clock = clock
        self._lock = threading.Lock()
        self._cancel = threading.Event()
        self._loaded = threading.Event()
        self._seen = clock()
        self._vectors: list[np.ndarray] = []
        self._done = self._embedded = 0
        self._phase, self._error = QUEUED, ""
        # Seconds of the steps the model embedded in (steps the cache answered in full take
        # none): the model's rate, and the time left, are the chunks it embedded over these.
        self._model_s = 0.0
        self._pace = Pace()  # seconds per chunk the model embeds, smoothed: sizes the steps
        self._last_pace = 0.0  # the same, of the latest step alone: for the next step
        self._snapshot: VectorIndex | None = None
        self._keywords: tuple[int, LexicalIndex] | None = None  # (chunks it covers, index)
        self._table: LexicalIndex | None = None  # over every chunk, in embedding order
        self._file_ends: list[int] = []  # embed_order.file_ends of the ordered chunks
        self._cached_first = 0  # chunks the cache held before the first batch (not ours)
        self._cached_end = 0  # the cached chunks lie first in the order: up to here
        self._opened_from = ""  # the saved index's folder, when opened
        self._thread = threading.Thread(target=self._run, name=BUILD_THREAD, daemon=True)
        self.serial = next(_SERIALS)  # tells builds of one key apart (who started which)
        self._base_bytes = self._snapshot_bytes = self._keyword_bytes = 0

    @classmethod
    def opened(cls, index: VectorIndex, embedder: CachedEmbedder) -> IndexBuild:
        """A finished build around a saved index (no thread, nothing embedded)."""
        build = cls((), embedder)
        build.chunks = index.chunks  # read from the memory-mapped file only when asked
        build._files_done = build._stream.files
        build._done, build._phase, build._snapshot = len(index), OPENED, index
        folder = index.folder
        build._opened_from = folder.name if folder is not None else ""
        build._snapshot_bytes = (
            sum(f.stat().st_size for f in folder.iterdir() if f.is_file())
            if folder is not None
            else footprint.index_bytes(index.chunks, index.dim)
        )
        return build

    def start(self) -> IndexBuild:
        if self._phase == QUEUED:
            self._thread.start()
        return self

    def touch(self) -> None:
        """Someone still wants this build (a page polled it)."""
        self._seen = self._clock()

    def cancel(self) -> None:
        """Stop after the batch in flight (it is committed to the cache)."""
        self._cancel.set()

    def join(self, timeout: float | None = None) -> None:
        if self._thread.ident is not None:
            self._thread.join(timeout)

    def progress(self) -> BuildProgress:
        with self._lock:
            model_s, embedded = self._model_s, self._embedded
            rate = embedded / model_s if embedded and model_s > 0 else None
            return BuildProgress(
                self._phase,
                self._done,
                len(self.chunks),
                self._embedded,
                rate,
                self._error,
                files_done=self._files_done,
                files=self._stream.files,
                model_loading=self._phase in RUNNING_PHASES and not self._loaded.is_set(),
                bytes_done=self._bytes_done,
                bytes=self._bytes,
                files_embedded=bisect.bisect_right(self._file_ends, self._done),
                files_with_chunks=len(self._file_ends),
                cached_first=self._cached_first,
                interrupted=self._interrupted,
                opened_from=self._opened_from,
            )

    def nbytes(self) -> int:
        """Estimated memory held: chunks, vectors so far, snapshot and keyword table."""
        with self._lock:
            vectors = sum(v.nbytes for v in self._vectors)
            return self._base_bytes + vectors + self._snapshot_bytes + self._keyword_bytes

    def index(self, *, complete: bool = False) -> VectorIndex | None:
        """The chunks embedded so far, searchable (None before the first batch).

        While the build runs, rebuilt only when the chunks embedded have grown by
        ``SNAPSHOT_GROWTH`` since the last one, so polling is cheap. ``complete``: every
        chunk embedded so far, never an older snapshot (the build's own last call: its
        vectors are released after it, so a partial final index could not be completed).
        """
        with self._lock:
            done, vectors = self._done, list(self._vectors)
            snapshot, running = self._snapshot, self._phase in RUNNING_PHASES
            chunks = self.chunks[:done]  # in embedding order: set before the first batch
        if not done:
            return None
        if snapshot is not None:
            fresh_enough = running and not complete and done < SNAPSHOT_GROWTH * len(snapshot)
            if len(snapshot) == done or fresh_enough:
                return snapshot
        vectors_so_far = np.concatenate(vectors)
        snapshot = VectorIndex.build(chunks, vectors_so_far, self.embedder.name)
        size = footprint.index_bytes(snapshot.chunks, snapshot.dim)
        with self._lock:
            if self._snapshot is not None and len(self._snapshot) > len(snapshot):
                return self._snapshot  # a larger one was stored while this one was built
            self._snapshot, self._snapshot_bytes = snapshot, size
        return snapshot

    def keyword_hits(self, query: str, k: int, rules: RankingRules | None = None) -> list[Hit]:
        """The ``k`` best chunks by keywords (BM25) over every chunk made so far: an
        answer before any vector exists, or before the model is loaded (chunks without
        a matching term are left out). With ``rules`` (what ``rules_for(config)`` gives a
        dense search) they go through the same ranking stage, with no dense score yet.
        While files are being chunked the table is rebuilt after ``SNAPSHOT_GROWTH``;
        once they are, it covers every chunk; a finished build's is its index's (saved)."""
        with self._lock:
            finished = self._snapshot if self._phase in (DONE, OPENED) else None
            table = self._table
            whole = finished is not None or table is not None  # self.chunks grows no more
            chunks = self.chunks if whole else list(self.chunks)  # a copy: it grows
            chunking = self._files_done < self._stream.files
        if finished is not None:
            keywords = finished.keywords()
        elif table is not None:
            keywords = table
        else:
            keywords = self._keywords_of(chunks, chunking)
        scores = keywords.scores(query)
        if rules is not None:
            return keyword_ranked(chunks, scores, query, k, rules.for_model(self.embedder.name))
        order = [int(i) for i in np.argsort(-scores, kind="stable")[:k] if scores[i] > 0]
        return [
            Hit(chunk=chunks[i], score=float(scores[i]), rank=rank, key=i)
            for rank, i in enumerate(order, start=1)
        ]

    def _keywords_of(self, chunks: Sequence[Chunk], chunking: bool) -> LexicalIndex:
        """The keyword table of the chunks made so far (kept while it is fresh enough)."""
        found = self._keywords
        if found is None or (
            found[0] != len(chunks) and (not chunking or len(chunks) >= SNAPSHOT_GROWTH * found[0])
        ):
            texts = [keyword_text(c) for c in chunks]
            found = self._keywords = (len(chunks), LexicalIndex(texts))
            self._keyword_bytes = int(footprint.LEXICAL_BYTES_PER_BYTE * sum(map(len, texts)))
        return found[1]

    def _set_phase(self, phase: str, error: str = "") -> None:
        with self._lock:
            self._phase, self._error = phase, error

    def _stop_reason(self) -> str | None:
        if self._cancel.is_set():
            return CANCELLED
        if self._clock() - self._seen > self.idle_after:
            return IDLE
        return None

    def _load_model(self) -> None:
        try:
            _ = self.embedder.dim  # loads the model (minutes on a busy machine)
        except Exception:  # noqa: BLE001 - raised again, and reported, on the build's thread
            pass
        finally:
            self._loaded.set()

    def _wait_for_model(self) -> str | None:
        """Until the model is loaded; the reason to stop instead, if any."""
        self._set_phase(LOADING)
        while not self._loaded.wait(0.5):
            reason = self._stop_reason()
            if reason is not None:
                return reason
        return None

    def _embed_batch(self) -> str | None:
        """Embed the next step; the reason to stop instead, if any."""
        reason = self._stop_reason()
        if reason is not None:
            return reason
        with self._lock:
            part = self.chunks[self._done : self._done + self._step_size()]
        began = self._clock()
        vectors = self.embedder.encode([c.embedding_text for c in part])
        seconds = self._clock() - began
        misses = self.embedder.last_misses
        with self._lock:
            if misses:
                self._model_s += seconds
            # The pace is the model's: per chunk it embedded (those the cache answered
            # took next to nothing), and a step the cache answered in full says nothing.
            self._pace = self._pace.after(misses, seconds)
            if misses:
                self._last_pace = seconds / misses
            self._vectors.append(vectors)
            self._done += len(part)
            self._embedded += misses
        return None

    def _step_size(self) -> int:
        """Chunks in the next step: the cached ones a batch at a time (no model time to
        bound), the others as many as the model embeds in ``step_s`` at its pace (the
        smoothed one, or the latest step's if slower: a slowdown shrinks the next step)."""
        limit = self.batch if self._done else self.first_batch
        if self.step_s is None:
            return limit
        if self._done < self._cached_end:
            return min(self.batch, self._cached_end - self._done)
        smoothed = self._pace.seconds_per_item
        if smoothed is None:
            return min(limit, PROBE_CHUNKS)
        pace = max(smoothed, self._last_pace)
        return max(1, min(limit, int(self.step_s / pace + 1e-9) if pace > 0 else limit))

    def _chunk_all(self) -> str | None:
        """Chunk every file (each searchable by keywords as it comes), with one early
        batch embedded on the way when chunking is slow (``EARLY_BATCH_AFTER_S``); the
        reason to stop instead, if any."""
        began = self._clock()
        for part, size in zip(self._stream.parts, self._stream.sizes, strict=True):
            reason = self._stop_reason()
            if reason is not None:
                return reason
            with self._lock:
                self.chunks.extend(part)  # readers copy what they use, under the lock
                self._files_done += 1
                self._bytes_done += size
                self._base_bytes += footprint.chunks_bytes(part)
            if self._early_batch_due(began):
                reason = self._embed_batch()
                if reason is not None:
                    return reason
        return None

    def _early_batch_due(self, began: float) -> bool:
        """Whether to embed one batch now, before the rest is chunked: none yet, enough
        chunks for it, chunking past ``EARLY_BATCH_AFTER_S`` and the model loaded."""
        if self._done or len(self.chunks) < self.first_batch or not self._loaded.is_set():
            return False
        if self._clock() - began < EARLY_BATCH_AFTER_S:
            return False
        try:
            _ = self.embedder.dim  # a model that failed to load is reported after chunking
        except Exception:  # noqa: BLE001 - raised again, and reported, by ``_run``
            return False
        return True

    def _order_chunks(self) -> None:
        """Put the chunks in embedding order (those the cache holds first, then the most
        useful files) and build the keyword table over all of them, before any batch."""
        chunks = list(self.chunks)
        keys = [text_key(chunk.embedding_text) for chunk in chunks]
        present = self.embedder.cache.present(self.embedder.name, keys)
        cached = [i for i, key in enumerate(keys) if key in present]
        ordered = embed_order.embedding_order(chunks, cached)
        # An early batch's chunks are in the cache, at the first positions: they stay
        # first, in order, so the vectors embedded so far still match ``chunks[:done]``
        # (should the cache not have kept them, they are read or embedded again).
        early = self._done
        if any(a is not b for a, b in zip(ordered[:early], chunks[:early], strict=True)):
            with self._lock:
                self._done, self._vectors, self._snapshot = 0, [], None
            early = 0
        texts = [chunk.embedding_text for chunk in ordered]
        table = LexicalIndex(texts)
        with self._lock:
            self.chunks, self._table, self._keywords = ordered, table, None
            self._file_ends = embed_order.file_ends(ordered)
            self._cached_first, self._cached_end = len(cached) - early, len(cached)
            self._keyword_bytes = int(footprint.LEXICAL_BYTES_PER_BYTE * sum(map(len, texts)))

    def _mark_unfinished(self, unfinished: bool) -> None:
        """Create or remove the marker a later build of the same key reads (a cache
        folder that cannot be written only loses the "Resumed" note)."""
        if self._unfinished is None:
            return
        with contextlib.suppress(OSError):
            if unfinished:
                self._unfinished.parent.mkdir(parents=True, exist_ok=True)
                self._unfinished.touch()
            else:
                self._unfinished.unlink(missing_ok=True)

    def _run(self) -> None:
        self._mark_unfinished(True)
        try:
            loader = threading.Thread(target=self._load_model, daemon=True)
            loader.start()
            self._set_phase(CHUNKING)
            reason = self._chunk_all()
            if reason is None:
                self._order_chunks()
                reason = self._wait_for_model()
            if reason is not None:
                self._set_phase(reason)
                return
            _ = self.embedder.dim  # raises here if the model could not be loaded
            self._set_phase(EMBEDDING)
            while self._done < len(self.chunks):
                reason = self._embed_batch()
                if reason is not None:
                    self._set_phase(reason)
                    return
            index = self.index(complete=True)
            with self._lock:
                self._vectors = []  # the finished snapshot holds them
            if self.on_done is not None and index is not None:
                self.on_done(index)
            self._mark_unfinished(False)
            self._set_phase(DONE)
        except Exception as exc:  # shown on the page; the cache keeps what was committed
            self._set_phase(FAILED, f"{type(exc).__name__}: {exc}")


def keyword_ranked(
    chunks: Sequence[Chunk], keyword: np.ndarray, query: str, k: int, rules: RankingRules
) -> list[Hit]:
    """The ranking stage over the ``rules.candidates`` best keyword matches, every dense
    score 0 (none exists yet): the same fusion, definitions, paths and file priors as a
    dense search, so a hit's place and its why do not change when the vectors come."""
    keys = np.sort(top_keyword_keys(keyword, rules.candidates))
    found = Candidates(
        keys,
        tuple(chunks[int(key)] for key in keys),
        np.zeros(len(keys), dtype=np.float32),
        keyword[keys],
    )
    return ranked_hits(found, rank(found.chunks, found.dense, found.keyword, query, k, rules))
