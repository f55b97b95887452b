"""The embedding tiers: distilling once (atomically, under a lock), the static embedder,
and tier selection, with a static model built from the bundled one (``static_model_dir``)."""

from __future__ import annotations

import json
import shutil
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from nexus.retrieval.embedding import (
    CachedEmbedder,
    DualView,
    Embedder,
    EmbeddingCache,
    ModelUnavailableError,
)
from nexus.retrieval.textview import code_as_words
from nexus.retrieval.tiers import (
    STATIC_MODEL_NAME,
    StaticEmbedder,
    ensure_static_model,
    models_dir,
    tier_embedder,
)


def copy_model(static_model_dir: Path) -> callable:
    """A ``distil`` that copies the fixture's model and counts its calls."""
    calls: list[Path] = []

    def distil(target: Path) -> None:
        calls.append(target)
        shutil.copytree(static_model_dir, target, dirs_exist_ok=True)

    distil.calls = calls  # type: ignore[attr-defined]
    return distil


def test_distils_once_then_loads(tmp_path, static_model_dir):
    distil = copy_model(static_model_dir)
    said: list[str] = []
    first = ensure_static_model(tmp_path, said.append, distil)
    second = ensure_static_model(tmp_path, said.append, distil)
    assert first == second == tmp_path / STATIC_MODEL_NAME
    assert len(distil.calls) == 1
    assert distil.calls[0] != first  # written elsewhere, then renamed into place
    assert any("distilling" in line for line in said) and any("ready" in line for line in said)
    assert (first / "model.safetensors").is_file()


def test_failed_distillation_leaves_nothing(tmp_path):
    def broken(target: Path) -> None:
        (target / "half-written").write_text("x")
        raise ModelUnavailableError("distilling failed")

    with pytest.raises(ModelUnavailableError, match="distilling failed"):
        ensure_static_model(tmp_path, distil=broken)
    assert [p.name for p in tmp_path.iterdir()] == [f"{STATIC_MODEL_NAME}.lock"]


def test_two_at_once_distil_once(tmp_path, static_model_dir):
    distil = copy_model(static_model_dir)
    inside = threading.Event()
    release = threading.Event()

    def slow(target: Path) -> None:
        inside.set()
        release.wait(10)
        distil(target)

    results: list[Path] = []
    first = threading.Thread(
        target=lambda: results.append(ensure_static_model(tmp_path, None, slow))
    )
    first.start()
    assert inside.wait(10)
    second = threading.Thread(
        target=lambda: results.append(ensure_static_model(tmp_path, None, slow))
    )
    second.start()
    second.join(0.3)
    assert second.is_alive()  # waits on the lock, not distilling beside the first
    release.set()
    first.join(10)
    second.join(10)
    assert results == [tmp_path / STATIC_MODEL_NAME] * 2
    assert len(distil.calls) == 1


def test_static_embedder_is_an_embedder(static_model_dir):
    embedder = StaticEmbedder(static_model_dir)
    assert isinstance(embedder, Embedder)
    assert embedder.name == STATIC_MODEL_NAME
    texts = ["parse the config file", "read and parse a configuration file", "sort the users"]
    vectors = embedder.encode(texts)
    assert vectors.shape == (3, embedder.dim) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-5)
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2]
    assert embedder.encode([]).shape == (0, embedder.dim)
    short, longer = embedder.count_wordpieces(["a b c d", "a b c d e f"])
    assert longer - short == 2 and short >= 4
    (past_the_window,) = embedder.count_wordpieces(["word " * (embedder.max_seq_length + 10)])
    assert past_the_window > embedder.max_seq_length  # counted whole, though encode truncates


def test_static_embedder_equals_model2vec_encode(static_model_dir, monkeypatch):
    """The sparse-product encode gives model2vec's own vectors: same cut, same word pieces
    (unknown ones dropped), same float16 rounding; empty, odd and over-long texts too, and
    words views; every text's pieces come from the word memo (filled, then read: twice),
    which tokenizes new plain words joined, a few to a text here."""
    from nexus.retrieval import tiers

    monkeypatch.setattr(tiers, "_WORDS_PER_TEXT", 7)
    embedder = StaticEmbedder(static_model_dir)
    texts = [
        "def parse_config(path):\n    return toml.loads(path.read_text())",
        "",
        "   ",
        "\u00e9t\u00e9 \u2603 \U0001f600 \u4e2d\u6587 getCookie(name)",
        # characters a BERT tokenizer removes, joins or splits at, inside and between words
        "caf\u00e9_Na\u00efve\u2014x \u00abquoted\u00bb a\u00a0b c\x0bd e\x00f g\u2028h \ufb01le",
        "\u0130stanbul A\u0301B \u200dzwj\ufffd\x7f\x1cend \u3000\u65e5\u672c\u8a9ecode\t\r\n",
        "x" * 150 + " y" + "\u00e9" * 120,  # words past the word pieces' 100 characters
        "createSubscription " * 900,  # beyond the window and beyond the character cut
        "x",
        # words views (looked up word by word): known words, rare ones, digits, one long
        code_as_words(Path(__file__).read_text()),
        "get cookie parse set cookie header 42 supercalifragilistic zzyzx qwertyuiopasdf",
        "get cookie " * 600,
    ]
    expected = embedder.load().encode(texts, max_length=embedder.max_seq_length)
    expected = np.asarray(expected, dtype=np.float32)
    norms = np.linalg.norm(expected, axis=1, keepdims=True)
    expected = expected / np.where(norms == 0, 1, norms)
    np.testing.assert_array_equal(embedder.encode(texts), expected)
    np.testing.assert_array_equal(embedder.encode(texts[::-1]), expected[::-1])
    # Should joined words not cut apart one per word, they are tokenized one by one.
    fresh = StaticEmbedder(static_model_dir)
    fresh._continuing = [False] * len(fresh._continues())
    np.testing.assert_array_equal(fresh.encode(texts), expected)


def test_missing_model2vec_says_how_to_install(static_model_dir, monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "model2vec", None)
    with pytest.raises(ModelUnavailableError, match="pip install model2vec"):
        StaticEmbedder(static_model_dir).encode(["x"])
    with pytest.raises(ModelUnavailableError, match="pip install model2vec"):
        ensure_static_model(tmp_path)  # the real distillation, stopped at its import
    assert not (tmp_path / STATIC_MODEL_NAME).exists()


def test_fast_tier_loads_from_the_cache_folder(tmp_path, static_model_dir, monkeypatch):
    monkeypatch.setenv("NEXUS_MODEL_PRECISION", "float32")
    shutil.copytree(static_model_dir, models_dir(tmp_path) / STATIC_MODEL_NAME)
    fast = tier_embedder("fast", cache_dir=tmp_path)
    plain = tier_embedder("fast", words_view=False, cache_dir=tmp_path)
    assert isinstance(fast, DualView) and fast.name == f"{STATIC_MODEL_NAME}+dual"
    assert plain.name == STATIC_MODEL_NAME
    assert tier_embedder("quality").name == "all-MiniLM-L6-v2+dual"
    monkeypatch.setenv("NEXUS_MODEL_PRECISION", "bfloat16")
    assert tier_embedder("quality").name == "all-MiniLM-L6-v2-bf16+dual"


def test_tiers_never_share_cached_vectors(tmp_path, static_model_dir):
    shutil.copytree(static_model_dir, models_dir(tmp_path) / STATIC_MODEL_NAME)
    cache = EmbeddingCache(tmp_path / "vectors")
    fast = CachedEmbedder(tier_embedder("fast", cache_dir=tmp_path), cache)
    fast.encode(["def parse(config): ..."])
    assert cache.count(fast.name) == 1
    assert cache.count(tier_embedder("quality").name) == 0


@pytest.mark.parametrize(
    ("tier", "model", "message"),
    [("medium", None, "unknown embedding tier"), ("fast", "/some/model", "--model")],
)
def test_bad_tier_choices(tier, model, message, tmp_path):
    with pytest.raises(ValueError, match=message):
        tier_embedder(tier, model_path=model, cache_dir=tmp_path)


def test_eval_sweep_on_the_fast_tier_scores_what_search_answers(capsys, tmp_path, static_model_dir):
    """``nexus eval --tier fast --sweep`` embeds every setting's chunks with the static
    model, without the disk cache (it embeds about as fast as the cache reads and writes),
    and scores each setting as search answers: its best hits re-scored by MiniLM, which
    embeds those hits alone, through the cache. ``--fast-order`` never asks MiniLM."""
    from nexus.cli import main

    repo = Path(__file__).resolve().parents[2] / "sample_repos" / "express-images"
    cache = tmp_path / "cache"
    shutil.copytree(static_model_dir, models_dir(cache) / STATIC_MODEL_NAME)
    argv = ["eval", str(repo), "--queries", str(repo / "queries.jsonl"), "--tier", "fast"]
    argv += ["--cache", str(cache), "--sweep", "--sweep-max", "128,256", "--sweep-min", "0"]
    vectors = EmbeddingCache(cache)
    assert main([*argv, "--fast-order"]) == 0
    fast = capsys.readouterr()
    assert "ast 128/0" in fast.out and "ast 256/0" in fast.out and "best: ast" in fast.out
    assert "re-scored" not in fast.err and vectors.count() == 0
    assert main(argv) == 0
    answered = capsys.readouterr()
    assert "best hits re-scored by all-MiniLM-L6-v2+dual" in answered.err
    rows = [
        [line for line in run.out.splitlines() if line.startswith("ast ")]
        for run in (fast, answered)
    ]
    assert len(rows[1]) == 2 and rows[1] != rows[0]  # MiniLM moved the hits
    assert vectors.count(f"{STATIC_MODEL_NAME}+dual") == 0 < vectors.count()
    chunks = sum(int(row.split()[3]) for row in rows[1])
    assert vectors.count() < chunks  # the hits re-scored, not every chunk of every setting


def test_a_sweep_too_large_to_rescore_scores_the_fast_order_unless_asked(
    capsys, monkeypatch, tmp_path, static_model_dir
):
    """Past ``RESCORE_TEXTS`` texts MiniLM's cache lacks (at most queries x settings x 30) a
    fast sweep scores the fast tier's own order, says so and never asks MiniLM;
    ``--rescore`` re-scores anyway, and with its texts cached the sweep re-scores by
    default."""
    from nexus.cli import main
    from nexus.evaluation import experiments

    repo = Path(__file__).resolve().parents[2] / "sample_repos" / "express-images"
    cache = tmp_path / "cache"
    shutil.copytree(static_model_dir, models_dir(cache) / STATIC_MODEL_NAME)
    argv = ["eval", str(repo), "--queries", str(repo / "queries.jsonl"), "--tier", "fast"]
    argv += ["--cache", str(cache), "--sweep", "--sweep-max", "128,256", "--sweep-min", "0"]
    queries = sum(1 for line in (repo / "queries.jsonl").read_text().splitlines() if line)
    assert experiments.rescore_affordable(queries, 2)  # the sample re-scores by default
    monkeypatch.setattr(experiments, "RESCORE_TEXTS", experiments.rescore_texts_bound(1, 2))
    vectors = EmbeddingCache(cache)
    assert main(argv) == 0
    large = capsys.readouterr()
    assert "scored the fast tier's own order" in large.err and "--rescore" in large.err
    assert "best: ast" in large.out and vectors.count() == 0
    assert main([*argv, "--rescore"]) == 0
    assert "best hits re-scored by all-MiniLM-L6-v2+dual" in capsys.readouterr().err
    embedded = vectors.count()
    assert embedded > 0
    assert main(argv) == 0  # the same sweep again: MiniLM's cache holds every text it needs
    assert "best hits re-scored by all-MiniLM-L6-v2+dual" in capsys.readouterr().err
    assert vectors.count() == embedded


def test_search_on_the_fast_tier_saves_its_own_index(capsys, tmp_path, static_model_dir):
    from nexus.cli import main

    repo = Path(__file__).resolve().parents[2] / "sample_repos" / "ts-payments"
    cache = tmp_path / "cache"
    shutil.copytree(static_model_dir, models_dir(cache) / STATIC_MODEL_NAME)
    argv = ["search", str(repo), "refund a payment", "--tier", "fast", "--cache", str(cache)]
    assert main([*argv, "--json"]) == 0
    hits = json.loads(capsys.readouterr().out)
    assert hits["AST"][0]["file"] == "src/services/refund.ts"
    manifests = [p.read_text() for p in (cache / "indexes").glob("*/manifest.json")]
    assert manifests and all(f"{STATIC_MODEL_NAME}+dual" in m for m in manifests)
    vectors = EmbeddingCache(cache)
    assert vectors.count(f"{STATIC_MODEL_NAME}+dual") == 0  # the chunking workers embedded
    # ... and MiniLM is never asked on the query path: until its vectors of the chunks are
    # computed in the background, the answer is the fast tier's own, and says so
    assert hits["rescored_by"] is None and hits["rescore"] == "not re-scored yet"
    assert vectors.count() == 0
    assert main([*argv, "--json", "--no-rescore"]) == 0
    plain = json.loads(capsys.readouterr().out)
    assert plain["rescored_by"] is None and plain["rescore"] is None
    assert plain["AST"][0]["parts"]["dense"] > 0


def test_eval_sweep_over_target_files_and_a_sample(capsys, tmp_path, static_model_dir):
    """``--distractors 0``: the sweep chunks only the files that hold a target."""
    from nexus.cli import main

    repo = Path(__file__).resolve().parents[2] / "sample_repos" / "ts-payments"
    cache = tmp_path / "cache"
    shutil.copytree(static_model_dir, models_dir(cache) / STATIC_MODEL_NAME)
    argv = ["eval", str(repo), "--queries", str(repo / "queries.jsonl"), "--tier", "fast"]
    argv += ["--cache", str(cache), "--sweep", "--sweep-max", "256", "--sweep-min", "0"]
    chunks = []
    for extra in ([], ["--distractors", "0"]):
        assert main([*argv, *extra]) == 0
        row = next(line for line in capsys.readouterr().out.splitlines() if "ast 256/0" in line)
        chunks.append(int(row.split()[3]))
    assert 0 < chunks[1] < chunks[0]


def test_the_cache_commits_the_static_model_in_large_batches(static_model_dir, tmp_path):
    """A static model embeds thousands of texts a second: the cache commits it in batches
    of its ``texts_per_commit``, through the words view too, unless told otherwise."""
    static = StaticEmbedder(static_model_dir)
    cache = EmbeddingCache(tmp_path)
    assert CachedEmbedder(DualView(static), cache).commit_every == static.texts_per_commit
    assert static.texts_per_commit > 256
    assert CachedEmbedder(DualView(static), cache, commit_every=8).commit_every == 8
