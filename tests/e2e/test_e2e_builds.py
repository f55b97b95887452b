"""Two browser sessions on one server share one background index build."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from browser_helpers import screenshot, wait_builds, wait_idle
from playwright.sync_api import expect

from nexus.ui.serve import dashboard_process

pytestmark = pytest.mark.e2e

#: The count of a build whose files are all chunked: "12/40 chunks (30%)".
CHUNKED = re.compile(r"/([\d,]+) chunks \(")


@pytest.fixture(scope="module")
def slow_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A server whose fake model takes 1 s a text: a build lasts long enough to watch
    (at 0.4 s it had finished before two pages had opened, under load 9)."""
    workdir = tmp_path_factory.mktemp("slow-server")
    with dashboard_process(workdir, env={"NEXUS_UI_EMBEDDER": "fake:1.0"}) as (url, _process):
        yield url


def open_search(browser, url: str):
    context = browser.new_context(viewport={"width": 1600, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(240_000)  # 99 chunks at 1 s each, then the line windows
    page.goto(f"{url}/Search?q=copy+an+object+and+delete+the+original")
    wait_idle(page)
    return context, page


def test_two_sessions_share_one_build_and_its_progress(browser, slow_server) -> None:
    first_context, first = open_search(browser, slow_server)
    second_context, second = open_search(browser, slow_server)
    mine = first.locator("[data-testid='stProgress']").first
    theirs = second.locator("[data-testid='stProgress']").first
    expect(mine).to_contain_text(re.compile(r"AST index.*started by this session"))
    expect(theirs).to_contain_text("started earlier on this server, shared with this session")
    expect(mine).to_contain_text(CHUNKED)  # every file chunked: the count holds still
    total = CHUNKED.search(mine.inner_text()).group(1)
    expect(theirs).to_contain_text(f"/{total} chunks")  # the same build's count
    main = second.locator("[data-testid='stMain']")
    expect(main).to_contain_text("Partial:")  # keyword hits while the build runs
    screenshot(second, "build_shared_second_session")

    wait_builds(first)
    wait_builds(second)
    expect(first.locator("[data-testid='stMain']")).to_contain_text(
        re.compile(r"AST index: done · .* · started by this session")
    )
    expect(main).to_contain_text("AST index: done")
    expect(main).to_contain_text("built earlier on this server and reused as it is")
    expect(main).not_to_contain_text("Partial:")
    first_context.close()
    second_context.close()
