"""The ``nexus mcp`` tools as an agent sees them: their schemas, a token budget that
bounds the whole response, and plain errors. In process, with the SDK's own client
over memory streams and the hashing embedder (no model, no subprocess)."""

from __future__ import annotations

import asyncio
import json
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from nexus.chunking.tokens import count_tokens
from nexus.config import DEFAULT_ENCODING
from nexus.ui.fake_embedder import HashingEmbedder
from nexus.workspace import Settings

SAMPLES = Path(__file__).resolve().parents[1] / "sample_repos"


@pytest.fixture
def server(tmp_path):
    from nexus.cli.mcp import Repositories
    from nexus.cli.mcp_server import build_server

    repo = tmp_path / "ts-payments"
    shutil.copytree(SAMPLES / "ts-payments", repo)
    settings = Settings(cache_dir=tmp_path / "cache")
    return build_server(Repositories([repo], settings, embedder=HashingEmbedder(), refine=False))


def _run(server, script):
    from mcp.client import Client

    async def main():
        async with Client(server) as client:
            return await script(client)

    with ThreadPoolExecutor(max_workers=1) as pool:  # a loop of its own (see test_mcp)
        return pool.submit(asyncio.run, main()).result()


def _text(result) -> str:
    return " ".join(getattr(block, "text", "") for block in result.content)


def test_every_argument_is_described_with_its_range_and_default(server):
    async def script(client):
        return {tool.name: tool for tool in (await client.list_tools()).tools}

    tools = _run(server, script)
    for tool in tools.values():
        for name, spec in tool.input_schema["properties"].items():
            assert spec.get("description"), f"{tool.name}.{name} has no description"
    search = tools["search"].input_schema["properties"]
    assert (search["top_k"]["minimum"], search["top_k"]["maximum"], search["top_k"]["default"]) == (
        1,
        50,
        5,
    )
    budget = [option.get("minimum") for option in search["budget_tokens"]["anyOf"]]
    assert search["query"]["maxLength"] == 2000 and 1 in budget
    assert "whole response" in search["budget_tokens"]["description"]
    strategies = [option.get("enum") for option in search["strategy"]["anyOf"]]
    assert ["ast", "lines"] in strategies
    assert "subfolder" in search["repo"]["description"]
    related = tools["find_related"]
    assert "counting from 1" in related.input_schema["properties"]["line"]["description"]
    assert related.input_schema["properties"]["line"]["minimum"] == 1
    assert {"repo", "at", "related"} <= set(related.output_schema["properties"])
    assert {"hits", "response_tokens"} <= set(tools["search"].output_schema["properties"])


@pytest.mark.parametrize("budget", [250, 500, 1000])
def test_a_budget_bounds_the_whole_response(server, budget):
    async def script(client):
        return await client.call_tool(
            "search", {"query": "refund a payment", "budget_tokens": budget}
        )

    result = _run(server, script)
    assert not result.is_error, _text(result)
    text = _text(result)
    assert count_tokens(text, DEFAULT_ENCODING) <= budget
    record = json.loads(text)
    assert record == result.structured_content and record["hits"]
    assert record["response_tokens"] == count_tokens(text, DEFAULT_ENCODING)


def test_a_budget_too_small_for_any_hit_says_so_and_how_much_would_do(server):
    async def script(client):
        small = await client.call_tool("search", {"query": "refund", "budget_tokens": 1})
        least = int(_text(small).rsplit("give at least ", 1)[1])
        enough = await client.call_tool("search", {"query": "refund", "budget_tokens": least})
        return small, enough, least

    small, enough, least = _run(server, script)
    assert small.is_error and "nothing fits in budget_tokens=1" in _text(small)
    assert not enough.is_error and len(enough.structured_content["hits"]) == 1
    assert enough.structured_content["response_tokens"] <= least


def test_bad_arguments_are_plain_sentences(server, tmp_path):
    outside = tmp_path / "elsewhere"
    outside.mkdir()

    async def script(client):
        calls = [
            ("search", {"query": "x" * 2001}),
            ("search", {"query": "refund", "top_k": 99}),
            ("search", {"query": "refund", "strategy": "tree"}),
            ("chunks", {"file": ""}),
            ("chunks", {"file": "  "}),
            ("search", {"query": "refund", "repo": str(outside)}),
        ]
        return [_text(await client.call_tool(name, args)) for name, args in calls]

    long, top_k, strategy, empty, blank, elsewhere = _run(server, script)
    assert "query: String should have at most 2000 characters" in long
    assert "x" * 50 not in long  # a long value is not echoed back
    assert "top_k: Input should be less than or equal to 50 (got 99)" in top_k
    assert "strategy:" in strategy and "'ast'" in strategy
    assert "file: String should have at least 1 character" in empty
    assert "file is empty" in blank
    assert "outside the allowed roots" in elsewhere and "zip" not in elsewhere
    for said in (long, top_k, strategy, empty):
        assert "pydantic" not in said and "type=" not in said
