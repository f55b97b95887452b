"""A fresh server's first session: the sidebar lists the six pages and nothing else.

With ``pages/`` beside ``app.py``, a link straight to a page on a server nobody had
opened yet ran in Streamlit's directory mode and listed ``app.py`` as a stray "app"
page (clicking it reset the repository); ``state.leave_directory_mode`` ends that.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from browser_helpers import wait_idle
from playwright.sync_api import expect

from nexus.ui.serve import dashboard_process

pytestmark = pytest.mark.e2e

PAGES = ["Repository", "Chunks and AST", "Compare", "Search", "Evaluate", "Export"]


@pytest.fixture(scope="module")
def fresh_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A server of its own: the session below must be the first it serves."""
    with dashboard_process(tmp_path_factory.mktemp("fresh-server")) as (url, _process):
        yield url


def test_a_link_to_a_page_on_a_fresh_server_lists_only_the_pages(browser, fresh_server) -> None:
    context = browser.new_context(viewport={"width": 1440, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(90_000)
    page.goto(f"{fresh_server}/Compare")
    wait_idle(page)
    links = page.locator("[data-testid='stSidebarNav'] a")
    expect(links).to_have_text(PAGES, timeout=60_000)
    expect(page.get_by_role("heading", name="Line-based vs AST chunks")).to_be_visible()
    links.filter(has_text=re.compile("^Repository$")).click()
    wait_idle(page)
    expect(page.get_by_role("heading", name=re.compile("Repository"))).to_be_visible(timeout=60_000)
    expect(links).to_have_text(PAGES)
    context.close()


KILLED_MID_TEST = """
import os, sys
from pathlib import Path
from nexus.ui.serve import dashboard_process

with dashboard_process(Path(sys.argv[1])) as (url, process):
    print(process.pid, flush=True)
    os._exit(1)  # as a test run killed outright: no cleanup runs
"""


def test_a_test_run_killed_outright_leaves_no_server_behind(tmp_path) -> None:
    import os
    import subprocess
    import sys
    import time
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(root)}
    done = subprocess.run(
        [sys.executable, "-c", KILLED_MID_TEST, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=180,
        env=env,
        cwd=root,
    )
    server = int(done.stdout.split()[0])

    def running(pid: int) -> bool:
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            return False
        return "\nState:\tZ" not in status  # a zombie has ended

    deadline = time.monotonic() + 30  # the kernel's signal lands at once; a wait, not a timing
    while running(server) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not running(server)
