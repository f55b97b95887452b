"""Keyword scores (BM25) and hybrid ranking in the vector index."""

from __future__ import annotations

import math

import numpy as np
import pytest

from nexus.retrieval import lexical
from nexus.retrieval.index import VectorIndex, keyword_text
from nexus.retrieval.lexical import LexicalIndex, terms
from nexus.retrieval.search import retrieval_scores, search
from tests import helpers


def test_terms_split_identifiers_drop_common_words_and_stem():
    assert terms("createSubscription adds the line_items to it") == [
        "creat",
        "subscription",
        "add",
        "lin",
        "item",
    ]
    assert terms("{ } ; = x") == []  # punctuation and one-letter words say nothing


@pytest.mark.parametrize(
    "forms",
    [
        ("cookies", "cookie"),
        ("routes", "route"),
        ("proxies", "proxy"),
        ("retries", "retry", "retried", "retrying"),
        ("files", "file"),
        ("parsed", "parse", "parses", "parsing"),
        ("decoded", "decode"),
        ("verified", "verify", "verifies"),
        ("compressed", "compress", "compresses"),
        ("classes", "class"),
        ("processes", "process", "processed"),
        ("adds", "added", "adding", "add"),
    ],
)
def test_the_stemmer_joins_a_words_forms(forms: tuple[str, ...]) -> None:
    assert len({tuple(terms(word)) for word in forms}) == 1, [terms(w) for w in forms]


def test_a_plural_in_the_query_finds_the_singular_identifier() -> None:
    index = LexicalIndex(["function setCookie(name) {}", "function readBody(req) {}"])
    assert index.scores("where are cookies set").argmax() == 0
    assert index.scores("where are cookies set")[0] > 0


def test_bm25_ranks_the_rare_matching_word_first():
    index = LexicalIndex(
        [
            "function resizeThumbnail(image) { return sharp(image).resize(64) }",
            "function uploadImage(image) { return s3.upload(image) }",
            "function listUsers() { return db.users.all() }",
        ]
    )
    scores = index.scores("resize the image")
    assert scores.argmax() == 0
    assert scores[1] > 0 and scores[2] == 0  # 'image' is shared; nothing matches doc 2
    relative = index.relative_scores("resize the image")
    assert relative.max() == pytest.approx(1.0) and relative.dtype == np.float32


def test_bm25_without_any_matching_word_is_all_zeros():
    index = LexicalIndex(["const a = 1", "let b = 2"])
    assert not index.relative_scores("unrelated words").any()
    assert LexicalIndex([]).relative_scores("anything").shape == (0,)


def test_repeating_a_word_counts_less_and_less():
    docs = ["cache alpha beta gamma", "cache cache beta gamma", "cache cache cache gamma"]
    index = LexicalIndex([*docs, "other words here"])  # same lengths: only counts differ
    scores = index.scores("cache")
    assert scores[0] < scores[1] < scores[2]
    assert scores[2] - scores[1] < scores[1] - scores[0]


def _reference_bm25(texts: list[str], query: str, k1: float = 1.2, b: float = 0.75) -> list[float]:
    """Okapi BM25 written out document by document, as in the textbook."""
    documents = [terms(text) for text in texts]
    average = sum(len(d) for d in documents) / len(documents)
    scores = []
    for words in documents:
        score = 0.0
        for term in set(terms(query)):
            having = sum(1 for d in documents if term in d)
            idf = math.log(1 + (len(documents) - having + 0.5) / (having + 0.5))
            tf = words.count(term)
            score += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len(words) / average))
        scores.append(score)
    return scores


_CORPUS = [
    "function parseCookieHeader(header) { return header.split(';').map(parseCookie) }",
    "function parseCookie(text) { const [name, value] = text.split('='); return { name, value } }",
    "class CookieJar { set(cookie) { this.cookies.push(cookie) } get(name) {} }",
    "def retry_request(request, attempts=3):\n    for _ in range(attempts): send(request)",
    "// Uploads an image, retrying on failure\nasync function uploadImage(image) {}",
    "import { Router } from './router'\nexport default new Router()",
    "",
]


@pytest.mark.parametrize(
    "query",
    ["parse the cookie header", "cookies", "retry the upload request", "Router", "nothing here"],
)
def test_bm25_postings_score_like_the_textbook_formula(query: str) -> None:
    np.testing.assert_allclose(
        LexicalIndex(_CORPUS).scores(query), _reference_bm25(_CORPUS, query), rtol=0, atol=1e-9
    )


def _twin_index() -> VectorIndex:
    """Three chunks with the same vector: only their words tell them apart."""
    chunks = [
        helpers.make_chunk("a", text="function chargeCard(card) {}"),
        helpers.make_chunk("b", text="function refundPayment(payment) {}"),
        helpers.make_chunk("c", text="function listInvoices() {}"),
    ]
    return VectorIndex.build(chunks, np.ones((3, 4), dtype=np.float32), model="m")


def test_hybrid_search_breaks_a_cosine_tie_by_keywords():
    index = _twin_index()
    query = np.ones(4, dtype=np.float32)
    dense = search(index, query, k=3, exact=True)
    assert [h.score for h in dense] == pytest.approx([1.0, 1.0, 1.0])
    hybrid = search(index, query, "refund a payment", 3, lexical_weight=0.5)
    assert hybrid[0].chunk.id == "b" and hybrid[0].score == pytest.approx(1.5)
    assert [h.rank for h in hybrid] == [1, 2, 3]
    scores = retrieval_scores(index, query, "refund a payment", 0.5)
    np.testing.assert_allclose(scores, [1.0, 1.5, 1.0], atol=1e-6)
    assert search(index, query, "refund a payment", 3, lexical_weight=0)[0].score == 1.0


def test_hybrid_search_sees_chunks_added_later():
    index = _twin_index()
    extra = helpers.make_chunk("d", text="function voidReceipt(receipt) {}")
    index.add([extra], np.ones((1, 4), dtype=np.float32))
    hits = search(index, np.ones(4, dtype=np.float32), "void receipt", 1, lexical_weight=0.2)
    assert hits[0].chunk.id == "d"


def _saved_twin(tmp_path) -> tuple[VectorIndex, VectorIndex]:
    chunks = [
        helpers.make_chunk(f"c{i}", text=f"function chargeCard{i}(card) {{ refund(card, {i}) }}")
        for i in range(40)
    ] + [helpers.make_chunk("x", text="class InvoiceList { listInvoices() {} }")]
    index = VectorIndex.build(chunks, np.ones((len(chunks), 4), dtype=np.float32), model="m")
    index.save(tmp_path / "idx")
    return index, VectorIndex.load(tmp_path / "idx")


@pytest.mark.parametrize("query", ["charge the card", "list invoices", "refund 7", "nothing"])
def test_a_saved_keyword_table_scores_like_a_fresh_one(tmp_path, query: str) -> None:
    index, opened = _saved_twin(tmp_path)
    fresh = LexicalIndex([keyword_text(c) for c in index.chunks])
    assert isinstance(opened.keywords().arrays()["docs"], np.memmap)  # opened, not rebuilt
    np.testing.assert_array_equal(opened.keywords().scores(query), fresh.scores(query))
    vector = np.ones(4, dtype=np.float32)
    assert search(opened, vector, query, 5, lexical_weight=0.3) == search(
        index, vector, query, 5, lexical_weight=0.3
    )


def test_a_keyword_table_of_another_version_is_built_again(tmp_path, monkeypatch) -> None:
    index, _ = _saved_twin(tmp_path)
    monkeypatch.setattr(lexical, "VERSION", lexical.VERSION + 1)
    opened = VectorIndex.load(tmp_path / "idx")
    assert not isinstance(opened.keywords().arrays()["docs"], np.memmap)
    query = "charge the card"
    np.testing.assert_array_equal(opened.keywords().scores(query), index.keywords().scores(query))
