"""A least-recently-used cache bounded by bytes, safe to share between threads.

The dashboard serves every browser session from one process; what one session
parses, chunks or indexes is what the next one asks for. A count of entries says
nothing about memory (one 1 MB file parses into ~50 MB, a small one into 50 KB), so
each entry carries its size in bytes and the least recently used entries are
dropped until the total fits the budget. A value that is dropped is simply built
again when it is next asked for.

``get_or_build`` builds each key once even when many threads ask at the same time:
the first builds, the others wait for it and share the result. Keys are built under
their own lock, never under the cache's lock, so builds of different keys (one
nested in another, too) run side by side.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any, TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class CacheStats:
    """What the cache holds now and what it has done since it was made."""

    budget: int
    used: int
    entries: int
    hits: int
    misses: int
    evictions: int
    refused: int  # values larger than the whole budget, returned but not kept


class ByteLRU:
    """Key -> value with a size in bytes; the total stays at or under ``budget``.

    Args:
        budget: bytes the values may take together (estimates given by the caller).
        on_evict: called (outside the lock) after entries were dropped, with their
            total size, e.g. to hand freed memory back to the system.
    """

    def __init__(self, budget: int, on_evict: Callable[[int], None] | None = None) -> None:
        if budget < 0:
            raise ValueError(f"budget must be >= 0 bytes, got {budget}")
        self.budget = budget
        self._on_evict = on_evict
        self._lock = threading.Lock()
        self._entries: OrderedDict[Hashable, tuple[Any, int]] = OrderedDict()
        self._building: dict[Hashable, threading.Lock] = {}
        self._used = 0
        self._hits = self._misses = self._evictions = self._refused = 0

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: Hashable) -> bool:
        return key in self._entries

    def oldest_first(self) -> list[Hashable]:
        """The keys kept, least recently used first."""
        with self._lock:
            return list(self._entries)

    @property
    def used(self) -> int:
        return self._used

    def stats(self) -> CacheStats:
        with self._lock:
            return CacheStats(
                self.budget,
                self._used,
                len(self._entries),
                self._hits,
                self._misses,
                self._evictions,
                self._refused,
            )

    def get(self, key: Hashable, default: Any = None) -> Any:
        """The value (now the most recently used), or ``default``."""
        with self._lock:
            found = self._entries.get(key)
            if found is None:
                return default
            self._entries.move_to_end(key)
            self._hits += 1
            return found[0]

    def put(self, key: Hashable, value: T, nbytes: int) -> T:
        """Keep ``value`` as ``nbytes`` bytes, dropping the oldest entries to make room.

        A value larger than the whole budget is not kept (it is still returned).
        """
        with self._lock:
            self._drop(key)
            if nbytes > self.budget:
                self._refused += 1
                return value
            self._entries[key] = (value, nbytes)
            self._used += nbytes
            freed = self._evict()
        self._after_evict(freed)
        return value

    def resize(self, key: Hashable, nbytes: int) -> None:
        """Record that a kept value grew or shrank (e.g. it memoised more of itself)."""
        with self._lock:
            found = self._entries.get(key)
            if found is None or found[1] == nbytes:
                return
            self._entries[key] = (found[0], nbytes)
            self._used += nbytes - found[1]
            if nbytes > self.budget:
                self._drop(key)
                self._refused += 1
            freed = self._evict()
        self._after_evict(freed)

    def discard(self, key: Hashable) -> None:
        """Forget ``key`` (e.g. before a forced rebuild)."""
        with self._lock:
            self._drop(key)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._used = 0

    def get_or_build(self, key: Hashable, build: Callable[[], T], sizeof: Callable[[T], int]) -> T:
        """The kept value, or ``build()`` kept as ``sizeof(value)`` bytes.

        Threads asking for the same missing key wait for one build; if that build
        raises, the next waiting thread tries again itself.
        """
        sentinel = object()
        found = self.get(key, sentinel)
        if found is not sentinel:
            return found
        with self._lock:
            key_lock = self._building.setdefault(key, threading.Lock())
        with key_lock:
            found = self.get(key, sentinel)
            if found is not sentinel:
                return found
            with self._lock:
                self._misses += 1
            try:
                value = build()
                return self.put(key, value, sizeof(value))
            finally:
                with self._lock:
                    self._building.pop(key, None)

    # -- under the lock -----------------------------------------------------------------

    def _drop(self, key: Hashable) -> None:
        found = self._entries.pop(key, None)
        if found is not None:
            self._used -= found[1]

    def _evict(self) -> int:
        freed = 0
        while self._used > self.budget and self._entries:
            _, (_, nbytes) = self._entries.popitem(last=False)
            self._used -= nbytes
            self._evictions += 1
            freed += nbytes
        return freed

    def _after_evict(self, freed: int) -> None:
        if freed and self._on_evict is not None:
            self._on_evict(freed)
