"""The on-disk embedding cache: compact vectors in SQLite, a size budget, LRU eviction.

One piece: nearly all of it is the ``EmbeddingCache`` class, whose reads, writes,
eviction and migration share one schema and one connection discipline.

One SQLite file (``vectors.sqlite``) in the cache folder holds every vector, keyed by
(embedder name, sha256 of the exact text). Why it looks the way it does:

* **Compact.** Vectors are stored as raw float16 (768 bytes for 384 dimensions) and the
  key as the 32 raw bytes of the digest, in a rowid table: a row fits in a B-tree page
  with its neighbours. The first format (``embeddings.sqlite``: hex keys, float32, a
  WITHOUT ROWID table) put every 1.5 KB vector on an overflow page of its own, ~4.7 KB
  a row. float16 gives the same MRR@10 as float32 on the check set
  (``bench/speed/embedding.py``); every vector handed out is the stored one, so cached and
  fresh results are the same.
* **Bounded.** ``max_bytes`` (default 1 GiB, ``$NEXUS_CACHE_MAX_MB``) caps the live size
  of the file; after a write over it, the least recently used rows go until the cache is
  at 90% of the budget, and the freed pages are given back (incremental vacuum).
  "Used" is stamped on every write and every hit.
* **Shared.** WAL mode: readers never wait for a writer, and any number of processes
  (CLI runs, dashboard threads, benchmark workers) can use one cache. Every call opens
  its own connection, so one instance can be shared between threads.
* **Migrated, never fatal.** The rows of an old ``embeddings.sqlite`` beside it are
  imported once (as least recently used); an unreadable old file is ignored with a
  warning. An unreadable cache file is a ``CacheError`` that says how to clear it.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import time
import warnings
from collections.abc import Iterator, Sequence
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np

CACHE_DIR_ENV = "NEXUS_CACHE_DIR"
MAX_MB_ENV = "NEXUS_CACHE_MAX_MB"
DEFAULT_MAX_MB = 1024
FILE_NAME = "vectors.sqlite"
LEGACY_FILE_NAME = "embeddings.sqlite"
STORED_DTYPE = np.dtype("<f2")
SCHEMA_VERSION = 2
_KEYS_PER_QUERY = 500  # below SQLite's bound-parameter limit
_EVICT_TO = 0.9  # after an eviction the cache holds this share of its budget

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS models ("
    " id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, dim INTEGER NOT NULL)",
    "CREATE TABLE IF NOT EXISTS vectors ("
    " id INTEGER PRIMARY KEY, model INTEGER NOT NULL, key BLOB NOT NULL,"
    " used INTEGER NOT NULL, vec BLOB NOT NULL)",
    "CREATE UNIQUE INDEX IF NOT EXISTS vectors_by_key ON vectors (model, key)",
    "CREATE INDEX IF NOT EXISTS vectors_by_use ON vectors (used)",
)


class CacheError(RuntimeError):
    """The cache file cannot be used (corrupt, not a database, unwritable)."""


def text_key(text: str) -> bytes:
    """sha256 of the exact text (UTF-8): the cache key within one model."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


def default_cache_dir() -> Path:
    """``$NEXUS_CACHE_DIR`` if set, else one folder per user: the platform's user cache
    folder (``~/.cache/nexus`` on Linux, or under ``$XDG_CACHE_HOME``).

    Not the working folder: agents start ``nexus mcp`` in many folders, with a minimal
    environment (``NEXUS_CACHE_DIR`` set in a shell does not reach it), and each new
    folder distilled the fast tier's model again, minutes before a first answer.
    """
    from platformdirs import user_cache_path

    return Path(os.environ.get(CACHE_DIR_ENV) or user_cache_path("nexus", appauthor=False))


def default_max_bytes() -> int:
    """The budget: ``$NEXUS_CACHE_MAX_MB`` megabytes if set, else 1024 MB."""
    raw = os.environ.get(MAX_MB_ENV)
    try:
        mb = float(raw) if raw else DEFAULT_MAX_MB
    except ValueError:
        raise ValueError(f"{MAX_MB_ENV}={raw!r} is not a number of megabytes") from None
    return megabytes(mb)


def megabytes(mb: float) -> int:
    """Bytes in ``mb`` megabytes (a positive number, else ValueError)."""
    if not mb > 0 or mb == float("inf"):
        raise ValueError(f"a cache budget must be a positive number of MB, got {mb}")
    return int(mb * 1024 * 1024)


def _now() -> int:
    return time.time_ns() // 1000


@dataclass(frozen=True)
class ModelUsage:
    """What one embedder name holds in the cache."""

    model: str
    dim: int
    rows: int
    bytes: int  # vectors and keys; the file adds B-tree and index overhead


@dataclass(frozen=True)
class CacheStats:
    """The cache as ``nexus cache`` shows it."""

    path: Path
    file_bytes: int  # the database file, its write-ahead log included
    live_bytes: int  # pages in use: what the budget caps
    max_bytes: int
    models: tuple[ModelUsage, ...]
    legacy_bytes: int  # an old-format file beside it (imported; ``clear`` removes it)

    @property
    def rows(self) -> int:
        return sum(m.rows for m in self.models)


class EmbeddingCache:
    """Vectors keyed by (embedder name, sha256 of the text), within a size budget.

    Args:
        folder: where ``vectors.sqlite`` lives (default ``default_cache_dir()``).
        max_bytes: the budget for the file's live pages (default ``default_max_bytes()``).
    """

    def __init__(
        self, folder: str | os.PathLike[str] | None = None, max_bytes: int | None = None
    ) -> None:
        self.folder = Path(folder) if folder is not None else default_cache_dir()
        self.max_bytes = default_max_bytes() if max_bytes is None else int(max_bytes)
        if self.max_bytes <= 0:
            raise ValueError(f"max_bytes must be positive, got {self.max_bytes}")
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            msg = f"cannot create the embedding cache folder {self.folder}: {exc}"
            raise CacheError(msg) from exc
        self.path = self.folder / FILE_NAME
        self._create()

    # -- connections and schema -----------------------------------------------------

    @contextmanager
    def _connect(self, write: bool = False) -> Iterator[sqlite3.Connection]:
        """A connection in one transaction (``BEGIN IMMEDIATE`` when it will write)."""
        try:
            with closing(sqlite3.connect(self.path, timeout=60, isolation_level=None)) as db:
                db.execute("BEGIN IMMEDIATE" if write else "BEGIN")
                try:
                    yield db
                except BaseException:
                    db.execute("ROLLBACK")
                    raise
                db.execute("COMMIT")
        except sqlite3.DatabaseError as exc:
            raise self._unusable(exc) from exc

    def _create(self) -> None:
        """Create the schema once (WAL, incremental vacuum) and import an old-format file.

        Processes opening a new cache at the same time take turns through a lock file:
        the page size, vacuum mode and journal mode must be set before the first table,
        which SQLite's own locks cannot order.
        """
        if self._version() == SCHEMA_VERSION:
            return
        with exclusive(self.folder / "vectors.lock"):
            if self._version() == SCHEMA_VERSION:
                return  # another process made it meanwhile
            try:
                with closing(sqlite3.connect(self.path, timeout=60, isolation_level=None)) as db:
                    # 8 KB pages hold ~10 rows of 384 float16 (4 KB pages: 10% more a row).
                    db.execute("PRAGMA page_size = 8192")
                    db.execute("PRAGMA auto_vacuum = INCREMENTAL")
                    db.execute("PRAGMA journal_mode = WAL")
            except sqlite3.DatabaseError as exc:
                raise self._unusable(exc) from exc
            with self._connect(write=True) as db:
                for statement in _SCHEMA:
                    db.execute(statement)
                self._import_legacy(db)
                db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        self._evict()

    def _version(self) -> int:
        try:
            with closing(sqlite3.connect(self.path, timeout=60)) as db:
                return int(db.execute("PRAGMA user_version").fetchone()[0])
        except sqlite3.DatabaseError as exc:
            raise self._unusable(exc) from exc

    def _unusable(self, exc: Exception) -> CacheError:
        return CacheError(
            f"the embedding cache {self.path} cannot be used ({exc}); "
            f"`nexus cache clear --cache {self.folder}` deletes it"
        )

    def _import_legacy(self, db: sqlite3.Connection) -> None:
        """Copy the rows of an old ``embeddings.sqlite`` (float32, hex keys), oldest use."""
        legacy = self.folder / LEGACY_FILE_NAME
        if not legacy.is_file():
            return
        try:
            with closing(sqlite3.connect(f"file:{legacy}?mode=ro", uri=True, timeout=5)) as old:
                rows = old.execute("SELECT model, key, dim, vec FROM embeddings")
                for model, key, dim, blob in rows:
                    vec = np.frombuffer(blob, dtype=np.float32)
                    if vec.shape[0] != dim or len(key) != 64:
                        continue
                    model_id = self._model_id(db, model, dim)
                    db.execute(
                        "INSERT OR IGNORE INTO vectors (model, key, used, vec) VALUES (?,?,0,?)",
                        (model_id, bytes.fromhex(key), _pack(vec)),
                    )
        except (sqlite3.DatabaseError, ValueError) as exc:
            warnings.warn(f"old embedding cache {legacy} ignored: {exc}", stacklevel=3)

    @staticmethod
    def _model_id(db: sqlite3.Connection, name: str, dim: int) -> int:
        """The id of ``name``; a name seen before with another dim loses its old rows."""
        row = db.execute("SELECT id, dim FROM models WHERE name = ?", (name,)).fetchone()
        if row is None:
            return int(
                db.execute("INSERT INTO models (name, dim) VALUES (?, ?)", (name, dim)).lastrowid
            )
        model_id, old_dim = row
        if old_dim != dim:  # the same name now means another model: its vectors are stale
            db.execute("DELETE FROM vectors WHERE model = ?", (model_id,))
            db.execute("UPDATE models SET dim = ? WHERE id = ?", (dim, model_id))
        return int(model_id)

    # -- reading and writing --------------------------------------------------------

    def get(
        self, model: str, keys: Sequence[bytes], dim: int | None = None
    ) -> dict[bytes, np.ndarray]:
        """The cached float32 vectors among ``keys``; the hits count as used now.

        With ``dim``, vectors of another length count as missing.
        """
        found: dict[bytes, np.ndarray] = {}
        unique = list(dict.fromkeys(keys))
        with self._connect(write=True) as db:
            row = db.execute("SELECT id, dim FROM models WHERE name = ?", (model,)).fetchone()
            if row is None or (dim is not None and row[1] != dim):
                return found
            model_id, now = row[0], _now()
            for start in range(0, len(unique), _KEYS_PER_QUERY):
                part = unique[start : start + _KEYS_PER_QUERY]
                marks = ",".join("?" * len(part))
                where = f"model = ? AND key IN ({marks})"
                rows = db.execute(f"SELECT key, vec FROM vectors WHERE {where}", [model_id, *part])
                found.update((key, _unpack(blob)) for key, blob in rows)
                db.execute(f"UPDATE vectors SET used = ? WHERE {where}", [now, model_id, *part])
        return found

    def present(self, model: str, keys: Sequence[bytes]) -> set[bytes]:
        """Which of ``keys`` are cached under ``model`` (read only: vectors are not loaded
        and nothing counts as used; a build orders its work by it)."""
        present: set[bytes] = set()
        unique = list(dict.fromkeys(keys))
        with self._connect() as db:
            row = db.execute("SELECT id FROM models WHERE name = ?", (model,)).fetchone()
            if row is None:
                return present
            for start in range(0, len(unique), _KEYS_PER_QUERY):
                part = unique[start : start + _KEYS_PER_QUERY]
                marks = ",".join("?" * len(part))
                rows = db.execute(
                    f"SELECT key FROM vectors WHERE model = ? AND key IN ({marks})", [row[0], *part]
                )
                present.update(key for (key,) in rows)
        return present

    def put(self, model: str, items: dict[bytes, np.ndarray]) -> dict[bytes, np.ndarray]:
        """Store vectors under ``model`` (existing keys are replaced) in one transaction,
        then evict to the budget. Returns the vectors as stored (float16 -> float32), so
        callers hand out exactly what a later ``get`` will."""
        if not items:
            return {}
        dims = {int(np.asarray(v).shape[-1]) for v in items.values()}
        if len(dims) != 1:
            raise ValueError(f"vectors of one model must have one length, got {sorted(dims)}")
        packed = {key: _pack(vec) for key, vec in items.items()}
        with self._connect(write=True) as db:
            model_id, now = self._model_id(db, model, dims.pop()), _now()
            db.executemany(
                "INSERT OR REPLACE INTO vectors (model, key, used, vec) VALUES (?, ?, ?, ?)",
                [(model_id, key, now, blob) for key, blob in packed.items()],
            )
        self._evict()
        return {key: _unpack(blob) for key, blob in packed.items()}

    # -- size, eviction, maintenance ------------------------------------------------

    def live_bytes(self) -> int:
        """Bytes of the pages in use (the file minus its free pages): what the budget caps."""
        with self._connect() as db:
            return self._live_bytes(db)

    @staticmethod
    def _live_bytes(db: sqlite3.Connection) -> int:
        pages = db.execute("PRAGMA page_count").fetchone()[0]
        free = db.execute("PRAGMA freelist_count").fetchone()[0]
        return int((pages - free) * db.execute("PRAGMA page_size").fetchone()[0])

    def _evict(self, max_bytes: int | None = None) -> int:
        """Drop least recently used rows while over the budget; returns how many."""
        budget = self.max_bytes if max_bytes is None else max_bytes
        removed = 0
        with self._connect(write=True) as db:
            for _ in range(8):  # each round aims at 90%; page slack may need another
                live = self._live_bytes(db)
                if live <= budget:
                    break
                rows = db.execute("SELECT COUNT(*) FROM vectors").fetchone()[0]
                if rows == 0:
                    break
                keep = int(rows * budget * _EVICT_TO / live)
                drop = max(rows - keep, 1)
                db.execute(
                    "DELETE FROM vectors WHERE id IN "
                    "(SELECT id FROM vectors ORDER BY used, id LIMIT ?)",
                    (drop,),
                )
                db.execute("PRAGMA incremental_vacuum")
                removed += drop
        return removed

    def prune(self, max_bytes: int | None = None) -> int:
        """Evict down to ``max_bytes`` (default: the budget) and compact the file (VACUUM).
        Returns the number of rows removed."""
        removed = self._evict(max_bytes)
        self._vacuum()
        return removed

    def clear(self, model: str | None = None) -> None:
        """Forget every vector, or those of one embedder name; compacts the file. Clearing
        everything also deletes an old-format file beside it."""
        with self._connect(write=True) as db:
            if model is None:
                db.execute("DELETE FROM vectors")
                db.execute("DELETE FROM models")
            else:
                db.execute(
                    "DELETE FROM vectors WHERE model IN (SELECT id FROM models WHERE name = ?)",
                    (model,),
                )
                db.execute("DELETE FROM models WHERE name = ?", (model,))
        self._vacuum()
        if model is None:
            (self.folder / LEGACY_FILE_NAME).unlink(missing_ok=True)

    def _vacuum(self) -> None:
        with closing(sqlite3.connect(self.path, timeout=60, isolation_level=None)) as db:
            db.execute("VACUUM")
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def count(self, model: str | None = None) -> int:
        """Number of stored vectors, for one embedder name or all."""
        with self._connect() as db:
            if model is None:
                return int(db.execute("SELECT COUNT(*) FROM vectors").fetchone()[0])
            query = (
                "SELECT COUNT(*) FROM vectors JOIN models ON models.id = vectors.model "
                "WHERE models.name = ?"
            )
            return int(db.execute(query, (model,)).fetchone()[0])

    def stats(self) -> CacheStats:
        """Sizes and rows per embedder name, for ``nexus cache``."""
        with self._connect() as db:
            live = self._live_bytes(db)
            rows = db.execute(
                "SELECT models.name, models.dim, COUNT(vectors.id),"
                " COALESCE(SUM(LENGTH(vectors.vec) + LENGTH(vectors.key)), 0)"
                " FROM models LEFT JOIN vectors ON vectors.model = models.id"
                " GROUP BY models.id ORDER BY models.name"
            ).fetchall()
        files = [self.path, self.path.with_name(FILE_NAME + "-wal")]
        legacy = self.folder / LEGACY_FILE_NAME
        return CacheStats(
            path=self.path,
            file_bytes=sum(f.stat().st_size for f in files if f.exists()),
            live_bytes=live,
            max_bytes=self.max_bytes,
            models=tuple(ModelUsage(n, int(d), int(c), int(b)) for n, d, c, b in rows),
            legacy_bytes=legacy.stat().st_size if legacy.is_file() else 0,
        )


def as_stored(vectors: np.ndarray) -> np.ndarray:
    """``vectors`` as the cache would hand them out (rounded through its float16): what a
    vector made beside the cache must be to score as a cached one does."""
    return np.asarray(vectors, dtype=STORED_DTYPE).astype(np.float32)


def _pack(vec: np.ndarray) -> bytes:
    return np.asarray(vec, dtype=STORED_DTYPE).tobytes()


def _unpack(blob: bytes) -> np.ndarray:
    return np.frombuffer(blob, dtype=STORED_DTYPE).astype(np.float32)


@contextmanager
def exclusive(path: Path) -> Iterator[None]:
    """An exclusive lock on ``path`` between processes (flock; a no-op without fcntl)."""
    try:
        import fcntl
    except ImportError:  # not POSIX: creation races are then left to SQLite
        yield
        return
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def delete_cache_files(folder: str | os.PathLike[str]) -> list[Path]:
    """Remove the cache files of ``folder`` without opening them (for a corrupt cache)."""
    names = [FILE_NAME, FILE_NAME + "-wal", FILE_NAME + "-shm", "vectors.lock", LEGACY_FILE_NAME]
    removed = [Path(folder) / n for n in names if (Path(folder) / n).exists()]
    for path in removed:
        path.unlink()
    return removed
