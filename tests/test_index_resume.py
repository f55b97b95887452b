"""Kill ``nexus index`` half-way: the next run embeds only what the first did not commit."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import nexus.retrieval.embedding
from nexus.cli import main
from nexus.retrieval.embedding_cache import EmbeddingCache
from tests.retrieval.test_embedding import FakeEmbedder

ROOT = Path(__file__).resolve().parents[1]
REPO = ROOT / "sample_repos" / "express-images"
COMMIT = 8
DONE_BATCHES = 3

# The child runs the real CLI with a fake embedder that hangs in batch DONE_BATCHES + 1,
# after writing a marker: by then every earlier batch has been committed.
CHILD = f"""
import sys, time
from pathlib import Path
import numpy as np
import nexus.retrieval.embedding as emb
from tests.retrieval.test_embedding import FakeEmbedder

class Hanging(FakeEmbedder):
    def encode(self, texts, progress=None):
        if len(self.calls) == {DONE_BATCHES}:
            Path(sys.argv[1]).write_text("hanging")
            time.sleep(600)
        return super().encode(texts, progress)

emb.COMMIT_EVERY = {COMMIT}
emb.default_embedder = lambda words_view=True, model_path=None: Hanging()
from nexus.cli import main
main(["index", {str(REPO)!r}, "--tier", "quality", "--cache", sys.argv[2], "--out", sys.argv[3]])
"""


def test_a_killed_index_run_is_resumed_without_embedding_anything_twice(
    tmp_path, monkeypatch, capsys
) -> None:
    marker, cache_dir = tmp_path / "hanging", tmp_path / "cache"
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(marker), str(cache_dir), str(tmp_path / "i1")],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        deadline = time.monotonic() + 120
        while not marker.exists() and child.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert marker.exists(), "the child never reached the hanging batch"
    finally:
        child.kill()
        child.wait()
    assert EmbeddingCache(cache_dir).count() == DONE_BATCHES * COMMIT

    fake = FakeEmbedder()  # same name and vectors as the child's; counts what it embeds
    monkeypatch.setattr(nexus.retrieval.embedding, "default_embedder", lambda **_: fake)
    argv = ["index", str(REPO), "--tier", "quality", "--cache", str(cache_dir)]
    assert main([*argv, "--out", str(tmp_path / "i2")]) == 0
    embedded = sum(len(call) for call in fake.calls)
    total = EmbeddingCache(cache_dir).count()
    assert embedded == total - DONE_BATCHES * COMMIT > 0
    assert f"{DONE_BATCHES * COMMIT} cached, {embedded} embedded)" in capsys.readouterr().out
