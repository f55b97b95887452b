"""Retrieval per token: recall within a context budget, tokens to the first hit, cost of the top k.

NDCG@10, MRR@10 and R@5 count a 300-line result the same as a 15-line one, so a sweep
scored by them picks the fattest chunks. A reader pays per token: these metrics read
the ranked hits the way ``nexus.retrieval.budget.read_within`` hands them out (whole
while they fit, the crossing hit cut at the line where the budget runs out) and ask
what was found for B tokens.

* ``R@Btok``: share of a query's targets covered by the reads within B tokens;
* ``tokens to first hit``: tokens read up to and including the first hit that covers
  a target (``None`` when no hit given does);
* ``lines@k`` / ``tokens@k``: what the whole top k costs to read.

A budget is read as deep as it lasts, not only through the top k: ten 15-line hits
spend 1,500 tokens, and a reader with 4,000 goes on to the eleventh. Callers therefore
pass a deeper ranked list (``READ_DEPTH`` hits) than the k that NDCG and lines@k see.

A target is covered by a read according to the set's own rule (``covers``): any shared
line for question sets, half the target's lines for doc-comment sets.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from nexus.config import DEFAULT_ENCODING
from nexus.retrieval.budget import Read, read_within
from nexus.types import Chunk

#: Budgets reported by default, in tokens: a small, a medium and a large context.
DEFAULT_BUDGETS = (1000, 2000, 4000)
#: Hits that lines@k / tokens@k count (NDCG@10 and MRR@10 see as many).
TOP_K = 10

T = TypeVar("T")
Covers = Callable[[T, Read], bool]


def budget_label(budget: int) -> str:
    """``R@1k`` for 1000 tokens, ``R@1.5k`` for 1500, ``R@500`` for 500."""
    if budget >= 1000:
        return f"R@{budget / 1000:g}k"
    return f"R@{budget}"


@dataclass(frozen=True)
class BudgetOutcome:
    """One query's figures: recall per budget, tokens to its first hit, cost of the top k."""

    recall: dict[int, float]
    tokens_to_first_hit: int | None
    lines_top_k: int
    tokens_top_k: int


def budget_outcome(
    hits: Sequence[Chunk],
    targets: Sequence[T],
    covers: Covers[T],
    budgets: Sequence[int] = DEFAULT_BUDGETS,
    k: int = TOP_K,
    encoding: str = DEFAULT_ENCODING,
) -> BudgetOutcome:
    """Score the ranked ``hits`` of one query (best first) against its ``targets``: the
    budgets and the first hit read as deep as ``hits`` goes (pass ``READ_DEPTH`` of
    them), lines and tokens count the top ``k``."""
    whole = read_within(list(hits), None, encoding)
    recall = {}
    for budget in budgets:
        reads = read_within(hits, budget, encoding)
        found = sum(1 for target in targets if any(covers(target, read) for read in reads))
        recall[budget] = found / len(targets) if targets else 0.0
    spent, first = 0, None
    for read in whole:
        spent += read.tokens
        if any(covers(target, read) for target in targets):
            first = spent
            break
    return BudgetOutcome(
        recall=recall,
        tokens_to_first_hit=first,
        lines_top_k=sum(read.lines for read in whole[:k]),
        tokens_top_k=sum(read.tokens for read in whole[:k]),
    )


def any_line(file: str, start_line: int | None, end_line: int | None, read: Read) -> bool:
    """Question-set rule: the read is in the file and shares a line with the range
    (a target without lines is the whole file)."""
    if read.file != file:
        return False
    if start_line is None or end_line is None:
        return True
    return read.start_line <= end_line and start_line <= read.end_line


def half_the_lines(file: str, start_line: int, end_line: int, read: Read) -> bool:
    """Doc-comment-set rule (overlap50): the read holds at least half the target's lines."""
    if read.file != file:
        return False
    overlap = min(end_line, read.end_line) - max(start_line, read.start_line) + 1
    return 2 * max(overlap, 0) >= end_line - start_line + 1


def summarize_budgets(
    outcomes: Iterable[BudgetOutcome], budgets: Sequence[int] = DEFAULT_BUDGETS
) -> dict[str, float]:
    """Means over queries (recall per budget, lines and tokens of the top k) and the
    median tokens to the first hit over queries that have one."""
    rows = list(outcomes)
    if not rows:
        return {}
    summary = {
        budget_label(budget): statistics.fmean(row.recall[budget] for row in rows)
        for budget in budgets
    }
    firsts = [row.tokens_to_first_hit for row in rows if row.tokens_to_first_hit is not None]
    summary["tokens to first hit"] = float(statistics.median(firsts)) if firsts else float("nan")
    summary["lines@10"] = statistics.fmean(row.lines_top_k for row in rows)
    summary["tokens@10"] = statistics.fmean(row.tokens_top_k for row in rows)
    return summary
