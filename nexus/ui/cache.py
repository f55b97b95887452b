"""What the server keeps for every session: one memory budget over parsed files,
chunks, indexes and views, and the on-disk embedding cache."""

from __future__ import annotations

import contextlib
import ctypes
import os
import threading
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

import streamlit as st
from streamlit import dataframe_util

from nexus.retrieval.embedding import EmbeddingCache
from nexus.runtime.lru import ByteLRU
from nexus.ui import views

T = TypeVar("T")

#: Folder of the on-disk embedding cache (default: the user's, ``default_cache_dir``).
CACHE_ENV = "NEXUS_CACHE_DIR"
#: Megabytes that everything the server keeps for its sessions may take together.
MEMORY_ENV = "NEXUS_MEMORY_BUDGET_MB"
#: 4 GB: a sixth of a 24 GB machine shared by a team; the model and Streamlit come on top.
DEFAULT_MEMORY_MB = 4096


def memory_budget_mb() -> float:
    """``NEXUS_MEMORY_BUDGET_MB`` (default 4096); a bad value stops the page with a message."""
    raw = os.environ.get(MEMORY_ENV, "").strip()
    if not raw:
        return DEFAULT_MEMORY_MB
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not 0 < value < float("inf"):
        st.error(f"{MEMORY_ENV}={raw!r} is not a positive number of megabytes (e.g. 4096).")
        st.stop()
    return value


def _release_freed_memory(_freed: int) -> None:
    """Ask glibc to hand freed heap pages back, so evictions show in the server's RSS."""
    # Not glibc: the freed memory is reused by the process, just not returned.
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)


#: The process's caches by budget (one in a server; tests change the budget). A plain
#: dict, not ``st.cache_resource``: pages ask for it once per file on every rerun.
_MEMORIES: dict[int, ByteLRU] = {}
_MEMORIES_LOCK = threading.Lock()


def memory() -> ByteLRU:
    """The one cache every session shares: parsed files, chunk lists, indexes, uploads...

    Least recently used entries are dropped when the estimated total passes the
    budget, and built again on demand.
    """
    budget = int(memory_budget_mb() * 1_000_000)
    found = _MEMORIES.get(budget)
    if found is None:
        with _MEMORIES_LOCK:
            found = _MEMORIES.setdefault(budget, ByteLRU(budget, on_evict=_release_freed_memory))
    return found


def cached(key: Hashable, build: Callable[[], Any], sizeof: Callable[[Any], int]) -> Any:
    """``memory().get_or_build``: built once for every session, dropped when memory is short."""
    return memory().get_or_build(key, build, sizeof)


def shared(kind: str, key: tuple[Hashable, ...], build: Callable[[], T]) -> T:
    """A chart, table or text computed from ``key`` alone (the repository or file digest
    and the settings), built once and drawn by every session that asks with the same key
    (``nexus/ui/views.py``; callers must not change it)."""
    return cached(("view", kind, *key), build, views.view_bytes)


def shared_table(kind: str, key: tuple[Hashable, ...], build: Callable[[], Any]) -> Any:
    """``shared`` for a table drawn with ``st.dataframe``: kept as the Arrow table that
    ``st.dataframe`` would convert the data frame to on every rerun (the same bytes
    reach the browser; the conversion is done once)."""
    return shared(kind, key, lambda: dataframe_util.convert_pandas_df_to_arrow_table(build()))


@st.cache_resource(show_spinner=False)
def _embedding_cache(folder: str | None) -> EmbeddingCache:
    return EmbeddingCache(folder)


def embedding_cache() -> EmbeddingCache:
    """The on-disk cache (``NEXUS_CACHE_DIR``): only chunks whose text changed are embedded
    again."""
    return _embedding_cache(os.environ.get(CACHE_ENV) or None)
