"""The dashboard at the widths people use: geometry, clicks, links, screenshots.

Screenshots of every page at 1600 and 900 px go to test-artifacts/screenshots/.
"""

from __future__ import annotations

import pytest
from browser_helpers import screenshot, wait_builds, wait_idle

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


def main_errors(page) -> int:
    return page.locator("[data-testid='stException']").count()


def test_compare_panes_side_by_side_in_the_viewport(browser, server) -> None:
    context = browser.new_context(viewport={"width": 1600, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(90_000)
    page.goto(f"{server}/Compare")
    wait_idle(page)
    heads = page.locator(".nx-head").filter(has_text="chunks)")
    heads.first.wait_for()
    boxes = [heads.nth(i).bounding_box() for i in range(heads.count())]
    assert len(boxes) == 2
    for box in boxes:  # both panes fully inside the 1600 px viewport, side by side
        assert box["x"] >= 0 and box["x"] + box["width"] <= 1600, boxes
        assert box["width"] > 300
    assert boxes[0]["y"] == boxes[1]["y"] and boxes[0]["x"] < boxes[1]["x"]
    # A split unit is a link: it scrolls the shared grid (both panes) to its first line.
    code = page.locator(".nx-code").first
    assert code.evaluate("el => el.scrollTop") == 0
    page.locator("[data-goto='599']").first.click()
    page.wait_for_timeout(300)
    assert code.evaluate("el => el.scrollTop") > 0
    row = page.locator(".nx-ln[data-line='599']")
    row_box, code_box = row.bounding_box(), code.bounding_box()
    assert code_box["y"] <= row_box["y"] <= code_box["y"] + code_box["height"]
    screenshot(page, "compare_scrolled_1600")
    assert main_errors(page) == 0
    context.close()


def test_clicking_a_band_selects_its_chunk(app_page, server) -> None:
    page = app_page
    page.goto(f"{server}/Chunks_and_AST")
    wait_idle(page)
    band = page.locator("[data-chunk='2']").first
    band.scroll_into_view_if_needed()
    band.click()
    page.get_by_text("Syntax tree of chunk #3").wait_for()
    wait_idle(page)
    picker = page.locator("[data-testid='stSelectbox']").filter(has_text="Chunk to inspect")
    shown = picker.locator("input").input_value() or picker.text_content()
    assert "#3 " in shown, shown
    assert main_errors(page) == 0


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
        assert main_errors(page) == 0, path


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
    assert slider.locator("[data-testid='stSliderThumbValue']").inner_text() == "2048"
    assert page.get_by_text("Link:").count() == 0
    assert "file=src%2Fapp.js" in page.url or "file=src/app.js" in page.url
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
    page.get_by_text("`payments-src`").or_(page.get_by_text("payments-src")).first.wait_for()
    wait_idle(page)
    for _ in range(40):  # the URL is written by the script run after the upload
        if "upload%3Apayments-src" in page.url or "upload:payments-src" in page.url:
            break
        page.wait_for_timeout(250)
    link = page.url
    assert "payments-src" in link, link
    context.close()

    context, page = new_page(browser, 1600)
    page.goto(link)
    wait_idle(page)
    main = page.locator("[data-testid='stMain']").inner_text().replace("\u2060", "")  # safe.md
    assert "made on an uploaded repository (payments-src@" in main
    side = page.locator("[data-testid='stSidebar']").inner_text()
    assert "Upload the same zip on the Repository page" in side
    screenshot(page, "link_from_upload_1600")
    context.close()


def test_900px_metrics_readable_and_code_pane_usable(browser, server) -> None:
    context, page = new_page(browser, 900)
    target = "src/services/imageService.js:moveObject:555"
    page.goto(f"{server}/Search?q=copy+an+object+and+delete+the+original&target={target}")
    wait_builds(page)
    page.locator("[data-testid='stMetricValue']").first.wait_for()
    values = page.locator("[data-testid='stMetricValue']")
    assert values.count() == 6
    for i in range(values.count()):  # no value cut off with an ellipsis
        cut = values.nth(i).evaluate(
            "el => [...el.querySelectorAll('*'), el].some(e => e.scrollWidth > e.clientWidth + 1)"
        )
        assert not cut, values.nth(i).inner_text()
    screenshot(page, "search_target_900")
    page.goto(f"{server}/Chunks_and_AST")
    wait_idle(page)
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
    for _ in range(3):  # the reruns may still be settling: wait, then look again
        wait_idle(page)
        page.wait_for_timeout(500)
    assert slider.locator("[data-testid='stSliderThumbValue']").inner_text() == "544"
    assert "max_tokens=544" in page.url


def test_a_selected_search_hit_travels_in_the_link(browser, server) -> None:
    """The toggle runs in the results fragment: its callback writes ``hit=`` to the URL,
    and a new session opened on that URL shows the same hit in full."""
    context = browser.new_context(viewport={"width": 1440, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(90_000)
    page.goto(f"{server}/Search?q=copy+an+object+and+delete+the+original")
    wait_builds(page)
    main = page.locator("[data-testid='stMain']")
    assert main.locator("[data-testid='stCode']").count() == 0  # previews only
    main.locator(".st-key-hit_ast_2 label").click()
    wait_idle(page)
    page.wait_for_function("location.search.includes('hit=')")
    assert main.locator("[data-testid='stCode']").count() >= 1
    link = page.url
    opened = context.new_page()
    opened.goto(link)
    wait_builds(opened)
    assert opened.locator(".st-key-hit_ast_2 input").is_checked()
    assert opened.locator("[data-testid='stMain'] [data-testid='stCode']").count() >= 1
    context.close()
