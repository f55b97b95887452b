"""Retrieval evaluation of one query: hit rules, ranks, margins, and the final scores
(the query sets they score are ``nexus.evaluation.query_sets``; a run over a whole set,
its metrics and tables, is ``nexus.evaluation.runs``).

The rules and metric names follow the benchmark's scorer (``shared/eval/score.py``), so
numbers from ``runs.evaluate`` and from scoring ``runs.write_run`` output agree:

* ``overlap50``: the chunk is in the target's file and covers >= 50% of its lines.
* ``contains``: the chunk covers every line of the target.
* ``R@k``: share of queries whose first hit is at rank <= k; ``MRR@10``: mean 1/rank
  within the top 10; ``lines@5``: mean summed line count of the top 5 (context cost).
* Budget metrics (``nexus.evaluation.budget``): ``R@1k`` etc., the share of targets read
  within 1000 tokens of the ranked hits (a target is read when the reads hold half its
  lines), tokens to the first hit, and lines and tokens of the top 10.

A *target chunk* is any chunk that satisfies the rule for the query's target. The
``margin`` of a query is the best target-chunk score minus the best other score:
positive when the target wins, negative when a wrong chunk outranks it. Score, margin
and full rank are the *final* scores, those the hits are ranked by: with the ranking
stage, over every candidate it ranks (a target outside them has no score there).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from nexus.evaluation.budget import (
    DEFAULT_BUDGETS,
    BudgetOutcome,
    budget_outcome,
    half_the_lines,
)
from nexus.evaluation.query_sets import Target
from nexus.retrieval.budget import READ_DEPTH, Read
from nexus.retrieval.index import VectorIndex
from nexus.retrieval.ranking import RankingRules
from nexus.retrieval.search import Hit, retrieval_scores, search
from nexus.types import Chunk

RULES = ("overlap50", "contains")
PRIMARY_RULE = "overlap50"
KS = (1, 5, 10)

# --- hit rules, ranks, margins -------------------------------------------------------


def line_overlap(chunk: Chunk, target: Target) -> int:
    """How many of the target's lines the chunk covers (0 in another file)."""
    if chunk.file != target.file:
        return 0
    return max(
        0, min(chunk.end_line, target.end_line) - max(chunk.start_line, target.start_line) + 1
    )


def is_hit(chunk: Chunk, target: Target, rule: str = PRIMARY_RULE) -> bool:
    """Whether ``chunk`` counts as finding ``target`` under ``rule``."""
    overlap = line_overlap(chunk, target)
    if rule == "overlap50":
        return overlap > 0 and 2 * overlap >= target.n_lines
    if rule == "contains":
        return overlap == target.n_lines
    raise ValueError(f"unknown hit rule {rule!r}; known: {RULES}")


def rank_of_target(hits: Sequence[Hit], target: Target, rule: str = PRIMARY_RULE) -> int | None:
    """Rank of the first hit that satisfies ``rule``, or None if none does."""
    return next((h.rank for h in hits if is_hit(h.chunk, target, rule)), None)


def target_mask(chunks: Sequence[Chunk], target: Target, rule: str = PRIMARY_RULE) -> np.ndarray:
    """Boolean array: which chunks are target chunks."""
    return np.fromiter((is_hit(c, target, rule) for c in chunks), dtype=bool, count=len(chunks))


def margin(scores: np.ndarray, mask: np.ndarray) -> float | None:
    """Best target score minus best non-target score (None if either side is empty)."""
    if not mask.any() or mask.all():
        return None
    return float(scores[mask].max() - scores[~mask].max())


def full_rank(scores: np.ndarray, mask: np.ndarray) -> int | None:
    """Rank of the best target chunk over the whole index (beyond any top k)."""
    if not mask.any():
        return None
    best = scores[mask].max()
    return int((scores[~mask] > best).sum()) + 1


@dataclass(frozen=True)
class QueryOutcome:
    """How one query fared on one index (rank/score/margin under the primary rule).

    ``rank`` counts within the top k (None = not found there); ``full_rank`` is the
    target's rank over every result the search scores (every chunk, or the ranking
    stage's candidates), None if none of them satisfies the rule. ``score`` is the best
    target result's final score (the one hits are ranked by), ``top_score`` the best
    overall; ``scored`` is how many results the ranking stage ranked (None: every chunk
    was scored). ``ranked`` keeps those results when asked (for charts).
    """

    hits: tuple[Hit, ...]
    rank: int | None
    score: float | None
    margin: float | None
    full_rank: int | None
    top_score: float | None
    ranks: dict[str, int | None] = field(default_factory=dict)  # per rule, within top k
    budget: BudgetOutcome | None = None
    scored: int | None = None
    ranked: tuple[Hit, ...] = ()


def target_read(target: Target, read: Read) -> bool:
    """Whether a read holds the target (half its lines, as the overlap50 rule)."""
    return half_the_lines(target.file, target.start_line, target.end_line, read)


def score_query(
    index: VectorIndex,
    query_vec: np.ndarray,
    target: Target | None = None,
    k: int = 10,
    rule: str = PRIMARY_RULE,
    exact: bool = True,
    *,
    text: str | None = None,
    lexical_weight: float = 0.0,
    ranking: RankingRules | None = None,
    budgets: Sequence[int] = DEFAULT_BUDGETS,
    detail: bool = True,
    keep_ranked: bool = False,
) -> QueryOutcome:
    """Search ``index`` and, given a target, locate it among the results (through the
    ranking stage with ``ranking`` rules, else hybrid when ``lexical_weight`` > 0).

    ``score``, ``margin`` and ``full_rank`` are over the final scores: with the ranking
    stage, every candidate it ranks (one search of them all, whose top k are the hits);
    else every chunk's cosine + ``lexical_weight`` x keywords. ``detail=False`` skips
    them (a sweep needs only the ranks and the budget figures)."""
    staged = bool(text) and ranking is not None
    if staged and (keep_ranked or (detail and target is not None)):
        ranked = tuple(
            search(
                index,
                query_vec,
                text,
                len(index),
                rules=ranking,
                lexical_weight=lexical_weight,
                exact=exact,
            )
        )
        hits, deep = ranked[:k], ranked[:READ_DEPTH]
    else:
        ranked = ()
        deep = tuple(  # the budgets read past the top k
            search(
                index,
                query_vec,
                text,
                max(k, READ_DEPTH),
                rules=ranking,
                lexical_weight=lexical_weight,
                exact=exact,
            )
        )
        hits = deep[:k]
    top = hits[0].score if hits else None
    kept = ranked if keep_ranked else ()
    if target is None:
        return QueryOutcome(hits, None, None, None, None, top, ranked=kept)
    budget = budget_outcome([h.chunk for h in deep], [target], target_read, budgets)
    ranks = {r: rank_of_target(hits, target, r) for r in RULES}
    rank = ranks[rule]
    if not detail:
        return QueryOutcome(hits, rank, None, None, None, top, ranks, budget, ranked=kept)
    if staged:
        scores = np.fromiter((h.score for h in ranked), dtype=np.float64, count=len(ranked))
        mask = target_mask([h.chunk for h in ranked], target, rule)
        first = int(np.argmax(mask)) + 1 if mask.any() else None
        scored: int | None = len(ranked)
    else:
        scores = retrieval_scores(index, query_vec, text, lexical_weight)
        mask = target_mask(index.chunks, target, rule)
        first, scored = full_rank(scores, mask), None
    return QueryOutcome(
        hits=hits,
        rank=rank,
        score=float(scores[mask].max()) if mask.any() else None,
        margin=margin(scores, mask),
        full_rank=first,
        top_score=top,
        ranks=ranks,
        budget=budget,
        scored=scored,
        ranked=kept,
    )


def answered_outcome(
    deep: Sequence[Hit],
    target: Target | None,
    k: int = 10,
    rule: str = PRIMARY_RULE,
    budgets: Sequence[int] = DEFAULT_BUDGETS,
) -> QueryOutcome:
    """How a target fared in hits answered elsewhere (``Workspace.search``, re-scoring
    included), best first and ``READ_DEPTH`` deep: its ranks in the top ``k`` and the
    budget figures. No score, margin or full rank: those are of one index's scores."""
    hits = tuple(deep[:k])
    top = hits[0].score if hits else None
    if target is None:
        return QueryOutcome(hits, None, None, None, None, top)
    budget = budget_outcome([h.chunk for h in deep], [target], target_read, budgets)
    ranks = {r: rank_of_target(hits, target, r) for r in RULES}
    return QueryOutcome(hits, ranks[rule], None, None, None, top, ranks, budget)


def final_scores(
    index: VectorIndex,
    outcome: QueryOutcome,
    query_vec: np.ndarray,
    text: str | None = None,
    lexical_weight: float = 0.0,
) -> np.ndarray:
    """Every chunk's final score in key order (what the hits are ranked by): from an
    outcome of the ranking stage scored with ``keep_ranked``, the ranked candidates'
    scores and NaN for the chunks it did not rank; else every chunk's score."""
    if not outcome.ranked:
        return retrieval_scores(index, query_vec, text, lexical_weight).astype(np.float64)
    scores = np.full(len(index), np.nan, dtype=np.float64)
    for hit in outcome.ranked:
        scores[hit.key] = hit.score
    return scores
