"""Keyword scores (BM25) over the words of chunks, to add to the embedding's cosine.

A sentence model blurs identifiers; a query that shares rare words with a chunk's
identifiers (``resize`` + ``thumbnail`` -> ``resizeThumbnail``) is better served by
counting them. Chunks and queries go through the same words view as the embedding
(``createSubscription`` -> ``create subscription``), lower-cased, without common
English words, with a light suffix stemmer, and are scored with Okapi BM25.

Measured on both benchmark sets (bench/retrieval.py): cosine + 0.2 x (BM25 / best
BM25 of the query) lifts doc-query MRR@10 on the dev and the held-out set alike.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

import numpy as np

from nexus.textview import code_as_words

_STOPWORDS_TEXT = """
a an and are as at be been but by can do does for from has have if in into is it its
no not of on or so than that the then this to was were when which will with
"""
#: Words too common in English and in code comments to say anything about a chunk.
STOPWORDS = frozenset(_STOPWORDS_TEXT.split())
_SUFFIXES = ("ing", "ed", "es", "s")


def _stem(word: str) -> str:
    """``adds`` / ``added`` / ``adding`` -> ``add``: enough to meet identifiers halfway."""
    for suffix in _SUFFIXES:
        if len(word) > len(suffix) + 2 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


#: Each word's term ("" for one that says nothing), remembered: a codebase repeats a
#: few thousand words, and an index of 100k chunks looks them up millions of times.
_TERMS: dict[str, str] = {}


def terms(text: str) -> list[str]:
    """The searchable words of a chunk or a query."""
    found = []
    for word in code_as_words(text).lower().split():
        term = _TERMS.get(word)
        if term is None:
            if len(_TERMS) >= 200_000:
                _TERMS.clear()
            term = _TERMS[word] = "" if len(word) < 2 or word in STOPWORDS else _stem(word)
        if term:
            found.append(term)
    return found


class LexicalIndex:
    """BM25 over a fixed list of texts (document ``i`` is ``texts[i]``).

    Args:
        texts: the documents, in the order scores are returned.
        k1, b: the usual BM25 constants (term-frequency saturation, length normalisation).
    """

    def __init__(self, texts: Sequence[str], k1: float = 1.2, b: float = 0.75) -> None:
        self.size = len(texts)
        counts = [Counter(terms(text)) for text in texts]
        lengths = np.array([sum(c.values()) for c in counts], dtype=np.float64)
        average = float(lengths.mean()) if self.size and lengths.sum() else 1.0
        postings: dict[str, tuple[list[int], list[int]]] = {}
        for doc, counter in enumerate(counts):
            for term, tf in counter.items():
                docs, tfs = postings.setdefault(term, ([], []))
                docs.append(doc)
                tfs.append(tf)
        norm = k1 * (1 - b + b * lengths / average)
        self._postings: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        for term, (docs, tfs) in postings.items():
            doc_ids = np.array(docs, dtype=np.int64)
            tf = np.array(tfs, dtype=np.float64)
            idf = math.log(1 + (self.size - len(docs) + 0.5) / (len(docs) + 0.5))
            self._postings[term] = (doc_ids, idf * tf * (k1 + 1) / (tf + norm[doc_ids]))

    def scores(self, query: str) -> np.ndarray:
        """BM25 of every document for ``query`` (zeros where no term matches)."""
        scores = np.zeros(self.size, dtype=np.float64)
        for term in set(terms(query)):
            posting = self._postings.get(term)
            if posting is not None:
                scores[posting[0]] += posting[1]
        return scores

    def relative_scores(self, query: str) -> np.ndarray:
        """``scores`` divided by the best one, so 1.0 is the best keyword match (float32)."""
        scores = self.scores(query)
        best = scores.max() if self.size else 0.0
        return (scores / best if best > 0 else scores).astype(np.float32)
