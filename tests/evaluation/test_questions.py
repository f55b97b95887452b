"""Question sets: the format (several targets, files or ranges, categories) and NDCG@10."""

from __future__ import annotations

import json
import math

import pytest

from nexus.evaluation.query_sets import QuerySetError
from nexus.evaluation.questions import (
    Place,
    Question,
    QuestionRow,
    by_file,
    evaluate_questions,
    is_question_set,
    parse_questions,
    question_scores,
    summarize,
)
from tests import helpers


def _line(**record) -> str:
    return json.dumps(record)


def test_parses_files_ranges_categories_and_secondary_places() -> None:
    data = "\n".join(
        [
            _line(
                id="q1",
                query="where are cookies parsed",
                category="semantic",
                targets=[{"file": "a.ts", "start_line": 3, "end_line": 9}, {"file": "b.ts"}],
                secondary=[{"file": "c.ts"}],
            ),
            _line(id=2, query="getCookie", category="symbol", targets=[{"file": "a.ts"}]),
            _line(id=3, query="cookie parsing", category="topical", targets=[{"file": "a.ts"}]),
        ]
    )
    first, second, third = parse_questions(data)
    assert first.targets == (Place("a.ts", 3, 9), Place("b.ts"))
    assert first.secondary == (Place("c.ts"),)
    assert (second.id, second.category) == ("2", "symbol")
    assert (third.id, third.category) == ("3", "topical")
    assert is_question_set(data)
    old_format = _line(id="q", query="x", target={"file": "a", "start_line": 1, "end_line": 2})
    assert not is_question_set(old_format)


@pytest.mark.parametrize(
    ("record", "message"),
    [
        ({"id": "q", "query": "x", "targets": []}, "at least one place"),
        ({"id": "q", "query": "x", "targets": {"file": "a"}}, "must be a list"),
        ({"id": "q", "query": "x", "category": "vibes", "targets": [{"file": "a"}]}, "category"),
        ({"id": "q", "query": "x", "targets": [{"file": "a", "start_line": 5}]}, "end_line"),
        (
            {"id": "q", "query": "x", "targets": [{"file": "a", "start_line": 9, "end_line": 2}]},
            "swap them",
        ),
        ({"query": "x", "targets": [{"file": "a"}]}, '"id"'),
    ],
)
def test_bad_records_are_named_with_a_fix(record: dict, message: str) -> None:
    with pytest.raises(QuerySetError, match="line 2") as info:
        parse_questions(
            _line(id="ok", query="x", targets=[{"file": "a"}]) + "\n" + json.dumps(record)
        )
    assert message in str(info.value)


def _question(*targets: Place) -> Question:
    return Question("q", "x", "semantic", targets)


def _chunks(*spans: tuple[str, int, int]):
    return [helpers.make_chunk(f"c{i}", f, s, e) for i, (f, s, e) in enumerate(spans)]


def test_ndcg_on_hand_checked_examples() -> None:
    question = _question(Place("a.ts", 10, 20), Place("b.ts"))
    files = {"a.ts", "b.ts"}
    # Both targets at ranks 1 and 2: perfect.
    ranked = _chunks(("a.ts", 15, 30), ("b.ts", 1, 5))
    assert question_scores(question, ranked, files)["NDCG@10"] == pytest.approx(1.0)
    # a.ts at rank 2 (rank 1 misses its lines), b.ts at rank 3.
    ranked = _chunks(("a.ts", 30, 40), ("a.ts", 1, 10), ("b.ts", 1, 5))
    scores = question_scores(question, ranked, files)
    ideal = 1 + 1 / math.log2(3)
    assert scores["NDCG@10"] == pytest.approx((1 / math.log2(3) + 1 / math.log2(4)) / ideal)
    assert scores["MRR@10"] == pytest.approx(0.5)
    assert scores["R@5"] == pytest.approx(1.0)
    # A target counts once: two chunks covering a.ts give no extra gain.
    ranked = _chunks(("a.ts", 10, 12), ("a.ts", 13, 20))
    assert question_scores(question, ranked, files)["NDCG@10"] == pytest.approx(1 / ideal)
    # A target whose file is not indexed leaves the ideal: one of one present, found first.
    assert question_scores(question, _chunks(("a.ts", 1, 10)), {"a.ts"})["NDCG@10"] == 1.0
    # Nothing found.
    assert question_scores(question, _chunks(("c.ts", 1, 9)), files)["NDCG@10"] == 0.0
    # A rank gains once: one chunk covering two targets of a file scores below 1, never above.
    nested = _question(Place("a.ts", 10, 20), Place("a.ts", 12, 14))
    one = question_scores(nested, _chunks(("a.ts", 1, 30)), {"a.ts"})
    assert one["NDCG@10"] == pytest.approx(1 / ideal)
    assert one["R@5"] == 1.0


def test_by_file_credits_any_hit_in_a_target_file_once_per_file() -> None:
    question = _question(Place("a.ts", 10, 20), Place("a.ts", 40, 50), Place("b.ts", 3, 4))
    whole = by_file(question)
    assert whole.targets == (Place("a.ts"), Place("b.ts"))
    assert (whole.id, whole.query, whole.category) == (question.id, question.query, "semantic")
    files = {"a.ts", "b.ts"}
    # A hit of a.ts far from both ranges misses the definitions but reaches the file.
    ranked = _chunks(("a.ts", 100, 120), ("b.ts", 3, 4))
    assert question_scores(question, ranked, files)["MRR@10"] == pytest.approx(0.5)
    assert question_scores(whole, ranked, files)["NDCG@10"] == pytest.approx(1.0)


def test_summaries_per_category() -> None:
    semantic = Question("s", "x", "semantic", (Place("a.ts"),))
    symbol = Question("y", "x", "symbol", (Place("a.ts"),))
    topical = Question("t", "x y", "topical", (Place("a.ts"),))
    rows = [
        QuestionRow(semantic, {"NDCG@10": 1.0, "MRR@10": 1.0, "R@5": 1.0}, ()),
        QuestionRow(symbol, {"NDCG@10": 0.0, "MRR@10": 0.0, "R@5": 0.0}, ()),
        QuestionRow(topical, {"NDCG@10": 0.5, "MRR@10": 0.5, "R@5": 1.0}, ()),
    ]
    summary = summarize(rows)
    assert summary["all"]["NDCG@10"] == 0.5
    assert summary["topical"] == {"n": 1, "NDCG@10": 0.5, "MRR@10": 0.5, "R@5": 1.0}
    assert summary["symbol"]["n"] == 1
    assert summary["semantic"]["MRR@10"] == 1.0


def _lines_chunk(chunk_id: str, file: str, start: int, end: int):
    text = "\n".join(f"value_{n} = compute({n})" for n in range(start, end + 1)) + "\n"
    return helpers.make_chunk(chunk_id, file, start, end, text=text)


def test_budget_metrics_on_a_question_with_two_targets() -> None:
    from nexus.evaluation.questions import question_budget
    from nexus.retrieval.budget import line_tokens

    question = _question(Place("a.ts", 10, 20), Place("b.ts", 3, 4))
    first, miss, second = (
        _lines_chunk("c1", "a.ts", 1, 12),  # covers a.ts 10-20 by its lines 10-12
        _lines_chunk("c2", "c.ts", 1, 30),
        _lines_chunk("c3", "b.ts", 1, 6),
    )
    cost = [sum(line_tokens(c.text)) for c in (first, miss, second)]
    # Within the first hit: one target of two. The second needs the whole miss read
    # first, then lines 1-3 of b.ts (a cut hit counts up to its last line read).
    b_to_line_3 = sum(line_tokens(second.text)[:3])
    budgets = (cost[0], cost[0] + cost[1] + b_to_line_3 - 1, cost[0] + cost[1] + b_to_line_3)
    outcome = question_budget(question, [first, miss, second], budgets)
    assert [outcome.recall[b] for b in budgets] == [0.5, 0.5, 1.0]
    assert outcome.tokens_to_first_hit == cost[0]
    assert outcome.lines_top_k == 12 + 30 + 6 and outcome.tokens_top_k == sum(cost)
    rows = [QuestionRow(question, {"NDCG@10": 1.0, "MRR@10": 1.0, "R@5": 1.0}, (), outcome)]
    summary = summarize(rows, budgets)["all"]
    assert summary[f"R@{cost[0] / 1000:g}k" if cost[0] >= 1000 else f"R@{cost[0]}"] == 0.5
    assert summary["tokens to first hit"] == cost[0]
    record = rows[0].record()
    assert record["lines@10"] == 48 and record["tokens to first hit"] == cost[0]


def test_evaluate_questions_reads_the_budgets_past_the_top_10() -> None:
    from nexus.retrieval.index import VectorIndex
    from nexus.retrieval.search import search
    from nexus.ui.fake_embedder import HashingEmbedder

    embedder = HashingEmbedder()
    chunks = [
        helpers.make_chunk(f"c{i}", f"f{i}.js", 1, 1, text=f"function c{i}() {{ return {i}; }}")
        for i in range(15)
    ]
    index = VectorIndex.from_chunks(chunks, embedder)
    query = "return the value"
    ranked = search(index, embedder.encode([query])[0], query, 15, exact=True)
    eleventh = ranked[10].chunk.file  # fifteen one-line hits cost far less than 1,000 tokens
    question = Question("q", query, "semantic", (Place(eleventh),))
    (row,) = evaluate_questions([question], index, embedder)
    assert len(row.top) == 10 and row.scores["NDCG@10"] == 0.0
    assert row.budget is not None and row.budget.recall[1000] == 1.0


def test_summaries_show_each_style_apart_budget_metrics_first() -> None:
    from nexus.evaluation.questions import summary_table

    asked = [("a", "semantic"), ("b", "architecture"), ("c", "topical"), ("d", "symbol")]
    rows = [
        QuestionRow(
            Question(qid, "x", cat, (Place("a.ts"),)), {"NDCG@10": s, "MRR@10": s, "R@5": s}, ()
        )
        for (qid, cat), s in zip(asked, (1.0, 0.0, 0.5, 0.25), strict=True)
    ]
    summary = summarize(rows)
    assert summary["paraphrase"]["n"] == 2 and summary["paraphrase"]["NDCG@10"] == 0.5
    assert summary["topical"]["NDCG@10"] == 0.5
    assert summary["symbol"]["NDCG@10"] == 0.25
    headers, body = summary_table({"run": summary})
    assert [row[1] for row in body] == ["all", "paraphrase", "topical", "symbol"]
    assert headers.index("R@1k") < headers.index("NDCG@10")
