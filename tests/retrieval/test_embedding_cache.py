"""The embedding cache: compact rows, the size budget with LRU eviction, old files, processes."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from nexus.cli import main
from nexus.retrieval.embedding_cache import (
    LEGACY_FILE_NAME,
    CacheError,
    EmbeddingCache,
    text_key,
)


def vectors(n: int, dim: int = 64, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    out = rng.standard_normal((n, dim)).astype(np.float32)
    return out / np.linalg.norm(out, axis=1, keepdims=True)


def items(names: list[str], dim: int = 64, seed: int = 0) -> dict[bytes, np.ndarray]:
    return {text_key(n): v for n, v in zip(names, vectors(len(names), dim, seed), strict=True)}


def test_round_trip_is_float16_and_put_returns_what_get_will(tmp_path) -> None:
    cache = EmbeddingCache(tmp_path)
    stored = cache.put("m", items(["a", "b"]))
    got = cache.get("m", [text_key("a"), text_key("b"), text_key("c")])
    assert set(got) == {text_key("a"), text_key("b")}
    for key, vec in got.items():
        assert vec.dtype == np.float32
        np.testing.assert_array_equal(vec, stored[key])
        np.testing.assert_allclose(vec, items(["a", "b"])[key], atol=1e-3)


def test_present_names_the_cached_keys_of_one_model(tmp_path) -> None:
    cache = EmbeddingCache(tmp_path)
    cache.put("m", items(["a", "b"]))
    cache.put("other", items(["c"]))
    keys = [text_key(t) for t in ("a", "b", "c", "a")]
    assert cache.present("m", keys) == {text_key("a"), text_key("b")}
    assert cache.present("unknown", keys) == set()


def test_rows_are_compact(tmp_path) -> None:
    """384 dims cost well under the old ~4.7 KB a row (float16 is 768 bytes)."""
    cache = EmbeddingCache(tmp_path)
    names = [f"text {i}" for i in range(1000)]
    for start in range(0, 1000, 100):
        cache.put("m", items(names[start : start + 100], dim=384, seed=start))
    assert cache.count() == 1000
    assert cache.live_bytes() / 1000 < 1100


def test_eviction_keeps_the_cache_within_a_tiny_budget_least_recently_used_first(
    tmp_path,
) -> None:
    budget = 96 * 1024
    cache = EmbeddingCache(tmp_path, max_bytes=budget)
    cache.put("m", items(["keep me"], seed=1))
    first = [f"old {i}" for i in range(100)]
    cache.put("m", items(first, seed=2))
    for batch in range(30):
        cache.get("m", [text_key("keep me")])  # used again and again: never the oldest
        cache.put("m", items([f"new {batch} {i}" for i in range(50)], seed=3 + batch))
        assert cache.live_bytes() <= budget
    assert 0 < cache.count() < 1 + 100 + 30 * 50
    assert text_key("keep me") in cache.get("m", [text_key("keep me")])
    assert cache.get("m", [text_key(n) for n in first]) == {}  # the oldest went first
    newest = [text_key(f"new 29 {i}") for i in range(50)]
    assert len(cache.get("m", newest)) == 50


def test_prune_to_a_smaller_budget_and_clear(tmp_path) -> None:
    cache = EmbeddingCache(tmp_path)
    cache.put("a", items([f"x{i}" for i in range(1000)]))
    cache.put("b", items(["y"]))
    before = cache.path.stat().st_size
    removed = cache.prune(128 * 1024)
    assert 0 < removed < 1000 and cache.live_bytes() <= 128 * 1024
    assert cache.path.stat().st_size < before  # the file shrinks, not just its free list
    cache.clear("b")
    assert cache.count("b") == 0 and cache.count("a") > 0
    cache.clear()
    assert cache.count() == 0 and cache.stats().models == ()


def test_a_name_reused_with_another_dim_drops_its_old_vectors(tmp_path) -> None:
    cache = EmbeddingCache(tmp_path)
    cache.put("m", items(["a", "b"], dim=64))
    cache.put("m", items(["c"], dim=32))
    assert cache.count("m") == 1
    assert cache.get("m", [text_key("a")]) == {}
    assert cache.get("m", [text_key("c")], dim=64) == {}
    with pytest.raises(ValueError, match="one length"):
        cache.put("m", {text_key("d"): np.ones(3), text_key("e"): np.ones(4)})


def legacy_file(folder, rows: list[tuple[str, str, int, bytes]]) -> None:
    """The first cache format: hex keys, float32, a WITHOUT ROWID table."""
    folder.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(folder / LEGACY_FILE_NAME) as db:
        db.execute(
            "CREATE TABLE embeddings (model TEXT NOT NULL, key TEXT NOT NULL, dim INTEGER "
            "NOT NULL, vec BLOB NOT NULL, PRIMARY KEY (model, key)) WITHOUT ROWID"
        )
        db.executemany("INSERT INTO embeddings VALUES (?, ?, ?, ?)", rows)


def test_an_old_format_cache_is_imported_once(tmp_path) -> None:
    vec = vectors(2)
    legacy_file(
        tmp_path,
        [
            ("m+dual", text_key("a").hex(), 64, vec[0].tobytes()),
            ("m+dual", text_key("b").hex(), 64, vec[1].tobytes()),
            ("m+dual", "not-a-hex-key", 64, vec[1].tobytes()),  # skipped, not fatal
            ("other", text_key("a").hex(), 64, vec[0][:10].tobytes()),  # dim disagrees
        ],
    )
    cache = EmbeddingCache(tmp_path)
    got = cache.get("m+dual", [text_key("a"), text_key("b")])
    np.testing.assert_allclose(got[text_key("a")], vec[0], atol=1e-3)
    assert cache.count() == 2
    assert cache.stats().legacy_bytes > 0
    cache.clear()
    assert not (tmp_path / LEGACY_FILE_NAME).exists()
    assert EmbeddingCache(tmp_path).count() == 0  # not imported again


def test_an_unreadable_old_file_is_ignored_with_a_warning(tmp_path) -> None:
    (tmp_path / LEGACY_FILE_NAME).write_bytes(b"not a database at all" * 100)
    with pytest.warns(UserWarning, match="ignored"):
        cache = EmbeddingCache(tmp_path)
    cache.put("m", items(["a"]))
    assert cache.count() == 1


def test_a_corrupt_cache_is_a_clear_error_and_cache_clear_removes_it(tmp_path, capsys) -> None:
    (tmp_path / "vectors.sqlite").write_bytes(b"garbage" * 1000)
    with pytest.raises(CacheError, match="nexus cache clear"):
        EmbeddingCache(tmp_path)
    assert main(["cache", "--cache", str(tmp_path)]) == 2
    assert "nexus cache clear" in capsys.readouterr().err
    assert main(["cache", "clear", "--cache", str(tmp_path)]) == 0
    assert EmbeddingCache(tmp_path).count() == 0


def test_cache_verb_shows_rows_per_model_prunes_and_clears(tmp_path, capsys) -> None:
    cache = EmbeddingCache(tmp_path)
    cache.put("model-a", items([f"t{i}" for i in range(1000)]))
    cache.put("model-b", items(["u"]))
    assert main(["cache", "--cache", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "1001 vectors" in out and "model-a" in out and "model-b" in out
    assert main(["cache", "prune", "--max-mb", "0.125", "--cache", str(tmp_path)]) == 0
    assert "least recently used" in capsys.readouterr().out
    assert 0 < cache.count() < 1001 and cache.live_bytes() <= 0.125 * 1024 * 1024
    assert main(["cache", "clear", "--model", "model-b", "--cache", str(tmp_path)]) == 0
    assert cache.count("model-b") == 0
    assert main(["cache", "--json", "--cache", str(tmp_path)]) == 0
    assert '"rows"' in capsys.readouterr().out
    assert main(["cache", "prune", "--max-mb", "-1", "--cache", str(tmp_path)]) == 2


WRITER = """
import sys
import numpy as np
from nexus.retrieval.embedding_cache import EmbeddingCache, text_key
folder, worker = sys.argv[1], int(sys.argv[2])
cache = EmbeddingCache(folder)
for batch in range(10):
    names = [f"w{worker} b{batch} {i}" for i in range(20)] + ["shared"]
    vecs = np.random.default_rng(worker * 100 + batch).standard_normal((len(names), 64))
    cache.put("m", {text_key(n): v for n, v in zip(names, vecs)})
    cache.get("m", [text_key("shared"), text_key(f"w{worker} b0 0")])
"""


def test_many_processes_share_one_cache(tmp_path) -> None:
    """Four processes create, write and read one new cache at the same time."""
    root = Path(__file__).resolve().parents[2]
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(tmp_path), str(w)],
            cwd=root,
            env={**os.environ, "PYTHONPATH": str(root)},
            stderr=subprocess.PIPE,
            text=True,
        )
        for w in range(4)
    ]
    errors = [p.communicate(timeout=600)[1] for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0, 0], errors
    assert EmbeddingCache(tmp_path).count("m") == 4 * 10 * 20 + 1
