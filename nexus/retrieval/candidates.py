"""Candidate selection, in one place: the chunks the ranking stage will look at.

Each retriever proposes its best ``count`` chunks: dense (cosine) and keyword (BM25,
only chunks that match a term); for a symbol query the symbol table adds the chunks
that define the name. The ranking stage (``nexus.retrieval.ranking``) then
scores these candidates and nothing else; the rest of the index is never re-ranked.

Then, with query feedback (``candidates_for``), the query's vector moves toward its
best hits and the dense retriever proposes again. A static model reads a question
(``convert a 24-bit color to the closest one in the palette``) as generic words; the
query's two best hits, ranked with both retrievers and every rule, are usually in the
right neighbourhood, and their vectors speak the code's own vocabulary, so the moved
query finds the units beside them (Rocchio's pseudo-relevance feedback, from the ranked
hits rather than the raw cosines: those alone measured no better). Only a static model's
index gets it: MiniLM reads the sentence itself, and feedback cost it 0.009-0.011 MRR@10
on the doc-comment tuning sets and 0.012 R@1k on the tuning questions
(``bench/results/per_token_docs.md``, ``per_token.md``).

The store is anything that answers "the top n" and "scores for these keys"
(``Store``); ``nexus.retrieval.index.VectorIndex`` is the one Nexus ships.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Protocol

import numpy as np

from nexus.retrieval.ranking import RankingRules, ScorePart, query_names, rank
from nexus.types import Chunk


class Store(Protocol):
    """What candidate selection asks of an index (``model``: its embedder's name)."""

    model: str

    def __len__(self) -> int: ...
    def chunk(self, key: int) -> Chunk: ...
    def best_cosine_keys(self, query_vec: np.ndarray, n: int) -> np.ndarray: ...
    def cosines(self, query_vec: np.ndarray, keys: np.ndarray | None = None) -> np.ndarray: ...
    def keyword_scores(self, text: str) -> np.ndarray: ...
    def defining_keys(self, names: Iterable[str]) -> np.ndarray: ...
    @property
    def vectors(self) -> np.ndarray: ...


@dataclass(frozen=True)
class Candidates:
    """The chunks proposed for one query: ``keys`` ascending, and per key its chunk, its
    cosine (``dense``) and its BM25 (``keyword``, 0 where no term matches); ``earned``:
    what the ranking stage found chunks earn on their own for the query (``rank``)."""

    keys: np.ndarray
    chunks: tuple[Chunk, ...]
    dense: np.ndarray
    keyword: np.ndarray
    earned: dict[str, tuple[ScorePart, ...]] = field(default_factory=dict, compare=False)

    def __len__(self) -> int:
        return len(self.keys)


def top_keyword_keys(keyword: np.ndarray, count: int) -> np.ndarray:
    """Keys of the ``count`` best chunks by BM25 among those that match a term, unordered."""
    matched = np.flatnonzero(keyword > 0)
    if len(matched) > count:
        matched = matched[np.argpartition(-keyword[matched], count - 1)[:count]]
    return matched


def candidates_for(
    store: Store, query_vec: np.ndarray, text: str, rules: RankingRules
) -> Candidates:
    """The candidates the ranking stage scores for the query: ``select``'s, chosen again
    with the query's vector moved toward its best hits when ``rules.feedback`` is on, the
    store's vectors are a static model's and the query is a sentence (see the module doc).
    The keyword scores are computed once for both passes. ``rules`` apply as they do to
    the store's model (``RankingRules.for_model``)."""
    rules = rules.for_model(store.model)
    if len(store) == 0:
        return select(store, query_vec, text, rules.candidates)
    keyword = store.keyword_scores(text)
    first = select(store, query_vec, text, rules.candidates, rules.definition_lookup, keyword)
    if not (rules.feedback and rules.feedback_hits > 0):
        return first
    if query_names(text)[1]:  # a name: its definition evidence decides, feedback moved nothing
        return first
    single = replace(rules, window_lines=0)  # the hits' own vectors, not their windows
    best = rank(
        first.chunks, first.dense, first.keyword, text, rules.feedback_hits, single, first.earned
    )
    hits = first.keys[[hit.key for hit in best]]
    moved = _unit(query_vec) + rules.feedback * np.asarray(store.vectors[hits]).mean(axis=0)
    found = select(store, moved, text, rules.candidates, rules.definition_lookup, keyword)
    return replace(found, earned=first.earned)


def _unit(vector: np.ndarray) -> np.ndarray:
    vector = np.asarray(vector, dtype=np.float32).ravel()
    norm = float(np.linalg.norm(vector))
    return vector / norm if norm > 0 else vector


def select(
    store: Store,
    query_vec: np.ndarray,
    text: str,
    count: int,
    definitions: int = 0,
    keyword: np.ndarray | None = None,
) -> Candidates:
    """The best ``count`` chunks of each retriever for the query, together; for a symbol
    query, also up to ``definitions`` chunks that define the name, wherever they rank
    (the symbol table covers every chunk: a definition that neither retriever
    proposes is still found). ``keyword``: every chunk's BM25 for ``text``, when known."""
    if count < 1:
        raise ValueError(f"count must be positive, got {count}")
    if len(store) == 0:
        empty = np.zeros(0)
        return Candidates(np.zeros(0, dtype=np.int64), (), empty, empty)
    if keyword is None:
        keyword = store.keyword_scores(text)
    dense_keys = store.best_cosine_keys(query_vec, count)
    keys = np.union1d(dense_keys, top_keyword_keys(keyword, count)).astype(np.int64)
    names, is_symbol = query_names(text)
    if definitions and is_symbol:
        defining = store.defining_keys(n.name for n in names)
        if len(defining) > definitions:  # a common name: the best by keywords
            defining = defining[np.argsort(-keyword[defining], kind="stable")[:definitions]]
        keys = np.union1d(keys, defining).astype(np.int64)
    chunks = tuple(store.chunk(int(key)) for key in keys)
    return Candidates(keys, chunks, store.cosines(query_vec, keys), keyword[keys])
