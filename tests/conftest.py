"""Shared pytest fixtures."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def real_embedder():
    """The bundled all-MiniLM-L6-v2 embedder, loaded once per test session.

    Skips (rather than fails) where the model package is not installed.
    """
    from nexus.embedding import ModelUnavailableError, SentenceTransformerEmbedder

    try:
        embedder = SentenceTransformerEmbedder()
        embedder.load()
    except ModelUnavailableError as exc:
        pytest.skip(str(exc))
    return embedder
