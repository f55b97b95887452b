"""A tiny deterministic embedder for tests and demos: hashed bag of words, no model.

The dashboard uses it when ``NEXUS_UI_EMBEDDER=fake`` so AppTests and browser
tests never load torch. Scores are meaningful enough to look like a search:
texts sharing words score higher. ``NEXUS_UI_EMBEDDER=fake:0.05`` also waits 0.05 s
per text, so a browser test can watch an index build in progress.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Sequence

import numpy as np

from nexus.retrieval.embedding import Progress
from nexus.retrieval.textview import code_as_words


class HashingEmbedder:
    """Bag-of-words vectors: each word adds +1/-1 to one of ``dim`` hashed slots."""

    def __init__(self, dim: int = 256, max_seq_length: int = 256, delay_s: float = 0.0) -> None:
        self.dim = dim
        self.max_seq_length = max_seq_length
        self.delay_s = delay_s  # seconds per text, to look like a slow model
        self.name = f"fake-hashing-{dim}"

    def _words(self, text: str) -> list[str]:
        return code_as_words(text).lower().split()

    def encode(self, texts: Sequence[str], progress: Progress | None = None) -> np.ndarray:
        if self.delay_s:
            time.sleep(self.delay_s * len(texts))
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in self._words(text):
                digest = hashlib.blake2b(word.encode(), digest_size=8).digest()
                value = int.from_bytes(digest, "little")
                out[row, value % self.dim] += 1.0 if value >> 63 else -1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        out /= np.where(norms == 0, 1, norms)
        if progress is not None:
            progress(len(texts), len(texts))
        return out

    def count_wordpieces(self, texts: Sequence[str]) -> list[int]:
        """Words plus the two special tokens (a stand-in for a real tokenizer)."""
        return [len(self._words(t)) + 2 for t in texts]
