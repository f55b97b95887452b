"""The background job of MiniLM's chunk vectors and the ONNX query model, for real."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from nexus.retrieval.embedding import DualView
from nexus.retrieval.onnx_minilm import OnnxEmbedder, onnx_model_at
from nexus.retrieval.rescore import RESCORED
from nexus.runtime import rescore_vectors
from nexus.workspace import Settings, Workspace

SAMPLES = Path(__file__).resolve().parents[2] / "sample_repos"


@pytest.mark.model
def test_the_job_writes_minilm_vectors_and_the_query_model_agrees_with_torch(
    static_model_dir, tmp_path, real_embedder, monkeypatch
):
    repo = tmp_path / "express-images"
    shutil.copytree(SAMPLES / "express-images", repo)
    cache = tmp_path / "cache"
    shutil.copytree(static_model_dir, cache / "models" / static_model_dir.name)
    workspace = Workspace.open(repo, Settings(tier="fast", cache_dir=cache))
    assert workspace.search("resize an uploaded image", 5).rescore == "not re-scored yet"
    workspace.wait_for_saves()
    folder = workspace._folders["ast"]
    assert rescore_vectors.main([str(folder), "--cache", str(cache)]) == 0  # the job's work

    rows = np.load(next(folder.glob("rescore-*.npy")))
    texts = [chunk.embedding_text for chunk in workspace._live["ast"].base.chunks]
    assert rows.shape == (len(texts), 384)
    expected = DualView(real_embedder).encode(texts[:8])
    assert np.allclose(rows[:8].astype(np.float32), expected, atol=2e-3)  # float16 kept

    graph = onnx_model_at(cache)
    assert graph is not None
    queries = ["resize an uploaded image", "x", "where are thumbnails written to disk " * 40]
    onnx = OnnxEmbedder(graph).encode(queries)
    assert ((onnx * real_embedder.encode(queries)).sum(axis=1) > 0.9999).all()

    answer = workspace.search("resize an uploaded image", 5)
    assert answer.rescore == RESCORED and answer.rescored_by == "all-MiniLM-L6-v2+dual"
