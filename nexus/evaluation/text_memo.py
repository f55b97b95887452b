"""An embedder that embeds each distinct text once over its life: what a sweep shares.

The settings of a sweep cut many identical chunks (a small function is one chunk at
max 256 and at max 512); on hono, 7 settings make 11,779 chunks but only 4,540
distinct texts. The embedding cache under the inner embedder would find the repeats
too, but the memo also serves sweeps without a cache (the CLI, tests), answers
without a database read, and is where Cancel is asked: between batches of
``batch`` texts, so a press waits for at most one batch.

Vectors are kept by the text's sha256 (not the text), so the memo holds 32 bytes
plus one vector per distinct text: 4,540 texts of MiniLM are ~7 MB.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import numpy as np

from nexus.retrieval.embedding import Embedder, EmbeddingCancelled, Progress, Wrapper
from nexus.retrieval.embedding_cache import text_key

#: Texts per batch handed to the inner embedder: Cancel is answered between batches
#: (64 texts, both views, take ~5 s with MiniLM on two busy cores).
MEMO_BATCH = 64

#: ``on_batch(texts, seconds)``: a batch went through the inner embedder.
BatchDone = Callable[[int, float], None]


class TextMemo(Wrapper):
    """Wraps ``inner``: texts it has seen are answered from memory, the rest in batches.

    Args:
        inner: computes the vectors (a ``CachedEmbedder`` keeps them across runs too).
        cancel: asked before each batch; True raises ``EmbeddingCancelled`` (the
            batches done stay in the memo).
        on_batch: told the size and time of each batch (the sweep's pace).
        clock: seconds, monotonic, that batches are timed on (tests pass a fake one).
    """

    def __init__(
        self,
        inner: Embedder,
        batch: int = MEMO_BATCH,
        cancel: Callable[[], bool] | None = None,
        on_batch: BatchDone | None = None,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        if batch < 1:
            raise ValueError(f"batch must be positive, got {batch}")
        super().__init__(inner)  # the same vectors, so the same name (indexes check it)
        self.batch = batch
        self.cancel = cancel
        self.on_batch = on_batch
        self.clock = clock
        self._vectors: dict[bytes, np.ndarray] = {}
        self._pieces: dict[bytes, int] = {}

    def encode(self, texts: Sequence[str], progress: Progress | None = None) -> np.ndarray:
        """One row per text; ``progress(done, total)`` counts distinct texts."""
        keys = [text_key(t) for t in texts]
        unique = dict(zip(keys, texts, strict=True))
        # Longest first: texts of similar length share a model batch and pad little.
        missing = sorted(
            (k for k in unique if k not in self._vectors), key=lambda k: -len(unique[k])
        )
        done, total = len(unique) - len(missing), len(unique)
        if progress is not None:
            progress(done, total)
        for start in range(0, len(missing), self.batch):
            if self.cancel is not None and self.cancel():
                raise EmbeddingCancelled(f"cancelled after {done} of {total} texts")
            part = missing[start : start + self.batch]
            began = self.clock()
            vectors = self.inner.encode([unique[k] for k in part])
            self._vectors.update(zip(part, np.asarray(vectors, dtype=np.float32), strict=True))
            if self.on_batch is not None:
                self.on_batch(len(part), self.clock() - began)
            done += len(part)
            if progress is not None:
                progress(done, total)
        if not keys:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([self._vectors[k] for k in keys])

    def count_wordpieces(self, texts: Sequence[str]) -> list[int]:
        """As the inner embedder's, each distinct text tokenized once."""
        keys = [text_key(t) for t in texts]
        missing = {k: t for k, t in zip(keys, texts, strict=True) if k not in self._pieces}
        if missing:
            counts = self.inner.count_wordpieces(list(missing.values()))
            self._pieces.update(zip(missing, counts, strict=True))
        return [self._pieces[k] for k in keys]
