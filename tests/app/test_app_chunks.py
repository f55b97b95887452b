"""Chunks and AST page: live re-chunking, the chunk bands, the AST, the unit table."""

from __future__ import annotations

import re

import pytest
from ui_helpers import SAMPLES, code_views, metric, shown

from nexus.chunking.analysis import analyze
from nexus.chunking.pipeline import chunk_analysis
from nexus.config import DEFAULT_ENCODING, ChunkConfig
from nexus.ingest.sources import open_repository
from nexus.retrieval.wordpieces import WordPieceCounter
from nexus.ui import wordpieces


def test_opens_directly_on_the_default_sample(page) -> None:
    at = page("chunks").run()
    assert not at.exception
    assert at.selectbox(key="file").value == "src/services/imageService.js"
    assert int(metric(at, "Chunks")) > 10
    code = code_views(at)[0]["html"]
    (outline,) = (h.proto.body for h in at.get("html") if "nx-ast" in h.proto.body)
    assert "nx-label" in code and "#1 " in code and 'data-chunk="0"' in code
    assert "cut short" not in outline
    assert "nx-ast" in outline and "L" in outline


def test_max_tokens_slider_rechunks(page) -> None:
    at = page("chunks").run()
    before = int(metric(at, "Chunks"))
    at.slider(key="max_tokens").set_value(96).run()
    assert not at.exception
    smaller = int(metric(at, "Chunks"))
    at.slider(key="max_tokens").set_value(2048).run()
    larger = int(metric(at, "Chunks"))
    assert smaller > before >= larger


def test_min_above_max_is_capped_with_a_warning(page) -> None:
    at = page("chunks").run()
    at.slider(key="max_tokens").set_value(64).run()
    at.slider(key="min_tokens").set_value(256).run()
    assert not at.exception
    assert any("min_tokens is above" in w.value for w in at.sidebar.warning)


def test_profile_file_and_chunk_selection(page) -> None:
    at = page("chunks").run()
    for profile in ("oop", "functional", "frontend", "auto"):
        at.selectbox(key="profile").set_value(profile).run()
        assert not at.exception
    picker = at.selectbox(key="chunk_pick")
    picker.set_value(picker.options[3]).run()
    assert not at.exception
    assert "Syntax tree of chunk #4" in " ".join(m.value for m in at.markdown)
    chunk_4 = at.selectbox(key="chunk_pick").value
    assert code_views(at)[0]["scroll_to"] == int(re.search(r"L(\d+)–", chunk_4).group(1))
    at.selectbox(key="file").set_value("src/app.js").run()
    assert not at.exception
    assert at.selectbox(key="chunk_pick").value.startswith("#1 ")


def test_units_table_marks_regex_misses(page) -> None:
    at = page("chunks").run()
    units = int(metric(at, "Units (AST)"))
    missed = int(metric(at, "Units the regex misses"))
    assert units > 0 and 0 < missed < units
    frame = at.dataframe[-1].value
    assert (~frame["regex_found"]).sum() == missed


def test_a_tsx_file(page) -> None:
    at = page("home").run()
    at.selectbox(key="sample").set_value("react-dashboard").run()
    at.switch_page("pages/1_Chunks_and_AST.py").run()
    at.selectbox(key="file").set_value("src/components/Dashboard.tsx").run()
    assert not at.exception
    assert int(metric(at, "Chunks")) > 1


def test_budget_preset_moves_the_sliders_and_a_slider_move_makes_it_custom(page) -> None:
    at = page("chunks").run()
    assert at.selectbox(key="preset").value == "retrieval"
    before = int(metric(at, "Chunks"))
    at.selectbox(key="preset").set_value("model-window").run()
    assert not at.exception
    assert (at.slider(key="max_tokens").value, at.slider(key="min_tokens").value) == (144, 32)
    assert int(metric(at, "Chunks")) > before
    at.slider(key="max_tokens").set_value(400).run()
    assert at.selectbox(key="preset").value == ""


def test_the_chunk_label_follows_the_current_chunks(page) -> None:
    at = page("chunks").run()
    assert at.selectbox(key="chunk_pick").value.startswith("#1  L1–23 ")
    at.slider(key="max_tokens").set_value(128).run()
    value = at.selectbox(key="chunk_pick").value
    assert value.startswith("#1  L1–") and not value.startswith("#1  L1–23 ")
    assert value in at.selectbox(key="chunk_pick").options


def test_a_settings_move_says_what_changed_or_that_nothing_did(page) -> None:
    at = page("chunks").run()
    assert not at.info  # nothing moved yet
    # At 512/64 this file's chunks are the same under both profiles (not at every budget).
    at.slider(key="max_tokens").set_value(512).run()
    at.slider(key="min_tokens").set_value(64).run()
    at.selectbox(key="profile").set_value("oop").run()
    assert [shown(i.value).strip() for i in at.info] == [
        "profile auto → oop: Nothing changed: the same 51 chunks as before."
    ]
    at.slider(key="max_tokens").set_value(128).run()
    (message,) = (shown(i.value).strip() for i in at.info)
    assert message.startswith("max_tokens 512 → 128: 51 → ")
    assert "new" in message and "gone" in message and "boundaries differ at L" in message
    picker = at.selectbox(key="chunk_pick")
    picker.set_value(picker.options[2]).run()  # selecting a chunk keeps the message
    assert [shown(i.value).strip() for i in at.info] == [message]


def test_pieces_of_a_split_unit_are_numbered(page) -> None:
    at = page("chunks").run()
    at.slider(key="max_tokens").set_value(128).run()
    html = code_views(at)[0]["html"]
    assert re.search(r"<b>mapS3Error</b> 1/\d", html)
    assert re.search(r"<b>mapS3Error</b> 2/\d", html)


def test_over_the_model_window_is_counted_exactly_without_the_model(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The count comes from the model's tokenizer, whether or not a page loaded torch."""
    monkeypatch.delenv("NEXUS_UI_EMBEDDER")
    repo = open_repository(SAMPLES / "express-images")
    analysis = analyze(repo.read("src/services/imageService.js"), DEFAULT_ENCODING)
    chunks = chunk_analysis(analysis, ChunkConfig(), repo="r")
    pieces, window, exact = wordpieces.window_counts(chunks)
    counter = WordPieceCounter.for_model()
    assert exact and window == 256
    assert pieces == counter.count([c.embedding_text for c in chunks])


def _selected(at) -> tuple[int, int, str]:
    """The selected chunk's first and last line and its symbol, read from its label."""
    label = at.selectbox(key="chunk_pick").value
    first, last, symbol = re.search(r"L(\d+)–(\d+)  (.+?)  ·", label).groups()
    return int(first), int(last), symbol


def test_the_selection_stays_on_the_chosen_unit_across_slider_moves(page) -> None:
    """Each move used to re-anchor on the new chunk's first line, so the selection
    walked away (issue 22: Hono.constructor L127 ended on L89-125)."""
    at = page("chunks").run()
    at.slider(key="max_tokens").set_value(256).run()
    picker = at.selectbox(key="chunk_pick")
    choice = next(label for label in picker.options if "ThumbnailCache.store" in label)
    picker.set_value(choice).run()
    first, _, symbol = _selected(at)
    for value in (128, 560, 96, 2048, 256):
        at.slider(key="max_tokens").set_value(value).run()
        assert not at.exception
        start, end, now = _selected(at)
        assert start <= first <= end, (value, at.selectbox(key="chunk_pick").value)
        options = at.selectbox(key="chunk_pick").options
        if any(f"  {symbol}  " in label for label in options):
            assert now == symbol, (value, now)
    assert at.selectbox(key="chunk_pick").value == choice  # back at 256: the chunk chosen


def test_a_link_opens_on_the_selected_chunk(page) -> None:
    at = page("chunks").run()
    picker = at.selectbox(key="chunk_pick")
    choice = picker.options[6]
    picker.set_value(choice).run()
    params = {k: (v[0] if isinstance(v, list) else v) for k, v in at.query_params.items()}
    assert params["line"] == str(_selected(at)[0])
    opened = page("chunks")
    opened.query_params.update(params)
    opened.run()
    assert not opened.exception and not opened.warning
    assert opened.selectbox(key="chunk_pick").value == choice
    assert "Syntax tree of chunk #7" in " ".join(m.value for m in opened.markdown)
