"""CPU an idle dashboard server uses while files change in the checkout.

Starts ``streamlit run app.py`` with the given extra flags, opens one session on it (as
a tab does: a session is what starts Streamlit's watcher on the checkout) and leaves it idle,
writes and deletes files under ``<checkout>/.nexus-cache/churn/`` (as a build's
cache and saved indexes do) for ``--seconds``, and prints the server's CPU seconds
over that window (user + system, from /proc).

    python bench/dashboard/idle_cpu.py --seconds 60         # as scripts/dev.sh app
    python bench/dashboard/idle_cpu.py --seconds 60 -- --server.fileWatcherType auto
        # the second: Streamlit's default watcher
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from nexus.ui.serve import ROOT, free_port

sys.path.insert(0, str(ROOT))


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def churn(folder: Path, until: float) -> int:
    """Write and delete small files until ``until``; how many were written."""
    written = 0
    while time.monotonic() < until:
        for i in range(50):
            (folder / f"{written % 2000}-{i}.bin").write_bytes(b"x" * 64)
        written += 50
        for path in list(folder.iterdir())[:40]:
            path.unlink(missing_ok=True)
        time.sleep(0.01)
    return written


@contextmanager
def _idle_tab(url: str) -> Iterator[None]:
    """A session on the dashboard, as a tab opens it (websocket and one script run), then
    left alone. A session is what starts Streamlit's watcher; no browser is needed."""
    import asyncio
    import threading

    from streamlit.proto.BackMsg_pb2 import BackMsg
    from websockets.asyncio.client import connect

    stop = threading.Event()
    ready = threading.Event()

    async def hold() -> None:
        async with connect(url.replace("http", "ws") + "/_stcore/stream") as socket:
            rerun = BackMsg()
            rerun.rerun_script.query_string = ""
            await socket.send(rerun.SerializeToString())
            ready.set()
            while not stop.is_set():  # read what the server sends, as a tab does
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(socket.recv(), timeout=0.2)

    thread = threading.Thread(target=lambda: asyncio.run(hold()), daemon=True)
    thread.start()
    ready.wait(30)
    try:
        yield
    finally:
        stop.set()
        thread.join(10)


def main() -> None:
    import subprocess

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("flags", nargs="*", help="extra streamlit flags, after --")
    args = parser.parse_args()
    # The flags scripts/dev.sh app passes, then the extra ones (the last of a flag wins).
    flags = ["--server.headless", "true", "--server.fileWatcherType", "none", *args.flags]
    port = free_port()
    folder = ROOT / ".nexus-cache" / f"churn-{os.getpid()}"
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as work:
        env = {**os.environ, "NEXUS_UI_EMBEDDER": "fake", "NEXUS_CACHE_DIR": f"{work}/cache"}
        command = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port)]
        with open(Path(work) / "streamlit.log", "w+") as log:
            server = subprocess.Popen(
                [*command, *flags], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT
            )
            try:
                time.sleep(6)  # started
                with _idle_tab(f"http://127.0.0.1:{port}"):
                    time.sleep(5)  # the page settles
                    before = cpu_seconds(server.pid)
                    written = churn(folder, time.monotonic() + args.seconds)
                    used = cpu_seconds(server.pid) - before
            finally:
                server.terminate()
                server.wait(timeout=10)
            log.seek(0)
            overflows = log.read().count("Inotify queue overflowed")
    shutil.rmtree(folder, ignore_errors=True)
    print(
        f"flags {' '.join(flags[2:])}: {used:.1f} s of CPU in {args.seconds:.0f} s idle "
        f"({used / args.seconds:.0%} of a core) while {written:,} files were written; "
        f"{overflows:,} inotify overflows in the log"
    )


if __name__ == "__main__":
    main()
