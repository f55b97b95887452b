"""An evaluation run: every query of a set on an index, its metrics, tables and files.

``evaluate`` scores each query (``nexus.evaluation.metrics``) into a ``QueryRow`` and
``aggregate`` sums the rows into R@k, MRR@10, lines@5 and the budget metrics, per
variant; ``compare`` runs two indexes on the same queries. The report is written as
JSON (``save_report``) or in the benchmark scorer's run format (``write_run``), and
shown as tables (``metrics_table``, ``comparison_table``; ``nexus.tables`` draws them).
"""

from __future__ import annotations

import json
import math
import os
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from nexus.evaluation.budget import (
    DEFAULT_BUDGETS,
    BudgetOutcome,
    budget_label,
    summarize_budgets,
)
from nexus.evaluation.metrics import (
    KS,
    PRIMARY_RULE,
    RULES,
    QueryOutcome,
    answered_outcome,
    score_query,
)
from nexus.evaluation.query_sets import Query
from nexus.retrieval.embedding import Embedder
from nexus.retrieval.index import VectorIndex
from nexus.retrieval.ranking import RankingRules
from nexus.retrieval.search import Hit
from nexus.retrieval.shortlist import best_cosines
from nexus.tables import Table

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
    answered: Sequence[Sequence[Hit]] | None = None,
) -> EvalReport:
    """Run every query against ``index`` and score it.

    The queries are embedded with ``embedder``, which must be the one that built the
    index (same name): a mismatch raises ``ValueError`` rather than give noise.
    ``query_vectors`` (one row per query, from the same embedder) skips the embedding.
    ``lexical_weight`` > 0 ranks by cosine + keyword score (``nexus.retrieval.search``);
    ``ranking`` rules send the candidates through the ranking stage instead.
    ``budgets``: the token budgets of the ``R@1k``-style metrics; ``detail=False`` leaves
    out each query's score, margin and full rank (see ``score_query``). ``answered``:
    each query's hits as something else answered them over ``index`` (``nexus eval``:
    ``Workspace.search`` with re-scoring), scored instead of searching (``answered_outcome``).
    """
    if answered is not None:
        rows = tuple(
            QueryRow(q, answered_outcome(deep, q.target, k, rule, budgets))
            for q, deep in zip(queries, answered, strict=True)
        )
        return EvalReport(
            rows, aggregate(rows, budgets=budgets), embedder.name, k, label, tuple(budgets)
        )
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
    answered: tuple[Sequence[Sequence[Hit]], Sequence[Sequence[Hit]]] | None = None,
) -> Comparison:
    """Evaluate both indexes on ``queries`` (embedded once), ranked the same way;
    ``answered``: each index's hits as answered elsewhere (see ``evaluate``)."""
    vectors = None if answered else embedder.encode([q.query for q in queries])
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
            answered=hits,
        )
        for index, label, hits in zip(
            (baseline, candidate), labels, answered or (None, None), strict=True
        )
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
    """One row per report and variant: n, the budget metrics first (R@1k..., tokens to
    first hit, lines@10, tokens@10: what a reader pays for), then R@1/5/10, MRR@10, lines@5."""
    budgets = reports[0].budgets if reports else DEFAULT_BUDGETS
    headers = ["index", "variant", "n", *budget_headers(budgets)]
    headers += ["R@1", "R@5", "R@10", "MRR@10", "lines@5"]
    rows = []
    for report in reports:
        for group in sorted(g for g in report.metrics if "|" not in g):
            m = report.metrics[group]
            rows.append(
                [report.label, group, str(int(m["n"]))]
                + budget_cells(m, budgets)
                + [f"{m[f'{rule}:{name}']:.3f}" for name in ("R@1", "R@5", "R@10", "MRR@10")]
                + [f"{m['lines@5']:.1f}"]
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
