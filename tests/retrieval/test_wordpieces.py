"""Word pieces counted from tokenizer.json equal the model's own count."""

from __future__ import annotations

from nexus.retrieval.wordpieces import WordPieceCounter


def test_counts_match_the_models_tokenizer(real_embedder) -> None:
    counter = WordPieceCounter.for_model()
    texts = ["function moveObject(a, b) { return copy(a, b); }", "Héllo wörld", "x" * 3000]
    assert counter.count(texts) == real_embedder.count_wordpieces(texts)
    assert counter.window == real_embedder.max_seq_length
