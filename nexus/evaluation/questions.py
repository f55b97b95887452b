"""Question sets: queries the way people ask, with several places to find, scored by NDCG@10.

A record names one or more primary ``targets`` (a file, or a file and a line range) and
optional ``secondary`` places, and a ``category`` (``semantic``, ``architecture``,
``topical``: a short search-box phrase, ``symbol``)::

    {"id": "q1", "query": "where are cookies parsed", "category": "semantic",
     "targets": [{"file": "src/cookie.ts", "start_line": 10, "end_line": 42}]}

Scoring follows the public code-search benchmarks' rule, so figures compare:

* a chunk *covers* a target when it is in the target's file and, for a line target,
  shares at least one line with it;
* NDCG@10 with binary gains: each primary target counts once, at the rank of the first
  chunk that covers it; the ideal is min(10, targets whose file is in the index);
* MRR@10: 1 / rank of the first chunk covering any primary target;
* R@5: share of the primary targets covered in the top 5;
* budget metrics (``nexus.evaluation.budget``): ``R@1k`` etc., the share of the primary
  targets covered by the hits read within 1000 tokens (the crossing hit cut at a line),
  tokens to the first hit, lines and tokens of the top 10.

Secondary places are kept for reading results and are not scored.

Reports show three *styles* apart (``STYLES``), because a change that helps one and hurts
another looks like a gain over all of them: long paraphrases that avoid every identifier
(``semantic``, ``architecture``), short topical phrases as typed into a search box
(``topical``: "cookie parsing"), and names (``symbol``). Budget metrics come first.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from nexus.evaluation.budget import (
    DEFAULT_BUDGETS,
    BudgetOutcome,
    any_line,
    budget_outcome,
    summarize_budgets,
)
from nexus.evaluation.query_sets import MAX_LINE, json_record, kind_of, parse_records, text_field
from nexus.evaluation.runs import budget_cells, budget_headers, budget_record
from nexus.retrieval.budget import READ_DEPTH, Read
from nexus.retrieval.embedding import Embedder
from nexus.retrieval.index import VectorIndex
from nexus.retrieval.ranking import RankingRules
from nexus.retrieval.search import search
from nexus.types import Chunk

CATEGORIES = ("semantic", "architecture", "topical", "symbol")
#: The question styles reports show apart, and the categories each one holds.
STYLES: dict[str, tuple[str, ...]] = {
    "paraphrase": ("semantic", "architecture"),
    "topical": ("topical",),
    "symbol": ("symbol",),
}
METRICS = ("NDCG@10", "MRR@10", "R@5")
#: The columns of a per-style table, budget metrics first (what an answer costs its reader).
STYLE_COLUMNS = ("R@1k", "R@2k", "lines@10", "NDCG@10", "MRR@10")
K = 10
_EXAMPLE = (
    '{"id": "q1", "query": "where are cookies parsed", "category": "semantic", '
    '"targets": [{"file": "src/cookie.ts", "start_line": 10, "end_line": 42}]}'
)


@dataclass(frozen=True)
class Place:
    """A file, or a line range of it (1-based, inclusive), that answers a question."""

    file: str
    start_line: int | None = None
    end_line: int | None = None

    def covered_by(self, chunk: Chunk) -> bool:
        if chunk.file != self.file:
            return False
        if self.start_line is None or self.end_line is None:
            return True
        return chunk.start_line <= self.end_line and self.start_line <= chunk.end_line

    def read_in(self, read: Read) -> bool:
        """Whether a read (part of a hit) covers the place: the rule above."""
        return any_line(self.file, self.start_line, self.end_line, read)

    def label(self) -> str:
        if self.start_line is None:
            return self.file
        return f"{self.file}:{self.start_line}-{self.end_line}"


@dataclass(frozen=True)
class Question:
    id: str
    query: str
    category: str
    targets: tuple[Place, ...]
    secondary: tuple[Place, ...] = ()
    repo: str = ""


def is_question_set(data: bytes | str) -> bool:
    """Whether a JSONL query file is in this format (its first record has ``targets``)."""
    text = data.decode("utf-8-sig", "replace") if isinstance(data, bytes) else data
    for line in text.split("\n"):
        if line.strip():
            try:
                record = json_record(line)
            except ValueError:
                return False
            return isinstance(record, dict) and "targets" in record
    return False


def parse_questions(data: bytes | str) -> list[Question]:
    """Questions from JSONL; raises ``QuerySetError`` naming every bad line."""
    return parse_records(data, question_from_dict, "question", _EXAMPLE)


def question_from_dict(record: object) -> Question:
    """A ``Question`` from one parsed record; ValueError says which field is wrong and how."""
    if not isinstance(record, dict):
        raise ValueError(f"a record must be a JSON object, not {kind_of(record)}")
    category = text_field(record, "category") or "semantic"
    if category not in CATEGORIES:
        raise ValueError(f'"category" must be one of {", ".join(CATEGORIES)}, got {category!r}')
    targets = _places(record, "targets")
    if not targets:
        raise ValueError('"targets" must list at least one place: [{"file": "src/a.py"}]')
    return Question(
        id=text_field(record, "id", required=True, numbers=True),
        query=text_field(record, "query", required=True),
        category=category,
        targets=targets,
        secondary=_places(record, "secondary"),
        repo=text_field(record, "repo"),
    )


def _places(record: dict[str, Any], key: str) -> tuple[Place, ...]:
    value = record.get(key, [])
    if not isinstance(value, list):
        raise ValueError(f'"{key}" must be a list of places, got {kind_of(value)}')
    return tuple(_place(item, f"{key}[{i}]") for i, item in enumerate(value))


def _place(item: object, where: str) -> Place:
    if not isinstance(item, dict):
        raise ValueError(f'"{where}" must be an object {{"file", "start_line", "end_line"}}')
    file = text_field(item, "file", required=True)
    start, end = item.get("start_line"), item.get("end_line")
    if start is None and end is None:
        return Place(file)
    for name, value in (("start_line", start), ("end_line", end)):
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_LINE:
            raise ValueError(
                f'"{where}.{name}" must be a line number between 1 and {MAX_LINE:,} '
                f"(or leave both lines out for a whole file), got {kind_of(value)}"
            )
    assert isinstance(start, int) and isinstance(end, int)
    if start > end:
        raise ValueError(f'"{where}": start_line {start} is after end_line {end}; swap them')
    return Place(file, start, end)


def by_file(question: Question) -> Question:
    """The question with each target's whole file as its target (one per file, in order):
    scored so, a reader is credited for reaching the right file, as benchmarks whose
    targets are files score; ours name definitions, and every report says which it used."""
    files = dict.fromkeys(place.file for place in question.targets)
    return replace(question, targets=tuple(Place(file) for file in files))


def style_of(category: str) -> str:
    """The style (``STYLES``) a question category belongs to."""
    return next(style for style, held in STYLES.items() if category in held)


# --- scoring -----------------------------------------------------------------------------


def first_ranks(chunks: Sequence[Chunk], places: Iterable[Place]) -> list[int | None]:
    """For each place, the rank (1-based) of the first chunk that covers it, or None."""
    return [
        next((rank for rank, c in enumerate(chunks, start=1) if p.covered_by(c)), None)
        for p in places
    ]


def _dcg(ranks: Iterable[int]) -> float:
    return sum(1.0 / math.log2(rank + 1) for rank in ranks)


def question_scores(
    question: Question, ranked: Sequence[Chunk], indexed_files: frozenset[str] | set[str]
) -> dict[str, float]:
    """NDCG@10, MRR@10 and R@5 of one question over its ranked chunks (best first)."""
    top = ranked[:K]
    ranks = first_ranks(top, question.targets)
    found = [r for r in ranks if r is not None]
    present = sum(1 for p in question.targets if p.file in indexed_files)
    ideal = _dcg(range(1, min(K, present) + 1))
    return {
        # a rank gains once, even when its chunk covers two targets (NDCG stays <= 1)
        "NDCG@10": _dcg(set(found)) / ideal if ideal else 0.0,
        "MRR@10": 1.0 / min(found) if found else 0.0,
        "R@5": sum(1 for r in found if r <= 5) / len(question.targets),
    }


def question_budget(
    question: Question, ranked: Sequence[Chunk], budgets: Sequence[int] = DEFAULT_BUDGETS
) -> BudgetOutcome:
    """The budget figures of one question: its primary targets read in rank order as
    deep as each budget lasts (give ``READ_DEPTH`` hits), lines and tokens of the top 10."""
    return budget_outcome(ranked, question.targets, Place.read_in, budgets, k=K)


@dataclass(frozen=True)
class QuestionRow:
    question: Question
    scores: dict[str, float]
    top: tuple[Chunk, ...]
    budget: BudgetOutcome | None = None

    def record(self) -> dict[str, Any]:
        """The row as JSON fields: id, category, the metrics, the budget figures, hits."""
        return {
            "id": self.question.id,
            "category": self.question.category,
            **self.scores,
            **budget_record(self.budget),
            "top": [f"{c.file}:{c.start_line}-{c.end_line}" for c in self.top],
        }


def summarize(
    rows: Iterable[QuestionRow], budgets: Sequence[int] = DEFAULT_BUDGETS
) -> dict[str, dict[str, float]]:
    """Mean of each metric over ``all``, per style and per category (with ``n``), and the
    budget metrics of ``summarize_budgets`` where the rows have them."""
    sums: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    spent: dict[str, list[BudgetOutcome]] = defaultdict(list)
    for row in rows:
        category = row.question.category
        groups = ("all", style_of(category)) + ((category,) if category not in STYLES else ())
        for group in groups:
            sums[group]["n"] += 1
            for name in METRICS:
                sums[group][name] += row.scores[name]
            if row.budget is not None:
                spent[group].append(row.budget)
    return {
        group: {name: (v if name == "n" else v / acc["n"]) for name, v in acc.items()}
        | summarize_budgets(spent[group], budgets)
        for group, acc in sums.items()
    }


def summary_table(
    summaries: dict[str, dict[str, dict[str, float]]],
    budgets: Sequence[int] = DEFAULT_BUDGETS,
) -> tuple[list[str], list[list[str]]]:
    """Rows ``run | group | n | R@1k ... | tokens@10 | NDCG@10 | MRR@10 | R@5``: one per
    run and group (``all``, then each style), budget metrics first."""
    headers = ["run", "group", "n", *budget_headers(budgets), *METRICS]
    rows = []
    for run, summary in summaries.items():
        for group in ("all", *STYLES):
            if group in summary:
                m = summary[group]
                rows.append(
                    [run, group, str(int(m["n"]))]
                    + budget_cells(m, budgets)
                    + [f"{m[n]:.3f}" for n in METRICS]
                )
    return headers, rows


def question_table(answers: dict[str, list[QuestionRow]]) -> tuple[list[str], list[list[str]]]:
    """Rows ``question | category | NDCG@10 per run | first hit per run``."""
    runs = list(answers)
    headers = ["question", "category", *(f"{r} NDCG@10" for r in runs)]
    headers += [f"{r} first hit" for r in runs]
    rows = []
    for i, row in enumerate(answers[runs[0]]):
        cells = [row.question.query, row.question.category]
        cells += [f"{answers[r][i].scores['NDCG@10']:.2f}" for r in runs]
        for r in runs:
            top = answers[r][i].top
            cells.append(f"{top[0].file}:{top[0].start_line}" if top else "")
        rows.append(cells)
    return headers, rows


def evaluate_questions(
    questions: Sequence[Question],
    index: VectorIndex,
    embedder: Embedder,
    lexical_weight: float = 0.0,
    ranking: RankingRules | None = None,
    budgets: Sequence[int] = DEFAULT_BUDGETS,
    answered: Sequence[Sequence[Chunk]] | None = None,
) -> list[QuestionRow]:
    """Search ``index`` for every question (embedded in one batch) and score the top 10,
    with the budget figures at ``budgets`` tokens (read past the top 10 while they last).
    ``answered``: each question's hits (``max(K, READ_DEPTH)`` deep) as something else
    answered them (``nexus eval``: ``Workspace.search``, re-scoring included), scored
    instead of searching ``index`` here."""
    files = {c.file for c in index.chunks}
    if answered is None:
        vectors = embedder.encode([q.query for q in questions])
        answered = [
            [
                hit.chunk
                for hit in search(
                    index,
                    vec,
                    question.query,
                    max(K, READ_DEPTH),
                    rules=ranking,
                    lexical_weight=lexical_weight,
                    exact=True,
                )
            ]
            for question, vec in zip(questions, vectors, strict=True)
        ]
    rows = []
    for question, deep in zip(questions, answered, strict=True):
        deep = list(deep)
        top = tuple(deep[:K])
        scores = question_scores(question, top, files)
        rows.append(QuestionRow(question, scores, top, question_budget(question, deep, budgets)))
    return rows
