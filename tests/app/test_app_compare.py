"""Compare page: both chunkings of a file and of the repository."""

from __future__ import annotations

import json

from streamlit.testing.v1 import AppTest
from ui_helpers import code_views


def test_compare_tables_and_views(page) -> None:
    at = page("compare").run()
    assert not at.exception
    file_table = at.dataframe[0].value
    assert list(file_table["strategy"]) == ["lines", "AST"]
    assert (file_table["chunks"] > 0).all()
    view = code_views(at)[0]["html"]
    assert "Line-based" in view and "AST (" in view
    repo_table = at.dataframe[1].value
    assert repo_table.loc[1, "units split"] <= repo_table.loc[0, "units split"]
    assert len(at.get("plotly_chart")) == 2


def at_512(page) -> AppTest:
    """The page at 512/64, where AST splits none of the file's units (320/48 splits some)."""
    at = page("compare")
    at.session_state["max_tokens"], at.session_state["min_tokens"] = 512, 64
    return at.run()


def test_cuts_are_marked_on_the_line_and_split_units_listed(page) -> None:
    at = at_512(page)
    view = code_views(at)[0]["html"]
    assert '<span class="nx-cut">cuts mapS3Error L49–78</span>' in view
    assert 'data-goto="49"' in view  # the split unit, clickable: scrolls to its line
    assert "Units the AST chunks split (click to scroll):</b> none" in view
    # The line window L551-600 holds all of moveObject and two lines of deleteImageObject.
    assert "#12 function <b>moveObject</b> · " in view


def test_unit_share_is_named_and_blank_when_it_means_nothing(page) -> None:
    at = at_512(page)
    table = at.dataframe[0].value
    assert "unit share (higher is better)" in table.columns
    assert "mean dilution" not in table.columns
    ast_row = table[table["strategy"] == "AST"].iloc[0]
    assert ast_row["units split"] == 0
    assert ast_row["mean pieces when split"] == "—"  # not a grey "None"
    per_file = at.dataframe[2].value
    no_units = per_file[per_file["units"] == 0]
    assert len(no_units) and (no_units["unit share (AST)"] == "—").all()
    with_units = per_file[per_file["units"] > 0]
    assert with_units["unit share (AST)"].astype(float).between(0, 1).all()
    assert not per_file.isna().any().any()


def test_both_histograms_share_their_bins(page) -> None:
    at = page("compare").run()
    for chart in at.get("plotly_chart"):
        traces = json.loads(chart.proto.spec)["data"]
        assert traces[0]["xbins"] == traces[1]["xbins"]


def test_settings_change_the_comparison(page) -> None:
    at = page("compare").run()
    before = at.dataframe[0].value.loc[0, "chunks"]
    at.slider(key="line_window").set_value(20).run()
    assert not at.exception
    assert at.dataframe[0].value.loc[0, "chunks"] > before
