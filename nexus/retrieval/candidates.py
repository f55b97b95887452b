"""Candidate selection, in one place: the chunks the ranking stage will look at.

Each retriever proposes its best ``count`` chunks: dense (cosine) and keyword (BM25,
only chunks that match a term); for a symbol query the symbol table adds the chunks
that define the name. The ranking stage (``nexus.retrieval.ranking``) then
scores these candidates and nothing else; the rest of the index is never re-ranked.

The store is anything that answers "the top n" and "scores for these keys"
(``Store``); ``nexus.retrieval.index.VectorIndex`` is the one Nexus ships.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from nexus.retrieval.ranking import query_names
from nexus.types import Chunk


class Store(Protocol):
    """What candidate selection asks of an index."""

    def __len__(self) -> int: ...
    def chunk(self, key: int) -> Chunk: ...
    def best_cosine_keys(self, query_vec: np.ndarray, n: int) -> np.ndarray: ...
    def cosines(self, query_vec: np.ndarray, keys: np.ndarray | None = None) -> np.ndarray: ...
    def keyword_scores(self, text: str) -> np.ndarray: ...
    def defining_keys(self, names: Iterable[str]) -> np.ndarray: ...


@dataclass(frozen=True)
class Candidates:
    """The chunks proposed for one query: ``keys`` ascending, and per key its chunk, its
    cosine (``dense``) and its BM25 (``keyword``, 0 where no term matches)."""

    keys: np.ndarray
    chunks: tuple[Chunk, ...]
    dense: np.ndarray
    keyword: np.ndarray

    def __len__(self) -> int:
        return len(self.keys)


def top_keyword_keys(keyword: np.ndarray, count: int) -> np.ndarray:
    """Keys of the ``count`` best chunks by BM25 among those that match a term, unordered."""
    matched = np.flatnonzero(keyword > 0)
    if len(matched) > count:
        matched = matched[np.argpartition(-keyword[matched], count - 1)[:count]]
    return matched


def select(
    store: Store, query_vec: np.ndarray, text: str, count: int, definitions: int = 0
) -> Candidates:
    """The best ``count`` chunks of each retriever for the query, together; for a symbol
    query, also up to ``definitions`` chunks that define the name, wherever they rank
    (the symbol table covers every chunk: a definition that neither retriever
    proposes is still found)."""
    if count < 1:
        raise ValueError(f"count must be positive, got {count}")
    if len(store) == 0:
        empty = np.zeros(0)
        return Candidates(np.zeros(0, dtype=np.int64), (), empty, empty)
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
