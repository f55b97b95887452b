"""Searching: one query against a line-based and an AST index at once, and files of
queries answered in one process (``nexus search --queries``)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from nexus.evaluation.metrics import PRIMARY_RULE, QueryOutcome, Target, score_query
from nexus.retrieval.embedding import CachedEmbedder, Embedder, EmbeddingCache, Progress
from nexus.retrieval.index import Hit, VectorIndex, build_indexes
from nexus.retrieval.ranking import RankingRules
from nexus.types import Chunk


@dataclass(frozen=True)
class SideBySideResult:
    """Both indexes' answers to one query (``outcome.rank`` etc. are None without a target)."""

    query: str
    lines: QueryOutcome
    ast: QueryOutcome


class SideBySide:
    """Two indexes (line-based and AST) over the same repository, queried together.

    Args:
        line_chunks, ast_chunks: the two chunkings.
        embedder: embeds chunks and queries; wrapped in a ``CachedEmbedder`` when
            ``cache`` is given (unchanged chunks are then never embedded twice).
        progress: ``progress(done, total)`` while the chunks are embedded.
    """

    def __init__(
        self,
        line_chunks: Sequence[Chunk],
        ast_chunks: Sequence[Chunk],
        embedder: Embedder,
        cache: EmbeddingCache | None = None,
        progress: Progress | None = None,
    ) -> None:
        if cache is not None and not isinstance(embedder, CachedEmbedder):
            embedder = CachedEmbedder(embedder, cache)
        self.embedder = embedder
        self.lines_index, self.ast_index = build_indexes(
            [line_chunks, ast_chunks], embedder, progress
        )

    @classmethod
    def from_indexes(
        cls, lines_index: VectorIndex, ast_index: VectorIndex, embedder: Embedder
    ) -> SideBySide:
        """Wrap two ready indexes (e.g. loaded from disk)."""
        self = cls.__new__(cls)
        self.embedder, self.lines_index, self.ast_index = embedder, lines_index, ast_index
        return self

    def query(
        self,
        text: str,
        k: int = 10,
        target: Target | None = None,
        rule: str = PRIMARY_RULE,
        exact: bool = True,
        lexical_weight: float = 0.0,
        ranking: RankingRules | None = None,
    ) -> SideBySideResult:
        """Top ``k`` of both indexes; with a target, its rank, score and margin in each.
        ``lexical_weight`` > 0 adds keyword scores to both (hybrid ranking); ``ranking``
        rules send both through the ranking stage instead."""
        vec = self.embedder.encode([text])[0]
        args = (target, k, rule, exact, text, lexical_weight, ranking)
        return SideBySideResult(
            query=text,
            lines=score_query(self.lines_index, vec, *args),
            ast=score_query(self.ast_index, vec, *args),
        )


@dataclass(frozen=True)
class BatchQuery:
    """One line of a ``nexus search --queries`` file: an id (its line number when absent)."""

    id: str
    query: str


def read_batch(data: str) -> list[BatchQuery]:
    """Queries from JSONL (``{"id": ..., "query": ...}``; any other fields are ignored) or
    plain text (one query a line); ValueError names the first bad line."""
    queries = []
    for number, line in enumerate(data.splitlines(), start=1):
        if not line.strip():
            continue
        if not line.lstrip().startswith("{"):
            queries.append(BatchQuery(str(number), line.strip()))
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"line {number}: not valid JSON ({exc.msg})") from None
        text = record.get("query") if isinstance(record, dict) else None
        if not isinstance(text, str) or not text.strip():
            raise ValueError(f'line {number}: a record needs a non-empty "query" string')
        queries.append(BatchQuery(str(record.get("id", number)), text))
    if not queries:
        raise ValueError("the query file holds no queries (one JSON object or text a line)")
    return queries


def hit_record(hit: Hit) -> dict[str, object]:
    """A hit as JSON: where it is, what it is, its score and the parts of the score."""
    chunk = hit.chunk
    return {
        "rank": hit.rank,
        "file": chunk.file,
        "start_line": chunk.start_line,
        "end_line": chunk.end_line,
        "symbol": chunk.symbol,
        "kind": chunk.symbol_kind,
        "score": round(hit.score, 6),
        "parts": {p.name: round(p.value, 6) for p in hit.parts},
    }
