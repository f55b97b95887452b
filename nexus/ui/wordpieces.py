"""Word pieces per chunk, counted the way the model would count them."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable

import streamlit as st

from nexus.retrieval.embedding import ModelUnavailableError
from nexus.retrieval.wordpieces import WordPieceCounter
from nexus.types import Chunk
from nexus.ui import cache, indexing


@st.cache_resource(show_spinner=False)
def _wordpiece_counter() -> WordPieceCounter | None:
    try:
        return WordPieceCounter.for_model()
    except ModelUnavailableError:
        return None


def window_counts(chunks: list[Chunk]) -> tuple[list[int], int, bool]:
    """Word pieces per chunk's embedding text, the model window, and whether exact.

    Counted with the model's tokenizer alone (no torch), so the count is the same
    whichever page loaded first; the test embedder counts its own way. Without a
    model folder, words x 4/3 + 2 estimates it.
    """
    texts = [c.embedding_text or c.text for c in chunks]
    fake = os.environ.get(indexing.EMBEDDER_ENV, "").startswith("fake")
    if indexing.EMBEDDER_FACTORY is not None or fake:
        embedder = indexing.get_embedder()
        count, window, exact, name = (
            embedder.count_wordpieces,
            embedder.max_seq_length,
            True,
            embedder.name,
        )
    elif (counter := _wordpiece_counter()) is not None:
        count, window, exact, name = counter.count, counter.window, True, "model"
    else:
        count, window, exact, name = _estimate_wordpieces, 256, False, "estimate"
    # The same chunks are counted for every session: keyed by the texts and the counter.
    digest = hashlib.sha256("\0".join(texts).encode()).hexdigest()
    pieces = cache.shared("wordpieces", (digest, name), lambda: _count_new(texts, count, name))
    return pieces, window, exact


#: Estimated bytes of one remembered word-piece count (a 20-byte digest, an int, a slot).
WORDPIECE_MEMO_BYTES = 120


def _count_new(texts: list[str], count: Callable[[list[str]], list[int]], name: str) -> list[int]:
    """Word pieces of ``texts``, counting only texts not counted before: a slider move
    keeps most chunks of a file (counting all of lib.dom.d.ts's took ~1 s)."""
    key = ("wordpiece_memo", name)
    memo: dict[bytes, int] = cache.cached(key, dict, lambda _: 1000)
    digests = [hashlib.sha1(text.encode()).digest() for text in texts]
    todo = {d: text for d, text in zip(digests, texts, strict=True) if d not in memo}
    if todo:
        memo.update(zip(todo, count(list(todo.values())), strict=True))
    cache.memory().resize(key, WORDPIECE_MEMO_BYTES * len(memo) + 1000)
    return [memo[d] for d in digests]


def _estimate_wordpieces(texts: list[str]) -> list[int]:
    """Words x 4/3 + 2: close to the model's count on code, when it cannot be counted."""
    return [len(t.split()) * 4 // 3 + 2 for t in texts]
