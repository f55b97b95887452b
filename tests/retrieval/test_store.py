"""Saved indexes: opened memory-mapped, reused when files, settings and model match."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from nexus import cli
from nexus.config import ChunkConfig
from nexus.ingest.sources import Repository
from nexus.retrieval.index import SavedChunks, VectorIndex
from nexus.retrieval.search import search
from nexus.retrieval.store import (
    IndexStore,
    chunk_and_embed,
    files_digest,
    identity_for,
    open_or_build,
)
from nexus.types import SourceFile
from nexus.ui.fake_embedder import HashingEmbedder
from tests import helpers

SAMPLE = Path(__file__).resolve().parents[2] / "sample_repos" / "ts-payments"


def random_index(n: int = 300, dim: int = 16) -> VectorIndex:
    rng = np.random.default_rng(3)
    chunks = [helpers.make_chunk(f"c{i}", start=i + 1, end=i + 2) for i in range(n)]
    return VectorIndex.build(chunks, rng.normal(size=(n, dim)), model="random")


def test_saved_index_opens_memory_mapped_and_searches_alike(tmp_path) -> None:
    index = random_index()
    search(index, np.ones(16, dtype=np.float32), k=1)  # builds the usearch graph: saved too
    index.save(tmp_path / "idx")
    opened = VectorIndex.load(tmp_path / "idx")
    assert opened._graph is not None  # the same graph, so approximate answers agree
    assert isinstance(opened.vectors, np.memmap)  # vectors stay on disk
    assert isinstance(opened._chunks, SavedChunks)  # chunks parsed per hit
    assert opened.folder == tmp_path / "idx"
    rng = np.random.default_rng(5)
    for _ in range(10):
        query = rng.normal(size=16).astype(np.float32)
        assert search(opened, query, k=5) == search(index, query, k=5)
        assert search(opened, query, k=5, exact=True) == search(index, query, k=5, exact=True)
        np.testing.assert_array_equal(opened.cosines(query), index.cosines(query))
    hybrid = search(opened, query, "function c7", 3, lexical_weight=0.5)
    assert hybrid == search(index, query, "function c7", 3, lexical_weight=0.5)
    assert opened.key_of("c42") == 42 and opened.chunk(-1).id == "c299"
    assert opened.chunks[10:12] == index.chunks[10:12]
    with pytest.raises(ValueError, match="read-only"):
        opened.add([helpers.make_chunk("new")], np.ones((1, 16)))


def test_empty_index_round_trip(tmp_path) -> None:
    VectorIndex(8, "m").save(tmp_path / "empty")
    opened = VectorIndex.load(tmp_path / "empty")
    assert len(opened) == 0 and search(opened, np.ones(8), k=3) == []


def test_a_folder_without_manifest_is_a_clear_error(tmp_path) -> None:
    with pytest.raises(ValueError, match="no saved index"):
        VectorIndex.load(tmp_path)


def repo_of(*files: SourceFile) -> Repository:
    return Repository(
        "r", tuple(f.info for f in files), contents={f.info.path: f.data for f in files}
    )


def test_identity_follows_files_settings_and_model() -> None:
    files = [helpers.make_source("let a = 1\n", "a.ts"), helpers.make_source("b()\n", "b.ts")]
    digest = files_digest(repo_of(*files))
    base = identity_for("r", digest, ChunkConfig(), "m")
    assert identity_for("r", files_digest(repo_of(*files)), ChunkConfig(), "m").key == base.key
    changed = repo_of(files[0], helpers.make_source("b(1)\n", "b.ts"))
    renamed = repo_of(files[0], helpers.make_source("b()\n", "c.ts"))
    others = [
        identity_for("r", files_digest(changed), ChunkConfig(), "m"),
        identity_for("r", files_digest(renamed), ChunkConfig(), "m"),
        identity_for("r", digest, ChunkConfig(max_tokens=384), "m"),
        identity_for("r", digest, ChunkConfig(context_header=False), "m"),
        identity_for("r", digest, ChunkConfig(strategy="lines"), "m"),
        identity_for("r", digest, ChunkConfig(), "m+dual"),
        identity_for("other", digest, ChunkConfig(), "m"),
    ]
    assert len({base.key, *(i.key for i in others)}) == 1 + len(others)
    # Settings a strategy does not read, and search-time settings, keep the identity.
    assert identity_for("r", digest, ChunkConfig(line_window=20), "m").key == base.key
    assert identity_for("r", digest, ChunkConfig(lexical_weight=0.0), "m").key == base.key


def test_open_or_build_reuses_and_rebuilds_a_damaged_index(tmp_path) -> None:
    store, embedder = IndexStore(tmp_path), HashingEmbedder(dim=32)
    identity = identity_for("r", "digest", ChunkConfig(), embedder.name)
    calls = []

    def make_chunks(missing):
        calls.append([i.strategy for i in missing])
        return [[helpers.make_chunk(f"c{i}") for i in range(5)] for _ in missing]

    build = chunk_and_embed(make_chunks, embedder)
    (first,) = open_or_build(store, [identity], build)
    (again,) = open_or_build(store, [identity], build)
    assert (first.reused, again.reused, calls) == (False, True, [["ast"]])
    assert again.folder == first.folder and tuple(again.index.chunks) == tuple(first.index.chunks)
    (first.folder / "vectors.npy").write_bytes(b"not numpy")
    (fixed,) = open_or_build(store, [identity], build)
    assert not fixed.reused and len(calls) == 2
    assert len(VectorIndex.load(fixed.folder)) == 5


def test_an_index_of_other_files_is_offered_only_for_the_same_settings(tmp_path) -> None:
    """With ``stale_share``, an identity without a saved index opens the newest one of
    the same settings and model built from other files, naming the files that differ;
    other settings, too many changed files or ``rebuild`` build afresh."""
    store, embedder = IndexStore(tmp_path), HashingEmbedder(dim=32)
    before = {f"f{i}.py": f"{i:064x}" for i in range(8)}
    after = {**before, "f1.py": "e" * 64, "new.py": "f" * 64}
    del after["f2.py"]

    def build(missing):
        one = [helpers.make_chunk("c")]
        return [VectorIndex.build(one, np.ones((1, 32)), "m") for _ in missing]

    def identity(digests, **settings):
        config = ChunkConfig(**settings)
        return identity_for("r", str(sorted(digests.items())), config, embedder.name)

    (saved,) = open_or_build(store, [identity(before)], build, digests=before)
    (opened,) = open_or_build(store, [identity(after)], build, digests=after, stale_share=0.5)
    assert opened.reused and opened.folder == saved.folder
    assert opened.stale == {"f1.py", "f2.py", "new.py"}
    assert "3 file(s) changed since" in opened.describe("ast")
    (other,) = open_or_build(
        store, [identity(after, max_tokens=128)], build, digests=after, stale_share=0.5
    )
    assert not other.reused
    (too_many,) = open_or_build(store, [identity(after)], build, digests=after, stale_share=0.2)
    assert not too_many.reused and too_many.folder != saved.folder
    (exact,) = open_or_build(store, [identity(after)], build, digests=after, stale_share=0.5)
    assert exact.reused and not exact.stale  # now saved for these very files


@pytest.fixture
def cli_repo(tmp_path, monkeypatch) -> Path:
    """A copy of a sample repo, the CLI's embedder swapped for the hashing one."""
    monkeypatch.setattr("nexus.retrieval.embedding.default_embedder", lambda **_: HashingEmbedder())
    repo = tmp_path / "ts-payments"
    shutil.copytree(SAMPLE, repo)
    return repo


def _run(capsys, *argv: str) -> tuple[str, str]:
    assert cli.main(helpers.on_quality_tier(argv)) == 0
    out = capsys.readouterr()
    return out.out, out.err


def test_cli_index_is_reused_by_search_and_eval_until_a_file_or_setting_changes(
    cli_repo, tmp_path, capsys
) -> None:
    cache = str(tmp_path / "cache")
    out, err = _run(capsys, "index", str(cli_repo), "--cache", cache)
    assert "indexed" in out and "built and saved ast index" in err
    out, err = _run(capsys, "index", str(cli_repo), "--cache", cache)
    assert "index up to date" in out and "opened saved ast index" in err

    _, err = _run(capsys, "search", str(cli_repo), "refund a payment", "--cache", cache)
    assert "opened saved ast index" in err and "lines index" not in err
    both = ("--strategy", "both")
    _, err = _run(capsys, "search", str(cli_repo), "refund", "--cache", cache, *both)
    assert "opened saved ast index" in err and "built and saved lines index" in err
    queries = str(cli_repo / "queries.jsonl")
    _, err = _run(capsys, "eval", str(cli_repo), "--queries", queries, "--cache", cache, *both)
    assert "opened saved ast index" in err and "opened saved lines index" in err
    # The keyword weight is applied at query time: the indexes still match.
    _, err = _run(
        capsys, "search", str(cli_repo), "q", "--cache", cache, *both, "--lexical-weight", "0"
    )
    assert err.count("opened saved") == 2

    _, err = _run(
        capsys, "search", str(cli_repo), "q", "--cache", cache, *both, "--max-tokens", "384"
    )
    assert "built and saved ast index" in err and "opened saved lines index" in err

    source = next(p for p in sorted(cli_repo.rglob("*.ts")) if "src" in p.parts)
    source.write_text(source.read_text() + "\nexport const added = 1;\n")
    _, err = _run(capsys, "search", str(cli_repo), "q", "--cache", cache, *both)
    assert err.count("built and saved") == 2
    _, err = _run(capsys, "index", str(cli_repo), "--cache", cache, "--rebuild")
    assert "built and saved ast index" in err


def test_cli_index_out_folder(cli_repo, tmp_path, capsys) -> None:
    folder = tmp_path / "mine"
    _run(capsys, "index", str(cli_repo), "--cache", str(tmp_path / "c"), "--out", str(folder))
    assert VectorIndex.read_manifest(folder)["identity"]["repo"] == "ts-payments"
    out, _ = _run(
        capsys, "index", str(cli_repo), "--cache", str(tmp_path / "c"), "--out", str(folder)
    )
    assert "up to date" in out


def test_temporaries_of_a_killed_save_are_removed_when_the_folder_is_opened(tmp_path) -> None:
    """A save killed halfway leaves ``.NAME.PID.tmp`` files: opening or saving the index
    folder removes those of processes that no longer run, not those of a running one."""
    import subprocess
    import sys

    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        check=True,
        capture_output=True,
        text=True,
    )
    dead_pid = int(gone.stdout)
    store, embedder = IndexStore(tmp_path), HashingEmbedder(dim=32)
    identity = identity_for("r", "digest", ChunkConfig(), embedder.name)
    folder = store.folder(identity)
    folder.mkdir(parents=True)
    dead = folder / f".chunks.jsonl.{dead_pid}.tmp"
    live = folder / f".vectors.npy.{os.getppid()}.tmp"  # a process that runs
    for tmp in (dead, live):
        tmp.write_text("half written")
    assert store.open(identity) is None
    assert not dead.exists() and live.exists()
    dead.write_text("half written")
    random_index().save(folder)
    assert not dead.exists() and live.exists()
