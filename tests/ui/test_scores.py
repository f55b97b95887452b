"""The Search page's score views: one colour per part in every chart, target metrics."""

from __future__ import annotations

from nexus.evaluation.metrics import QueryOutcome
from nexus.retrieval.ranking import ScorePart
from nexus.retrieval.search import Hit
from nexus.ui.scores import parts_figure, target_metrics
from tests.helpers import make_chunk


def _hit(rank: int, *parts: tuple[str, float]) -> Hit:
    chunk = make_chunk(f"c{rank}", "src/a.ts", rank, rank + 1)
    score = sum(value for _, value in parts)
    return Hit(chunk, score, rank, rank, tuple(ScorePart(n, v) for n, v in parts))


def test_a_part_has_one_colour_in_both_columns_whatever_the_order_it_appears_in():
    lines = parts_figure([_hit(1, ("dense", 0.5), ("test file", -0.1), ("keyword", 0.2))])
    ast = parts_figure([_hit(1, ("defines", 0.5), ("keyword", 0.3), ("dense", 0.4))])
    colours = [{t.name: t.marker.color for t in fig.data} for fig in (lines, ast)]
    for name in set(colours[0]) & set(colours[1]):
        assert colours[0][name] == colours[1][name], name
    every = {**colours[0], **colours[1]}
    assert len(set(every.values())) == len(every)  # no two parts share a colour


def test_target_metrics_say_when_the_target_was_not_ranked():
    hits = (_hit(1, ("dense", 1.0)),)
    unranked = QueryOutcome(hits, None, None, None, None, 1.0, scored=180)
    assert target_metrics(unranked, 10) == (">10 (not among the 180 ranked)", "–", "–")
    beyond = QueryOutcome(hits, None, 0.8, -0.2, 14, 1.0, scored=180)
    assert target_metrics(beyond, 10) == (">10 (#14)", "0.800", "-0.200")
