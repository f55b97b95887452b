"""Retrieval evaluation: hit rules, ranks, margins, metrics and rank tables (the query
sets they score are ``nexus.evaluation.query_sets``).

The rules and metric names follow the benchmark's scorer (``shared/eval/score.py``), so
numbers from ``evaluate`` and from scoring ``write_run`` output agree:

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

import json
import math
import os
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from nexus.evaluation.budget import (
    DEFAULT_BUDGETS,
    BudgetOutcome,
    budget_label,
    budget_outcome,
    half_the_lines,
    summarize_budgets,
)
from nexus.evaluation.query_sets import Query, Target
from nexus.retrieval.budget import READ_DEPTH, Read
from nexus.retrieval.embedding import Embedder
from nexus.retrieval.index import VectorIndex
from nexus.retrieval.ranking import RankingRules
from nexus.retrieval.search import Hit, retrieval_scores, search
from nexus.retrieval.shortlist import best_cosines
from nexus.tables import Table, text_table
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


#: Floats in one block of the queries x chunks cosine matrix (64 MB, and two copies while
#: the cuts are found): the queries of a large index are scored a block at a time.
COSINE_BLOCK = 1 << 24
#: How far one cosine from the matrix product may be from the same cosine computed for
#: one query (float32 sums of 384 terms of unit vectors: well under this).
_ROUNDING = 1e-4


def dense_shortlists(index: VectorIndex, query_vectors: np.ndarray, count: int) -> list[np.ndarray]:
    """Each query's ``count`` best chunks by cosine (``VectorIndex.best_cosine_keys``),
    every query in one matrix product (queries x chunk vectors) instead of a scan of the
    index per query. The chunks within rounding of a query's cut are scored again as one
    query's are (``shortlist.best_cosines``), so the keys are the same; which of several
    exactly equal cosines at the cut is kept may differ, as there."""
    vectors = index.vectors
    count = min(count, len(vectors))
    if count <= 0:
        return [np.zeros(0, dtype=np.int64) for _ in query_vectors]
    found = []
    block = max(1, COSINE_BLOCK // len(vectors))
    for start in range(0, len(query_vectors), block):
        queries = np.stack([index.query_vector(v) for v in query_vectors[start : start + block]])
        cosines = vectors @ queries.T
        cuts = -np.partition(-cosines, count - 1, axis=0)[count - 1]
        for column, query in enumerate(queries):
            near = np.flatnonzero(cosines[:, column] >= cuts[column] - _ROUNDING)
            found.append(near[best_cosines(vectors[near], query, count)])
    return found


class _Shortlisted:
    """``index`` for one query (``query_vec``) whose dense shortlist (``keys``, its best
    ``len(keys)`` chunks by cosine) is known already: what a search asks of it is the
    index's answer, and the shortlist is that one (for that vector: query feedback asks
    again with another)."""

    def __init__(self, index: VectorIndex, query_vec: np.ndarray, keys: np.ndarray) -> None:
        self._index, self._query, self._keys = index, query_vec, keys
        self.chunk = index.chunk  # asked once per candidate: no look-up through __getattr__

    def __len__(self) -> int:
        return len(self._index)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._index, name)

    def best_cosine_keys(self, query_vec: np.ndarray, n: int) -> np.ndarray:
        if min(n, len(self._index)) == len(self._keys) and np.array_equal(query_vec, self._query):
            return self._keys
        return self._index.best_cosine_keys(query_vec, n)


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


# --- reports -------------------------------------------------------------------------


@dataclass(frozen=True)
class QueryRow:
    """One query's result on one index."""

    query: Query
    outcome: QueryOutcome

    @property
    def id(self) -> str:
        return self.query.id

    @property
    def variant(self) -> str:
        return self.query.variant

    @property
    def rank(self) -> int | None:
        return self.outcome.rank

    @property
    def score(self) -> float | None:
        return self.outcome.score

    @property
    def margin(self) -> float | None:
        return self.outcome.margin

    def lines_at(self, k: int = 5) -> int:
        return sum(h.chunk.n_lines for h in self.outcome.hits[:k])

    def to_dict(self) -> dict[str, Any]:
        o = self.outcome
        return {
            "id": self.id,
            "variant": self.variant,
            "query": self.query.query,
            "rank": o.rank,
            "ranks": o.ranks,
            "full_rank": o.full_rank,
            "score": o.score,
            "margin": o.margin,
            "top_score": o.top_score,
            "scored": o.scored,
            "lines@5": self.lines_at(5),
            **budget_record(o.budget),
            "top": [h.chunk.id for h in o.hits],
        }


def budget_record(budget: BudgetOutcome | None) -> dict[str, Any]:
    """One query's budget figures as JSON fields (``R@1k``..., tokens to first hit...)."""
    if budget is None:
        return {}
    return {
        **{budget_label(b): share for b, share in budget.recall.items()},
        "tokens to first hit": budget.tokens_to_first_hit,
        "lines@10": budget.lines_top_k,
        "tokens@10": budget.tokens_top_k,
    }


@dataclass(frozen=True)
class EvalReport:
    """Per-query rows and metrics (``metrics[group][name]``, groups as in ``aggregate``)."""

    rows: tuple[QueryRow, ...]
    metrics: dict[str, dict[str, float]]
    model: str = ""
    k: int = 10
    label: str = ""
    budgets: tuple[int, ...] = DEFAULT_BUDGETS

    def metric(self, variant: str, name: str, rule: str = PRIMARY_RULE) -> float:
        """``name`` in group ``variant``: a budget metric (``R@1k``, ``tokens@10``...),
        ``n``, ``lines@5``, or a rank metric under ``rule`` (``R@5``, ``MRR@10``)."""
        group = self.metrics[variant]
        if name in group:
            return group[name]
        key = f"{rule}:{name}"
        if key not in group:
            known = sorted({k.split(":")[-1] for k in group})
            raise ValueError(f"unknown metric {name!r}; known: {', '.join(known)}")
        return group[key]


def aggregate(
    rows: Iterable[QueryRow], ks: Sequence[int] = KS, budgets: Sequence[int] = DEFAULT_BUDGETS
) -> dict[str, dict[str, float]]:
    """Metrics per group: each variant, ``variant|package``, and ``all``.

    Keys: ``n``, ``<rule>:R@<k>``, ``<rule>:MRR@10``, ``lines@5`` (score.py's names), and
    the budget metrics of ``summarize_budgets`` (``R@1k``..., ``tokens to first hit``,
    ``lines@10``, ``tokens@10``) where the rows have them.
    """
    sums: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    spent: dict[str, list[BudgetOutcome]] = defaultdict(list)
    for row in rows:
        groups = ["all", row.variant or "-"]
        if row.query.target.package:
            groups.append(f"{row.variant or '-'}|{row.query.target.package}")
        for group in groups:
            acc = sums[group]
            if row.outcome.budget is not None:
                spent[group].append(row.outcome.budget)
            acc["n"] += 1
            for rule in RULES:
                first = row.outcome.ranks.get(rule)
                for k in ks:
                    acc[f"{rule}:R@{k}"] += 1.0 if first is not None and first <= k else 0.0
                acc[f"{rule}:MRR@10"] += 1.0 / first if first is not None and first <= 10 else 0.0
            acc["lines@5"] += row.lines_at(5)
    out: dict[str, dict[str, float]] = {}
    for group, acc in sums.items():
        n = acc["n"]
        out[group] = {key: (n if key == "n" else value / n) for key, value in acc.items()}
        out[group].update(summarize_budgets(spent[group], budgets))
    return out


def evaluate(
    queries: Sequence[Query],
    index: VectorIndex,
    embedder: Embedder,
    k: int = 10,
    rule: str = PRIMARY_RULE,
    exact: bool = True,
    label: str = "",
    progress: Callable[[int, int], None] | None = None,
    query_vectors: np.ndarray | None = None,
    lexical_weight: float = 0.0,
    ranking: RankingRules | None = None,
    budgets: Sequence[int] = DEFAULT_BUDGETS,
    detail: bool = True,
) -> EvalReport:
    """Run every query against ``index`` and score it.

    The queries are embedded with ``embedder``, which must be the one that built the
    index (same name): a mismatch raises ``ValueError`` rather than give noise.
    ``query_vectors`` (one row per query, from the same embedder) skips the embedding.
    ``lexical_weight`` > 0 ranks by cosine + keyword score (``nexus.retrieval.search``);
    ``ranking`` rules send the candidates through the ranking stage instead.
    ``budgets``: the token budgets of the ``R@1k``-style metrics; ``detail=False`` leaves
    out each query's score, margin and full rank (see ``score_query``).
    """
    if index.model and embedder.name != index.model:
        raise ValueError(
            f"the index was built with {index.model!r} but queries would be embedded "
            f"with {embedder.name!r}; use the same embedder for both"
        )
    if query_vectors is None:
        query_vectors = embedder.encode([q.query for q in queries], progress)
    views: Iterable[Any] = [index] * len(queries)  # the ranking stage's: shortlists known
    if ranking is not None:
        views = (
            _Shortlisted(index, vec, keys)
            for vec, keys in zip(
                query_vectors,
                dense_shortlists(index, query_vectors, ranking.candidates),
                strict=True,
            )
        )
    rows = tuple(
        QueryRow(
            q,
            score_query(
                view,
                vec,
                q.target,
                k,
                rule,
                exact,
                text=q.query,
                lexical_weight=lexical_weight,
                ranking=ranking,
                budgets=budgets,
                detail=detail,
            ),
        )
        for q, vec, view in zip(queries, query_vectors, views, strict=True)
    )
    return EvalReport(
        rows,
        aggregate(rows, budgets=budgets),
        model=embedder.name,
        k=k,
        label=label,
        budgets=tuple(budgets),
    )


def write_run(report: EvalReport, path: str | os.PathLike[str]) -> None:
    """Write the ranked results in the scorer's run format (``score.py --results``)."""
    with open(path, "w", encoding="utf-8") as f:
        for row in report.rows:
            results = [
                {
                    "file": h.chunk.file,
                    "start_line": h.chunk.start_line,
                    "end_line": h.chunk.end_line,
                }
                for h in row.outcome.hits
            ]
            f.write(json.dumps({"id": row.id, "results": results}) + "\n")


# --- comparing two indexes -----------------------------------------------------------


@dataclass(frozen=True)
class Comparison:
    """The same queries on a baseline index and a candidate index."""

    baseline: EvalReport
    candidate: EvalReport

    def pairs(self) -> list[tuple[QueryRow, QueryRow]]:
        return list(zip(self.baseline.rows, self.candidate.rows, strict=True))


def compare(
    queries: Sequence[Query],
    baseline: VectorIndex,
    candidate: VectorIndex,
    embedder: Embedder,
    k: int = 10,
    labels: tuple[str, str] = ("line-based", "AST"),
    lexical_weight: float = 0.0,
    ranking: RankingRules | None = None,
    budgets: Sequence[int] = DEFAULT_BUDGETS,
) -> Comparison:
    """Evaluate both indexes on ``queries`` (embedded once), ranked the same way."""
    vectors = embedder.encode([q.query for q in queries])
    reports = [
        evaluate(
            queries,
            index,
            embedder,
            k,
            label=label,
            query_vectors=vectors,
            lexical_weight=lexical_weight,
            ranking=ranking,
            budgets=budgets,
        )
        for index, label in zip((baseline, candidate), labels, strict=True)
    ]
    return Comparison(*reports)


# --- tables --------------------------------------------------------------------------


def _rank_cell(row: QueryRow, k: int) -> str:
    o = row.outcome
    if o.score is None:
        if o.scored is not None:
            return f">{k} (not among the {o.scored} ranked)"
        return "no target chunk"
    rank = str(o.rank) if o.rank is not None else f">{k} ({o.full_rank})"
    return f"{rank} ({o.score:.3f})"


def comparison_table(comparison: Comparison, variant: str | None = None) -> Table:
    """Rows ``query | <baseline> rank (score) | <candidate> rank (score) | margin change``.

    A rank beyond the top k shows as ``>10 (37)``: 37 is its rank over every result the
    search scores (the ranking stage's candidates, or the whole index); the score is the
    final one, the hits' own.
    """
    b, c = comparison.baseline, comparison.candidate
    headers = ["query", "variant", f"{b.label or 'baseline'} rank (score)"]
    headers += [f"{c.label or 'candidate'} rank (score)", "Δ margin"]
    rows = []
    for rb, rc in comparison.pairs():
        if variant is not None and rb.variant != variant:
            continue
        delta = ""
        if rb.margin is not None and rc.margin is not None:
            delta = f"{rc.margin - rb.margin:+.3f}"
        rows.append([rb.query.query, rb.variant, _rank_cell(rb, b.k), _rank_cell(rc, c.k), delta])
    return headers, rows


def metrics_table(*reports: EvalReport, rule: str = PRIMARY_RULE) -> Table:
    """One row per report and variant: n, R@1/5/10, MRR@10, lines@5, and the budget
    metrics (R@1k..., tokens to first hit, lines@10, tokens@10)."""
    budgets = reports[0].budgets if reports else DEFAULT_BUDGETS
    headers = ["index", "variant", "n", "R@1", "R@5", "R@10", "MRR@10", "lines@5"]
    headers += budget_headers(budgets)
    rows = []
    for report in reports:
        for group in sorted(g for g in report.metrics if "|" not in g):
            m = report.metrics[group]
            rows.append(
                [report.label, group, str(int(m["n"]))]
                + [f"{m[f'{rule}:{name}']:.3f}" for name in ("R@1", "R@5", "R@10", "MRR@10")]
                + [f"{m['lines@5']:.1f}"]
                + budget_cells(m, budgets)
            )
    return headers, rows


#: The budget metrics beside the budgets' recalls, as ``summarize_budgets`` names them.
BUDGET_COSTS = ("tokens to first hit", "lines@10", "tokens@10")


def budget_headers(budgets: Sequence[int]) -> list[str]:
    return [*(budget_label(b) for b in budgets), *BUDGET_COSTS]


def budget_cells(metrics: dict[str, float], budgets: Sequence[int]) -> list[str]:
    """The budget columns of one row of a metrics table ("" where not measured)."""
    labels = [budget_label(b) for b in budgets]
    cells = [f"{metrics[label]:.3f}" if label in metrics else "" for label in labels]
    for name in BUDGET_COSTS:
        value = metrics.get(name)
        cells.append("" if value is None or math.isnan(value) else f"{value:.0f}")
    return cells


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_markdown(table: Table) -> str:
    """A GitHub-flavoured markdown table."""
    headers, rows = table
    lines = ["| " + " | ".join(_cell(h) for h in headers) + " |"]
    lines.append("|" + "---|" * len(headers))
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def render_text(table: Table, max_width: int = 60) -> str:
    """A plain-text table with aligned columns; cells longer than ``max_width`` are cut."""
    headers, rows = table

    def cut(text: str) -> str:
        text = text.replace("\n", " ")
        return text if len(text) <= max_width else text[: max_width - 1] + "…"

    lines = text_table([cut(c) for c in headers], [[cut(c) for c in row] for row in rows])
    return "\n".join(lines) + "\n"


def save_report(report: EvalReport, path: str | os.PathLike[str]) -> None:
    """Write metrics and per-query rows as JSON (no chunk text)."""
    data = {
        "label": report.label,
        "model": report.model,
        "k": report.k,
        "budgets": list(report.budgets),
        "metrics": no_nan(report.metrics),
        "rows": [row.to_dict() for row in report.rows],
    }
    Path(path).write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")


def no_nan(value: Any) -> Any:
    """``value`` with every NaN float (a median over no hits) as None: valid JSON."""
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {key: no_nan(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [no_nan(item) for item in value]
    return value
