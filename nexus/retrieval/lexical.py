"""Keyword scores (BM25) over the words of chunks, to add to the embedding's cosine.

A sentence model blurs identifiers; a query that shares rare words with a chunk's
identifiers (``resize`` + ``thumbnail`` -> ``resizeThumbnail``) is better served by
counting them. Chunks and queries go through the same words view as the embedding
(``createSubscription`` -> ``create subscription``), lower-cased, without common
English words, with a light stemmer that joins a word's forms, and are scored with
Okapi BM25.

Measured on both benchmark sets (bench/retrieval/retrieval.py): cosine + 0.2 x (BM25 / best
BM25 of the query) lifts doc-query MRR@10 on the dev and the held-out set alike.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from nexus.retrieval.textview import code_as_words

_STOPWORDS_TEXT = """
a an and are as at be been but by can do does for from has have if in into is it its
no not of on or so than that the then this to was were when which will with
"""
#: Words too common in English and in code comments to say anything about a chunk.
STOPWORDS = frozenset(_STOPWORDS_TEXT.split())
_SUFFIXES = ("ing", "ed", "es", "s")


def _stem(word: str) -> str:
    """One term for a word's forms, so identifiers and sentences meet: ``adds`` /
    ``added`` / ``adding`` -> ``add``; ``cookies`` / ``cookie`` -> ``cooky``;
    ``proxies`` / ``proxy`` -> ``proxy``; ``parsed`` / ``parse`` -> ``pars``.

    A suffix comes off (``ss`` keeps its ``s``: ``class``, ``process``), then a final
    ``e`` (``parse``, ``route``, ``file``), and a final ``i`` reads as ``y``
    (``retri-es``, ``verifi-ed``)."""
    for suffix in _SUFFIXES:
        if len(word) > len(suffix) + 2 and word.endswith(suffix):
            if suffix == "s" and word.endswith("ss"):
                break
            word = word[: -len(suffix)]
            break
    if len(word) > 3 and word.endswith("e"):
        word = word[:-1]
    if len(word) > 3 and word.endswith("i"):
        word = word[:-1] + "y"
    return word


#: Each word's term ("" for one that says nothing), remembered: a codebase repeats a
#: few thousand words, and an index of 100k chunks looks them up millions of times.
_TERMS: dict[str, str] = {}


def terms(text: str) -> list[str]:
    """The searchable words of a chunk or a query."""
    return terms_of_words(code_as_words(text))


def terms_of_words(words: str) -> list[str]:
    """``terms`` of a text given as its words view (``code_as_words``)."""
    found = []
    for word in words.lower().split():
        term = _TERMS.get(word)
        if term is None:
            if len(_TERMS) >= 200_000:
                _TERMS.clear()
            term = _TERMS[word] = "" if len(word) < 2 or word in STOPWORDS else _stem(word)
        if term:
            found.append(term)
    return found


def term_counts(text: str) -> dict[str, int]:
    """How often each of ``text``'s terms occurs: what the keyword table keeps of a document."""
    return term_counts_of_words(code_as_words(text))


def term_counts_of_words(words: str) -> dict[str, int]:
    """``term_counts`` of a text given as its words view (``code_as_words``)."""
    return Counter(terms_of_words(words))


#: Bumped whenever ``terms`` or the scoring changes: saved postings of another version
#: are not used (the index is built again from its texts).
VERSION = 3
#: The files ``save`` writes (beside the other files of a saved vector index).
FILES = {
    "terms": "lexical-terms.txt",
    "starts": "lexical-starts.npy",
    "docs": "lexical-docs.npy",
    "weights": "lexical-weights.npy",
}
_ARRAYS = ("starts", "docs", "weights")


class LexicalIndex:
    """BM25 over a fixed list of texts (document ``i`` is ``texts[i]``).

    The postings are three flat arrays: term ``t``'s documents are
    ``docs[starts[t]:starts[t + 1]]`` and their BM25 weights (everything but the sum
    over query terms, precomputed) are ``weights[...]`` at the same places. So a
    saved index's keyword table is opened memory-mapped (``load``) instead of being
    built from every chunk's words, and a query costs one slice per term.

    Args:
        texts: the documents, in the order scores are returned.
        k1, b: the usual BM25 constants (term-frequency saturation, length normalisation).
    """

    def __init__(self, texts: Sequence[str], k1: float = 1.2, b: float = 0.75) -> None:
        self._build([term_counts(text) for text in texts], k1, b)

    @classmethod
    def of_counts(
        cls, counts: Sequence[Mapping[str, int]], k1: float = 1.2, b: float = 0.75
    ) -> LexicalIndex:
        """The table of documents given as their ``term_counts`` (counted elsewhere: the
        fast tier's chunking workers count them beside the chunking)."""
        index = cls.__new__(cls)
        index._build(counts, k1, b)
        return index

    def _build(self, counts: Sequence[Mapping[str, int]], k1: float, b: float) -> None:
        ids: dict[str, int] = {}
        term_ids: list[int] = []
        doc_ids: list[int] = []
        tfs: list[int] = []
        lengths = np.zeros(len(counts), dtype=np.float64)
        for doc, found in enumerate(counts):
            lengths[doc] = sum(found.values())
            for term, tf in found.items():
                term_ids.append(ids.setdefault(term, len(ids)))
                doc_ids.append(doc)
                tfs.append(tf)
        average = float(lengths.mean()) if len(counts) and lengths.sum() else 1.0
        order = np.argsort(np.asarray(term_ids, dtype=np.int64), kind="stable")
        docs = np.asarray(doc_ids, dtype=np.int32)[order]  # by term, documents ascending
        tf = np.asarray(tfs, dtype=np.float64)[order]
        per_term = np.bincount(np.asarray(term_ids, dtype=np.int64), minlength=len(ids))
        idf = np.log(1 + (len(counts) - per_term + 0.5) / (per_term + 0.5))
        norm = k1 * (1 - b + b * lengths / average)
        weights = np.repeat(idf, per_term) * tf * (k1 + 1) / (tf + norm[docs])
        starts = np.concatenate([[0], np.cumsum(per_term)]).astype(np.int64)
        self._init(len(counts), list(ids), starts, docs, weights)

    def _init(
        self, size: int, words: list[str], starts: np.ndarray, docs: np.ndarray, weights: np.ndarray
    ) -> None:
        self.size = size
        self.terms = words  # term t is words[t]
        self._ids = {term: t for t, term in enumerate(words)}
        self._starts, self._docs, self._weights = starts, docs, weights

    def scores(self, query: str) -> np.ndarray:
        """BM25 of every document for ``query`` (zeros where no term matches)."""
        scores = np.zeros(self.size, dtype=np.float64)
        for term in set(terms(query)):
            t = self._ids.get(term)
            if t is not None:
                start, end = int(self._starts[t]), int(self._starts[t + 1])
                scores[self._docs[start:end]] += self._weights[start:end]
        return scores

    def relative_scores(self, query: str) -> np.ndarray:
        """``scores`` divided by the best one, so 1.0 is the best keyword match (float32)."""
        scores = self.scores(query)
        best = scores.max() if self.size else 0.0
        return (scores / best if best > 0 else scores).astype(np.float32)

    def arrays(self) -> dict[str, np.ndarray]:
        """The postings, by ``FILES`` name (what ``save`` writes)."""
        return dict(zip(_ARRAYS, (self._starts, self._docs, self._weights), strict=True))

    @classmethod
    def load(cls, folder: Path, size: int) -> LexicalIndex:
        """The table written beside a saved index (arrays memory-mapped): the same
        scores as one built from the same ``size`` texts."""
        index = cls.__new__(cls)
        text = (folder / FILES["terms"]).read_text(encoding="utf-8")
        arrays = {name: np.load(folder / FILES[name], mmap_mode="r") for name in _ARRAYS}
        words = text.split("\n") if text else []
        if len(arrays["starts"]) != len(words) + 1 or len(arrays["docs"]) != len(arrays["weights"]):
            raise ValueError(f"{folder}: the keyword table's files do not match")
        index._init(size, words, arrays["starts"], arrays["docs"], arrays["weights"])
        return index
