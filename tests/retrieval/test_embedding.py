"""The words view, the embedding cache, and (marked ``model``) the real model."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

import numpy as np
import pytest

from nexus.retrieval.embedding import (
    CachedEmbedder,
    DualView,
    Embedder,
    EmbeddingCache,
    EmbeddingCancelled,
    ModelUnavailableError,
    SentenceTransformerEmbedder,
    cpu_flags,
    resolve_precision,
)
from nexus.retrieval.textview import code_as_words, identifier_words


class FakeEmbedder:
    """Deterministic bag-of-words vectors; records every text it was asked to embed."""

    name = "fake-bow"
    dim = 64
    max_seq_length = 16

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def encode(self, texts: Sequence[str], progress=None) -> np.ndarray:
        self.calls.append(list(texts))
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in re.findall(r"\w+", text.lower()):
                out[i, int(hashlib.md5(word.encode()).hexdigest(), 16) % self.dim] += 1
            out[i, 0] += 1e-3  # never the zero vector
        out /= np.linalg.norm(out, axis=1, keepdims=True)
        if progress is not None:
            progress(len(texts), len(texts))
        return out

    def count_wordpieces(self, texts: Sequence[str]) -> list[int]:
        return [len(t.split()) + 2 for t in texts]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("createSubscription", "create subscription"),
        ("XMLHttpRequest", "xml http request"),
        ("parseHTTPResponse(res);", "parse http response res"),
        ("QueryCache.clear()", "query cache clear"),
        ("base64Encode(x)", "base 64 encode x"),
        ("MAX_RETRIES = 3;", "max retries 3"),
        ("send lazyrouter x", "send lazyrouter x"),
        ("if (a) { return b; }", "if a return b"),
        ("'NoSuchKey' error", "no such key error"),
        ("", ""),
    ],
)
def test_code_as_words(text: str, expected: str) -> None:
    assert code_as_words(text) == expected


def test_code_as_words_is_idempotent() -> None:
    once = code_as_words("export const fetchUser = async (id: string) => api.get(`/u/${id}`);")
    assert code_as_words(once) == once


def test_identifier_words() -> None:
    assert identifier_words("getQueryData") == ["get", "query", "data"]
    assert identifier_words("$digest") == ["digest"]


def test_fake_embedder_satisfies_protocol() -> None:
    assert isinstance(FakeEmbedder(), Embedder)


def test_cache_hits_and_misses(tmp_path) -> None:
    fake = FakeEmbedder()
    cached = CachedEmbedder(fake, EmbeddingCache(tmp_path))
    first = cached.encode(["alpha beta", "gamma", "alpha beta"])
    assert fake.calls == [["alpha beta", "gamma"]]  # the repeat is embedded once
    assert (cached.last_hits, cached.last_misses) == (0, 2)

    seen: list[tuple[int, int]] = []
    second = cached.encode(
        ["gamma", "delta", "alpha beta"], progress=lambda d, n: seen.append((d, n))
    )
    assert fake.calls[-1] == ["delta"]
    assert (cached.last_hits, cached.last_misses) == (2, 1)
    assert (cached.hits, cached.misses) == (2, 3)
    assert seen[0] == (2, 3) and seen[-1] == (3, 3)
    np.testing.assert_array_equal(second[0], first[1])
    np.testing.assert_array_equal(second[2], first[0])
    assert second.dtype == np.float32 and second.shape == (3, 64)

    # A fresh cache object on the same folder sees the stored vectors.
    again = CachedEmbedder(FakeEmbedder(), EmbeddingCache(tmp_path))
    np.testing.assert_array_equal(again.encode(["delta"]), second[1:2])
    assert (again.hits, again.misses) == (1, 0)


def test_cache_is_keyed_by_model_name(tmp_path) -> None:
    cache = EmbeddingCache(tmp_path)
    CachedEmbedder(FakeEmbedder(), cache).encode(["same text"])
    split = CachedEmbedder(DualView(FakeEmbedder()), cache)
    split.encode(["same text"])
    assert split.last_misses == 1
    assert cache.count() == 2 and cache.count("fake-bow") == 1


def test_cache_empty_input(tmp_path) -> None:
    out = CachedEmbedder(FakeEmbedder(), EmbeddingCache(tmp_path)).encode([])
    assert out.shape == (0, 64)


def test_dual_view_embeds_as_written_and_as_words_and_averages() -> None:
    fake = FakeEmbedder()
    view = DualView(fake)
    seen: list[tuple[int, int]] = []
    vectors = view.encode(["getUser();"], progress=lambda d, n: seen.append((d, n)))
    assert fake.calls == [["getUser();", "get user"]]  # one call: batches mix the views
    assert view.name == "fake-bow+dual"
    assert seen[-1] == (2, 2)
    as_written, as_words = (
        FakeEmbedder().encode(["getUser();"]),
        FakeEmbedder().encode(["get user"]),
    )
    expected = (as_written + as_words) / np.linalg.norm(as_written + as_words)
    np.testing.assert_allclose(vectors, expected, rtol=1e-6)
    assert view.count_wordpieces(["getUser"]) == [3]


def test_dual_view_embeds_a_text_that_is_its_own_words_view_once() -> None:
    fake = FakeEmbedder()
    texts = ["where are cookies parsed", "parseCookie"]
    vectors = DualView(fake).encode(texts)
    assert fake.calls == [["where are cookies parsed", "parseCookie", "parse cookie"]]
    np.testing.assert_allclose(vectors[0], FakeEmbedder().encode(texts[:1])[0], rtol=1e-6)
    np.testing.assert_allclose(vectors[1], DualView(FakeEmbedder()).encode(texts[1:])[0])


def test_missing_model_folder_is_a_clear_error(tmp_path) -> None:
    with pytest.raises(ModelUnavailableError, match="no embedding model found"):
        SentenceTransformerEmbedder(tmp_path / "nope")


def test_precision_is_bfloat16_only_where_the_cpu_multiplies_it_natively(
    tmp_path, monkeypatch
) -> None:
    monkeypatch.delenv("NEXUS_MODEL_PRECISION", raising=False)
    avx2 = frozenset({"avx2", "fma"})
    assert resolve_precision(flags=avx2) == "float32"
    assert resolve_precision(flags=avx2 | {"avx512_bf16"}) == "bfloat16"
    assert resolve_precision(flags=avx2 | {"amx_bf16"}) == "bfloat16"
    assert resolve_precision("float32", flags=frozenset({"avx512_bf16"})) == "float32"
    monkeypatch.setenv("NEXUS_MODEL_PRECISION", "float32")
    assert resolve_precision(flags=frozenset({"avx512_bf16"})) == "float32"
    monkeypatch.setenv("NEXUS_MODEL_PRECISION", "half")
    with pytest.raises(ValueError, match="unknown model precision 'half'"):
        resolve_precision()
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\nflags\t\t: fpu avx2 avx512_bf16\n")
    assert cpu_flags(cpuinfo) == {"fpu", "avx2", "avx512_bf16"}
    assert cpu_flags(tmp_path / "missing") == frozenset()


def test_vectors_in_bfloat16_are_named_apart_from_float32s() -> None:
    as_float32 = SentenceTransformerEmbedder(precision="float32")
    as_bfloat16 = SentenceTransformerEmbedder(precision="bfloat16")
    assert as_float32.name == "all-MiniLM-L6-v2"
    assert as_bfloat16.name == "all-MiniLM-L6-v2-bf16"
    assert DualView(as_bfloat16).name == "all-MiniLM-L6-v2-bf16+dual"


@pytest.mark.model
def test_bfloat16_vectors_agree_with_float32s() -> None:
    """The cheaper arithmetic keeps the model: each vector within cosine 0.99 of the
    float32 one, and the same text ranked first."""
    texts = [
        "export function parseCookies(header) { return header.split(';').map(trim); }",
        "class Router { route(path) { this.stack.push(new Layer(path)); } }",
        "parse the cookie header into a map",
    ]
    exact = SentenceTransformerEmbedder(precision="float32").encode(texts)
    cheap = SentenceTransformerEmbedder(precision="bfloat16").encode(texts)
    assert cheap.dtype == np.float32
    assert np.all(np.sum(exact * cheap, axis=1) > 0.99)
    assert np.argmax(cheap[:2] @ cheap[2]) == np.argmax(exact[:2] @ exact[2]) == 0


@pytest.mark.model
def test_real_model_ranks_relevant_text_first(real_embedder) -> None:
    docs = [
        "function createSubscription(plan, user) { return billing.subscribe(user.id, plan); }",
        "export function parseCookies(header) { return header.split(';').map(trim); }",
        "class Router { route(path) { this.stack.push(new Layer(path)); } }",
    ]
    vecs = real_embedder.encode(docs)
    assert vecs.shape == (3, real_embedder.dim) and vecs.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    query = real_embedder.encode(["parse the cookie header of a request"])[0]
    assert int(np.argmax(vecs @ query)) == 1
    counts = real_embedder.count_wordpieces(["hello world", "word " * 400])
    assert counts[0] == 4 and counts[1] > real_embedder.max_seq_length == 256


class FailingEmbedder(FakeEmbedder):
    """Raises on the call after ``ok_calls`` successful ones (a crash half-way)."""

    def __init__(self, ok_calls: int) -> None:
        super().__init__()
        self.ok_calls = ok_calls

    def encode(self, texts: Sequence[str], progress=None) -> np.ndarray:
        if len(self.calls) >= self.ok_calls:
            raise RuntimeError("the model died")
        return super().encode(texts, progress)


TEXTS = [f"text number {i} " + "word " * (i % 7) for i in range(50)]


def test_each_batch_is_committed_so_a_crash_loses_only_the_batch_in_flight(tmp_path) -> None:
    cache = EmbeddingCache(tmp_path)
    with pytest.raises(RuntimeError, match="died"):
        CachedEmbedder(FailingEmbedder(ok_calls=3), cache, commit_every=8).encode(TEXTS)
    assert cache.count() == 3 * 8
    again = FakeEmbedder()
    resumed = CachedEmbedder(again, cache, commit_every=8)
    resumed.encode(TEXTS)
    assert sum(len(c) for c in again.calls) == len(TEXTS) - 3 * 8
    assert (resumed.last_hits, resumed.last_misses) == (24, 26)
    np.testing.assert_allclose(
        resumed.encode(TEXTS),
        CachedEmbedder(FakeEmbedder(), EmbeddingCache(tmp_path / "x")).encode(TEXTS),
        atol=1e-6,
    )


def test_batches_go_longest_first_and_progress_follows_the_commits(tmp_path) -> None:
    fake = FakeEmbedder()
    seen: list[tuple[int, int]] = []
    cached = CachedEmbedder(fake, EmbeddingCache(tmp_path), commit_every=16)
    cached.encode(TEXTS[:10])
    cached.encode(TEXTS, progress=lambda d, n: seen.append((d, n)))
    assert seen == [(10, 50), (26, 50), (42, 50), (50, 50)]
    lengths = [len(t) for call in fake.calls[1:] for t in call]
    assert lengths == sorted(lengths, reverse=True)


def test_cancel_stops_between_batches_and_keeps_what_is_done(tmp_path) -> None:
    cache = EmbeddingCache(tmp_path)
    asked: list[int] = []

    def cancel() -> bool:
        asked.append(1)
        return len(asked) > 2

    with pytest.raises(EmbeddingCancelled):
        CachedEmbedder(FakeEmbedder(), cache, commit_every=10).encode(TEXTS, cancel=cancel)
    assert cache.count() == 20
