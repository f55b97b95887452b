"""What to index: category switches and globs on the home page, in links and in Export."""

from __future__ import annotations

from ui_helpers import metric, shown

from nexus.config import load_selection
from nexus.ingest.selection import FileSelection


def test_home_says_what_nexus_is_for_and_what_is_chunked(page) -> None:
    at = page("home").run()
    intro = at.markdown[0].value
    assert "Nexus cuts a codebase (JavaScript, TypeScript, Python, Go, Java, Rust, C#)" in intro
    assert "only **source** files are chunked" in intro
    assert [t.value for t in at.toggle] == [False] * 4  # tests etc. out by default
    assert [t.label for t in at.toggle][:2] == ["Tests (1 file)", "Generated (1 file)"]


def test_glob_placeholders_do_not_look_like_entered_globs(page) -> None:
    """An empty box shows what empty means and an example, never a bare pattern."""
    at = page("home").run()
    for key in ("files_include", "files_exclude"):
        box = at.text_area(key=key)
        assert box.value == ""
        assert box.placeholder.startswith("Empty: ") and "For example: " in box.placeholder


def test_switches_and_globs_update_the_counts_and_the_pages(page) -> None:
    at = page("home").run()
    assert metric(at, "Chunkable files") == "10"
    at.toggle(key="files_tests").set_value(True).run()
    assert metric(at, "Chunkable files") == "11"
    at.text_area(key="files_exclude").input("src/legacy/\nsrc/lib/").run()
    assert not at.exception
    assert metric(at, "Chunkable files") == "8"
    at.switch_page("pages/1_Chunks_and_AST.py").run()
    assert not at.exception
    files = at.selectbox(key="file").options
    assert "src/__tests__/imageService.test.js" in files
    assert not any(f.startswith(("src/legacy/", "src/lib/")) for f in files)
    # The default file is the largest source file, never a test.
    assert at.selectbox(key="file").value == "src/services/imageService.js"


def test_the_selection_travels_in_the_link_and_in_export(page, tmp_path) -> None:
    at = page("home").run()
    at.toggle(key="files_tests").set_value(True).run()
    at.text_area(key="files_include").input("src/**").run()
    params = {k: (v[0] if isinstance(v, list) else v) for k, v in at.query_params.items()}
    assert params["with"] == "tests" and params["include"] == "src/**"

    opened = page("export")
    opened.query_params.update(params)
    opened.run()
    assert not opened.exception and not opened.warning
    toml = opened.code[0].value
    (tmp_path / "nexus.toml").write_text(toml)
    assert load_selection(tmp_path / "nexus.toml") == FileSelection(include=("src/**",), tests=True)


def test_a_bad_switch_in_a_link_is_reported(page) -> None:
    at = page("home")
    at.query_params.update({"with": "tests,docs"})
    at.run()
    assert not at.exception
    assert "ignored with='docs'" in " ".join(shown(w.value) for w in at.warning)
    assert at.toggle(key="files_tests").value is True
