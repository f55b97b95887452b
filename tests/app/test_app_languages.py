"""A mixed repository (Python API + TSX frontend) in the dashboard."""

from __future__ import annotations

import io
import zipfile

import pytest
from ui_helpers import SAMPLES, metric, shown

from nexus.config import load_selection
from nexus.ingest.selection import FileSelection


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


def _mixed_with_ruby(page):
    """The home page on a zip of mixed-shop plus files in languages without a grammar."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("shop/extra/app.rb", "puts 1\n")
        archive.writestr("shop/extra/main.c", "int main(void) { return 0; }\n")
        archive.writestr("shop/extra/util.c", "int x;\n")
        for path in sorted((SAMPLES / "mixed-shop").rglob("*")):
            if path.is_file():
                archive.write(path, f"shop/{path.relative_to(SAMPLES / 'mixed-shop').as_posix()}")
    at = page("home").run()
    at.radio(key="source").set_value("Upload a zip").run()
    at.file_uploader(key="upload").set_value(("shop.zip", buffer.getvalue(), "application/zip"))
    return at.run()


def test_unsupported_languages_are_listed_with_counts(page) -> None:
    at = _mixed_with_ruby(page)
    assert not at.exception
    assert "Unsupported languages (no grammar; listed, not chunked): 3 files: c 2, ruby 1" in [
        shown(i.value).strip() for i in at.info
    ]
    languages = at.dataframe[1].value
    rows = dict(zip(languages["language"], languages["chunked"], strict=True))
    assert rows["python"] == "yes" and rows["c"].startswith("no: unsupported language")
    skipped = at.dataframe[-1].value.set_index("path")
    assert skipped.loc["extra/app.rb", "reason"].startswith("unsupported language (ruby)")
    assert skipped.loc["extra/app.rb", "language"] == "ruby"


@pytest.mark.parametrize(
    ("languages", "chunkable"),
    [([], "5"), (["python"], "3"), (["tsx", "typescript"], "2"), (["go"], "0")],
)
def test_the_language_filter_sets_what_is_chunked(page, languages, chunkable) -> None:
    at = page("home").run()
    at.selectbox(key="sample").set_value("mixed-shop").run()
    assert at.multiselect(key="files_languages").options[:3] == [
        "csharp (0 files)",
        "go (0 files)",
        "java (0 files)",
    ]
    at.multiselect(key="files_languages").set_value(languages).run()
    assert not at.exception
    assert metric(at, "Chunkable files") == chunkable


def test_the_languages_travel_in_the_link_and_in_export(page, tmp_path) -> None:
    at = page("home").run()
    at.selectbox(key="sample").set_value("mixed-shop").run()
    at.multiselect(key="files_languages").set_value(["python"]).run()
    params = {k: (v[0] if isinstance(v, list) else v) for k, v in at.query_params.items()}
    assert params["languages"] == "python"
    at.switch_page("pages/1_Chunks_and_AST.py").run()
    assert at.selectbox(key="file").options == [
        "api/__init__.py",
        "api/catalog.py",
        "api/http.py",
    ]

    opened = page("export")
    opened.query_params.update(params)
    opened.run()
    assert not opened.exception and not opened.warning
    (tmp_path / "nexus.toml").write_text(opened.code[0].value)
    assert load_selection(tmp_path / "nexus.toml") == FileSelection(languages=("python",))


def test_a_bad_language_in_a_link_is_reported(page) -> None:
    at = page("home")
    at.query_params.update({"repo": "sample:mixed-shop", "languages": "python,cobol"})
    at.run()
    assert not at.exception
    assert "ignored languages='cobol'" in " ".join(shown(w.value) for w in at.warning)
    assert at.multiselect(key="files_languages").value == ["python"]
    assert metric(at, "Chunkable files") == "3"
