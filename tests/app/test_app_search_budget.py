"""Search page: the token budget control shows only what fits, says the tokens used,
and marks the hit cut at the budget."""

from __future__ import annotations

import re

QUERY = "copy object delete original"


def hit_headers(at) -> list[str]:
    return [m.value for m in at.markdown if re.match(r"\*\*\d+\.\*\*", m.value)]


def budget_captions(at) -> list[str]:
    return [c.value for c in at.caption if "tokens read" in c.value]


def test_no_budget_shows_every_hit_whole(page) -> None:
    at = page("search").run()
    at.text_input(key="query").input(QUERY).run()
    assert not at.exception
    assert at.number_input(key="budget").value is None
    assert len(hit_headers(at)) == 2 * at.slider(key="k").value
    assert not budget_captions(at) and not any("cut at" in h for h in hit_headers(at))


def test_a_budget_reads_hits_in_order_and_marks_the_cut_one(page) -> None:
    at = page("search").run()
    at.text_input(key="query").input(QUERY).run()
    whole = hit_headers(at)
    at.number_input(key="budget").set_value(300).run()
    assert not at.exception
    captions = budget_captions(at)
    assert len(captions) == 2  # one per index
    for caption in captions:
        used, budget = (
            int(n.replace(",", "")) for n in re.findall(r"([\d,]+) (?:of|tokens)", caption)[:2]
        )
        assert 0 < used <= budget == 300
    headers = hit_headers(at)
    k = at.slider(key="k").value
    assert len(headers) < len(whole) == 2 * k
    cut = [h for h in headers if "cut at L" in h]
    assert cut, "the hit that crosses the budget says so"
    for header in cut:
        start, end = map(int, re.search(r"L(\d+)–(\d+)", header).groups())
        assert f"L{end}:" in header and start <= end
        # the same hit without a budget ends later
        assert header.split(" · ")[0] not in [h.split(" · ")[0] for h in whole]

    at.number_input(key="budget").set_value(0).run()  # 0: no budget again
    assert hit_headers(at) == whole and not budget_captions(at)
