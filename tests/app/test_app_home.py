"""Home page: sample, upload and local-path repositories, and their error messages."""

from __future__ import annotations

from pathlib import Path

import pytest
from ui_helpers import SAMPLES, metric, zip_folder


def test_default_sample_is_scanned(page) -> None:
    at = page("home").run()
    assert not at.exception
    assert at.selectbox(key="sample").value == "express-images"
    assert metric(at, "Files") == "17"
    assert metric(at, "Not chunked") == "7"  # the test file is listed, left out by default
    assert at.get("plotly_chart"), "the category x language chart is drawn"
    skipped = at.dataframe[-1].value
    assert "public/vendor.min.js" in set(skipped["path"])
    assert skipped["reason"].str.len().min() > 0


def test_other_sample(page) -> None:
    at = page("home").run()
    at.selectbox(key="sample").set_value("ts-payments").run()
    assert not at.exception
    assert at.session_state["repo"].name == "ts-payments"


def test_upload_zip_becomes_the_repository_for_other_pages(page) -> None:
    at = page("home").run()
    at.radio(key="source").set_value("Upload a zip").run()
    data = zip_folder(SAMPLES / "ts-payments" / "src")
    at.file_uploader(key="upload").set_value(("payments-src.zip", data, "application/zip")).run()
    assert not at.exception
    assert not at.error
    assert at.session_state["repo"].name == "payments-src"
    assert int(metric(at, "Chunkable files")) > 5
    at.switch_page("pages/1_Chunks_and_AST.py").run()
    assert not at.exception
    assert "payments-src" in at.sidebar.markdown[0].value
    assert int(metric(at, "Chunks")) > 0


def test_bad_zip_shows_an_error(page) -> None:
    at = page("home").run()
    at.radio(key="source").set_value("Upload a zip").run()
    at.file_uploader(key="upload").set_value(("broken.zip", b"not a zip", "application/zip")).run()
    assert not at.exception
    assert "not a valid zip" in at.error[0].value


def test_path_outside_allowed_roots_is_refused(page, tmp_path: Path) -> None:
    (tmp_path / "index.js").write_text("function f() {}\n")
    at = page("home").run()
    at.radio(key="source").set_value("Local path").run()
    at.text_input(key="local_path").input(str(tmp_path)).run()
    assert not at.exception
    assert "outside the allowed roots" in at.error[0].value
    assert "or upload it as a zip" in at.error[0].value  # the dashboard's way around


def test_local_path_inside_roots(page) -> None:
    at = page("home").run()
    at.radio(key="source").set_value("Local path").run()
    at.text_input(key="local_path").input(str(SAMPLES / "react-dashboard")).run()
    assert not at.exception
    assert not at.error
    assert at.session_state["repo"].name == "react-dashboard"


def test_missing_path_shows_an_error(page) -> None:
    at = page("home").run()
    at.radio(key="source").set_value("Local path").run()
    at.text_input(key="local_path").input(str(SAMPLES / "no-such-repo")).run()
    assert not at.exception
    assert "does not exist" in at.error[0].value


@pytest.fixture
def looping_repos(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Under an allowed root: a repo with loop1.js <-> loop2.js, and a root linking to itself."""
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "index.js").write_text("export function f() { return 1; }\n")
    (repo / "loop1.js").symlink_to("loop2.js")
    (repo / "loop2.js").symlink_to("loop1.js")
    (tmp_path / "self").symlink_to("self")
    monkeypatch.setenv("NEXUS_ALLOWED_ROOTS", str(tmp_path))
    return tmp_path


def test_symlink_loops_in_the_local_path_box(page, looping_repos: Path) -> None:
    at = page("home").run()
    at.radio(key="source").set_value("Local path").run()
    at.text_input(key="local_path").input(str(looping_repos / "repo")).run()
    assert not at.exception and not at.error
    skipped = at.dataframe[-1].value
    reasons = dict(zip(skipped["path"], skipped["reason"], strict=True))
    assert reasons["loop1.js"] == reasons["loop2.js"] == "symlink loop (it links back to itself)"
    at.text_input(key="local_path").input(str(looping_repos / "self")).run()
    assert not at.exception
    assert "is a symlink loop" in at.error[0].value


def test_symlink_loops_in_a_link(page, looping_repos: Path) -> None:
    at = page("search")
    at.query_params.update({"repo": f"path:{looping_repos / 'repo'}"})
    at.run()
    assert not at.exception
    assert at.session_state["repo"].name == "repo"
    at = page("search")
    at.query_params.update({"repo": f"path:{looping_repos / 'self'}"})
    at.run()
    assert not at.exception
    assert any("is a symlink loop" in w.value for w in at.warning)


def test_zip_without_code_warns_and_pages_cope(page, tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("# only docs\n")
    at = page("home").run()
    at.radio(key="source").set_value("Upload a zip").run()
    at.file_uploader(key="upload").set_value(("docs.zip", zip_folder(tmp_path), "application/zip"))
    at.run()
    assert not at.exception
    assert any("no chunkable" in w.value for w in at.warning)
    for target in ("pages/1_Chunks_and_AST.py", "pages/2_Compare.py", "pages/3_Search.py"):
        at.switch_page(target).run()
        assert not at.exception
        assert at.warning


@pytest.mark.parametrize("name", ["home", "chunks"])
def test_the_model_starts_loading_on_the_first_page_shown(
    page, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    """Not only on Search: a saved index opened there waited 10-20 s for the model."""
    from nexus.ui import indexing

    loaded = []

    class Model:
        @property
        def dim(self) -> int:  # reading it loads a real model
            loaded.append(True)
            return 16

    monkeypatch.setenv("NEXUS_UI_EMBEDDER", "model")
    monkeypatch.setattr(indexing, "_MODEL_LOADERS", {})
    monkeypatch.setattr(indexing, "get_embedder", lambda words_view=True: Model())
    page(name).run()
    loader = indexing._MODEL_LOADERS.get(True)
    assert loader is not None
    loader.join(10)
    assert loaded


def chunked_files(at) -> tuple[list[str], str]:
    """The Chunked files table's paths, and the count line above it."""
    table = next(d.value for d in at.dataframe if "tokens" in d.value.columns)
    count = next(c.value for c in at.caption if c.value.startswith("Showing "))
    return list(table["path"]), count


def test_the_chunked_files_are_listed_and_filterable(page) -> None:
    at = page("home").run()
    paths, count = chunked_files(at)
    assert count == "Showing 10 of 10 chunked files" and paths == sorted(paths)
    assert "src/services/imageService.js" in paths and "public/vendor.min.js" not in paths
    table = next(d.value for d in at.dataframe if "tokens" in d.value.columns)
    assert table["tokens"].min() > 0 and set(table["language"]) == {"javascript"}

    at.text_input(key="files_filter").input("SERVICE").run()  # a part of the path, any case
    paths, count = chunked_files(at)
    assert paths == ["src/services/imageService.js"] and count == "Showing 1 of 10 chunked files"
    at.text_input(key="files_filter").input("src/*.js").run()  # a glob, as the include box
    assert chunked_files(at)[0] == ["src/app.js", "src/config.js"]  # * stops at a slash
    at.text_input(key="files_filter").input("*Service*").run()  # no slash: any folder
    assert chunked_files(at)[0] == ["src/services/imageService.js"]
    at.text_input(key="files_filter").input("[z-a]").run()
    assert "not a valid glob" in at.error[0].value
    assert chunked_files(at)[1] == "Showing 10 of 10 chunked files"

    at.text_input(key="files_filter").input("").run()
    at.toggle(key="files_tests").set_value(True).run()  # the list follows the selection
    assert chunked_files(at)[1] == "Showing 11 of 11 chunked files"
