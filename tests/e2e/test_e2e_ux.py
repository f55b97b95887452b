"""The dashboard at the widths people use: geometry, clicks, links, screenshots.

Screenshots of every page at 1600 and 900 px go to test-artifacts/screenshots/.
"""

from __future__ import annotations

import re

import pytest
from browser_helpers import eventually, no_exception, screenshot, wait_builds, wait_idle
from playwright.sync_api import expect

from nexus.ui.repos import SAMPLES_DIR as SAMPLES

pytestmark = pytest.mark.e2e

PAGES = ["", "Chunks_and_AST", "Compare", "Search", "Evaluate", "Export"]


@pytest.fixture(params=[1600, 900])
def sized_page(request, browser, server):
    context = browser.new_context(viewport={"width": request.param, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(90_000)
    yield page, request.param
    context.close()


def test_compare_panes_side_by_side_in_the_viewport(browser, server) -> None:
    context = browser.new_context(viewport={"width": 1600, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(90_000)
    page.goto(f"{server}/Compare")
    wait_idle(page)
    heads = page.locator(".nx-head").filter(has_text="chunks)")
    expect(heads).to_have_count(2)
    boxes = [heads.nth(i).bounding_box() for i in range(2)]
    for box in boxes:  # both panes fully inside the 1600 px viewport, side by side
        assert box["x"] >= 0 and box["x"] + box["width"] <= 1600, boxes
        assert box["width"] > 300
    assert boxes[0]["y"] == boxes[1]["y"] and boxes[0]["x"] < boxes[1]["x"]
    # A split unit is a link: it scrolls the shared grid (both panes) to its first line.
    code = page.locator(".nx-code").first
    assert code.evaluate("el => el.scrollTop") == 0
    page.locator("[data-goto='599']").first.click()
    row = page.locator(".nx-ln[data-line='599']")

    def row_in_view() -> bool:
        row_box, code_box = row.bounding_box(), code.bounding_box()
        top, height = code_box["y"], code_box["height"]
        return code.evaluate("el => el.scrollTop") > 0 and top <= row_box["y"] <= top + height

    eventually(row_in_view)
    screenshot(page, "compare_scrolled_1600")
    no_exception(page)
    context.close()


def test_clicking_a_band_selects_its_chunk(app_page, server) -> None:
    page = app_page
    page.goto(f"{server}/Chunks_and_AST")
    wait_idle(page)
    band = page.locator("[data-chunk='2']").first
    band.scroll_into_view_if_needed()
    band.click()
    expect(page.get_by_text("Syntax tree of chunk #3")).to_be_visible()
    wait_idle(page)
    picker = page.locator("[data-testid='stSelectbox']").filter(has_text="Chunk to inspect")

    def third_picked() -> bool:
        return "#3 " in (picker.locator("input").input_value() or picker.text_content())

    eventually(third_picked)
    no_exception(page)


def test_every_page_at_both_widths(sized_page, server) -> None:
    page, width = sized_page
    for path in PAGES:
        page.goto(f"{server}/{path}")
        wait_idle(page)
        if path == "Search":
            box = page.get_by_label("Query")
            box.fill("copy an object to a new key and remove the original")
            box.press("Enter")
            wait_builds(page)
        page.wait_for_timeout(500)
        screenshot(page, f"{path or 'Repository'}_{width}")
        no_exception(page)


def new_page(browser, width: int):
    context = browser.new_context(viewport={"width": width, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(90_000)
    return context, page


def test_a_link_with_max_tokens_2048_and_a_file(browser, server) -> None:
    context, page = new_page(browser, 1600)
    page.goto(f"{server}/Chunks_and_AST?max_tokens=2048&file=src/app.js")
    wait_idle(page)
    slider = page.locator("[data-testid='stSlider']").filter(has_text="max_tokens")
    expect(slider.locator("[data-testid='stSliderThumbValue']")).to_have_text("2048")
    expect(page.get_by_text("Link:")).to_have_count(0)
    expect(page).to_have_url(re.compile(r"file=src(%2F|/)app\.js"))
    context.close()


def test_a_link_made_on_an_upload_says_so(browser, server, tmp_path) -> None:
    import sys

    sys.path.insert(0, str(SAMPLES.parent / "tests" / "app"))
    from ui_helpers import zip_folder

    archive = tmp_path / "payments-src.zip"
    archive.write_bytes(zip_folder(SAMPLES / "ts-payments" / "src"))
    context, page = new_page(browser, 1600)
    page.goto(server)
    wait_idle(page)
    page.get_by_text("Upload a zip").click()
    wait_idle(page)
    page.locator("input[type='file']").set_input_files(str(archive))
    expect(page.get_by_text("payments-src").first).to_be_visible()
    wait_idle(page)
    # The URL is written by the script run after the upload.
    expect(page).to_have_url(re.compile(r"upload(%3A|:)payments-src"))
    link = page.url
    context.close()

    context, page = new_page(browser, 1600)
    page.goto(link)
    wait_idle(page)
    side = page.locator("[data-testid='stSidebar']")
    expect(side).to_contain_text("Upload the same zip on the Repository page")
    main = page.locator("[data-testid='stMain']")

    def says_so() -> bool:  # safe.md breaks bare links with word joiners: drop them
        text = main.inner_text().replace("\u2060", "")
        return "made on an uploaded repository (payments-src@" in text

    eventually(says_so)
    screenshot(page, "link_from_upload_1600")
    context.close()


def test_900px_metrics_readable_and_code_pane_usable(browser, server) -> None:
    context, page = new_page(browser, 900)
    target = "src/services/imageService.js:moveObject:555"
    page.goto(f"{server}/Search?q=copy+an+object+and+delete+the+original&target={target}")
    wait_builds(page)
    values = page.locator("[data-testid='stMetricValue']")
    expect(values).to_have_count(6)
    for i in range(6):  # no value cut off with an ellipsis
        cut = values.nth(i).evaluate(
            "el => [...el.querySelectorAll('*'), el].some(e => e.scrollWidth > e.clientWidth + 1)"
        )
        assert not cut, values.nth(i).inner_text()
    screenshot(page, "search_target_900")
    page.goto(f"{server}/Chunks_and_AST")
    wait_idle(page)
    expect(page.locator(".nx-code").first).to_be_visible()
    code = page.locator(".nx-code").first.bounding_box()
    assert code["width"] >= 420, code  # the code spans the main column, the tree goes below
    assert code["x"] + code["width"] <= 900
    context.close()


def test_a_quick_arrow_key_burst_on_a_slider_ends_on_the_last_value(app_page, server) -> None:
    """Each step reruns the page; a run overtaken by the next step used to push its older
    value back to the browser (pressed to 544, it settled at 512)."""
    page = app_page
    page.goto(f"{server}/Chunks_and_AST?max_tokens=496")
    wait_idle(page)
    slider = page.locator("[data-testid='stSlider']").filter(has_text="max_tokens")
    thumb = slider.get_by_role("slider")
    thumb.focus()
    for _ in range(3):
        thumb.press("ArrowRight")
        page.wait_for_timeout(60)
    value = slider.locator("[data-testid='stSliderThumbValue']")
    expect(value).to_have_text("544")
    expect(page).to_have_url(re.compile(r"max_tokens=544"))
    for _ in range(3):  # the reruns may still be settling: it must stay at 544
        wait_idle(page)
        page.wait_for_timeout(500)
    expect(value).to_have_text("544", timeout=1_000)
    expect(page).to_have_url(re.compile(r"max_tokens=544"), timeout=1_000)


def test_a_selected_search_hit_travels_in_the_link(browser, server) -> None:
    """The toggle runs in the results fragment: its callback writes ``hit=`` to the URL,
    and a new session opened on that URL shows the same hit in full."""
    context = browser.new_context(viewport={"width": 1440, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(90_000)
    page.goto(f"{server}/Search?q=copy+an+object+and+delete+the+original")
    wait_builds(page)
    main = page.locator("[data-testid='stMain']")
    expect(main.locator(".st-key-hit_ast_2 label")).to_be_visible()
    expect(main.locator("[class*='st-key-whole_']")).to_have_count(0)  # previews only
    main.locator(".st-key-hit_ast_2 label").click()
    wait_idle(page)
    expect(page).to_have_url(re.compile(r"[?&]hit="))
    expect(main.locator(".st-key-whole_hit_ast_2 .nx-code")).to_be_visible()
    link = page.url
    opened = context.new_page()
    opened.set_default_timeout(90_000)  # a new page waits 30 s by default: too short here
    opened.goto(link)
    wait_builds(opened)
    expect(opened.locator(".st-key-hit_ast_2 input")).to_be_checked()
    expect(opened.locator(".st-key-whole_hit_ast_2 .nx-code")).to_be_visible()
    context.close()
