"""An open index kept current: the saved index, and a small one of the files changed since.

Building an index again for one edited file would cost what the first build cost (the
graph alone takes minutes for 60,000 chunks on two busy cores). A ``LiveIndex`` instead
keeps the saved index as it is and puts the changed files' new chunks into a second,
small index; the old chunks of those files are hidden. A search asks both and merges
their hits by score (both are on the ranking stage's 0-1 scale). With no file changed
it is exactly the saved index's answer.
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping, Sequence
from dataclasses import replace

import numpy as np

from nexus.retrieval.embedding import Embedder
from nexus.retrieval.index import VectorIndex
from nexus.retrieval.ranking import RankingRules
from nexus.retrieval.search import Hit, search
from nexus.types import Chunk

#: Extra hits asked of the saved index per hidden file, so that hiding some still leaves k.
EXTRA_PER_HIDDEN_FILE = 3


class LiveIndex:
    """A saved (or built) index plus the chunks of the files changed since (see module)."""

    def __init__(self, base: VectorIndex) -> None:
        self.base = base
        self.delta: VectorIndex | None = None
        self.changed: dict[str, list[Chunk]] = {}  # file -> its chunks now ([]: gone)
        self._by_file: dict[str, list[int]] | None = None  # base keys per file, line order

    def __len__(self) -> int:
        hidden = sum(len(self._base_keys(f)) for f in self.changed)
        return len(self.base) - hidden + (len(self.delta) if self.delta is not None else 0)

    def update(self, changed: Mapping[str, Sequence[Chunk]], embedder: Embedder) -> None:
        """Take the chunks of these files as they are now (embedded through ``embedder``,
        so unchanged texts come from the cache)."""
        self.changed.update({path: list(chunks) for path, chunks in changed.items()})
        chunks = [c for path in sorted(self.changed) for c in self.changed[path]]
        if not chunks:
            self.delta = None
            return
        vectors = embedder.encode([c.embedding_text for c in chunks])
        self.delta = VectorIndex.build(chunks, vectors, embedder.name)

    def frozen(self) -> LiveIndex:
        """A copy that later ``update`` calls leave as it is (for a thread to read)."""
        copy = LiveIndex(self.base)
        copy.changed, copy.delta = dict(self.changed), self.delta
        return copy

    def merged(self) -> VectorIndex:
        """One index of the files as they are now, in file order, as a build of them would
        hold: the saved chunks and vectors of the unchanged files and the changed files'
        new ones, nothing chunked or embedded again."""
        self._base_keys("")  # the base's keys per file, made once
        assert self._by_file is not None
        chunks: list[Chunk] = []
        rows: list[np.ndarray] = []
        for file in sorted(set(self._by_file) | set(self.changed)):
            if file in self.changed:
                new = self.changed[file]
                chunks += new
                rows += [self._vector_of(chunk) for chunk in new]
            else:
                keys = self._by_file[file]
                chunks += [self.base.chunk(key) for key in keys]
                rows.append(np.asarray(self.base.vectors[keys]))
        if not chunks:
            return VectorIndex(self.base.dim, self.base.model)
        return VectorIndex.build(chunks, np.vstack(rows), self.base.model)

    def search(
        self,
        vector: np.ndarray,
        query: str,
        k: int,
        lexical_weight: float,
        rules: RankingRules | None,
    ) -> list[Hit]:
        """The ``k`` best hits of both indexes (the saved index's alone when none changed)."""

        def ask(index: VectorIndex, n: int) -> list[Hit]:
            return search(
                index, vector, query, n, rules=rules, lexical_weight=lexical_weight, exact=True
            )

        return self._merged(ask, k)

    def nearest(self, chunk: Chunk, k: int) -> list[Hit]:
        """The ``k`` chunks most like ``chunk`` by cosine, itself left out."""
        vector = self._vector_of(chunk)

        def ask(index: VectorIndex, n: int) -> list[Hit]:
            return search(index, vector, None, n + 1, exact=True)

        hits = [h for h in self._merged(ask, k + 1) if not _same_place(h.chunk, chunk)]
        return [replace(h, rank=rank) for rank, h in enumerate(hits[:k], start=1)]

    def chunks_of(self, file: str) -> list[Chunk]:
        """The chunks of ``file`` now, in line order."""
        if file in self.changed:
            return list(self.changed[file])
        return [self.base.chunk(key) for key in self._base_keys(file)]

    def chunk_at(self, file: str, line: int) -> Chunk | None:
        """The chunk of ``file`` whose lines hold ``line`` (the first, if several do)."""
        chunks = self.chunks_of(file)
        starts = [c.start_line for c in chunks]
        for chunk in chunks[: bisect.bisect_right(starts, line)][::-1]:
            if chunk.start_line <= line <= chunk.end_line:
                return chunk
        return None

    def _merged(self, ask, k: int) -> list[Hit]:  # noqa: ANN001 - ask(index, n) -> hits
        if not self.changed:
            return ask(self.base, k)
        extra = EXTRA_PER_HIDDEN_FILE * len(self.changed)
        hits = [h for h in ask(self.base, k + extra) if h.chunk.file not in self.changed]
        if self.delta is not None:
            hits += ask(self.delta, k)
        hits.sort(key=lambda h: -h.score)
        return [replace(h, rank=rank) for rank, h in enumerate(hits[:k], start=1)]

    def _vector_of(self, chunk: Chunk) -> np.ndarray:
        if chunk.file in self.changed and self.delta is not None:
            return self.delta.vectors[self.delta.key_of(chunk.id)]
        return self.base.vectors[self.base.key_of(chunk.id)]

    def _base_keys(self, file: str) -> list[int]:
        if self._by_file is None:  # one pass over the chunks, on the first look-up
            table: dict[str, list[tuple[int, int]]] = {}
            for key, chunk in enumerate(self.base.chunks):
                table.setdefault(chunk.file, []).append((chunk.start_line, key))
            self._by_file = {f: [key for _, key in sorted(rows)] for f, rows in table.items()}
        return self._by_file.get(file, [])


def _same_place(a: Chunk, b: Chunk) -> bool:
    return (a.file, a.start_line, a.end_line) == (b.file, b.start_line, b.end_line)
