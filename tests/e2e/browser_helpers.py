"""Helpers for the browser tests: waiting for Streamlit, switching pages, screenshots.

Checks wait: ``expect(locator)`` retries until its timeout (set to ``EXPECT_MS`` for
every test in ``conftest``), a plain ``is_visible()`` or ``inner_text()`` reads once,
and on a loaded machine that once may come before the script run that draws it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from playwright.sync_api import expect

SCREENSHOTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "screenshots"

#: What ``expect`` waits for by default: a shared 2-core machine under load can take a
#: minute to settle a page.
EXPECT_MS = 60_000


def wait_idle(page) -> None:
    """Until the script has finished and no skeleton placeholder is left."""
    page.wait_for_selector("[data-testid='stApp'][data-test-script-state='notRunning']")
    page.wait_for_function("!document.querySelector(\"[data-testid='stSkeleton']\")")
    page.wait_for_timeout(300)  # let charts and html lay out
    page.wait_for_selector("[data-testid='stApp'][data-test-script-state='notRunning']")


def wait_builds(page) -> None:
    """Until the Search page's background work is done: no progress bar, no partial
    answer, the units listed, and the page redrawn once more after that."""
    wait_idle(page)
    page.wait_for_function(
        "!document.querySelector(\"[data-testid='stProgress']\")"
        " && !document.body.innerText.includes('Partial:')"
        " && !document.body.innerText.includes('units are listed once')"
    )
    wait_idle(page)


def nav(page, label: str) -> None:
    """Switch page through the sidebar navigation (same session) and wait for its run."""
    sidebar = page.locator("[data-testid='stSidebarNav']")
    sidebar.get_by_role("link", name=label, exact=True).click()
    expect(sidebar.locator("a[aria-current='page']")).to_have_text(label)
    wait_idle(page)


def eventually(check: Callable[[], bool], timeout_s: float = EXPECT_MS / 1000) -> None:
    """Until ``check()`` holds (for what ``expect`` cannot say: numbers in the DOM, a
    scroll position); fails with the check's name after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"{getattr(check, '__name__', check)} still false")
        time.sleep(0.2)


def no_exception(page) -> None:
    """The page shows no Python exception."""
    expect(page.locator("[data-testid='stException']")).to_have_count(0)


def screenshot(page, name: str) -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=False)
    return path
