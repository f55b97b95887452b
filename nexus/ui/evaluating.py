"""The Evaluate page's answers: a query set read or made, checked against the repository,
and scored on the line-based and AST indexes, with the tables and figures drawn from it.

The indexes are the background builds Search shares (``indexing.index_build``): opened
from a saved index or built, resumed if cancelled. What is scored over them is kept for
every session that asks with the same repository, settings and query set (``cache``).
No drawing here: the page and ``nexus.ui.evaluate_views`` draw what these return.
"""

from __future__ import annotations

import hashlib
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd
import plotly.graph_objects as go

from nexus.config import ChunkConfig
from nexus.evaluation import runs  # called as ``runs.compare``: tests count its calls
from nexus.evaluation.generate import QuerySetResult, blanked_repository, blanks_docs, generate
from nexus.evaluation.query_sets import (
    Query,
    parse_queries,
    unreachable_summary,
    unreachable_table,
    unreachable_targets,
)
from nexus.evaluation.questions import (
    Question,
    QuestionRow,
    by_file,
    evaluate_questions,
    is_question_set,
    parse_questions,
    question_table,
    summarize,
    summary_table,
)
from nexus.ingest.sources import Repository
from nexus.retrieval.ranking import rules_for
from nexus.runtime.builds import IndexBuild
from nexus.types import FileInfo
from nexus.ui import cache, indexing, views


@dataclass(frozen=True)
class QuerySet:
    """A query set as the page scores it: queries (one target each, by variant) or
    questions (several targets each, by category), never both."""

    digest: str  # sha256 of the file: what is computed over the set is kept by it
    queries: tuple[Query, ...]
    questions: tuple[Question, ...]
    is_questions: bool
    docs_blanked: bool  # a generated set: scored on the repository, doc comments blanked


def read_query_set(data: bytes) -> QuerySet:
    """The query set in ``data`` (JSONL), a question set when its records say so.

    Raises:
        QuerySetError: records that are not queries (or questions), each one listed.
    """
    questions_format = is_question_set(data)
    return QuerySet(
        digest=hashlib.sha256(data).hexdigest(),
        queries=() if questions_format else tuple(parse_queries(data)),
        questions=tuple(parse_questions(data)) if questions_format else (),
        is_questions=questions_format,
        docs_blanked=blanks_docs(data),
    )


def generated_set(repo: Repository, repo_key: str, cap: int, seed: str) -> QuerySetResult:
    """The query set made from ``repo``'s doc comments (at most ``cap`` targets, sampled
    by ``seed``), made once for every session."""
    return cache.cached(
        ("generated_queries", repo_key, cap, seed),
        lambda: generate(repo, cap=cap, seed=seed),
        lambda result: 1_000 * len(result.records) + 1_000,
    )


def example_rows(made: QuerySetResult) -> pd.DataFrame:
    """A few of a generated set's doc queries, each with where its target lives."""
    return pd.DataFrame(
        [
            {
                "query": r["query"],
                "file": r["target"]["file"],
                "line": r["target"]["start_line"],
                "target": r["target"]["qualname"],
            }
            for r in made.examples()
        ],
        columns=["query", "file", "line", "target"],
    )


def indexed_repository(repo: Repository, repo_key: str, query_set: QuerySet) -> Repository:
    """What ``query_set`` is scored on: ``repo``, or its copy with the doc comments blanked
    (lines kept) when the set asks for it, so the answer is not in the indexed text."""
    if not query_set.docs_blanked:
        return repo
    return cache.cached(
        ("docs_blanked", repo_key),
        lambda: blanked_repository(repo),
        lambda blanked: sum(len(v) for v in blanked.contents.values()),
    )


def unchunked_target_files(questions: Iterable[Question], files: Iterable[FileInfo]) -> list[str]:
    """The files the questions point to that are not chunked here (they count as misses)."""
    chunked = {info.path for info in files if info.chunkable}
    return sorted({place.file for q in questions for place in q.targets} - chunked)


@dataclass(frozen=True)
class Unreachable:
    """Queries whose target no chunk can hit: one sentence, and a row per file."""

    summary: str
    table: pd.DataFrame


def unreachable(queries: Sequence[Query], files: Iterable[FileInfo]) -> Unreachable | None:
    """What to say about the queries whose target file is absent or not chunked (None:
    every target can be hit)."""
    found = unreachable_targets(queries, files)
    if not found:
        return None
    return Unreachable(
        unreachable_summary(found, len(queries)), views.table(*unreachable_table(found))
    )


def index_builds(
    repo: Repository, config: ChunkConfig, docs_blanked: bool
) -> tuple[IndexBuild, IndexBuild | None]:
    """The AST build, and the line-based one once the AST one is complete (the builds
    Search shares, resumed if cancelled).

    Raises:
        ModelUnavailableError: the embedding model is missing.
    """
    ast_build = indexing.index_build(repo, config, "ast", resume=True, docs_blanked=docs_blanked)
    if not ast_build.progress().complete:
        return ast_build, None
    lines_build = indexing.index_build(
        repo, config, "lines", resume=True, docs_blanked=docs_blanked
    )
    return ast_build, lines_build


def complete_builds(
    builds: tuple[IndexBuild, IndexBuild | None],
) -> tuple[IndexBuild, IndexBuild] | None:
    """Both builds (AST, line-based) once both are complete; None while one is not."""
    ast_build, lines_build = builds
    if lines_build is None or not lines_build.progress().complete:
        return None
    return ast_build, lines_build


def embedder_name(config: ChunkConfig) -> str:
    """The name of the model the indexes are built with."""
    return indexing.get_embedder(config.words_view).name


def _scores_key(repo: Repository, config: ChunkConfig, query_set: QuerySet) -> tuple[Hashable, ...]:
    """What scores over both indexes depend on: the builds, the set and the ranking."""
    index_key = indexing.index_key(repo, config, query_set.docs_blanked)
    return (index_key, query_set.digest, config.lexical_weight, config.ranking)


@dataclass(frozen=True)
class QuestionReport:
    """A question set's scores as the page shows them."""

    summary: pd.DataFrame  # a row per index and question category
    budget_figure: go.Figure  # targets read within each budget, a line per index
    per_question: pd.DataFrame  # NDCG@10 and first hit per question and index


def question_report(
    repo: Repository,
    config: ChunkConfig,
    query_set: QuerySet,
    builds: tuple[IndexBuild, IndexBuild],
    whole_files: bool = False,
) -> QuestionReport:
    """``query_set``'s questions on both complete indexes, scored once for every session
    (the AST build's embedder embeds them for both); ``whole_files``: each target's whole
    file is the target (``by_file``)."""
    ast_build, lines_build = builds
    rules = rules_for(config)
    questions = query_set.questions
    if whole_files:
        questions = tuple(by_file(q) for q in questions)
    key = _scores_key(repo, config, query_set)
    answers = cache.cached(
        ("questions", whole_files, *key),
        lambda: {
            label: evaluate_questions(
                questions, build.index(), ast_build.embedder, config.lexical_weight, rules
            )
            for label, build in (("line-based", lines_build), ("AST", ast_build))
        },
        lambda _: 4_000 * len(questions),
    )
    return question_views(answers)


def question_views(answers: dict[str, list[QuestionRow]]) -> QuestionReport:
    """The tables and the budget chart of each run's scored questions."""
    summaries = {run: summarize(rows) for run, rows in answers.items()}
    figure = views.budget_chart(
        views.budget_curves({run: summary["all"] for run, summary in summaries.items()}),
        "Targets read within a budget (all questions; higher is better)",
    )
    return QuestionReport(
        views.table(*summary_table(summaries)), figure, views.table(*question_table(answers))
    )


@dataclass(frozen=True)
class ComparisonViews:
    """A query set's scores on both indexes as the page draws them (kept objects: the
    callers must not change them)."""

    metrics: Any  # per index and variant (an Arrow table, as ``st.dataframe`` takes it)
    quality: go.Figure  # R@1k, R@2k and MRR@10 per variant and index
    cost: go.Figure  # lines the top 10 show
    budget: go.Figure  # targets read within each budget
    per_query: Any  # rank, score and margin change per query (Arrow)


def comparison_views(
    repo: Repository,
    config: ChunkConfig,
    query_set: QuerySet,
    builds: tuple[IndexBuild, IndexBuild],
) -> ComparisonViews:
    """``query_set``'s queries on both complete indexes (top 10, the settings' keyword
    weight and ranking): scored once, and each table and figure built once, for every
    session; a revisit with nothing changed reads them back."""
    ast_build, lines_build = builds
    key = _scores_key(repo, config, query_set)
    queries = query_set.queries
    comparison = cache.cached(
        ("comparison", *key),
        lambda: runs.compare(
            queries,
            lines_build.index(),
            ast_build.index(),
            ast_build.embedder,
            k=10,
            lexical_weight=config.lexical_weight,
            ranking=rules_for(config),
        ),
        lambda _: 2_000 * len(queries),  # a few numbers and labels per query
    )
    reports = (comparison.baseline, comparison.candidate)
    bars = cache.shared("eval_bars", key, lambda: views.metric_bars(comparison))
    return ComparisonViews(
        metrics=cache.shared_table(
            "eval_metrics", key, lambda: views.table(*runs.metrics_table(*reports))
        ),
        quality=cache.shared("eval_quality", key, lambda: views.quality_chart(bars)),
        cost=cache.shared("eval_cost", key, lambda: views.cost_chart(bars)),
        budget=cache.shared(
            "eval_budget",
            key,
            lambda: views.budget_chart(
                views.budget_curves({r.label: r.metrics["all"] for r in reports}),
                "Targets read within a budget (all queries; higher is better)",
            ),
        ),
        per_query=cache.shared_table(
            "eval_queries", key, lambda: views.table(*runs.comparison_table(comparison))
        ),
    )
