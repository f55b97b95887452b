"""A real dashboard server (fake embedder) and a headless Chromium, once per session."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from browser_helpers import EXPECT_MS

from nexus.ui.serve import CHROMIUM, CHROMIUM_ARGS, dashboard_server


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``streamlit run app.py`` (fake embedder) on a free port; yields its base URL."""
    with dashboard_server(tmp_path_factory.mktemp("server")) as url:
        yield url


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    sync_api = pytest.importorskip("playwright.sync_api")
    sync_api.expect.set_options(timeout=EXPECT_MS)  # every check waits, generously
    if not Path(CHROMIUM).exists():
        pytest.skip(f"no Chromium at {CHROMIUM}")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True
        )
        yield browser
        browser.close()


@pytest.fixture
def app_page(browser, server):
    """A fresh browser page (new session) sized like a laptop screen."""
    context = browser.new_context(viewport={"width": 1440, "height": 1000})
    page = context.new_page()
    # Generous: a shared 2-core machine under load can take a minute to settle a page.
    page.set_default_timeout(90_000)
    yield page
    context.close()
