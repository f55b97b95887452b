"""Shared pytest fixtures."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def real_embedder():
    """The bundled all-MiniLM-L6-v2 embedder, loaded once per test session.

    The model package is a dependency of the project, so a missing model fails
    the tests rather than skipping them.
    """
    from nexus.embedding import SentenceTransformerEmbedder

    embedder = SentenceTransformerEmbedder()
    embedder.load()
    return embedder
