"""The exact top chunks by cosine, reading half the bytes of the vectors.

At 100k chunks the cosine of every chunk (a float32 matrix-vector product over 150 MB)
was the largest cost of a ranked query, and the ranking stage only needs the best
hundred. So a float16 copy of the vectors is scanned first (usearch's SIMD brute force,
half the bytes), and only the rows that can still be among the best are scored again in
float32. The answer is the full product's: a float16 cosine is within ``bound`` of the
float32 one, and every row whose float16 cosine is within twice that of the cut is kept.
Should too many rows crowd the cut (near-duplicate vectors), the full product answers.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from usearch.index import MetricKind, search

#: Below this many chunks the float16 pass cannot skip enough rows to pay (it needs 16
#: rows per candidate kept); the copy costs 1.5 MB per 2,000 chunks of 384 dims.
HALF_MIN_CHUNKS = 2_000
#: Rounding of the two float32 dot products (384 terms, well under 1e-4 for unit vectors).
_ROUNDING = 1e-4


@dataclass(frozen=True)
class HalfVectors:
    """A float16 copy of unit-length rows, with how far its rows are from the originals."""

    vectors: np.ndarray  # float16, C-contiguous
    row_error: float  # the largest ||row - float16 row||
    row_norm: float  # the largest ||float16 row||

    @classmethod
    def of(cls, vectors: np.ndarray) -> HalfVectors:
        half = np.ascontiguousarray(vectors, dtype=np.float16)
        error = norm = 0.0
        for start in range(0, len(half), 65_536):  # float64 work a block at a time
            rows = half[start : start + 65_536].astype(np.float64)
            error = max(
                error, float(np.linalg.norm(vectors[start : start + 65_536] - rows, axis=1).max())
            )
            norm = max(norm, float(np.linalg.norm(rows, axis=1).max()))
        return cls(half, error, norm)


def best_cosines(
    vectors: np.ndarray, query: np.ndarray, count: int, half: HalfVectors | None = None
) -> np.ndarray:
    """Keys of the ``count`` rows of ``vectors`` with the highest ``row @ query`` (unit
    ``query``), unordered: the rows ``np.argpartition`` of the full product picks (which
    of several exactly equal scores at the cut is kept may differ).

    Args:
        half: ``HalfVectors.of(vectors)``; without it the full product is computed.
    """
    count = min(count, len(vectors))
    if count <= 0:
        return np.zeros(0, dtype=np.int64)
    if half is not None and count < len(vectors) // 16:
        query16 = query.astype(np.float16)
        query_error = float(np.linalg.norm(query.astype(np.float64) - query16))
        # |row @ query - row16 @ query16| <= ||row - row16|| + ||query - query16|| ||row16||
        bound = half.row_error + query_error * half.row_norm + _ROUNDING
        wanted = 4 * count
        while wanted <= len(vectors) // 4:
            found = search(half.vectors, query16, wanted, MetricKind.IP, exact=True)
            approx = 1.0 - found.distances.astype(np.float64)  # best first
            cut = approx[count - 1] - 2 * bound
            if approx[-1] < cut:  # every row left out scores below the cut: none can win
                keys = found.keys[approx >= cut].astype(np.int64)
                exact = vectors[keys] @ query
                return keys[np.argpartition(-exact, count - 1)[:count]]
            wanted *= 4
    # einsum, not BLAS: on a busy machine a threaded matrix-vector product waits for its
    # slowest thread (24 ms instead of 0.5 ms at 3,000 chunks with 2 cores 7x oversubscribed)
    return np.argpartition(-np.einsum("ij,j->i", vectors, query), count - 1)[:count]
