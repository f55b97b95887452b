"""Issue 13 in a real Chromium: a hostile link and a hostile repository fetch nothing.

Markdown that became an image would make every browser opening the page request it;
the test records every request and fails on any to ``evil.invalid``.
"""

from __future__ import annotations

import io
import zipfile
from urllib.parse import urlencode, urlparse

import pytest
from browser_helpers import eventually, nav, no_exception, screenshot, wait_builds, wait_idle
from playwright.sync_api import expect

from nexus.ui.safe import WORD_JOINER
from tests.helpers import HOSTILE_FILE, hostile_files

pytestmark = pytest.mark.e2e

HOSTILE_LINK = {
    "k": "![x](http://evil.invalid/k.png)",
    "repo": "path:[Click here to sign in again](https://evil.invalid/login)",
    "q": "![q](https://evil.invalid/q.png) handler",
}


def hostile(url: str) -> bool:
    """A request to the hostile host (the page's own URL only carries it as text)."""
    return (urlparse(url).hostname or "").endswith("evil.invalid")


def shown(locator) -> str:
    """The text a reader sees (the word joiners that break bare links are invisible)."""
    return locator.inner_text().replace(WORD_JOINER, "")


def hostile_zip() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in hostile_files().items():
            archive.writestr(name, data)
    return buffer.getvalue()


def assert_text_only(page) -> None:
    """No element points at the hostile host, and the page did not crash."""
    # (a heading's own anchor, ``#bold-u-http-evil-invalid``, stays on the page)
    found = page.locator("img[src*='evil'], a[href*='evil']:not([href^='#']), [srcset*='evil']")
    expect(found).to_have_count(0)
    no_exception(page)


def test_hostile_link_and_repository_fetch_nothing(app_page, server) -> None:
    page = app_page
    page.set_default_timeout(90_000)  # six pages and two index builds on a shared machine
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))
    # Answer at once instead of waiting for DNS; the request is still recorded above.
    page.route(hostile, lambda route: route.abort())

    page.goto(f"{server}/Search?{urlencode(HOSTILE_LINK)}")
    wait_idle(page)
    main = page.locator("[data-testid='stMain']")
    eventually(lambda: "ignored k='![x](http://evil.invalid/k.png)'" in shown(main))
    assert "[Click here to sign in again](https://evil.invalid/login)" in shown(main)
    assert_text_only(page)
    screenshot(page, "untrusted_1_link")

    nav(page, "Repository")
    page.get_by_text("Upload a zip").click()
    wait_idle(page)
    page.locator("[data-testid='stFileUploaderDropzoneInput']").set_input_files(
        files=[
            {
                "name": "**bold**![u](http:evil.invalid).zip",
                "mimeType": "application/zip",
                "buffer": hostile_zip(),
            }
        ]
    )
    wait_idle(page)
    expect(main.get_by_text("**bold**![u](http:evil.invalid)").first).to_be_visible()
    assert_text_only(page)

    nav(page, "Chunks and AST")
    screenshot(page, "untrusted_2_chunks")
    picker = main.locator("[data-testid='stSelectbox']").first

    def file_picked() -> bool:
        return HOSTILE_FILE in picker.inner_text() + picker.locator("input").input_value()

    eventually(file_picked)
    assert_text_only(page)

    nav(page, "Search")
    wait_builds(page)
    chart = main.locator("[data-testid='stPlotlyChart']").nth(2)  # AST scores (after lines')
    marker = chart.locator(".scatterlayer .trace").first.locator("path.point").first
    expect(marker).to_be_visible()
    box = marker.bounding_box()  # a click opens the chunk in an expander named by its file
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    wait_idle(page)
    expect(main.get_by_text("chunk(s) picked on the chart")).to_be_visible()
    eventually(lambda: HOSTILE_FILE in shown(main) and "__dunder_name__" in shown(main))
    assert_text_only(page)
    screenshot(page, "untrusted_3_search")

    for number, label in enumerate(("Evaluate", "Compare", "Export"), start=4):
        nav(page, label)
        assert_text_only(page)
        screenshot(page, f"untrusted_{number}_{label.lower()}")
    assert [url for url in requested if hostile(url)] == []
