"""The byte-budgeted LRU: eviction order, sizes that change, one build for many threads."""

from __future__ import annotations

import threading
import time

import pytest

from nexus.runtime.lru import ByteLRU


def test_least_recently_used_entries_go_first() -> None:
    cache = ByteLRU(100)
    cache.put("a", "A", 40)
    cache.put("b", "B", 40)
    assert cache.get("a") == "A"  # "b" is now the oldest
    cache.put("c", "C", 40)
    assert cache.oldest_first() == ["a", "c"]
    assert cache.used == 80
    assert cache.stats().evictions == 1


def test_total_never_passes_the_budget() -> None:
    cache = ByteLRU(1000)
    for i in range(200):
        cache.put(i, str(i), 7 + i % 50)
        assert cache.used <= 1000
    assert cache.used == sum(7 + k % 50 for k in cache.oldest_first())


def test_value_larger_than_the_budget_is_returned_not_kept() -> None:
    cache = ByteLRU(100)
    cache.put("small", 1, 10)
    assert cache.put("huge", 2, 101) == 2
    assert "huge" not in cache
    assert cache.oldest_first() == ["small"]
    assert cache.stats().refused == 1


def test_put_again_replaces_the_size() -> None:
    cache = ByteLRU(100)
    cache.put("a", 1, 60)
    cache.put("a", 2, 30)
    assert (cache.get("a"), cache.used) == (2, 30)


def test_resize_counts_growth_and_evicts_others() -> None:
    cache = ByteLRU(100)
    cache.put("old", 1, 50)
    cache.put("grows", 2, 10)
    cache.resize("grows", 60)
    assert cache.oldest_first() == ["grows"]
    assert cache.used == 60
    cache.resize("grows", 500)  # past the whole budget: dropped
    assert len(cache) == 0 and cache.used == 0
    cache.resize("missing", 10)  # nothing to do
    assert cache.used == 0


def test_get_or_build_rebuilds_after_eviction() -> None:
    cache = ByteLRU(100)
    builds = []

    def build(key: str):
        return lambda: builds.append(key) or key.upper()

    assert cache.get_or_build("a", build("a"), lambda _: 60) == "A"
    assert cache.get_or_build("a", build("a"), lambda _: 60) == "A"
    cache.get_or_build("b", build("b"), lambda _: 60)  # evicts "a"
    assert cache.get_or_build("a", build("a"), lambda _: 60) == "A"
    assert builds == ["a", "b", "a"]
    stats = cache.stats()
    assert (stats.hits, stats.misses, stats.evictions) == (1, 3, 2)


def test_threads_asking_together_share_one_build() -> None:
    cache = ByteLRU(1000)
    calls = []

    def build() -> str:
        calls.append(1)
        time.sleep(0.2)  # the other threads arrive while this build runs
        return "value"

    results = []
    threads = [
        threading.Thread(target=lambda: results.append(cache.get_or_build("k", build, len)))
        for _ in range(8)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert calls == [1]
    assert results == ["value"] * 8


def test_a_failed_build_is_not_kept_and_the_next_caller_retries() -> None:
    cache = ByteLRU(1000)

    def fail() -> str:
        raise RuntimeError("parse failed")

    with pytest.raises(RuntimeError, match="parse failed"):
        cache.get_or_build("k", fail, len)
    assert "k" not in cache
    assert cache.get_or_build("k", lambda: "ok", len) == "ok"


def test_on_evict_hears_the_freed_bytes() -> None:
    freed = []
    cache = ByteLRU(100, on_evict=freed.append)
    cache.put("a", 1, 70)
    cache.put("b", 2, 70)
    assert freed == [70]


def test_negative_budget_is_refused() -> None:
    with pytest.raises(ValueError, match="budget"):
        ByteLRU(-1)
