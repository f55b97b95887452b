"""Two browser sessions on one server share one background index build."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from browser_helpers import screenshot, wait_builds, wait_idle

from nexus.ui.serve import dashboard_process

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def slow_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A server whose fake model takes 0.4 s a text: a build lasts long enough to watch."""
    workdir = tmp_path_factory.mktemp("slow-server")
    with dashboard_process(workdir, env={"NEXUS_UI_EMBEDDER": "fake:0.4"}) as (url, _process):
        yield url


def open_search(browser, url: str):
    context = browser.new_context(viewport={"width": 1600, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(120_000)
    page.goto(f"{url}/Search?q=copy+an+object+and+delete+the+original")
    wait_idle(page)
    return context, page


def ast_progress(page) -> str:
    return page.locator("[data-testid='stProgress']").first.inner_text()


def test_two_sessions_share_one_build_and_its_progress(browser, slow_server) -> None:
    first_context, first = open_search(browser, slow_server)
    second_context, second = open_search(browser, slow_server)
    mine, theirs = ast_progress(first), ast_progress(second)
    assert "AST index" in mine and "started by this session" in mine
    assert "started earlier on this server, shared with this session" in theirs
    total = re.search(r"/((?:about )?[\d,]+) chunks", mine)  # "about": while chunking
    assert total and f"/{total.group(1)} chunks" in theirs  # the same build's count
    main = second.locator("[data-testid='stMain']")
    assert "Partial:" in main.inner_text()  # keyword hits while the build runs
    screenshot(second, "build_shared_second_session")

    wait_builds(first)
    wait_builds(second)
    first_text = first.locator("[data-testid='stMain']").inner_text()
    second_text = main.inner_text()
    assert re.search(r"AST index: done · .* · started by this session", first_text)
    assert "AST index: done" in second_text
    assert "built earlier on this server and reused as it is" in second_text
    assert "Partial:" not in second_text
    first_context.close()
    second_context.close()
