"""Sessions share what depends only on the repository and the settings: a second
session with the same repository and settings builds nothing (no parse, no chunks,
no figure, no table); other settings get their own."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from ui_helpers import metric

from nexus.ui import cache, views, widgets

#: Pages in the order a user opens them; each session visits them all.
VISITS = (
    "pages/1_Chunks_and_AST.py",
    "pages/2_Compare.py",
    "pages/3_Search.py",
    "pages/4_Evaluate.py",
    "pages/5_Export.py",
)


@pytest.fixture
def builds(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """An empty shared cache, and a count of the views built, by kind."""
    cache.memory().clear()
    counts: Counter[str] = Counter()
    shared = cache.shared

    def counting(kind, key, build):
        def counted():
            counts[kind] += 1
            return build()

        return shared(kind, key, counted)

    monkeypatch.setattr(cache, "shared", counting)
    return counts


def visit_every_page(page, **settings) -> tuple[str, list[dict]]:
    """A new session with these sidebar settings through every page; the Chunks page's
    chunk count and charts."""
    at = page("home")
    for key, value in settings.items():
        at.session_state[key] = value
    at.session_state["query"] = "resize an image"
    at.run()
    for path in VISITS:
        at.switch_page(path).run()
        assert not at.exception, path
        if path == VISITS[0]:
            seen = metric(at, "Chunks"), [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    return seen


def test_a_second_session_with_the_same_settings_builds_nothing(page, builds) -> None:
    visit_every_page(page)
    first = dict(builds)
    misses = cache.memory().stats().misses
    assert {"report", "category_chart", "token_histogram", "chunk_table", "wordpieces"} <= set(
        first
    )
    assert {"file_code", "repo_sizes", "per_file", "answer", "eval_quality", "jsonl"} <= set(first)
    assert first.pop("answer") == 2, "the query's answer, once per index"
    assert max(first.values()) == 1, sorted(first.items())
    first["answer"] = 2

    visit_every_page(page)
    assert dict(builds) == first, "the second session built views again"
    assert cache.memory().stats().misses == misses, "parsed, chunked or indexed again"


def test_other_settings_get_their_own_views(page, builds) -> None:
    default = visit_every_page(page)
    other = visit_every_page(page, max_tokens=384, min_tokens=0)
    assert builds["token_histogram"] == 2
    assert builds["repo_sizes"] == 2
    assert builds["jsonl"] == 2
    assert builds["report"] == 1, "the repository summary does not depend on the settings"
    assert default[0] != other[0], "chunk counts"
    # The histogram's "max" line sits at each session's own budget.
    lines = [
        [shape["x0"] for shape in charts[0]["layout"]["shapes"]] for _, charts in (default, other)
    ]
    assert lines == [[widgets.DEFAULTS["max_tokens"], widgets.DEFAULTS["min_tokens"]], [384, 0]]


def test_a_view_is_sized_within_the_budget() -> None:
    figure = views.token_histogram([], 512, 64)
    assert views.FIGURE_BYTES < views.view_bytes(figure) < 2 * views.FIGURE_BYTES
    assert views.view_bytes(("abc", [1, 2])) > 0
