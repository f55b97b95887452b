"""Evaluate's sweep in a real browser: a link starts it, Cancel stops it, Run resumes it,
and Apply moves the sliders to the best setting."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from browser_helpers import screenshot, wait_idle
from playwright.sync_api import expect

from nexus.ui.serve import dashboard_process

pytestmark = pytest.mark.e2e

#: With 1024/48 in use, 256/0 finds more within 1k tokens (fake model), so Apply is offered.
LINK = (
    "/Evaluate?repo=sample:express-images&max_tokens=1024&min_tokens=48"
    "&sweep_max=128,256,512,1024&sweep_min=0,48"
)


@pytest.fixture(scope="module")
def slow_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A server whose fake model takes 0.2 s a text: a sweep lasts long enough to cancel
    on a loaded machine (at 0.05 s it had finished before the click, under load 9)."""
    workdir = tmp_path_factory.mktemp("sweep-server")
    with dashboard_process(workdir, env={"NEXUS_UI_EMBEDDER": "fake:0.2"}) as (url, _process):
        yield url


def test_a_linked_sweep_cancels_resumes_and_applies_its_best(browser, slow_server) -> None:
    context = browser.new_context(viewport={"width": 1440, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(180_000)
    page.goto(f"{slow_server}{LINK}")
    main = page.locator("[data-testid='stMain']")
    expect(main).to_contain_text("texts/s", timeout=180_000)  # a pace, an ETA
    expect(main).to_contain_text("left")
    page.get_by_role("button", name="Cancel").click()
    expect(main).to_contain_text("Cancelled with", timeout=180_000)
    wait_idle(page)
    expect(main).to_contain_text("Run sweep again to resume")

    page.get_by_role("button", name="Run sweep").click()
    apply = page.get_by_role("button", name="Apply the best setting")
    expect(apply).to_be_visible(timeout=180_000)
    wait_idle(page)
    page.locator(".st-key-nx_stack_sweep_charts").evaluate("e => e.scrollIntoView()")
    charts = page.locator(".st-key-nx_stack_sweep_charts [data-testid='stPlotlyChart']")
    expect(charts).to_have_count(3)  # R@1k (the choice), MRR@10, tokens@10
    page.wait_for_timeout(1000)  # let plotly lay the charts out for the screenshot
    screenshot(page, "sweep_answer")
    best_max = apply.inner_text().split("max ")[1].split(",")[0]
    apply.click()
    wait_idle(page)
    slider = page.locator("[data-testid='stSlider']").filter(has_text="max_tokens")
    expect(slider.locator("[data-testid='stSliderThumbValue']")).to_have_text(best_max)
    context.close()
