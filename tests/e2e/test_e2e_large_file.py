"""Chunks and AST on a large file in a real browser: a window of lines in the DOM, not
the file; the paging buttons reach its last line; a band click still selects."""

from __future__ import annotations

import io
import sys
import zipfile
from pathlib import Path

import pytest
from browser_helpers import eventually, nav, no_exception, screenshot, wait_idle
from playwright.sync_api import expect

from nexus.ui import linewindow

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from helpers import large_typescript  # noqa: E402

pytestmark = pytest.mark.e2e


def drawn(page) -> list[int]:
    """Line numbers in the code view's DOM."""
    text = page.locator(".nx-code .nx-ln").all_inner_texts()
    return [int(n) for block in text for n in block.split()]


@pytest.mark.parametrize("width", [1600, 900])
def test_a_large_file_is_drawn_a_window_at_a_time(browser, server, tmp_path, width) -> None:
    text = large_typescript(120_000)
    total = linewindow.line_count(text)
    archive = tmp_path / "big-upload.zip"
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zipped:
        zipped.writestr("src/big.ts", text)
        zipped.writestr("src/small.ts", "export const one = 1;\n")
    archive.write_bytes(buffer.getvalue())

    context = browser.new_context(viewport={"width": width, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(90_000)
    page.goto(server)
    wait_idle(page)
    page.get_by_text("Upload a zip").click()
    wait_idle(page)
    page.locator("input[type='file']").set_input_files(str(archive))
    expect(page.get_by_text("big-upload").first).to_be_visible()
    wait_idle(page)
    nav(page, "Chunks and AST")
    expect(page.get_by_text(f"of {total:,}").first).to_be_visible()
    wait_idle(page)

    first_window = list(range(1, linewindow.WINDOW_LINES + 1))
    eventually(lambda: drawn(page) == first_window)
    screenshot(page, f"large_file_{width}")

    page.get_by_role("button", name="Last").click()
    last_window = f"{total - linewindow.WINDOW_LINES + 1:,}–{total:,} of"
    expect(page.get_by_text(last_window).first).to_be_visible()
    wait_idle(page)
    eventually(lambda: drawn(page)[-1:] == [total])
    expect(page.get_by_role("button", name="Next")).to_be_disabled()

    # A band of the window selects its chunk (and the window stays where it is).
    band = page.locator(".nx-code [data-chunk]").last
    chunk = int(band.get_attribute("data-chunk"))
    band.scroll_into_view_if_needed()
    band.click()
    expect(page.get_by_text(f"Syntax tree of chunk #{chunk + 1}")).to_be_visible()
    wait_idle(page)
    eventually(lambda: drawn(page)[-1:] == [total])
    screenshot(page, f"large_file_end_{width}")
    no_exception(page)
    context.close()
