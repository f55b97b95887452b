"""The dashboard in a real Chromium: pages render, the slider re-chunks, search answers."""

from __future__ import annotations

import re

import pytest
from browser_helpers import nav, no_exception, screenshot, wait_builds, wait_idle
from playwright.sync_api import expect

pytestmark = pytest.mark.e2e

NUMBER = re.compile(r"^\d+$")


def metric(page, label: str):
    """The value of the metric with this label (a locator: checks on it wait)."""
    box = page.locator("[data-testid='stMetric']").filter(has=page.get_by_text(label, exact=True))
    return box.locator("[data-testid='stMetricValue']").first


def test_home_shows_the_default_sample(app_page, server) -> None:
    app_page.goto(server)
    wait_idle(app_page)
    expect(app_page.locator("[data-testid='stMain']")).to_contain_text("express-images")
    expect(metric(app_page, "Files")).to_have_text("17")
    expect(app_page.locator("[data-testid='stPlotlyChart']")).to_have_count(1)
    no_exception(app_page)
    screenshot(app_page, "1_home")


def test_slider_rechunks_and_pages_switch(app_page, server) -> None:
    page = app_page
    page.goto(server)
    wait_idle(page)
    nav(page, "Chunks and AST")
    chunks = metric(page, "Chunks")
    expect(chunks).to_have_text(NUMBER)
    before = int(chunks.inner_text())
    expect(page.locator(".nx-label").get_by_text(f"#{before} ", exact=False)).to_have_count(1)
    screenshot(page, "2_chunks")
    slider = page.locator("[data-testid='stSlider']").filter(has_text="max_tokens")
    thumb = slider.get_by_role("slider")
    shown = slider.locator("[data-testid='stSliderThumbValue']")
    for _ in range(20):  # Home jumps to the slider's minimum; a press during a rerun may be lost
        thumb.focus()
        thumb.press("Home")
        wait_idle(page)
        try:
            expect(shown).to_have_text("64", timeout=2_000)
            break
        except AssertionError:
            continue
    expect(shown).to_have_text("64")
    expect(chunks).not_to_have_text(str(before))  # the rerun with 64 shows its count
    wait_idle(page)
    expect(chunks).to_have_text(NUMBER)
    after = int(chunks.inner_text())
    assert after > before, (before, after)
    expect(page.locator(".nx-label").get_by_text(f"#{after} ", exact=False)).to_have_count(1)
    nav(page, "Compare")
    expect(page.get_by_text("Line-based (").first).to_be_visible()
    screenshot(page, "3_compare")
    nav(page, "Chunks and AST")  # the setting survived the two page switches
    expect(metric(page, "Chunks")).to_have_text(str(after))
    no_exception(page)


def test_search_shows_both_lists_and_the_chart(app_page, server) -> None:
    page = app_page
    page.goto(server)
    wait_idle(page)
    nav(page, "Search")
    box = page.get_by_label("Query")
    box.fill("copy an object to a new key and remove the original")
    box.press("Enter")
    wait_builds(page)
    main = page.locator("[data-testid='stMain']")
    expect(main.get_by_text(re.compile(r"^1\. "))).to_have_count(2)
    # Per column: the score chart, then the ranking stage's parts of each hit.
    expect(main.locator("[data-testid='stPlotlyChart']")).to_have_count(4)
    expect(page).to_have_url(re.compile(r"q=copy"))  # the link reproduces the view
    chart = main.locator("[data-testid='stPlotlyChart']").nth(2)  # the AST scores
    marker = chart.locator(".scatterlayer .trace").first.locator("path.point").first
    expect(marker).to_be_visible()
    box = marker.bounding_box()  # plotly's drag layer lies on top: click where a user would
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    wait_idle(page)
    expect(main.get_by_text("1 chunk(s) picked on the chart")).to_be_visible()  # in full
    screenshot(page, "4_search")
    nav(page, "Evaluate")
    expect(main.locator("[data-testid='stPlotlyChart']").nth(1)).to_be_visible()
    screenshot(page, "5_evaluate")
    nav(page, "Export")
    expect(page.get_by_text("Download nexus.toml")).to_be_visible()
    screenshot(page, "6_export")
    no_exception(page)


def test_shared_link_opens_the_same_search(app_page, server) -> None:
    page = app_page
    page.goto(f"{server}/Search?repo=sample:ts-payments&q=refund+a+payment&k=3")
    wait_builds(page)
    expect(page.get_by_label("Query")).to_have_value("refund a payment")
    expect(page.locator("[data-testid='stSidebar']")).to_contain_text("ts-payments")
    main = page.locator("[data-testid='stMain']")
    expect(main.locator("[data-testid='stPlotlyChart']").first).to_be_visible()
    expect(main.get_by_text(re.compile(r"^3\. "))).to_have_count(2)
