"""The exact top chunks by cosine: one pass over the float32 vectors.

The ranking stage needs only the best hundred chunks of the whole index, so their keys
are picked by ``argpartition`` instead of a full sort. A float16 first pass (usearch's
brute force over half the bytes, then float32 again near the cut) measured slower than
this: 8.4 ms against 3.7 ms at 73k chunks of 384 dims (bench/results/query_latency.md).
"""

from __future__ import annotations

import numpy as np


def best_cosines(vectors: np.ndarray, query: np.ndarray, count: int) -> np.ndarray:
    """Keys of the ``count`` rows of ``vectors`` with the highest ``row @ query``,
    unordered (which of several exactly equal scores at the cut is kept may differ)."""
    count = min(count, len(vectors))
    if count <= 0:
        return np.zeros(0, dtype=np.int64)
    # einsum, not BLAS: on a busy machine a threaded matrix-vector product waits for its
    # slowest thread (24 ms instead of 0.5 ms at 3,000 chunks with 2 cores 7x oversubscribed)
    return np.argpartition(-np.einsum("ij,j->i", vectors, query), count - 1)[:count]
