"""Links: every slider's range, the page and file, uploads, and what a link's session says."""

from __future__ import annotations

from ui_helpers import SAMPLES, shown, zip_folder


def param(at, name: str) -> str:
    value = at.query_params[name]
    return value[0] if isinstance(value, list) else value


def test_a_link_carries_the_full_slider_range_and_the_file(page) -> None:
    at = page("chunks")
    at.query_params.update(
        {"repo": "sample:express-images", "max_tokens": "2048", "file": "src/app.js"}
    )
    at.run()
    assert not at.exception
    assert not at.warning, [w.value for w in at.warning]
    assert at.slider(key="max_tokens").value == 2048
    assert at.selectbox(key="file").value == "src/app.js"
    assert param(at, "max_tokens") == "2048"  # and the page writes them back for sharing
    assert param(at, "file") == "src/app.js"


def test_every_page_writes_its_settings_into_the_url(page) -> None:
    at = page("compare").run()
    at.slider(key="max_tokens").set_value(1040).run()
    assert param(at, "max_tokens") == "1040"
    assert param(at, "repo") == "sample:express-images"


def test_a_link_made_on_an_upload_says_so(page) -> None:
    at = page("home").run()
    at.radio(key="source").set_value("Upload a zip").run()
    data = zip_folder(SAMPLES / "ts-payments" / "src")
    at.file_uploader(key="upload").set_value(("payments-src.zip", data, "application/zip")).run()
    link = param(at, "repo")
    assert link.startswith("upload:payments-src@")

    opened = page("chunks")
    opened.query_params.update({"repo": link, "max_tokens": "256"})
    opened.run()
    assert not opened.exception
    warnings = " ".join(shown(w.value) for w in opened.warning)
    assert "made on an uploaded repository (payments-src@" in warnings
    side = " ".join(shown(w.value) for w in opened.sidebar.warning)
    assert "Upload the same zip on the Repository page" in side
    assert opened.slider(key="max_tokens").value == 256  # the settings still apply
    opened.slider(key="max_tokens").set_value(512).run()  # the notice stays until an upload
    assert "Upload the same zip" in " ".join(shown(w.value) for w in opened.sidebar.warning)


def test_a_session_opened_from_a_link_does_not_claim_a_build(page) -> None:
    first = page("search").run()
    first.button(key="refresh").click().run()  # this session builds (earlier tests may have)
    assert "started by this session" in " ".join(c.value for c in first.caption)
    opened = page("search")
    opened.query_params.update({"repo": "sample:express-images", "q": "move an object"})
    opened.run()
    captions = " ".join(c.value for c in opened.caption)
    assert "built earlier on this server and reused" in captions
    assert "embedded 0 new texts" not in captions


def test_a_slider_step_is_not_pushed_back_to_the_browser(page) -> None:
    """A run sends a slider's value back only on a page switch: pushed back on every
    run, the value of a run overtaken by the next arrow-key step moved the slider back
    (a burst pressed to 544 settled at 512)."""
    at = page("home").run()
    at.switch_page("pages/1_Chunks_and_AST.py").run()
    at.slider(key="max_tokens").set_value(528).run()
    at.slider(key="max_tokens").set_value(544).run()
    assert not at.exception
    assert at.slider(key="max_tokens").value == 544
    assert not at.slider(key="max_tokens").proto.set_value
    assert param(at, "max_tokens") == "544"
    at.switch_page("pages/2_Compare.py").run()  # a page switch still keeps the value
    assert at.slider(key="max_tokens").value == 544
    at.switch_page("pages/1_Chunks_and_AST.py").run()
    assert at.slider(key="max_tokens").value == 544
