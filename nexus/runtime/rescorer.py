"""What re-scores one open fast-tier index's hits in the process that answers.

It starts the background job of the index's MiniLM vectors (``rescore_vectors``), says
whether re-scoring is ready, and, once it is, gives MiniLM's cosines of a query with the
chunks that ranked: the query embedded by the ONNX graph (milliseconds, no torch), the
chunks' vectors read from the file the job wrote (an edited file's new chunks from the
embedding cache). No chunk is embedded on the query path, and the query is embedded in
a thread of its own while the fast tier ranks (ONNX Runtime lets go of the GIL).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import numpy as np

from nexus.retrieval.embedding import DualView, Embedder, ModelUnavailableError
from nexus.retrieval.embedding_cache import EmbeddingCache, text_key
from nexus.retrieval.onnx_minilm import QUERY_GRAPH, OnnxEmbedder, onnx_model_at
from nexus.retrieval.rescore import RESCORE_PENDING, RESCORED
from nexus.retrieval.search import Hit
from nexus.retrieval.tiers import QUALITY, tier_embedder
from nexus.runtime import rescore_vectors

#: Query vectors a re-scorer keeps (a few hundred KB).
QUERY_VECTORS_KEPT = 512

#: The query models of this process, one per exported graph and view (a server answers
#: many repositories, the Search page opens a workspace per answer).
_QUERY_MODELS: dict[tuple[Path, bool], Embedder] = {}
_QUERY_MODELS_LOCK = threading.Lock()
#: One thread embeds every re-scorer's queries, in the order they were asked.
_QUERY_THREAD = ThreadPoolExecutor(max_workers=1, thread_name_prefix="nexus-query-model")


def query_model(folder: Path, words_view: bool) -> Embedder:
    """MiniLM on ONNX for queries (behind the words view, as the chunks were embedded)."""
    with _QUERY_MODELS_LOCK:
        key = (folder, words_view)
        if key not in _QUERY_MODELS:
            model: Embedder = OnnxEmbedder(folder, graph=QUERY_GRAPH)
            _QUERY_MODELS[key] = DualView(model) if words_view else model
        return _QUERY_MODELS[key]


class Rescorer:
    """MiniLM's vectors of one index's chunks and of queries (see the module doc).

    Args:
        folder: where the index is saved (or will be, once a first build's save ends).
        chunks: how many chunks the index holds (a vectors file of another length is
            not this index's).
        cache_dir / max_bytes: the embedding cache the job embeds through.
        words_view: whether texts are embedded as written and as words.
    """

    def __init__(
        self,
        folder: Path,
        chunks: int,
        cache_dir: Path,
        max_bytes: int | None = None,
        words_view: bool = True,
    ) -> None:
        self.folder = folder
        self.chunks = chunks
        self.cache_dir = cache_dir
        self.max_bytes = max_bytes
        self.words_view = words_view
        self.name = tier_embedder(QUALITY, words_view=words_view).name
        self._job: rescore_vectors.VectorsJob | None = None
        self._vectors: np.ndarray | None = None
        self._queries: dict[str, Future[np.ndarray]] = {}  # oldest first
        self._cache: EmbeddingCache | None = None
        self._broken = ""

    def start(self) -> None:
        """Start the background job if the vectors are not there yet (once)."""
        if self._job is None:
            self._job = rescore_vectors.start_job(
                self.folder, self.name, self.cache_dir, self.max_bytes, self.words_view
            )

    def state(self) -> str:
        """``RESCORED`` when re-scoring is ready, ``RESCORE_PENDING`` while the vectors
        are being computed, else "not re-scored: " and why."""
        self.start()
        assert self._job is not None
        if self._broken:
            return f"not re-scored: {self._broken}"
        if self._vectors is None and self._job.ready():
            self._open()
        if self._vectors is not None:
            return RESCORED if not self._broken else f"not re-scored: {self._broken}"
        failure = self._job.failure()
        return f"not re-scored: {failure}" if failure else RESCORE_PENDING

    def wait(self) -> str:
        """``state()`` once the background job has ended (at once when none runs)."""
        self.start()
        assert self._job is not None
        if self._job.process is not None:
            self._job.process.wait()
        return self.state()

    def _open(self) -> None:
        assert self._job is not None
        vectors = np.load(self._job.target, mmap_mode="r")
        graph = onnx_model_at(self.cache_dir)
        if vectors.shape[0] != self.chunks:
            self._broken = f"{self._job.target} holds {vectors.shape[0]} vectors, not {self.chunks}"
        elif graph is None:
            self._broken = "the ONNX query model is missing: run nexus setup"
        else:
            self._vectors = vectors

    def cosines(self, query: str, hits: Sequence[Hit], changed: frozenset[str]) -> list[float]:
        """MiniLM's cosine of ``query`` with each hit's ranked chunk (``[]`` when one of
        them has no vector yet: an edited file's chunk not in the cache)."""
        assert self._vectors is not None
        rows = self._rows(hits, changed)
        if rows is None:
            return []
        return (rows @ self._query_vector(query)).tolist()

    def _rows(self, hits: Sequence[Hit], changed: frozenset[str]) -> np.ndarray | None:
        assert self._vectors is not None
        base = [hit.key for hit in hits if hit.chunk.file not in changed]
        if len(base) == len(hits):
            return np.asarray(self._vectors[base], dtype=np.float32)
        if self._cache is None:
            self._cache = EmbeddingCache(self.cache_dir, max_bytes=self.max_bytes)
        keys = [text_key((hit.head or hit.chunk).embedding_text) for hit in hits]
        wanted = [k for k, hit in zip(keys, hits, strict=True) if hit.chunk.file in changed]
        found = self._cache.get(self.name, wanted)
        if len(found) < len(set(wanted)):
            return None
        rows = iter(np.asarray(self._vectors[base], dtype=np.float32))
        return np.stack(
            [
                found[key] if hit.chunk.file in changed else next(rows)
                for key, hit in zip(keys, hits, strict=True)
            ]
        ).astype(np.float32)

    def prefetch(self, queries: Iterable[str]) -> None:
        """Start embedding ``queries`` (each once) in the query model's thread, so that
        the fast tier ranks their hits meanwhile; ``cosines`` waits for the vector."""
        for query in queries:
            if query not in self._queries:
                self._queries[query] = _QUERY_THREAD.submit(self._embed, query)
        while len(self._queries) > QUERY_VECTORS_KEPT:
            del self._queries[next(iter(self._queries))]

    def _embed(self, query: str) -> np.ndarray:
        graph = onnx_model_at(self.cache_dir)
        assert graph is not None  # checked when re-scoring became ready (``_open``)
        return query_model(graph, self.words_view).encode([query])[0]

    def _query_vector(self, query: str) -> np.ndarray:
        self.prefetch([query])
        try:
            return self._queries[query].result()
        except ModelUnavailableError as exc:
            self._broken = str(exc)
            raise
