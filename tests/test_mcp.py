"""``nexus mcp``: a real MCP client session over stdio, with the SDK's own client.

The server runs as a subprocess on a copy of a sample repository, with the fast tier
(the cheap static model of ``conftest.static_model_dir`` put where the tier looks),
so a session takes seconds.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

SAMPLES = Path(__file__).resolve().parents[1] / "sample_repos"
PROJECT = Path(__file__).resolve().parents[1]


@pytest.fixture
def served(tmp_path, static_model_dir):
    """A copy of ts-payments, a cache holding the fast tier's model, and the command."""
    from mcp.client.stdio import StdioServerParameters

    repo = tmp_path / "ts-payments"
    shutil.copytree(SAMPLES / "ts-payments", repo)
    cache = tmp_path / "cache"
    shutil.copytree(static_model_dir, cache / "models" / static_model_dir.name)
    env = {
        **os.environ,
        "PYTHONPATH": str(PROJECT),
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "NEXUS_CACHE_DIR": str(cache),
    }
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "nexus.cli", "mcp", str(repo), "--cache", str(cache), "--workers", "1"],
        env=env,
        cwd=str(tmp_path),
    )
    return repo, params


def _session(params, script):
    """Run ``script(client)`` in a client session with the server (a fresh event loop)."""
    from mcp.client import Client

    async def main():
        async with Client(params, read_timeout_seconds=120) as client:
            return await script(client)

    # A thread of its own: the browser tests' sync Playwright keeps an event loop
    # running on the main thread for the session, and asyncio.run refuses to nest.
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, main()).result()


def _data(result) -> dict:
    assert not result.is_error, result.content
    if result.structured_content is not None:
        return result.structured_content.get("result", result.structured_content)
    return json.loads(result.content[0].text)


def _error(result) -> str:
    assert result.is_error
    return " ".join(getattr(block, "text", "") for block in result.content)


def test_a_session_lists_tools_searches_and_sees_an_edit(served):
    repo, params = served

    async def script(client):
        tools = {tool.name for tool in (await client.list_tools()).tools}
        first = _data(await client.call_tool("search", {"query": "RefundService refund"}))
        missing = _data(await client.call_tool("search", {"query": "reconcileLedgerDrift"}))
        target = repo / "src" / "services" / "refund.ts"
        target.write_text(
            target.read_text()
            + "\nexport function reconcileLedgerDrift(ledger: number[]): number {\n"
            "  return ledger.reduce((a, b) => a + b, 0);\n}\n"
        )
        edited = _data(await client.call_tool("search", {"query": "reconcileLedgerDrift"}))
        budgeted = _data(
            await client.call_tool("search", {"query": "refund a payment", "budget_tokens": 400})
        )
        chunks = _data(await client.call_tool("chunks", {"file": "src/services/refund.ts"}))
        status = _data(await client.call_tool("index_status", {}))
        related = _data(
            await client.call_tool(
                "find_related", {"file": "src/services/refund.ts", "line": 20, "top_k": 3}
            )
        )
        return tools, first, missing, edited, budgeted, chunks, status, related

    tools, first, missing, edited, budgeted, chunks, status, related = _session(params, script)
    assert tools == {"search", "chunks", "find_related", "index_status"}
    top = first["hits"][0]
    assert top["file"] == "src/services/refund.ts" and top["symbol"].startswith("RefundService")
    assert {"start_line", "end_line", "kind", "score", "why", "text", "tokens"} <= set(top)
    assert first["tier"] == "fast" and "fresh" in first
    assert all("reconcileLedgerDrift" not in hit["text"] for hit in missing["hits"])
    assert edited["hits"][0]["symbol"] == "reconcileLedgerDrift"
    assert "1 changed file(s)" in edited["fresh"]
    assert 0 < budgeted["tokens_used"] < budgeted["response_tokens"] <= 400
    assert any(c["symbol"] == "reconcileLedgerDrift" for c in chunks["chunks"])
    assert status["files"] == 15 and status["chunks"] > 0 and status["tier"] == "fast"
    assert len(related["related"]) == 3 and related["at"]["file"] == "src/services/refund.ts"


def test_a_restart_after_an_edit_opens_the_saved_index_and_holds_the_edit(served):
    """A server started again after a file changed opens the index saved before the
    edit (the same folder) with that one file indexed again, not a new build."""
    repo, params = served

    async def search(client):
        found = _data(await client.call_tool("search", {"query": "reconcileLedgerDrift"}))
        return found, _data(await client.call_tool("index_status", {}))

    _, before = _session(params, search)
    target = repo / "src" / "services" / "refund.ts"
    target.write_text(target.read_text() + "\nexport function reconcileLedgerDrift() {}\n")
    found, after = _session(params, search)
    assert after["folders"] == before["folders"]  # no new index was built
    assert "1 changed file(s)" in after["fresh"] and "1 changed file(s)" in found["fresh"]
    assert found["hits"][0]["symbol"] == "reconcileLedgerDrift"


def test_bad_input_is_a_tool_error_and_the_server_stays_up(served, tmp_path):
    _, params = served
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "a.py").write_text("def a():\n    return 1\n")

    async def script(client):
        errors = [
            await client.call_tool("search", {"query": "refund", "repo": "nope"}),
            await client.call_tool("search", {"query": "refund", "repo": str(outside)}),
            await client.call_tool("chunks", {"file": "../../etc/passwd"}),
            await client.call_tool("chunks", {"file": str(outside / "a.py")}),
            await client.call_tool("search", {"query": "   "}),
            await client.call_tool("search", {"query": "refund", "budget_tokens": 0}),
            await client.call_tool("find_related", {"file": "src/services/refund.ts", "line": 0}),
        ]
        after = await client.call_tool("search", {"query": "refund"})
        return [_error(e) for e in errors], _data(after)

    errors, after = _session(params, script)
    assert "unknown repository 'nope'" in errors[0]
    assert "outside the allowed roots" in errors[1]
    assert "outside the repository" in errors[2] and "outside the repository" in errors[3]
    assert "non-empty" in errors[4]
    assert "budget_tokens: Input should be greater than or equal to 1 (got 0)" in errors[5]
    assert "line: Input should be greater than or equal to 1 (got 0)" in errors[6]
    assert after["hits"]


def test_stdout_carries_only_protocol_messages(served):
    """A raw JSON-RPC exchange: every line the server writes to stdout is a protocol
    message, even while the first search chunks and embeds (its logs go to stderr)."""
    import subprocess

    _, params = served
    requests = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "0"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "search", "arguments": {"query": "refund a payment"}},
        },
    ]
    server = subprocess.Popen(
        [params.command, *params.args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=params.env,
        cwd=params.cwd,
        text=True,
    )
    try:
        server.stdin.write("".join(json.dumps(r) + "\n" for r in requests))
        server.stdin.flush()
        lines = [server.stdout.readline() for _ in range(2)]
    finally:
        server.stdin.close()
        server.wait(timeout=60)
    messages = [json.loads(line) for line in lines]
    assert [m["id"] for m in messages] == [1, 2]
    assert not messages[1]["result"].get("isError")
    assert server.stdout.read() == ""  # nothing else came out
    said = server.stderr.read()
    assert "nexus mcp: opened" in said and "built (saving in the background)" in said
    assert "nexus mcp: saved the index in" in said  # said once written, not before


def test_mcp_answers_as_the_workspace_does_with_the_same_settings(served):
    from nexus.workspace import Settings, Workspace

    repo, params = served
    query = "charge a customer and record the payment"

    async def script(client):
        return _data(await client.call_tool("search", {"query": query, "top_k": 5}))

    served_hits = _session(params, script)["hits"]
    cache = Path(params.env["NEXUS_CACHE_DIR"])
    local = Workspace.open(repo, Settings(tier="fast", cache_dir=cache)).search(query, 5)
    assert [(h["file"], h["start_line"], h["end_line"], h["score"]) for h in served_hits] == [
        (h.chunk.file, h.chunk.start_line, h.chunk.end_line, round(h.score, 4)) for h in local.hits
    ]


def test_the_fast_tier_answers_while_the_quality_tier_builds(tmp_path):
    """With the quality tier and no saved index of it, the first answer comes from the fast
    tier; once the quality tier is built it answers, with the edits made meanwhile; a
    restart opens the saved quality index at once."""
    import threading

    from nexus.cli.mcp import Repositories
    from nexus.ui.fake_embedder import HashingEmbedder
    from nexus.workspace import Settings

    repo = tmp_path / "ts-payments"
    shutil.copytree(SAMPLES / "ts-payments", repo)
    settings = Settings(tier="quality", cache_dir=tmp_path / "cache")
    released = threading.Event()

    class Quality(HashingEmbedder):  # embeds once the test lets it
        def encode(self, texts, progress=None):
            assert released.wait(timeout=60)
            return super().encode(texts, progress)

    def served() -> Repositories:
        fast = HashingEmbedder()
        return Repositories([repo], settings, embedder=Quality(128), fast_embedder=fast)

    repos = served()
    first = repos.using(None, lambda w: w.search("refund a payment", 3))
    assert first.tier == "fast" and first.model == "fake-hashing-256" and first.hits
    assert _status(repos)["refining"] == "quality"

    refund = repo / "src" / "services" / "refund.ts"
    refund.write_text(refund.read_text() + "\nexport function settleLedgerDrift() {}\n")
    released.set()
    repos.wait_refined()
    after = repos.using(None, lambda w: w.search("settleLedgerDrift", 1))
    assert after.tier == "quality" and after.model == "fake-hashing-128"
    assert after.hits[0].chunk.symbol == "settleLedgerDrift"
    assert _status(repos)["refining"] is None

    again = served()
    reopened = again.using(None, lambda w: w.search("refund a payment", 3))
    assert reopened.tier == "quality" and _status(again)["refining"] is None


def _status(repos) -> dict:
    """``index_status`` as the server answers it (in process)."""
    from nexus.cli.mcp_server import build_server

    call = build_server(repos).call_tool("index_status", {})
    with ThreadPoolExecutor(max_workers=1) as pool:  # no running loop there (see _session)
        return _data(pool.submit(asyncio.run, call).result())
