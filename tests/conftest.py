"""Shared pytest fixtures."""

from __future__ import annotations

import pytest


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
