"""The budget rule: whole hits while they fit, the crossing hit cut at a line, nothing after."""

from __future__ import annotations

import pytest

from nexus.chunking.tokens import count_tokens
from nexus.config import DEFAULT_ENCODING
from nexus.evaluation.budget import any_line, budget_outcome, half_the_lines, summarize_budgets
from nexus.retrieval.budget import line_tokens, read_within, tokens_used
from nexus.types import Chunk


def _chunk(file: str, start: int, lines: int, word: str = "alpha") -> Chunk:
    text = "\n".join(f"{word} {i} = compute({i})" for i in range(lines)) + "\n"
    return Chunk(
        id=f"{file}:{start}",
        repo="r",
        file=file,
        language="python",
        strategy="ast",
        start_line=start,
        end_line=start + lines - 1,
        start_byte=0,
        end_byte=len(text.encode()),
        token_count=count_tokens(text, DEFAULT_ENCODING),
        text=text,
    )


def test_line_tokens_count_each_line_with_its_break():
    chunk = _chunk("a.py", 1, 7)
    counts = line_tokens(chunk.text)
    assert len(counts) == 7 and all(count > 0 for count in counts)
    assert sum(counts) == sum(
        count_tokens(line + "\n", DEFAULT_ENCODING) for line in chunk.text.split("\n")[:7]
    )
    assert len(line_tokens("one\ntwo")) == 2


def test_hits_that_fit_are_read_whole_and_the_crossing_one_is_cut():
    first, second, third = _chunk("a.py", 1, 10), _chunk("b.py", 20, 10), _chunk("c.py", 5, 3)
    per_line = line_tokens(first.text)[0]
    budget = sum(line_tokens(first.text)) + 4 * per_line  # first whole, four lines of second
    reads = read_within([first, second, third], budget)
    assert [read.file for read in reads] == ["a.py", "b.py"]
    assert not reads[0].cut and reads[0].lines == 10
    assert reads[1].cut and (reads[1].start_line, reads[1].end_line) == (20, 23)
    assert reads[1].text == "\n".join(second.text.split("\n")[:4])
    assert tokens_used(reads) <= budget


@pytest.mark.parametrize("budget", [0, 1, 5, 17, 100, 333, 1000])
def test_reads_never_exceed_the_budget(budget):
    hits = [_chunk(f"f{i}.py", 1, 3 + 5 * i) for i in range(6)]
    reads = read_within(hits, budget)
    assert tokens_used(reads) <= budget
    assert [read.rank for read in reads] == list(range(1, len(reads) + 1))


def test_a_hit_whose_first_line_does_not_fit_is_left_out():
    assert read_within([_chunk("a.py", 1, 5)], 1) == []


def test_negative_budget_is_refused():
    with pytest.raises(ValueError, match="0 or more"):
        read_within([], -1)


def _covers(target, read):
    return any_line(*target, read)


def test_recall_counts_the_cut_hit_only_up_to_its_last_line():
    filler, answer = _chunk("a.py", 1, 10), _chunk("b.py", 100, 20)
    filler_tokens = sum(line_tokens(filler.text))
    line = line_tokens(answer.text)[0]
    early = ("b.py", 101, 102)  # inside the first lines of the answer
    late = ("b.py", 115, 119)  # past the cut
    outcome = budget_outcome(
        [filler, answer], [early, late], _covers, budgets=(filler_tokens + 5 * line, 10_000)
    )
    assert outcome.recall[filler_tokens + 5 * line] == 0.5  # a multi-target question, half found
    assert outcome.recall[10_000] == 1.0
    assert outcome.tokens_to_first_hit == filler_tokens + sum(line_tokens(answer.text))
    assert outcome.lines_top_k == 30


def test_no_hit_means_no_first_hit_and_zero_recall():
    outcome = budget_outcome([_chunk("a.py", 1, 4)], [("z.py", None, None)], _covers, budgets=(50,))
    assert outcome.recall == {50: 0.0} and outcome.tokens_to_first_hit is None
    summary = summarize_budgets([outcome], budgets=(50,))
    assert summary["R@50"] == 0.0


def test_half_the_lines_rule():
    read = read_within([_chunk("a.py", 10, 10)], None)[0]  # lines 10-19
    assert half_the_lines("a.py", 15, 24, read)  # 5 of 10 lines
    assert not half_the_lines("a.py", 16, 25, read)  # 4 of 10
    assert not half_the_lines("b.py", 10, 19, read)


def test_summary_takes_the_median_tokens_to_first_hit():
    hit = _chunk("a.py", 1, 2)
    outcomes = [
        budget_outcome([hit], [("a.py", 1, 1)], _covers, budgets=(1000,)),
        budget_outcome([_chunk("x.py", 1, 8), hit], [("a.py", 1, 1)], _covers, budgets=(1000,)),
        budget_outcome([hit], [("q.py", 1, 1)], _covers, budgets=(1000,)),
    ]
    summary = summarize_budgets(outcomes, budgets=(1000,))
    firsts = sorted(o.tokens_to_first_hit for o in outcomes[:2])
    assert summary["tokens to first hit"] == sum(firsts) / 2
    assert summary["R@1k"] == pytest.approx(2 / 3)


def test_a_budget_larger_than_the_top_10_reads_hits_11_and_on():
    small = [_chunk(f"f{i}.py", 1, 3) for i in range(10)]  # ten cheap misses
    answer = _chunk("answer.py", 1, 3)
    spent = sum(sum(line_tokens(c.text)) for c in small)
    outcome = budget_outcome([*small, answer], [("answer.py", 1, 1)], _covers, budgets=(4000,))
    assert spent + sum(line_tokens(answer.text)) <= 4000
    assert outcome.recall[4000] == 1.0  # the 11th hit is read: the budget is not spent
    assert outcome.tokens_to_first_hit == spent + sum(line_tokens(answer.text))
    assert outcome.lines_top_k == 30  # lines@10 still counts the top 10 only
