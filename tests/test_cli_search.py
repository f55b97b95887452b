"""``nexus search --budget`` and batch files: what a reader gets within a token budget,
and every bad record named at once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nexus.cli import main
from nexus.retrieval.budget import line_tokens
from tests.helpers import on_quality_tier

TARGET = str(Path(__file__).resolve().parents[1] / "sample_repos" / "ts-payments")


@pytest.fixture(autouse=True)
def _fake_model(monkeypatch, tmp_path):
    from nexus.cli import indexes
    from nexus.ui.fake_embedder import HashingEmbedder

    monkeypatch.setattr(indexes, "cached_embedder", lambda args, config: HashingEmbedder())
    monkeypatch.setenv("NEXUS_CACHE_DIR", str(tmp_path / "cache"))


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(on_quality_tier(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("budget", [1, 25, 120, 400, 5000])
def test_budget_output_never_exceeds_the_budget(capsys, budget):
    code, out, _ = run(
        capsys, "search", TARGET, "refund a payment", "--json", "--budget", str(budget)
    )
    assert code == 0
    record = json.loads(out)
    hits = record["AST"]
    assert record["budget"] == budget
    assert record["tier"] in ("quality", "fast") and record["model"]  # which answered
    assert sum(h["tokens"] for h in hits) == record["tokens_used"]["AST"] <= budget
    for hit in hits:  # the text handed out costs no more than the tokens it claims
        assert sum(line_tokens(hit["text"])) <= hit["tokens"]
        # a line of its own per line of its range (a cut may end on a blank line)
        assert hit["end_line"] - hit["start_line"] + 1 == len(hit["text"].split("\n"))
    assert [h["rank"] for h in hits] == list(range(1, len(hits) + 1))
    assert all(not h["cut"] for h in hits[:-1])
    deep = ["-k", "50"]  # a budget reads past -k (default 10) as deep as it lasts
    whole = json.loads(run(capsys, "search", TARGET, "refund a payment", "--json", *deep)[1])
    whole = whole["AST"]
    if hits and hits[-1]["cut"]:
        assert hits[-1]["end_line"] < whole[len(hits) - 1]["end_line"]
    assert [(h["file"], h["start_line"]) for h in hits] == [
        (h["file"], h["start_line"]) for h in whole[: len(hits)]
    ]
    if budget == 5000:
        assert len(hits) > 10  # past the default k


def test_table_output_says_the_tokens_used_and_marks_the_cut(capsys):
    code, out, _ = run(capsys, "search", TARGET, "refund a payment", "--budget", "150")
    assert code == 0 and "of 150 tokens" in out and "(cut)" in out


def test_a_batch_record_may_set_its_budget_the_flag_is_the_default(capsys, tmp_path):
    queries = tmp_path / "q.jsonl"
    queries.write_text(
        '{"id": "small", "query": "refund a payment", "budget": 40}\n'
        '{"id": "default", "query": "refund a payment"}\n'
    )
    code, out, _ = run(capsys, "search", TARGET, "--queries", str(queries), "--budget", "300")
    assert code == 0
    small, default = (json.loads(line) for line in out.splitlines())
    assert (small["budget"], default["budget"]) == (40, 300)
    assert small["tokens_used"]["AST"] <= 40 < default["tokens_used"]["AST"] <= 300
    assert all({"tokens", "cut"} <= set(h) for h in small["AST"])


def test_a_batch_file_names_every_bad_line_at_once(capsys, tmp_path):
    queries = tmp_path / "q.jsonl"
    queries.write_text(
        '{"id": 1, "query": "fine"}\n'
        "{not json\n"
        '{"id": 3}\n'
        "plain text is a query\n"
        '{"query": "x", "budget": 0}\n'
        '{"query": "y", "budget": "lots"}\n'
    )
    code, out, err = run(capsys, "search", TARGET, "--queries", str(queries))
    assert code == 2 and out == ""
    assert "4 bad record(s)" in err
    for line in ("line 2: not valid JSON", 'line 3: a record needs a non-empty "query"'):
        assert line in err
    assert 'line 5: "budget"' in err and 'line 6: "budget"' in err and "line 4" not in err


@pytest.mark.parametrize("budget", ["0", "-5"])
def test_a_budget_below_one_token_is_refused(capsys, budget):
    code, _, err = run(capsys, "search", TARGET, "refund", "--budget", budget)
    assert code == 2 and "--budget: a token budget must be at least 1 token" in err
