"""The exact top chunks by cosine: one pass over the float32 vectors.

The ranking stage needs only the best hundred chunks of the whole index, so their keys
are picked by ``argpartition`` instead of a full sort. The pass is one matrix-vector
product on one BLAS thread: it is bound by memory bandwidth (88 MB of vectors at 86k
chunks of 256 dims), where one BLAS thread read them in 5.1 ms against einsum's 7.6 ms,
and on a busy machine a threaded product waits for its slowest thread (24 ms instead of
0.5 ms at 3,000 chunks with 2 cores 7x oversubscribed). A float16 first pass (usearch's
brute force over half the bytes) measured slower still: 8.4 ms against einsum's 3.7 ms at
73k chunks (bench/results/query_latency.md).
"""

from __future__ import annotations

from functools import cache

import numpy as np
from threadpoolctl import ThreadpoolController


@cache
def _blas() -> ThreadpoolController:
    """The process's thread pools, found once (numpy's BLAS is loaded by then)."""
    return ThreadpoolController()


def best_cosines(vectors: np.ndarray, query: np.ndarray, count: int) -> np.ndarray:
    """Keys of the ``count`` rows of ``vectors`` with the highest ``row @ query``,
    unordered (which of several exactly equal scores at the cut is kept may differ)."""
    count = min(count, len(vectors))
    if count <= 0:
        return np.zeros(0, dtype=np.int64)
    with _blas().limit(limits=1, user_api="blas"):
        scores = vectors @ query
    return np.argpartition(-scores, count - 1)[:count]
