"""Compare page: both chunkings of a file and of the repository."""

from __future__ import annotations


def test_compare_tables_and_views(page) -> None:
    at = page("compare").run()
    assert not at.exception
    file_table = at.dataframe[0].value
    assert list(file_table["strategy"]) == ["lines", "AST"]
    assert (file_table["chunks"] > 0).all()
    view = at.get("html")[0].proto.body
    assert "Line-based" in view and "AST (" in view
    repo_table = at.dataframe[1].value
    assert repo_table.loc[1, "units split"] <= repo_table.loc[0, "units split"]
    assert len(at.get("plotly_chart")) == 2


def test_settings_change_the_comparison(page) -> None:
    at = page("compare").run()
    before = at.dataframe[0].value.loc[0, "chunks"]
    at.slider(key="line_window").set_value(20).run()
    assert not at.exception
    assert at.dataframe[0].value.loc[0, "chunks"] > before
