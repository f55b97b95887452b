"""Shared pytest fixtures."""

from __future__ import annotations

import os

import pytest

# One arithmetic on every CPU: with bfloat16 the quality tier's name (and its cached
# vectors) would differ between machines that have it and those that don't.
os.environ["NEXUS_MODEL_PRECISION"] = "float32"


@pytest.fixture(scope="session")
def real_embedder():
    """The bundled all-MiniLM-L6-v2 embedder, loaded once per test session.

    The model package is a dependency of the project, so a missing model fails
    the tests rather than skipping them.
    """
    from nexus.retrieval.embedding import SentenceTransformerEmbedder

    embedder = SentenceTransformerEmbedder()
    embedder.load()
    return embedder


@pytest.fixture(autouse=True)
def _cache_in_tmp(monkeypatch, tmp_path):
    """The default embedding cache (and the saved indexes beside it) in a temporary folder:
    a test that gives no ``--cache`` must not write into the working directory."""
    monkeypatch.setenv("NEXUS_CACHE_DIR", str(tmp_path / "nexus-cache"))


@pytest.fixture(autouse=True)
def _no_vectors_jobs(monkeypatch):
    """No background MiniLM job (``nexus.runtime.rescore_vectors``) in a test unless it
    starts one itself: a fast-tier workspace answers "not re-scored yet"."""
    from nexus.runtime import rescore_vectors

    monkeypatch.setattr(rescore_vectors, "spawn", lambda argv, log: None)
    monkeypatch.setattr(rescore_vectors, "_JOBS", {})


@pytest.fixture(scope="session")
def static_model_dir(tmp_path_factory):
    """A static model built from the bundled all-MiniLM-L6-v2, once per session.

    The fast tier distils the model (``tiers.distil_from_minilm``: a forward pass per word
    piece, ~3 minutes on two cores), too slow for the suite. This takes the model's own
    input embedding table instead (a second): the same tokenizer, the same kind of
    model2vec folder, weaker vectors, which is all the tests of the tier's plumbing need.
    The folder has the distilled model's name, so a test can put it where the tier looks.
    """
    from model2vec import StaticModel
    from safetensors.numpy import load_file
    from tokenizers import Tokenizer

    from nexus.retrieval.embedding import SentenceTransformerEmbedder
    from nexus.retrieval.tiers import STATIC_MODEL_NAME

    source = SentenceTransformerEmbedder().model_path
    vectors = load_file(str(source / "model.safetensors"))["embeddings.word_embeddings.weight"]
    tokenizer = Tokenizer.from_file(str(source / "tokenizer.json"))
    folder = tmp_path_factory.mktemp("static") / STATIC_MODEL_NAME
    StaticModel(vectors.astype("float32"), tokenizer, normalize=True).save_pretrained(str(folder))
    return folder
