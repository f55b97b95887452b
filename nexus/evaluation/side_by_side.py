"""One query against a line-based and an AST index at once, each scored against its
target: the side-by-side view of the two chunkings."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from nexus.evaluation.metrics import PRIMARY_RULE, QueryOutcome, score_query
from nexus.evaluation.query_sets import Target
from nexus.retrieval.embedding import CachedEmbedder, Embedder, EmbeddingCache, Progress
from nexus.retrieval.index import VectorIndex, build_indexes
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

        def outcome(index: VectorIndex) -> QueryOutcome:
            return score_query(
                index,
                vec,
                target,
                k,
                rule,
                exact,
                text=text,
                lexical_weight=lexical_weight,
                ranking=ranking,
            )

        return SideBySideResult(text, outcome(self.lines_index), outcome(self.ast_index))
