"""One front door: for the same settings, the CLI (``nexus search --json``), the Search
page and the MCP server (``search`` tool, through the SDK's client) give the same hits
(file, lines, score) on a sample repository, for both indexes.

Every surface embeds with the fast tier (the cheap static model of
``conftest.static_model_dir``) and builds its own index in a cache of its own, so a
surface that chunked, embedded, ranked or read its query vector differently would
show here.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from pathlib import Path

import pytest

from nexus.retrieval.tiers import FAST, tier_embedder
from nexus.ui import indexing, searching
from tests.test_mcp import _data, _session

ROOT = Path(__file__).resolve().parents[2]
REPO = ROOT / "sample_repos" / "express-images"
QUERIES = ("copy object delete original", "resize an image and upload the thumbnail")
K = 5

#: (file, start line, end line, score to 4 places) of each hit, best first.
Hits = list[tuple[str, int, int, float]]


def _cache_with_model(folder: Path, model: Path) -> Path:
    shutil.copytree(model, folder / "models" / model.name)
    return folder


def _cli(cache: Path, query: str, capsys) -> dict[str, Hits]:
    from nexus.cli import main

    args = [
        "search",
        str(REPO),
        query,
        "--json",
        "-k",
        str(K),
        "--tier",
        FAST,
        "--strategy",
        "both",
    ]
    assert main([*args, "--cache", str(cache), "--workers", "1"]) == 0
    found = json.loads(capsys.readouterr().out)
    return {
        label: [(h["file"], h["start_line"], h["end_line"], h["score"]) for h in found[key]]
        for label, key in (("Lines", "line-based"), ("AST", "AST"))
    }


def _page(page, query: str, answers: dict) -> dict[str, Hits]:
    """The hits the page drew for ``query`` (its scores at full precision: the page
    shows three places), checked against the headers it drew."""
    answers.clear()
    at = page("search").run()
    at.slider(key="k").set_value(K).run()
    at.text_input(key="query").input(query).run()
    assert not at.exception
    found = {
        label: [
            (h.chunk.file, h.chunk.start_line, h.chunk.end_line, round(h.score, 4))
            for h in answers[strategy].hits
        ]
        for label, strategy in (("Lines", "lines"), ("AST", "ast"))
    }
    drawn = [m.value for m in at.markdown if re.match(r"\*\*\d+\.\*\*", m.value)]
    shown = [(f, s, e) for label in ("Lines", "AST") for f, s, e, _ in found[label]]
    assert [re.search(r"`([^`]+)` L(\d+)–(\d+)", h).groups() for h in drawn] == [
        (f, str(s), str(e)) for f, s, e in shown
    ]
    return found


def _mcp(cache: Path) -> dict[str, dict[str, Hits]]:
    from mcp.client.stdio import StdioServerParameters

    env = {**os.environ, "PYTHONPATH": str(ROOT), "NEXUS_CACHE_DIR": str(cache)}
    args = ["-m", "nexus.cli", "mcp", str(REPO), "--cache", str(cache), "--workers", "1"]
    params = StdioServerParameters(command=sys.executable, args=args, env=env)

    async def script(client):
        out = {}
        for query in QUERIES:
            out[query] = {}
            for label, strategy in (("Lines", "lines"), ("AST", "ast")):
                call = {"query": query, "top_k": K, "strategy": strategy}
                hits = _data(await client.call_tool("search", call))["hits"]
                out[query][label] = [
                    (h["file"], h["start_line"], h["end_line"], h["score"]) for h in hits
                ]
        return out

    return _session(params, script)


def test_the_cli_the_page_and_mcp_give_the_same_hits(
    page, tmp_path, static_model_dir, monkeypatch, capsys
) -> None:
    page_cache = _cache_with_model(Path(os.environ["NEXUS_CACHE_DIR"]), static_model_dir)
    monkeypatch.setattr(
        indexing, "EMBEDDER_FACTORY", lambda: tier_embedder(FAST, cache_dir=page_cache)
    )
    answers: dict = {}
    real = searching.dense_answer

    def recorded(repo, config, strategy, *args, **kwargs):
        found = real(repo, config, strategy, *args, **kwargs)
        answers[strategy] = found.answer
        return found

    monkeypatch.setattr(searching, "dense_answer", recorded)
    cli_cache = _cache_with_model(tmp_path / "cli-cache", static_model_dir)
    # The SDK binds sys.stderr as the server's log when first imported: not capsys's.
    with capsys.disabled():
        mcp = _mcp(_cache_with_model(tmp_path / "mcp-cache", static_model_dir))
    for query in QUERIES:
        cli = _cli(cli_cache, query, capsys)
        assert len(cli["AST"]) == K and len(cli["Lines"]) == K
        assert _page(page, query, answers) == cli, query
        assert mcp[query] == cli, query


@pytest.fixture(autouse=True)
def _offline(monkeypatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
