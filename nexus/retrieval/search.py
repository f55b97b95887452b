"""Searching an index: one function for every surface, and files of queries answered in
one process (``nexus search --queries``).

``search`` picks the way a query is answered by its arguments, all named:

- ``rules`` (the default search): each retriever's candidates
  (``nexus.retrieval.candidates``) go through the ranking stage
  (``nexus.retrieval.ranking``) and each hit carries the parts of its score;
- ``lexical_weight`` > 0: cosine + w x relative BM25 (1.0 = the query's best keyword
  match) over every chunk, exact (a matrix-vector product: milliseconds at 100k chunks);
- neither: cosine alone, from the usearch graph (``exact=True`` scans every vector).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from nexus.retrieval.candidates import Candidates, candidates_for
from nexus.retrieval.index import VectorIndex
from nexus.retrieval.ranking import (
    Ranked,
    RankingRules,
    ScorePart,
    hit_chunk,
    rank,
    whole_lines,
)
from nexus.types import Chunk


@dataclass(frozen=True)
class Hit:
    """One search result, rank 1 is best: ``score`` is the cosine similarity, plus the
    weighted keyword score in a hybrid search, or the ranking stage's total (higher is
    better); ``key`` is the chunk's position in its index."""

    chunk: Chunk
    score: float
    rank: int
    key: int
    #: With the ranking stage: the terms that add up to ``score`` (dense, keyword, boosts).
    parts: tuple[ScorePart, ...] = ()
    #: For a window of neighbours or a hit showing some of its lines: the chunk that
    #: ranked (``chunk`` is what is shown), which re-scoring reads.
    head: Chunk | None = None
    #: The first and last line the hit would show whole (its chunk, or its window of
    #: neighbours) when it shows fewer: the answer's line cap trimmed it, or a better hit
    #: shows the rest; None otherwise.
    trimmed_from: tuple[int, int] | None = None


def search(
    index: VectorIndex,
    query_vec: np.ndarray,
    text: str | None = None,
    k: int = 10,
    *,
    rules: RankingRules | None = None,
    lexical_weight: float = 0.0,
    exact: bool = False,
) -> list[Hit]:
    """The ``k`` best chunks of ``index`` for the query (its vector and its ``text``),
    best first; see the module doc for how ``rules`` and ``lexical_weight`` decide."""
    if not 0 <= lexical_weight <= 10:
        raise ValueError(f"lexical_weight must lie in [0, 10], got {lexical_weight}")
    k = min(k, len(index))
    if k <= 0:
        return []
    if text and rules is not None:
        return _ranked(index, query_vec, text, k, rules)
    if text and lexical_weight > 0:
        scores = retrieval_scores(index, query_vec, text, lexical_weight)
        order = np.argsort(-scores, kind="stable")[:k]
        return [
            Hit(index.chunk(int(key)), float(scores[key]), position, int(key))
            for position, key in enumerate(order, start=1)
        ]
    keys, cosines = index.nearest(query_vec, k, exact=exact)
    return [
        Hit(index.chunk(int(key)), float(score), position, int(key))
        for position, (key, score) in enumerate(zip(keys, cosines, strict=True), start=1)
    ]


def _ranked(
    index: VectorIndex, query_vec: np.ndarray, text: str, k: int, rules: RankingRules
) -> list[Hit]:
    rules = rules.for_model(index.model)
    found = candidates_for(index, query_vec, text, rules)
    ranked = rank(found.chunks, found.dense, found.keyword, text, k, rules, found.earned)
    return ranked_hits(found, ranked)


def ranked_hits(found: Candidates, ranked: Sequence[Ranked]) -> list[Hit]:
    """The ranking stage's ``ranked`` candidates of ``found`` as hits, best first: keyed
    by their place in the index, a window or a cut hit shown with the chunk that ranked."""
    hits = []
    for position, r in enumerate(ranked, start=1):
        whole = whole_lines(found.chunks, r)
        hits.append(
            Hit(
                hit_chunk(found.chunks, r),
                r.score,
                position,
                int(found.keys[r.key]),
                r.parts,
                found.chunks[r.key] if r.window or r.shown is not None else None,
                whole if r.shown is not None and r.shown != whole else None,
            )
        )
    return hits


def retrieval_scores(
    index: VectorIndex,
    query_vec: np.ndarray,
    text: str | None = None,
    lexical_weight: float = 0.0,
) -> np.ndarray:
    """Every chunk's retrieval score in key order (float32), for charts and margins: the
    cosine with the query, plus ``lexical_weight`` x the relative BM25 of ``text`` when
    both are given."""
    scores = index.cosines(query_vec)
    if text and lexical_weight > 0 and len(index):
        scores = scores + np.float32(lexical_weight) * index.keywords().relative_scores(text)
    return scores


def hit_record(hit: Hit) -> dict[str, object]:
    """A hit as JSON: where it is, what it is, its score and the parts of the score (and
    the lines it would show whole when it shows fewer: ``trimmed_from``)."""
    chunk = hit.chunk
    record: dict[str, object] = {
        "rank": hit.rank,
        "file": chunk.file,
        "start_line": chunk.start_line,
        "end_line": chunk.end_line,
        "symbol": chunk.symbol,
        "kind": chunk.symbol_kind,
        "score": round(hit.score, 6),
        "parts": {p.name: round(p.value, 6) for p in hit.parts},
    }
    if hit.trimmed_from is not None:
        record["trimmed_from"] = list(hit.trimmed_from)
    return record
