"""Storage of an index: chunks, their vectors and their keyword table, on disk and in memory.

usearch keys are integers; ``VectorIndex`` owns the table from key to ``Chunk``
(key = position in ``chunks``). It also keeps the normalised vectors as a numpy
matrix, which gives exact cosines (``cosines``) and lets tests check usearch against
brute force.

The index answers two kinds of question, never more: "scores for these keys" (cosines,
BM25 of the keyword table) and "the top n" (by cosine: ``nearest`` from the usearch
graph, ``best_cosine_keys`` exact). It knows nothing of ranking: the search
(``nexus.retrieval.search``) and the ranking stage (``nexus.retrieval.ranking``) call it.
This is the one module to replace to keep the vectors in another store.

On disk (``save`` / ``load``), a folder holds::

    manifest.json   format, embedder name, dim, count, file names, what it was built from
    chunks.jsonl    one ``Chunk.to_dict()`` per line, in key order
    offsets.npy     int64 (count + 1,): byte offset of each line of chunks.jsonl
    vectors.npy     float32 (count, dim), L2-normalised rows, in key order
    index.usearch   the usearch graph, once an approximate query has built it
    lexical-*       the keyword (BM25) table: terms, and postings as flat arrays

``load`` opens all of it memory-mapped (usearch ``view``, numpy ``mmap_mode``, chunks
parsed one line at a time when asked for, the keyword table's arrays), so opening and
the first hybrid query cost almost no memory or time whatever the index's size; pages
come in from the OS cache as queries touch them.
Each file is written beside its final name and renamed over it, so a process that has
the old index mapped keeps reading the old file.
"""

from __future__ import annotations

import json
import mmap
import os
import re
import threading
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, overload

import numpy as np
import orjson
from usearch.index import Index

from nexus.retrieval import lexical
from nexus.retrieval.embedding import Embedder, Progress
from nexus.retrieval.lexical import LexicalIndex
from nexus.retrieval.shortlist import best_cosines
from nexus.runtime.lifeline import alive
from nexus.types import Chunk

FORMAT_VERSION = 3
#: Parsed chunks a saved index keeps (a few MB: a chunk is a few hundred tokens).
PARSED_KEPT = 4096
MANIFEST = "manifest.json"


class SavedChunks(Sequence[Chunk]):
    """The chunks of a saved index, parsed from the memory-mapped ``chunks.jsonl`` on access.

    A million chunks cost two integer arrays here instead of a million objects; a
    search parses only the lines of its candidates. The last ``PARSED_KEPT`` parsed are
    kept: queries share candidates, and their parsing was the largest part of a warm
    query (``bench/speed/query_latency.py``).
    """

    def __init__(self, path: Path, offsets: np.ndarray) -> None:
        self._offsets = offsets
        self._parsed: OrderedDict[int, Chunk] = OrderedDict()
        self._lock = threading.Lock()
        self._map: mmap.mmap | bytes = b""
        if len(offsets) > 1 and offsets[-1] > 0:
            with open(path, "rb") as f:
                self._map = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)

    def __len__(self) -> int:
        return len(self._offsets) - 1

    @overload
    def __getitem__(self, key: int) -> Chunk: ...
    @overload
    def __getitem__(self, key: slice) -> tuple[Chunk, ...]: ...
    def __getitem__(self, key: int | slice) -> Chunk | tuple[Chunk, ...]:
        if isinstance(key, slice):
            return tuple(self[i] for i in range(*key.indices(len(self))))
        if key < 0:
            key += len(self)
        if not 0 <= key < len(self):
            raise IndexError(f"chunk key {key} out of range (0..{len(self) - 1})")
        with self._lock:
            chunk = self._parsed.get(key)
            if chunk is not None:
                self._parsed.move_to_end(key)
                return chunk
        line = self._map[int(self._offsets[key]) : int(self._offsets[key + 1])]
        chunk = Chunk.from_dict(orjson.loads(line))
        with self._lock:
            self._parsed[key] = chunk
            if len(self._parsed) > PARSED_KEPT:
                self._parsed.popitem(last=False)
        return chunk

    def __iter__(self) -> Iterator[Chunk]:
        return (self[i] for i in range(len(self)))


def _replace(path: Path, write: Any) -> None:
    """Write ``path`` through a temporary file renamed over it (readers keep the old one).
    A process killed while writing leaves the temporary: ``remove_dead_temporaries``."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def remove_dead_temporaries(folder: Path) -> list[Path]:
    """Delete the temporaries of ``_replace`` (``.NAME.PID.tmp``) in ``folder`` whose
    process no longer runs, and return them: a server killed while saving left a 17 MB
    ``.chunks.jsonl.PID.tmp`` that nothing ever removed (issue 41)."""
    removed = []
    for tmp in folder.glob(".*.tmp"):
        pid = tmp.name.rsplit(".", 2)[-2]
        if pid.isdigit() and not alive(int(pid)):
            tmp.unlink(missing_ok=True)
            removed.append(tmp)
    return removed


def _normalise(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=-1, keepdims=True)
    return vectors / np.where(norms == 0, 1, norms)


class VectorIndex:
    """Chunks and their vectors, searchable by cosine similarity.

    Args:
        dim: vector length.
        model: name of the embedder that made the vectors (checked by callers, saved).
    """

    def __init__(self, dim: int, model: str = "") -> None:
        if dim < 1:
            raise ValueError(f"dim must be positive, got {dim}")
        self.dim = dim
        self.model = model
        self._graph: Index | None = None  # the usearch graph; built on first approximate query
        self._chunks: list[Chunk] | SavedChunks = []
        self._keys: dict[str, int] | None = {}  # chunk id -> key; None until first asked
        self._vectors = np.zeros((0, dim), dtype=np.float32)
        self._lexical: LexicalIndex | None = None  # saved, or built on the first hybrid query
        self._names: dict[str, list[int]] | None = None  # unit name -> keys; on first look-up
        self.folder: Path | None = None  # set when opened from disk (then read-only)
        self.identity: dict[str, Any] = {}  # what a saved index was built from

    # -- building ---------------------------------------------------------------------

    @classmethod
    def build(
        cls,
        chunks: Sequence[Chunk],
        embeddings: np.ndarray,
        model: str = "",
        keywords: LexicalIndex | None = None,
    ) -> VectorIndex:
        """An index of ``chunks`` with their ``embeddings`` (one row per chunk), and their
        keyword table where it was made already (a document per chunk, in order)."""
        embeddings = np.asarray(embeddings, dtype=np.float32)
        if embeddings.ndim != 2:
            raise ValueError(f"embeddings must be a 2-D array, got shape {embeddings.shape}")
        if keywords is not None and keywords.size != len(chunks):
            raise ValueError(f"{len(chunks)} chunks but {keywords.size} keyword documents")
        index = cls(embeddings.shape[1], model)
        index.add(chunks, embeddings)
        index._lexical = keywords
        return index

    @classmethod
    def from_chunks(
        cls, chunks: Sequence[Chunk], embedder: Embedder, progress: Progress | None = None
    ) -> VectorIndex:
        """Embed ``chunks`` (their ``embedding_text``) and index them."""
        vectors = embedder.encode([c.embedding_text for c in chunks], progress)
        if len(chunks) == 0:
            return cls(embedder.dim, embedder.name)
        return cls.build(chunks, vectors, embedder.name)

    def add(self, chunks: Sequence[Chunk], embeddings: np.ndarray) -> None:
        """Append chunks; their ids must be new to the index."""
        if self.folder is not None:
            raise ValueError(
                f"the index opened from {self.folder} is memory-mapped and read-only; "
                "build a new index to add chunks"
            )
        embeddings = np.asarray(embeddings, dtype=np.float32).reshape(-1, self.dim)
        if len(chunks) != embeddings.shape[0]:
            raise ValueError(f"{len(chunks)} chunks but {embeddings.shape[0]} embeddings")
        ids = [c.id for c in chunks]
        key_of = self._key_table()
        clash = [i for i in ids if i in key_of]
        if clash or len(set(ids)) != len(ids):
            dup = clash[0] if clash else next(i for i in ids if ids.count(i) > 1)
            raise ValueError(f"chunk id {dup!r} is already in the index; ids must be unique")
        if not chunks:
            return
        first = len(self._chunks)
        vectors = _normalise(embeddings)
        self._chunks.extend(chunks)
        key_of.update({cid: first + i for i, cid in enumerate(ids)})
        self._vectors = np.concatenate([self._vectors, vectors]) if first else vectors
        self._lexical = self._names = self._graph = None

    # -- the key table ----------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._chunks)

    @property
    def chunks(self) -> Sequence[Chunk]:
        """All chunks in key order (key = position), read-only. A saved index's are
        parsed from its file one at a time as they are read (iterating them all costs
        a JSON parse per chunk)."""
        if isinstance(self._chunks, SavedChunks):
            return self._chunks
        return tuple(self._chunks)

    @property
    def vectors(self) -> np.ndarray:
        """The normalised vectors in key order (read-only view)."""
        view = self._vectors.view()
        view.flags.writeable = False
        return view

    def key_of(self, chunk_id: str) -> int:
        return self._key_table()[chunk_id]

    def _key_table(self) -> dict[str, int]:
        if self._keys is None:  # a saved index reads its ids on the first look-up
            self._keys = {c.id: i for i, c in enumerate(self._chunks)}
        return self._keys

    def chunk(self, key: int) -> Chunk:
        return self._chunks[key]

    # -- answering: scores for keys, and the top n ----------------------------------

    def query_vector(self, query_vec: np.ndarray) -> np.ndarray:
        """``query_vec`` as a unit float32 row of this index's length."""
        return _normalise(np.asarray(query_vec, dtype=np.float32).reshape(self.dim))

    def nearest(
        self, query_vec: np.ndarray, n: int, *, exact: bool = False
    ) -> tuple[np.ndarray, np.ndarray]:
        """Keys of the ``n`` chunks with the highest cosine and those cosines, best first:
        ``exact=True`` from the vectors themselves (the exact shortlist, the ground truth),
        else from the usearch graph, built on the first such query (and saved with the
        index from then on). Building a graph costs minutes at 40k chunks on 2 cores and
        the ranking stage never needs one, so an index is built and saved without it."""
        n = min(n, len(self._chunks))
        if n <= 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        if exact:
            keys = self.best_cosine_keys(query_vec, n).astype(np.int64)
            cosines = self.cosines(query_vec, keys)
            order = np.lexsort((keys, -cosines))
            return keys[order], cosines[order]
        matches = self._usearch_graph().search(self.query_vector(query_vec), n)
        keys = np.asarray(matches.keys, dtype=np.int64)
        return keys, (1.0 - np.asarray(matches.distances, dtype=np.float32))

    def _usearch_graph(self) -> Index:
        if self._graph is None:
            graph = Index(ndim=self.dim, metric="cos", dtype="f32")
            graph.add(np.arange(len(self._chunks), dtype=np.uint64), np.asarray(self._vectors))
            self._graph = graph
        return self._graph

    def best_cosine_keys(self, query_vec: np.ndarray, n: int) -> np.ndarray:
        """Keys of the exact ``n`` best chunks by cosine, unordered, without the cosine of
        every chunk on a large index (``nexus.retrieval.shortlist``)."""
        return best_cosines(self._vectors, self.query_vector(query_vec), n)

    def cosines(self, query_vec: np.ndarray, keys: np.ndarray | None = None) -> np.ndarray:
        """The cosine of the chunks ``keys`` (every chunk, in key order, without) with the
        query (float32)."""
        vectors = self._vectors if keys is None else self._vectors[keys]
        return np.asarray(vectors @ self.query_vector(query_vec))

    def keyword_scores(self, text: str) -> np.ndarray:
        """BM25 of every chunk for ``text``, in key order (zeros where no term matches)."""
        return self.keywords().scores(text)

    def defining_keys(self, names: Iterable[str]) -> np.ndarray:
        """Keys of every chunk that holds a unit with one of ``names`` as its own name (the
        last part of its symbol path, in any case), ascending: the symbol table."""
        if self._names is None:
            table: dict[str, list[int]] = {}
            for key, chunk in enumerate(self._chunks):
                for symbol in dict.fromkeys((chunk.symbol, *chunk.symbols)):
                    if symbol:
                        table.setdefault(unit_name(symbol).lower(), []).append(key)
            self._names = table
        found = {key for name in names for key in self._names.get(name.lower(), ())}
        return np.asarray(sorted(found), dtype=np.int64)

    def keywords(self) -> LexicalIndex:
        """The keyword (BM25) table of the chunks: the saved one, else built (once)."""
        if self._lexical is None:
            self._lexical = LexicalIndex([keyword_text(c) for c in self._chunks])
        return self._lexical

    # -- persistence ------------------------------------------------------------------

    def save(
        self, folder: str | os.PathLike[str], identity: Mapping[str, Any] | None = None
    ) -> Path:
        """Write the index to ``folder`` (created if needed); returns the folder.

        ``identity`` (what the index was built from, see ``nexus.retrieval.store``) goes into the
        manifest, which is written last: a folder without one is incomplete.
        """
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        remove_dead_temporaries(folder)
        offsets = [0]

        def write_chunks(path: Path) -> None:
            with open(path, "wb") as f:
                for chunk in self._chunks:
                    line = json.dumps(chunk.to_dict(), ensure_ascii=False) + "\n"
                    offsets.append(offsets[-1] + f.write(line.encode("utf-8")))

        _replace(folder / "chunks.jsonl", write_chunks)
        _replace(folder / "offsets.npy", lambda p: _save_npy(p, np.asarray(offsets, np.int64)))
        _replace(folder / "vectors.npy", lambda p: _save_npy(p, np.asarray(self._vectors)))
        if self._graph is not None:  # else built on the first approximate query after load
            _replace(folder / "index.usearch", lambda p: self._graph.save(str(p)))
        else:  # a graph of an earlier build would not match these vectors
            (folder / "index.usearch").unlink(missing_ok=True)
        keywords = self.keywords()
        terms = "\n".join(keywords.terms)
        _replace(folder / lexical.FILES["terms"], lambda p: p.write_text(terms, encoding="utf-8"))
        for name, array in keywords.arrays().items():
            _replace(folder / lexical.FILES[name], lambda p, a=array: _save_npy(p, a))
        manifest = {
            "format": FORMAT_VERSION,
            "model": self.model,
            "dim": self.dim,
            "count": len(self._chunks),
            "metric": "cos",
            "dtype": "f32",
            "files": {
                "chunks": "chunks.jsonl",
                "offsets": "offsets.npy",
                "vectors": "vectors.npy",
                "index": "index.usearch",
            },
            "lexical": {"version": lexical.VERSION, "files": lexical.FILES},
            "identity": dict(identity or {}),
        }
        text = json.dumps(manifest, indent=2) + "\n"
        _replace(folder / MANIFEST, lambda p: p.write_text(text, encoding="utf-8"))
        return folder

    @staticmethod
    def read_manifest(folder: str | os.PathLike[str]) -> dict[str, Any] | None:
        """The manifest of a saved index, or None when there is none (or it is unreadable)."""
        try:
            manifest = json.loads((Path(folder) / MANIFEST).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return manifest if isinstance(manifest, dict) else None

    @classmethod
    def load(cls, folder: str | os.PathLike[str]) -> VectorIndex:
        """Open an index written by ``save``, memory-mapped and read-only."""
        folder = Path(folder)
        manifest = cls.read_manifest(folder)
        if manifest is None:
            raise ValueError(f"{folder} holds no saved index (no readable {MANIFEST})")
        if manifest.get("format") != FORMAT_VERSION:
            raise ValueError(
                f"{folder} holds index format {manifest.get('format')!r}; "
                f"this Nexus reads format {FORMAT_VERSION}: rebuild the index"
            )
        files = manifest["files"]
        index = cls(int(manifest["dim"]), manifest.get("model", ""))
        offsets = np.load(folder / files["offsets"], mmap_mode="r")
        index._chunks = SavedChunks(folder / files["chunks"], offsets)
        index._keys = None
        index._vectors = np.load(folder / files["vectors"], mmap_mode="r")
        count = int(manifest["count"])
        graph_file = folder / files["index"]
        if count and graph_file.exists():  # usearch cannot map an empty index file
            viewed = Index.restore(str(graph_file), view=True)
            if viewed is None:
                raise ValueError(f"{graph_file} is not a usearch index: rebuild it")
            index._graph = viewed
        sizes = {len(index._chunks), index._vectors.shape[0]}
        if index._graph is not None:
            sizes.add(len(index._graph))
        if sizes != {count} or index._vectors.shape[1:] != (index.dim,):
            raise ValueError(f"{folder} is inconsistent: chunks, vectors and index differ in size")
        if (manifest.get("lexical") or {}).get("version") == lexical.VERSION:
            index._lexical = LexicalIndex.load(folder, count)
        index.folder = folder
        index.identity = dict(manifest.get("identity") or {})
        return index


_SYMBOL_SEPARATORS = re.compile(r"\.|::|#")


def unit_name(symbol: str) -> str:
    """A unit's own name, the last part of its symbol path (``Router.add`` -> ``add``)."""
    return _SYMBOL_SEPARATORS.split(symbol)[-1]


def keyword_text(chunk: Chunk) -> str:
    """What the keyword table reads of a chunk: its embedded text, whose context line
    already names the file and the unit. Adding the folders' names and the names of every
    unit the chunk holds was measured and left out: fast tier, tuning half, AST, R@1k
    0.583 -> 0.571 and R@2k 0.728 -> 0.714 (NDCG@10 +0.002; bench/results/per_token.md)."""
    return chunk.embedding_text


def _save_npy(path: Path, array: np.ndarray) -> None:
    with open(path, "wb") as f:  # a file object: np.save would append .npy to the name
        np.save(f, array)


def build_indexes(
    chunk_lists: Iterable[Sequence[Chunk]], embedder: Embedder, progress: Progress | None = None
) -> list[VectorIndex]:
    """Index several chunk lists with one ``encode`` call (one progress bar, one batch plan)."""
    lists = [list(c) for c in chunk_lists]
    texts = [c.embedding_text for chunks in lists for c in chunks]
    vectors = embedder.encode(texts, progress)
    out, start = [], 0
    for chunks in lists:
        part = vectors[start : start + len(chunks)]
        start += len(chunks)
        index = VectorIndex(embedder.dim, embedder.name)
        index.add(chunks, part)
        out.append(index)
    return out
