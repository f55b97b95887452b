"""bench/retrieval/per_token_peer.py: the peer's run files scored with Nexus's own functions, per
split and category, and the check that each hit's lines are the lines of its file."""

from __future__ import annotations

import json
import math

import pytest

from bench.retrieval.per_token_peer import (
    groups,
    mismatched_hits,
    read_run,
    score_docs,
    score_repo,
    style_groups,
)
from nexus.evaluation.questions import parse_questions
from nexus.retrieval.budget import line_tokens

QUESTIONS = parse_questions(
    "\n".join(
        json.dumps(q)
        for q in (
            {
                "id": "r-1",
                "category": "architecture",
                "query": "how do a and b fit",
                "targets": [
                    {"file": "a.py", "start_line": 10, "end_line": 20},
                    {"file": "b.py", "start_line": 1, "end_line": 5},
                ],
            },
            {"id": "r-2", "category": "symbol", "query": "B", "targets": [{"file": "b.py"}]},
        )
    )
)
OTHER = "x = 1\ny = 2\nz = 3\n"
NEAR_A = "".join(f"a{i} = {i}\n" for i in range(8, 13))


def run_file(tmp_path, records):
    path = tmp_path / "r.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return read_run(path)


def hit(file, start, end, text):
    return {"file": file, "start_line": start, "end_line": end, "score": 1.0, "text": text}


def test_multi_target_question_scores_ndcg_recall_and_budget(tmp_path):
    hits = run_file(
        tmp_path,
        [
            {
                "id": "r-1",
                "query": "",
                "results": [hit("c.py", 1, 3, OTHER), hit("a.py", 8, 12, NEAR_A)],
            }
        ],
    )
    first, second = score_repo("tune", QUESTIONS, hits, {"a.py", "b.py", "c.py"})
    # Target a.py:10-20 found at rank 2, b.py not found; both files are indexed.
    assert first.scores["NDCG@10"] == pytest.approx((1 / math.log2(3)) / (1 + 1 / math.log2(3)))
    assert first.scores["MRR@10"] == 0.5
    assert first.scores["R@5"] == 0.5
    assert first.budget.recall[1000] == 0.5
    assert first.budget.tokens_to_first_hit == sum(line_tokens(OTHER)) + sum(line_tokens(NEAR_A))
    assert first.budget.lines_top_k == 8
    # A question without a line in the run file is scored as a miss, not skipped.
    assert second.scores["NDCG@10"] == 0.0 and second.budget.tokens_to_first_hit is None


def test_groups_by_split_and_category(tmp_path):
    hits = run_file(tmp_path, [{"id": "r-2", "query": "B", "results": [hit("b.py", 1, 1, "B\n")]}])
    tune = score_repo("tune", QUESTIONS, hits, {"b.py"})
    heldout = score_repo("heldout", QUESTIONS[1:], hits, {"b.py"})
    summary = groups(tune + heldout)
    assert list(summary) == ["tune", "heldout", "both"]
    assert summary["both"]["all"]["n"] == 3
    assert summary["heldout"]["symbol"]["NDCG@10"] == 1.0
    assert summary["tune"]["architecture"]["NDCG@10"] == 0.0
    assert "architecture" not in summary["heldout"]


def test_the_fresh_set_is_shown_alone_and_left_out_of_both(tmp_path):
    hits = run_file(tmp_path, [{"id": "r-2", "query": "B", "results": [hit("b.py", 1, 1, "B\n")]}])
    rows = score_repo("tune", QUESTIONS, hits, {"b.py"}) + score_repo(
        "fresh", QUESTIONS[1:], hits, {"b.py"}
    )
    by_category, by_style = groups(rows), style_groups(rows)
    assert list(by_category) == list(by_style) == ["tune", "fresh", "both"]
    assert by_category["fresh"]["symbol"]["n"] == by_style["fresh"]["symbol"]["n"] == 1
    # ``both`` sums the two halves only: the tuning half's two questions, not the fresh one.
    assert by_category["both"]["all"]["n"] == by_style["both"]["mean of styles"]["n"] == 2


def test_style_groups_weigh_each_style_the_same(tmp_path):
    hits = run_file(tmp_path, [{"id": "r-2", "query": "B", "results": [hit("b.py", 1, 1, "B\n")]}])
    summary = style_groups(score_repo("tune", QUESTIONS, hits, {"a.py", "b.py"}))
    tune = summary["tune"]
    # The architecture question is a paraphrase, missed; the symbol question is found.
    assert list(tune) == ["paraphrase", "symbol", "mean of styles"]
    assert tune["paraphrase"]["NDCG@10"] == 0.0 and tune["symbol"]["NDCG@10"] == 1.0
    assert tune["mean of styles"]["n"] == 2
    assert tune["mean of styles"]["NDCG@10"] == 0.5
    assert tune["mean of styles"]["lines@10"] == pytest.approx(0.5)


def test_mismatched_hits_names_hits_whose_lines_are_not_their_file(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "m.py").write_text("def f():\n    return 1\n\n\ndef g():\n    pass\n")
    hits = run_file(
        tmp_path,
        [
            {
                "id": "q",
                "query": "",
                "results": [
                    hit("pkg/m.py", 1, 2, "def f():\n    return 1\n"),
                    hit("pkg/m.py", 5, 5, "g():"),  # part of a line: semble cuts at characters
                    hit("pkg/m.py", 1, 2, "def g():\n    pass\n"),  # wrong lines
                    hit("m.py", 1, 1, "def f():"),  # not relative to the root
                ],
            }
        ],
    )
    assert mismatched_hits(tmp_path, hits) == ["pkg/m.py:1-2", "m.py:1-1"]


def test_doc_set_scores_overlap50_and_budget_by_variant(tmp_path):
    queries = tmp_path / "queries.jsonl"
    target = {"file": "p/a.js", "start_line": 10, "end_line": 13}
    queries.write_text(
        json.dumps({"id": "d-doc", "variant": "doc", "query": "adds", "target": target})
        + "\n"
        + json.dumps({"id": "d-name", "variant": "name", "query": "add", "target": target})
        + "\n"
    )
    run = tmp_path / "doc-dev.jsonl"
    half = "".join(f"line {i}\n" for i in range(1, 13))  # lines 1-12: 3 of the 4 target lines
    one = "line 13\n"  # 1 of 4: not a hit under overlap50
    run.write_text(
        json.dumps(
            {"id": "d-doc", "results": [hit("p/b.js", 1, 1, one), hit("p/a.js", 1, 12, half)]}
        )
        + "\n"
        + json.dumps({"id": "d-name", "results": [hit("p/a.js", 13, 13, one)]})
        + "\n"
    )
    docs = score_docs(run, queries)
    assert docs["doc"]["MRR@10"] == 0.5 and docs["doc"]["R@1"] == 0.0
    assert docs["doc"]["lines@5"] == 13 and docs["doc"]["R@1k"] == 1.0
    assert docs["name"]["R@10"] == 0.0 and docs["name"]["R@1k"] == 0.0
    assert docs["all"]["n"] == 2
