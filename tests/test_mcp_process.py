"""``nexus mcp`` as a process a real client starts and stops: the SDK's own
``stdio_client``, its default environment, a kill mid-build.

The SDK starts the server in a session of its own (``start_new_session``), so every
process of the server's tree (the fork server, the resource tracker, the chunking
workers) carries the server's pid as its session id, even once orphaned.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")


def _in_session(sid: int) -> list[int]:
    """The live processes whose session is ``sid`` (zombies left out)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # gone meanwhile
        if fields[0] != "Z" and int(fields[3]) == sid:
            found.append(int(entry.name))
    return found


def _server_pid() -> int:
    """The ``nexus mcp`` process this test process started."""
    for entry in Path("/proc").iterdir():
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            command = (entry / "cmdline").read_bytes()
        except (OSError, ValueError, IndexError):
            continue
        if ppid == os.getpid() and b"nexus.cli\0mcp" in command:
            return int(entry.name)
    raise AssertionError("no nexus mcp process found")


def _run(coroutine):
    with ThreadPoolExecutor(max_workers=1) as pool:  # a loop of its own (see test_mcp)
        return pool.submit(asyncio.run, coroutine).result()


def _big_repo(root: Path, folders: int = 40, files: int = 60) -> Path:
    """Enough Python that chunking it on two workers takes seconds."""
    for d in range(folders):
        folder = root / f"pkg{d}"
        folder.mkdir(parents=True)
        for f in range(files):
            body = "".join(
                f"def fn_{d}_{f}_{i}(x):\n    '''Step {i}.'''\n    return x * {i} + {i}\n\n"
                for i in range(30)
            )
            (folder / f"m{f}.py").write_text(body)
    return root


def test_a_server_killed_mid_build_leaves_no_process_and_the_client_sees_it_close(
    tmp_path, static_model_dir
):
    """SIGKILL while the chunking workers run: the client's pending call fails at once
    (no helper holds the server's stdout), and no process of the server's tree is left
    (issue 41: the workers, fork server and resource tracker outlived it)."""
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    repo = _big_repo(tmp_path / "big")
    cache = tmp_path / "cache"
    shutil.copytree(static_model_dir, cache / "models" / static_model_dir.name)
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "nexus.cli", "mcp", str(repo), "--cache", str(cache), "--workers", "2"],
        env={"PYTHONPATH": str(PROJECT), "HF_HUB_OFFLINE": "1"},
        cwd=str(tmp_path),
    )

    async def script():
        async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
            await client.initialize()
            server = _server_pid()
            pending = asyncio.ensure_future(client.call_tool("search", {"query": "step"}))
            deadline = time.monotonic() + 120
            # The server, the resource tracker, the fork server and two workers.
            while len(before := _in_session(server)) < 5 and time.monotonic() < deadline:
                await asyncio.sleep(0.1)
            os.kill(server, signal.SIGKILL)
            try:
                await asyncio.wait_for(pending, 30)
            except TimeoutError:
                return server, before, "no end-of-file"
            except Exception as exc:  # noqa: BLE001 - the SDK's "Connection closed"
                return server, before, str(exc)
            return server, before, "answered"

    server, before, seen = _run(script())
    deadline = time.monotonic() + 20
    while (left := _in_session(server)) and time.monotonic() < deadline:
        time.sleep(0.2)
    for pid in left:  # a failing run must not leave them either
        os.kill(pid, signal.SIGKILL)
    assert len(before) >= 5, f"the workers never started: {before}"
    assert "closed" in seen.lower(), seen
    assert left == []


def test_a_server_started_as_a_client_starts_it_answers_from_the_users_cache(
    tmp_path, static_model_dir
):
    """A new empty working folder and the SDK's default environment (HOME, PATH...: no
    NEXUS_CACHE_DIR): on a set-up machine (the fast tier's model in the user's cache
    folder, where ``nexus setup`` puts it) the server answers without distilling, and
    writes nothing into the working folder (issue 41: ``.nexus-cache`` there, 3 minutes)."""
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    home = tmp_path / "home"
    model = home / ".cache" / "nexus" / "models" / static_model_dir.name
    shutil.copytree(static_model_dir, model)
    stamp = model.stat().st_mtime_ns
    repo = tmp_path / "repo"
    shutil.copytree(PROJECT / "sample_repos" / "ts-payments", repo)
    workdir = tmp_path / "new-folder"
    workdir.mkdir()
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "nexus.cli", "mcp", str(repo), "--workers", "1"],
        env={"HOME": str(home), "PYTHONPATH": str(PROJECT)},  # merged over the SDK's own
        cwd=str(workdir),
    )
    log = tmp_path / "stderr.log"

    async def script():
        with log.open("w") as errlog:
            async with (
                stdio_client(params, errlog=errlog) as (read, write),
                ClientSession(read, write) as client,
            ):
                await client.initialize()
                found = await client.call_tool("search", {"query": "refund a payment"})
                status = await client.call_tool("index_status", {})
                return found.structured_content, status.structured_content

    found, status = _run(script())
    said = log.read_text()
    assert found["tier"] == "fast" and found["hits"], said
    assert status["cache"] == str(home / ".cache" / "nexus")
    assert "distilling" not in said and "not distilled yet" not in said
    assert model.stat().st_mtime_ns == stamp
    assert list(workdir.iterdir()) == []
