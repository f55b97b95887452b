"""``nexus cache``: show, clear or prune the embedding cache (and where it lies)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def open_cache(args: argparse.Namespace):
    """The embedding cache named by ``--cache`` / ``--cache-max-mb`` (or their defaults)."""
    from nexus.retrieval.embedding_cache import EmbeddingCache, megabytes

    budget = megabytes(args.cache_max_mb) if args.cache_max_mb is not None else None
    return EmbeddingCache(args.cache, max_bytes=budget)


def cache_folder(args: argparse.Namespace) -> Path:
    """The embedding cache folder; saved indexes live in its ``indexes/``."""
    from nexus.retrieval.embedding_cache import default_cache_dir

    return Path(args.cache) if args.cache else default_cache_dir()


def cmd_cache(args: argparse.Namespace) -> int:
    from nexus.retrieval.embedding_cache import default_cache_dir, delete_cache_files, megabytes

    if args.action == "clear" and args.model is None:
        # Deletes the files without opening them, so a corrupt cache can be cleared too.
        folder = Path(args.cache) if args.cache else default_cache_dir()
        removed = delete_cache_files(folder)
        print(f"cleared the embedding cache in {folder} ({len(removed)} files removed)")
        return 0
    cache = open_cache(args)
    if args.action == "clear":
        before = cache.count(args.model)
        cache.clear(args.model)
        print(f"removed {before} vectors of {args.model!r} from {cache.path}")
        return 0
    if args.action == "prune":
        budget = megabytes(args.max_mb) if args.max_mb is not None else cache.max_bytes
        removed = cache.prune(budget)
        print(
            f"removed {removed} least recently used vectors; {cache.path} is within {_mb(budget)}"
        )
    stats = cache.stats()
    if args.json:
        print(json.dumps(_cache_summary(stats), indent=2))
        return 0
    print(
        f"{stats.path}: {_mb(stats.file_bytes)} on disk, {_mb(stats.live_bytes)} in use "
        f"of a {_mb(stats.max_bytes)} budget, {stats.rows} vectors"
    )
    from nexus.tables import text_table

    rows = [[m.model, str(m.dim), str(m.rows), _mb(m.bytes)] for m in stats.models]
    if rows:
        print(
            "\n".join(text_table(["model", "dim", "vectors", "size"], rows, frozenset({1, 2, 3})))
        )
    if stats.legacy_bytes:
        print(
            f"old-format cache beside it: {_mb(stats.legacy_bytes)} (imported; `clear` deletes it)"
        )
    return 0


def _mb(n: int) -> str:
    return f"{n / 1024 / 1024:.1f} MB"


def _cache_summary(stats) -> dict[str, object]:
    return {
        "path": str(stats.path),
        "file_bytes": stats.file_bytes,
        "live_bytes": stats.live_bytes,
        "max_bytes": stats.max_bytes,
        "rows": stats.rows,
        "legacy_bytes": stats.legacy_bytes,
        "models": [vars(m) for m in stats.models],
    }
