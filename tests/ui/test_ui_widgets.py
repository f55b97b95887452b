"""Which kept values a page re-assigns: a moved slider is left to the browser, and a page
switch brings every kept value the session lost back from the last run."""

from __future__ import annotations

import pytest

from nexus.ui.widgets import kept_values

LAST = {"max_tokens": 512, "k": 5, "query": "a", "file": "x.js"}


@pytest.mark.parametrize(
    ("values", "switched", "expected"),
    [
        # Nothing moved: everything is re-assigned, as the session holds it.
        (LAST, False, LAST),
        # The user moved max_tokens since the last run: not pushed back to the browser.
        ({**LAST, "max_tokens": 528}, False, {"k": 5, "query": "a", "file": "x.js"}),
        # Other widgets are always re-assigned, changed or not.
        ({**LAST, "query": "b"}, False, {**LAST, "query": "b"}),
        # A page switch: the moved slider's widget was dropped; the last run's value is back.
        ({"query": "a", "file": "x.js"}, True, LAST),
        # A page switch stopped the page's run before its query box was drawn: the
        # session lost the query (and the slider); the last run's values come back.
        ({"file": "x.js"}, True, LAST),
        # A page switch keeps a value the session holds (set by a callback, say).
        ({**LAST, "max_tokens": 64}, True, {**LAST, "max_tokens": 64}),
    ],
)
def test_kept_values(values, switched, expected) -> None:
    assert kept_values(values, LAST, switched) == expected


def test_the_first_run_keeps_what_there_is() -> None:
    assert kept_values({"query": "a"}, {}, page_switched=True) == {"query": "a"}
