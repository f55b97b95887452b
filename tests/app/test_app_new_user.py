"""What a new user hit on the dashboard (issue 41, item 12): failed opens, links that
carried another repository's places, counts that disagreed with a chart, colours,
bins and axes that hid what they drew."""

from __future__ import annotations

import json
from pathlib import Path

import plotly.io as pio
from ui_helpers import SAMPLES, rendered_text, zip_folder

from nexus.ui import views, widgets


def param(at, name: str) -> str | None:
    value = at.query_params.get(name)
    return value[0] if isinstance(value, list) else value


def spec(at, key: str) -> dict:
    """The chart's figure as plain lists (Plotly writes arrays as typed binary data)."""
    (chart,) = [c for c in at.get("plotly_chart") if c.key == key]
    return json.loads(pio.from_json(chart.proto.spec, skip_invalid=True).to_json(engine="json"))


def test_after_a_failed_open_the_other_pages_say_so(page, tmp_path: Path) -> None:
    """A bad zip (or a rejected path) leaves the repository open before in place: every
    other page says so, until a repository opens."""
    at = page("home").run()
    at.radio(key="source").set_value("Upload a zip").run()
    at.file_uploader(key="upload").set_value(("broken.zip", b"not a zip", "application/zip")).run()
    assert at.error
    for path in ("pages/1_Chunks_and_AST.py", "pages/3_Search.py", "pages/5_Export.py"):
        at.switch_page(path).run()
        assert not at.exception
        said = " ".join(w.value for w in at.warning)
        assert "Opening `broken` failed" in said and "`express-images`" in said, said
    at.switch_page("app.py").run()
    at.radio(key="source").set_value("Local path").run()
    at.text_input(key="local_path").input(str(tmp_path)).run()  # outside the allowed roots
    at.switch_page("pages/2_Compare.py").run()
    assert any(str(tmp_path) in w.value for w in at.warning)
    at.switch_page("app.py").run()
    at.radio(key="source").set_value("Sample repository").run()
    at.selectbox(key="sample").set_value("ts-payments").run()
    at.switch_page("pages/2_Compare.py").run()
    assert not [w for w in at.warning if "failed" in w.value]


def test_a_link_keeps_no_place_of_the_repository_open_before(page) -> None:
    at = page("home").run()
    at.switch_page("pages/1_Chunks_and_AST.py").run()
    at.selectbox(key="file").set_value("src/app.js").run()
    assert param(at, "file") == "src/app.js"
    at.switch_page("app.py").run()
    at.selectbox(key="sample").set_value("py-orders").run()
    assert not at.exception
    assert param(at, "repo") == "sample:py-orders" and param(at, "file") is None
    at.switch_page("pages/1_Chunks_and_AST.py").run()
    assert not at.exception
    assert at.selectbox(key="file").value != "src/app.js"
    assert param(at, "file") == at.selectbox(key="file").value


def test_the_token_budget_travels_in_the_link(page) -> None:
    at = page("search").run()
    at.number_input(key="budget").set_value(1500).run()
    assert param(at, "budget") == "1500"
    opened = page("search")
    opened.query_params.update({"repo": "sample:express-images", "budget": "1500", "q": "thumb"})
    opened.run()
    assert not opened.exception and not opened.warning
    assert opened.number_input(key="budget").value == 1500


def test_a_category_toggle_counts_the_files_the_chart_shows(page) -> None:
    """ "Generated (0 files)" sat beside a chart with one generated file (not chunkable)."""
    folder = SAMPLES / "py-orders"
    data = zip_folder(folder)
    at = page("home").run()
    at.radio(key="source").set_value("Upload a zip").run()
    with_generated = _with_file(data, "api/generated/schema.json", "{}")
    at.file_uploader(key="upload").set_value(("orders.zip", with_generated, "application/zip"))
    at.run()
    assert not at.exception
    # The chart's rows: the "Category × language" table beside it is built from them.
    rows = next(d.value for d in at.dataframe if "category" in d.value.columns)
    generated = int(rows[rows["category"] == "generated"]["files"].sum())
    label = at.toggle(key=widgets.SWITCH_KEYS["generated"]).label
    assert generated >= 1 and label.startswith(f"Generated ({generated} file"), (label, generated)


def _with_file(data: bytes, name: str, text: str) -> bytes:
    import io
    import zipfile

    buffer = io.BytesIO(data)
    with zipfile.ZipFile(buffer, "a") as archive:
        archive.writestr(name, text)
    return buffer.getvalue()


def test_no_two_languages_share_a_colour_and_binary_is_grey() -> None:
    languages = [*widgets.LANGUAGE_NAMES, "json", "markdown", "yaml", "css", "html", "binary"]
    colours = views.language_colours(languages)
    named = [colours[lang] for lang in languages if lang != "binary"]
    assert len(set(named)) == len(named) > 10
    assert colours["binary"] == views.NO_LANGUAGE_COLOUR and colours["binary"] not in named


def test_the_intro_names_every_chunkable_language(page) -> None:
    at = page("home").run()
    intro = rendered_text(at)
    for title in ("C#", "JavaScript", "TypeScript", "Python", "Go", "Java", "Rust"):
        assert title in intro


def test_no_histogram_bar_is_drawn_past_the_max_line(page) -> None:
    """A chunk of exactly max_tokens lies in the bar that ends at the max line (the
    320-340 bar stood beside a max of 320 whose largest chunk was 320)."""
    at = page("chunks").run()
    max_tokens = at.slider(key="max_tokens").value
    figure = spec(at, "size_histogram")
    sizes = figure["data"][0]["x"]
    bins = figure["data"][0]["xbins"]
    edges = [bins["start"] + i * bins["size"] for i in range(views.SIZE_BINS + 40)]
    last = min(edge for edge in edges if edge >= max(sizes))  # the bar the largest chunk is in
    assert max(sizes) <= max_tokens
    assert last - max_tokens < 1  # ends at the line (half a token past it at most)


def test_the_budget_chart_zooms_on_what_it_draws(page) -> None:
    at = page("evaluate").run()
    figure = spec(at, "budget_chart")
    values = [y for trace in figure["data"] for y in trace["y"]]
    low, high = figure["layout"]["yaxis"]["range"]
    assert low <= min(values) and max(values) <= high
    assert high - low < 1 and (high - low) <= 3 * max(max(values) - min(values), 0.04)


def test_every_hit_is_labelled_in_why_each_hit_ranks(page) -> None:
    at = page("search").run()
    at.text_input(key="query").input("copy object delete original").run()
    figure = spec(at, "parts_ast")
    labels = figure["data"][0]["y"]
    assert len(labels) == at.slider(key="k").value
    assert figure["layout"]["yaxis"]["tickvals"] == labels  # none skipped as crowded
