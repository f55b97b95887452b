"""Run the dashboard as a real server, for the browser tests and the latency benchmark.

One place knows how to start ``streamlit run app.py`` on a free local port, wait
until it answers, and always stop it; and which Chromium flags work on this machine.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from nexus.runtime.lifeline import die_with_parent

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
#: Headless Chromium as root in a closed network (see STYLE.md).
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def dashboard_server(workdir: Path, timeout_s: float = 60) -> Iterator[str]:
    """``streamlit run app.py`` with the fake embedder on a free port; yields its URL."""
    with dashboard_process(workdir, timeout_s) as (url, _process):
        yield url


@contextmanager
def dashboard_process(
    workdir: Path,
    timeout_s: float = 60,
    root: Path = ROOT,
    env: dict[str, str] | None = None,
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """``streamlit run app.py`` of the checkout ``root`` with the fake embedder (and
    ``env`` on top) on a free port; yields its URL and the process (benchmarks read
    its memory).

    The server's output goes to ``workdir/streamlit.log``; a server that does not
    answer within ``timeout_s`` raises ``RuntimeError`` with the end of that log.
    """
    port = free_port()
    env = {
        **os.environ,
        "NEXUS_UI_EMBEDDER": "fake",
        "NEXUS_CACHE_DIR": str(workdir / "cache"),
        **(env or {}),
    }
    command = [
        sys.executable, "-m", "streamlit", "run", "app.py",
        "--server.headless", "true",
        "--server.port", str(port),
        "--server.address", "127.0.0.1",
        "--browser.gatherUsageStats", "false",
        "--server.fileWatcherType", "none",
    ]  # fmt: skip
    with open(workdir / "streamlit.log", "w+") as log:
        process = subprocess.Popen(
            command,
            cwd=root,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            preexec_fn=die_with_parent,  # a test run killed outright leaves no server behind
        )
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + timeout_s
            while True:
                try:
                    with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as reply:
                        if reply.status == 200:
                            break
                except OSError:
                    pass
                if process.poll() is not None or time.monotonic() > deadline:
                    log.seek(0)
                    raise RuntimeError(f"streamlit did not start:\n{log.read()[-3000:]}")
                time.sleep(0.2)
            yield url, process
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=10)
