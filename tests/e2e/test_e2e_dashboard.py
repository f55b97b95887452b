"""The dashboard in a real Chromium: pages render, the slider re-chunks, search answers."""

from __future__ import annotations

import re

import pytest
from browser_helpers import screenshot, wait_builds, wait_idle

pytestmark = pytest.mark.e2e


def nav(page, label: str) -> None:
    """Switch page through the sidebar navigation (same session)."""
    page.locator("[data-testid='stSidebarNav']").get_by_role("link", name=label).click()
    wait_idle(page)


def metric_value(page, label: str) -> str:
    box = page.locator("[data-testid='stMetric']").filter(has=page.get_by_text(label, exact=True))
    return box.locator("[data-testid='stMetricValue']").first.inner_text()


def test_home_shows_the_default_sample(app_page, server) -> None:
    app_page.goto(server)
    wait_idle(app_page)
    assert "express-images" in app_page.locator("[data-testid='stMain']").inner_text()
    assert metric_value(app_page, "Files") == "17"
    assert app_page.locator("[data-testid='stPlotlyChart']").count() == 1
    assert app_page.locator("[data-testid='stException']").count() == 0
    screenshot(app_page, "1_home")


def test_slider_rechunks_and_pages_switch(app_page, server) -> None:
    page = app_page
    page.goto(server)
    wait_idle(page)
    nav(page, "Chunks and AST")
    before = int(metric_value(page, "Chunks"))
    assert page.locator(".nx-label").get_by_text(f"#{before} ", exact=False).count() == 1
    screenshot(page, "2_chunks")
    slider = page.locator("[data-testid='stSlider']").filter(has_text="max_tokens")
    thumb = slider.get_by_role("slider")
    shown = slider.locator("[data-testid='stSliderThumbValue']")
    for _ in range(20):  # Home jumps to the slider's minimum; a press during a rerun may be lost
        if shown.inner_text() == "64":
            break
        thumb.focus()
        thumb.press("Home")
        page.wait_for_timeout(150)
        wait_idle(page)
    after = before
    for _ in range(40):  # wait for the rerun with the final value to show its count
        wait_idle(page)
        after = int(metric_value(page, "Chunks"))
        if after != before:
            break
        page.wait_for_timeout(250)
    assert shown.inner_text() == "64"
    assert after > before, (before, after)
    assert page.locator(".nx-label").get_by_text(f"#{after} ", exact=False).count() == 1
    nav(page, "Compare")
    assert page.get_by_text("Line-based (").first.is_visible()
    screenshot(page, "3_compare")
    nav(page, "Chunks and AST")  # the setting survived the two page switches
    assert int(metric_value(page, "Chunks")) == after
    assert page.locator("[data-testid='stException']").count() == 0


def test_search_shows_both_lists_and_the_chart(app_page, server) -> None:
    page = app_page
    page.goto(server)
    wait_idle(page)
    nav(page, "Search")
    box = page.get_by_label("Query")
    box.fill("copy an object to a new key and remove the original")
    box.press("Enter")
    wait_builds(page)
    page.wait_for_selector("[data-testid='stPlotlyChart']")
    main = page.locator("[data-testid='stMain']")
    assert main.get_by_text(re.compile(r"^1\. ")).count() == 2
    # Per column: the score chart, then the ranking stage's parts of each hit.
    assert main.locator("[data-testid='stPlotlyChart']").count() == 4
    assert "q=copy" in page.url  # the link reproduces the view
    chart = main.locator("[data-testid='stPlotlyChart']").nth(2)  # the AST scores
    marker = chart.locator(".scatterlayer .trace").first.locator("path.point").first
    box = marker.bounding_box()  # plotly's drag layer lies on top: click where a user would
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    wait_idle(page)
    main.get_by_text("1 chunk(s) picked on the chart").wait_for()  # the clicked chunk, in full
    screenshot(page, "4_search")
    nav(page, "Evaluate")
    assert main.locator("[data-testid='stPlotlyChart']").count() >= 2
    screenshot(page, "5_evaluate")
    nav(page, "Export")
    assert page.get_by_text("Download nexus.toml").is_visible()
    screenshot(page, "6_export")
    assert page.locator("[data-testid='stException']").count() == 0


def test_shared_link_opens_the_same_search(app_page, server) -> None:
    page = app_page
    page.goto(f"{server}/Search?repo=sample:ts-payments&q=refund+a+payment&k=3")
    wait_builds(page)
    page.wait_for_selector("[data-testid='stPlotlyChart']")
    assert page.get_by_label("Query").input_value() == "refund a payment"
    assert "ts-payments" in page.locator("[data-testid='stSidebar']").inner_text()
    main = page.locator("[data-testid='stMain']")
    assert main.get_by_text(re.compile(r"^3\. ")).count() == 2
