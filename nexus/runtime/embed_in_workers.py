"""The fast tier's embedding and keyword counting, done by the chunking workers.

The static model is a table of word-piece vectors (about 15 MB): each worker loads it
once and, after chunking a batch of files, embeds their chunks and counts their keyword
terms, so both run on every core beside the chunking instead of after it on one (the
parent did them alone: 26 s and 9 s of the scale corpus's 56 s fast-tier build, against
15 s of chunking on two workers). The vectors skip the embedding cache, which costs
more to write than they cost to compute, but go through its float16 (``as_stored``), so
an index built here scores exactly as one built through the cache (tested).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cache

from nexus.retrieval.embedding import DualView
from nexus.retrieval.embedding_cache import as_stored
from nexus.retrieval.lexical import term_counts_of_words
from nexus.retrieval.textview import code_as_words
from nexus.retrieval.tiers import StaticEmbedder
from nexus.runtime.stream import FileChunks


@dataclass(frozen=True)
class EmbedInWorkers:
    """A ``stream_chunks`` ``prepare``: each file's chunk vectors (the static model at
    ``model_path``, through the words view when ``words_view``) and keyword terms."""

    model_path: str
    words_view: bool = True

    def __call__(self, results: list[FileChunks]) -> list[FileChunks]:
        texts = [c.embedding_text for result in results for c in result.chunks]
        if not texts:
            return results
        static = _static(self.model_path)
        # The words views serve the embedding and the keyword terms: made once for both.
        words = [code_as_words(text) for text in texts]
        if self.words_view:
            vectors = DualView(static).encode_views(texts, words)
        else:
            vectors = static.encode(texts)
        vectors = as_stored(vectors)
        out, start = [], 0
        for result in results:
            end = start + len(result.chunks)
            counts = tuple(term_counts_of_words(view) for view in words[start:end])
            out.append(replace(result, vectors=vectors[start:end], term_counts=counts))
            start = end
        return out


@cache
def _static(model_path: str) -> StaticEmbedder:
    """One model per process: it loads once, and its word memo fills once."""
    return StaticEmbedder(model_path)
