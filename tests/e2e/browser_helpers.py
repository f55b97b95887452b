"""Helpers for the browser tests: waiting for Streamlit, saving screenshots."""

from __future__ import annotations

from pathlib import Path

SCREENSHOTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "screenshots"


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


def screenshot(page, name: str) -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=False)
    return path
