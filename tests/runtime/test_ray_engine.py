"""The Ray engine in local mode (``--ray-cpus 2``: ``ray.init(num_cpus=2)``): the same chunks
as the local engine, embeddings from an actor pool, an index that search then opens.

Ray is an optional extra for users, but ``scripts/dev.sh test`` installs it (``.[dev,ray]``),
so in CI these tests run; they skip only where ray cannot be imported at all. Each Ray run
is a ``nexus`` process of its own: Ray's C++ core aborts its process when its start fails
(we saw it once on a machine at load 20), and that must fail a test, not end the suite.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("ray", reason="ray is not installed: pip install -e '.[ray]'")

import pyarrow.parquet as pq  # noqa: E402

from nexus import cli  # noqa: E402
from nexus.chunking.pipeline import chunk_repository  # noqa: E402
from nexus.config import ChunkConfig  # noqa: E402
from nexus.ingest.sources import open_repository  # noqa: E402
from nexus.retrieval.embedding import DualView, SentenceTransformerEmbedder  # noqa: E402
from nexus.retrieval.index import VectorIndex  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_repos"


def nexus_ray(*argv: str) -> subprocess.CompletedProcess[str]:
    """``nexus ARGV --engine ray --ray-cpus 2`` in a child process (see the module doc)."""
    cmd = [sys.executable, "-m", "nexus.cli", *argv, "--engine", "ray", "--ray-cpus", "2"]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def test_ray_chunks_equal_the_local_engine(tmp_path, capsys) -> None:
    repo = SAMPLES / "express-images"
    local = tmp_path / "local.jsonl"
    assert (
        cli.main(["chunk", str(repo), "--max-tokens", "256", "--format", "jsonl", "-o", str(local)])
        == 0
    )
    out = tmp_path / "ray"
    done = nexus_ray("chunk", str(repo), "--max-tokens", "256", "-o", str(out))
    assert "Parquet shards" in done.stdout
    assert (out / "chunks.jsonl").read_bytes() == local.read_bytes()  # ids, texts, order, bytes
    expected = [json.loads(line)["id"] for line in local.read_text(encoding="utf-8").splitlines()]
    manifest = json.loads((out / "run.json").read_text())
    assert manifest["engine"] == "ray" and manifest["chunks"] == len(expected)
    assert manifest["cluster_cpus"] == 2
    assert manifest["files"] == sum(info.chunkable for info in open_repository(repo).files)
    table = pq.read_table([out / name for name in manifest["parquet"]])
    assert table.column("id").to_pylist() == expected


def test_ray_chunk_needs_an_output_folder(capsys) -> None:
    assert cli.main(["chunk", str(SAMPLES / "ts-payments"), "--engine", "ray"]) == 2
    assert "add -o DIR" in capsys.readouterr().err


@pytest.mark.model
def test_ray_index_embeds_in_actors_and_search_opens_it(tmp_path, capsys, monkeypatch) -> None:
    """The actors' vectors are the local model's to 1e-4: in float32, which every worker
    takes from the driver (bfloat16's depend on how texts are batched, in the third
    decimal, whichever engine embeds them)."""
    monkeypatch.setenv("NEXUS_MODEL_PRECISION", "float32")
    repo = tmp_path / "ts-payments"
    shutil.copytree(SAMPLES / "ts-payments", repo)
    cache = tmp_path / "cache"
    done = nexus_ray("index", str(repo), "--cache", str(cache))
    assert "indexed" in done.stdout and "nexus: ray:" in done.stderr
    (folder,) = (cache / "indexes").iterdir()
    manifest = json.loads((folder / "run.json").read_text())
    table = pq.read_table([folder / name for name in manifest["parquet"]])
    index = VectorIndex.load(folder)
    local = chunk_repository(open_repository(repo), ChunkConfig())
    assert [c.id for c in index.chunks] == [c.id for c in local] == table.column("id").to_pylist()
    assert index.model == "all-MiniLM-L6-v2+dual"
    model = SentenceTransformerEmbedder(precision="float32")
    expected = DualView(model).encode([c.embedding_text for c in local])
    np.testing.assert_allclose(np.asarray(index.vectors), expected, atol=1e-4)
    vectors = np.stack(table.column("vector").to_numpy(zero_copy_only=False))
    np.testing.assert_allclose(vectors, expected, atol=1e-4)
    assert (
        cli.main(
            ["search", str(repo), "refund a payment", "--tier", "quality", "--cache", str(cache)]
        )
        == 0
    )
    assert "opened saved ast index" in capsys.readouterr().err


def test_a_file_a_task_cannot_chunk_reaches_the_manifest_rows(monkeypatch, capsys) -> None:
    """A task's failure comes back as a row of its own, which the driver takes out of the
    chunks (into run.json's ``not_chunked``); the other files' chunks are unchanged."""
    import pyarrow as pa

    from nexus.runtime import ray_engine
    from nexus.runtime.stream import FileChunks

    repo = open_repository(SAMPLES / "express-images")
    infos = [info for info in repo.files if info.chunkable][:3]
    real = ray_engine.chunk_ref

    def chunk_ref(ref, config, **kwargs):  # noqa: ANN001, ANN202 - as chunk_ref
        if ref.info.path == infos[1].path:
            return FileChunks(ref.info.path, error="ValueError: broken")
        return real(ref, config, **kwargs)

    monkeypatch.setattr(ray_engine, "chunk_ref", chunk_ref)
    rows = [ray_engine._file_row(info, repo.contents[info.path]) for info in infos]
    output = ray_engine._chunk_files(pa.Table.from_pylist(rows), ChunkConfig(), repo.name, None)
    chunks, failures = ray_engine._split_failures(output)
    assert failures == [{"path": infos[1].path, "error": "ValueError: broken"}]
    assert chunks.schema == ray_engine._schema()
    assert set(chunks.column("file").to_pylist()) == {infos[0].path, infos[2].path}
    assert f"{infos[1].path}: not chunked" in capsys.readouterr().err
