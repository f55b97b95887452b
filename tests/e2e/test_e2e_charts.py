"""Charts as a browser lays them out: no title under Plotly's toolbar, no label cut off
(issue 41: the toolbar covered the sweep charts' and the Search charts' titles, and
"Why each hit ranks" lost its x labels and named only #1, #3 and #5)."""

from __future__ import annotations

import pytest
from browser_helpers import no_exception, wait_builds, wait_idle

pytestmark = pytest.mark.e2e

#: For each chart: its title, whether the toolbar's box meets the title's, the tick
#: labels that stick out of the chart or lie under its legend, and how many category
#: labels the y axis shows.
CHART_LAYOUT = """() => [...document.querySelectorAll('.js-plotly-plot')].map(plot => {
  const box = e => e && e.getBoundingClientRect();
  const bar = box(plot.querySelector('.modebar-container'));
  const title = box(plot.querySelector('.gtitle'));
  const frame = box(plot.querySelector('svg.main-svg'));
  const meets = (a, b) => !(a.right <= b.left || b.right <= a.left
                            || a.bottom <= b.top || b.bottom <= a.top);
  const legend = box(plot.querySelector('.legend .bg'));
  const cut = [...plot.querySelectorAll('.xtick text, .ytick text')].map(box)
    .filter(r => r.left < frame.left - 1 || r.right > frame.right + 1
                 || r.bottom > frame.bottom + 1 || r.top < frame.top - 1
                 || (legend && meets(r, legend))).length;
  return {title: plot.querySelector('.gtitle')?.textContent ?? '',
          covered: !!(bar && title && meets(bar, title)), cut,
          yticks: plot.querySelectorAll('.ytick').length};
})"""


def charts(page) -> list[dict]:
    """Every chart's layout, with each toolbar shown (it shows on hover)."""
    for plot in page.locator(".js-plotly-plot").all():
        if plot.is_visible():  # not one in a closed expander
            plot.hover()
    return page.evaluate(CHART_LAYOUT)


@pytest.mark.parametrize(
    ("path", "titles"),
    [
        ("Search?q=copy+an+object+and+delete+the+original", ("Final score", "Why each hit")),
        ("Evaluate?sweep_max=256,512&sweep_min=0", ("R@1k", "Targets read within")),
        ("", ("Files by category",)),
        ("Compare", ("Chunk sizes",)),
    ],
)
def test_no_title_lies_under_the_toolbar_and_no_label_is_cut(browser, server, path, titles):
    context = browser.new_context(viewport={"width": 1600, "height": 900})
    page = context.new_page()
    page.set_default_timeout(120_000)
    page.goto(f"{server}/{path}")
    (wait_builds if path.startswith("Search") else wait_idle)(page)
    if path.startswith("Evaluate"):  # the link's sweep runs on opening
        page.wait_for_function("document.body.innerText.includes('Targets read within')")
        wait_idle(page)
    no_exception(page)
    found = charts(page)
    for title in titles:
        assert any(c["title"].startswith(title) for c in found), (title, found)
    assert not [c for c in found if c["covered"] or c["cut"]], found
    parts = [c for c in found if c["title"].startswith("Why each hit")]
    assert all(c["yticks"] == 5 for c in parts), parts  # every hit of the top 5 labelled
    context.close()


def test_the_compare_tables_toolbar_leaves_the_file_pickers_arrow_free(browser, server):
    context = browser.new_context(viewport={"width": 1600, "height": 900})
    page = context.new_page()
    page.set_default_timeout(120_000)
    page.goto(f"{server}/Compare")
    wait_idle(page)
    table = page.locator("[data-testid='stDataFrame']").first
    table.hover()
    toolbar = page.locator("[data-testid='stElementToolbar']").first
    toolbar.wait_for(state="visible")
    arrow = page.locator("[data-testid='stSelectbox'] svg").first.bounding_box()
    bar = toolbar.bounding_box()
    apart = (
        bar["y"] >= arrow["y"] + arrow["height"]
        or arrow["y"] >= bar["y"] + bar["height"]
        or bar["x"] >= arrow["x"] + arrow["width"]
        or arrow["x"] >= bar["x"] + bar["width"]
    )
    assert apart, (bar, arrow)
    context.close()
