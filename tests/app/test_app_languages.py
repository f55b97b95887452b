"""A mixed repository (Python API + TSX frontend) in the dashboard."""

from __future__ import annotations

from ui_helpers import metric


def test_mixed_repo_shows_its_languages_and_chunks_python(page) -> None:
    at = page("home").run()
    at.selectbox(key="sample").set_value("mixed-shop").run()
    assert not at.exception
    by_language = at.dataframe[0].value
    assert {"python", "tsx", "typescript"} <= set(by_language["language"])
    at.switch_page("pages/1_Chunks_and_AST.py").run()
    at.selectbox(key="file").set_value("api/catalog.py").run()
    assert not at.exception
    assert int(metric(at, "Chunks")) > 1
    assert int(metric(at, "Functions (regex baseline)")) == 7
    units = at.dataframe[-1].value
    assert {"Cart", "Cart.add", "search_products"} <= set(units["name"])
