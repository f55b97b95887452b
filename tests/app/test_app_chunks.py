"""Chunks and AST page: live re-chunking, the chunk bands, the AST, the unit table."""

from __future__ import annotations

from ui_helpers import metric


def test_opens_directly_on_the_default_sample(page) -> None:
    at = page("chunks").run()
    assert not at.exception
    assert at.selectbox(key="file").value == "src/services/imageService.js"
    assert int(metric(at, "Chunks")) > 10
    code, outline = (h.proto.body for h in at.get("html"))
    assert "nx-label" in code and "#1 " in code
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
    at.selectbox(key="chunk").set_value(3).run()
    assert not at.exception
    assert "Syntax tree of chunk #4" in " ".join(m.value for m in at.markdown)
    at.selectbox(key="file").set_value("src/app.js").run()
    assert not at.exception
    assert at.selectbox(key="chunk").value < int(metric(at, "Chunks"))


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
