"""A fast-tier index scored as ``Workspace.search`` answers over it: re-scored by MiniLM.

``Workspace.search`` re-scores the fast tier's best ``RESCORE_DEPTH`` hits with MiniLM's
vectors of every chunk, which a background job computes once for the index it serves.
A sweep builds an index per setting in memory: MiniLM over every chunk of every setting
would cost a MiniLM pass each. Only the hits that re-scoring reads are embedded instead
(the same texts by the same model, so the same cosines), through the quality tier's
embedding cache and whatever memo the caller puts in front of it: settings share most
of their hits, and a later sweep or quality build reuses them.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from nexus.retrieval.budget import READ_DEPTH
from nexus.retrieval.embedding import Embedder
from nexus.retrieval.index import VectorIndex
from nexus.retrieval.ranking import RankingRules
from nexus.retrieval.rescore import rescore, rescore_texts
from nexus.retrieval.search import Hit, search


def rescored_answers(
    index: VectorIndex,
    texts: Sequence[str],
    query_vectors: np.ndarray,
    rules: RankingRules,
    quality: Embedder,
    depth: int = READ_DEPTH,
) -> list[list[Hit]]:
    """Each query's hits on ``index`` (``texts`` and their ``query_vectors`` of the
    index's model), ``depth`` deep, with the best ``RESCORE_DEPTH`` re-scored by
    ``quality`` (MiniLM): one ``encode`` for every query and hit text."""
    deep = [
        search(index, vector, text, depth, rules=rules)
        for text, vector in zip(texts, query_vectors, strict=True)
    ]
    heads = [rescore_texts(hits) for hits in deep]
    vectors = quality.encode([*texts, *(text for shown in heads for text in shown)])
    answers, at = [], len(texts)
    for text, query, hits, shown in zip(texts, vectors[: len(texts)], deep, heads, strict=True):
        cosines = vectors[at : at + len(shown)] @ query
        at += len(shown)
        answers.append(rescore(hits, cosines.tolist(), text, rules))
    return answers
