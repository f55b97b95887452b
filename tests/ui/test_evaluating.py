"""The Evaluate page's adapter: query sets read, checked against the repository, and the
question set's tables and chart (no Streamlit run)."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from nexus.evaluation.generate import QuerySetResult
from nexus.evaluation.query_sets import QuerySetError
from nexus.evaluation.questions import Place, Question, QuestionRow
from nexus.types import Category, FileInfo
from nexus.ui import evaluating
from tests.helpers import make_chunk

QUERY = {
    "id": "q1",
    "query": "resize the image",
    "variant": "doc",
    "target": {"file": "src/a.js", "start_line": 1, "end_line": 20},
}
QUESTION = {
    "id": "s1",
    "query": "where are images resized",
    "category": "semantic",
    "targets": [{"file": "src/a.js"}, {"file": "src/gone.js"}],
}


def _jsonl(*records: dict) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in records).encode()


def _file(path: str, category: Category = Category.SOURCE, language: str = "javascript"):
    return FileInfo(path, 100, category, language, "test")


FILES = [_file("src/a.js"), _file("dist/app.min.js", Category.MINIFIED)]


def test_a_query_set_is_read_as_queries_a_question_set_as_questions() -> None:
    queries = evaluating.read_query_set(_jsonl(QUERY))
    assert not queries.is_questions and not queries.questions
    assert [q.id for q in queries.queries] == ["q1"]
    questions = evaluating.read_query_set(_jsonl(QUESTION))
    assert questions.is_questions and not questions.queries
    assert [q.id for q in questions.questions] == ["s1"]
    assert queries.digest != questions.digest and not queries.docs_blanked


def test_a_generated_set_asks_for_the_doc_comments_blanked() -> None:
    read = evaluating.read_query_set(_jsonl({**QUERY, "blank_docs": True}))
    assert read.docs_blanked
    repo = SimpleNamespace(name="r")
    assert (
        evaluating.indexed_repository(repo, "key", evaluating.read_query_set(_jsonl(QUERY))) is repo
    )


def test_a_bad_query_set_raises_with_each_record_listed() -> None:
    with pytest.raises(QuerySetError) as caught:
        evaluating.read_query_set(b'{"id": "q1"}\n' + _jsonl(QUERY))
    assert "1 of 2 records" in caught.value.summary
    assert caught.value.problems[0].startswith("line 1:")


def test_examples_name_each_target_and_where_it_lives() -> None:
    record = {**QUERY, "target": {**QUERY["target"], "qualname": "Images.resize"}}
    made = QuerySetResult(records=[record, {**record, "id": "q2", "variant": "name"}])
    rows = evaluating.example_rows(made)
    assert rows.to_dict(orient="records") == [
        {"query": "resize the image", "file": "src/a.js", "line": 1, "target": "Images.resize"}
    ]  # doc queries only
    assert list(evaluating.example_rows(QuerySetResult(records=[])).columns) == list(rows.columns)


def test_question_targets_that_are_not_chunked_are_listed_once_in_order() -> None:
    questions = [
        Question("a", "q", "semantic", (Place("src/gone.js"), Place("dist/app.min.js"))),
        Question("b", "q", "symbol", (Place("src/a.js", 1, 2), Place("src/gone.js"))),
    ]
    assert evaluating.unchunked_target_files(questions, FILES) == [
        "dist/app.min.js",
        "src/gone.js",
    ]


def test_unreachable_targets_are_said_with_a_row_per_file() -> None:
    fine = evaluating.read_query_set(_jsonl(QUERY)).queries
    assert evaluating.unreachable(fine, FILES) is None
    away = [
        {**QUERY, "id": f"x{n}", "target": {**QUERY["target"], "file": file}}
        for n, file in enumerate(["src/nope.js", "src/nope.js", "dist/app.min.js"])
    ]
    found = evaluating.unreachable(evaluating.read_query_set(_jsonl(QUERY, *away)).queries, FILES)
    assert found is not None
    assert found.summary.startswith("3 of 4 queries name a target in 2 file(s)")
    assert list(found.table["target file"]) == ["src/nope.js", "dist/app.min.js"]
    assert list(found.table["why"]) == ["not in the repository", "not chunked (minified)"]


class _Build:
    def __init__(self, complete: bool) -> None:
        self.done = complete

    def progress(self) -> SimpleNamespace:
        return SimpleNamespace(complete=self.done)


def test_the_scores_wait_for_both_builds() -> None:
    ast, lines = _Build(True), _Build(True)
    assert evaluating.complete_builds((ast, None)) is None  # the line-based one not started
    assert evaluating.complete_builds((ast, _Build(False))) is None
    assert evaluating.complete_builds((ast, lines)) == (ast, lines)


def _row(question: Question, ndcg: float, file: str) -> QuestionRow:
    scores = {"NDCG@10": ndcg, "MRR@10": ndcg, "R@5": ndcg}
    return QuestionRow(question, scores, (make_chunk("c", file, 3, 9),))


def test_question_views_summarize_each_run_by_category() -> None:
    first = Question("a", "find the resizer", "semantic", (Place("src/a.js"),))
    second = Question("b", "resize", "symbol", (Place("src/b.js"),))
    answers = {
        "line-based": [_row(first, 0.5, "src/a.js"), _row(second, 0.0, "src/c.js")],
        "AST": [_row(first, 1.0, "src/a.js"), _row(second, 1.0, "src/b.js")],
    }
    report = evaluating.question_views(answers)
    summary = report.summary.set_index(["run", "group"])
    assert summary.loc[("AST", "all"), "NDCG@10"] == "1.000"
    assert summary.loc[("line-based", "all"), "NDCG@10"] == "0.250"
    assert summary.loc[("line-based", "symbol"), "n"] == "1"
    assert list(report.per_question["question"]) == ["find the resizer", "resize"]
    assert list(report.per_question["AST first hit"]) == ["src/a.js:3", "src/b.js:3"]
    assert [trace.name for trace in report.budget_figure.data] == ["line-based", "AST"]
