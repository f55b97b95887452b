"""The ``nexus mcp`` server's four tools, thin layers over ``nexus.workspace.Workspace``.

Imported only when serving (the tools' types are the MCP SDK's and pydantic's). The
schemas an agent reads are ``nexus.cli.mcp_schema``'s; ``search`` counts its whole
response against ``budget_tokens`` (``fitted``).
"""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, TextContent
from pydantic import ValidationError

from nexus.chunking.tokens import count_tokens
from nexus.cli.mcp import INSTRUCTIONS, Repositories, ToolInputError
from nexus.cli.mcp_schema import (
    Budget,
    File,
    Line,
    Query,
    Related,
    RelatedTopK,
    Repo,
    SearchResult,
    Strategy,
    TopK,
    plain_errors,
)
from nexus.retrieval.budget import READ_DEPTH, line_tokens, read_within

if TYPE_CHECKING:
    from collections.abc import Callable

    from nexus.workspace import Workspace


#: Bisection stops within this share of the budget from the most code that fits (an
#: 8,000-token budget: 6 tries instead of 13).
BISECT_SHARE = 64
#: Tokens a response's fields may vary by between two calls (the time and duration of
#: the last check of the files): the least budget said to fit a hit allows for them.
VARYING_TOKENS = 8


def _file_in(workspace: Workspace, file: str) -> str:
    """``file`` as a path relative to the repository (ToolInputError outside it)."""
    if not file.strip():
        raise ToolInputError("file is empty: give a path relative to the repository root")
    path = Path(file)
    if path.is_absolute():
        root = workspace.root
        inside = root is not None and Path(os.path.abspath(path)).is_relative_to(root)
        if not inside:
            raise ToolInputError(f"{file} lies outside the repository {workspace.repo.name}")
        path = Path(os.path.abspath(path)).relative_to(root)
    parts = Path(os.path.normpath(path)).parts
    if not parts or parts[0] == ".." or str(path).startswith("/"):
        raise ToolInputError(f"{file} lies outside the repository {workspace.repo.name}")
    rel = "/".join(parts)
    if rel not in {info.path for info in workspace.repo.chunkable_files()}:
        raise ToolInputError(f"{rel} is not a chunked file of {workspace.repo.name}")
    return rel


def _chunk_record(chunk) -> dict[str, Any]:  # noqa: ANN001 - a Chunk
    return {
        "file": chunk.file,
        "start_line": chunk.start_line,
        "end_line": chunk.end_line,
        "symbol": chunk.symbol,
        "kind": chunk.symbol_kind,
        "tokens": chunk.token_count,
    }


def search_record(workspace: Workspace, answer) -> dict[str, Any]:  # noqa: ANN001
    """A ``SearchAnswer`` as the ``search`` tool returns it: the hits read within the
    budget (every hit whole without one), each with the one-line why."""
    reads = {read.rank: read for read in answer.reads}
    hits = []
    for hit in answer.hits:
        read = reads.get(hit.rank)
        if read is None:  # past the budget
            break
        hits.append(
            _chunk_record(hit.chunk)
            | {
                "rank": hit.rank,
                "end_line": read.end_line,
                "score": round(hit.score, 4),
                "why": answer.why(hit),
                "tokens": read.tokens,
                "cut": read.cut,
                "text": read.text,
            }
            | ({"trimmed_from": list(hit.trimmed_from)} if hit.trimmed_from else {})
        )
    return {
        "repo": workspace.repo.name,
        "query": answer.query,
        "strategy": answer.strategy,
        "tier": answer.tier,
        "model": answer.model,
        "rescored_by": answer.rescored_by or None,
        "rescore": answer.rescore or None,
        "fresh": answer.fresh.describe(),
        "budget_tokens": answer.budget,
        "tokens_used": answer.tokens_used,
        "hits": hits,
    }


def fitted(workspace: Workspace, answer, budget: int | None) -> tuple[dict[str, Any], str]:  # noqa: ANN001
    """``answer``'s record and its JSON text, the text at most ``budget`` tokens (with the
    tokenizer of the index's chunks; the budget used to bound the code only, and
    responses were 1.5-2.3 times over it). The most code whose whole response fits is
    found by bisection (a response grows with the code read), to within
    ``1 / BISECT_SHARE`` of the budget. ToolInputError when not even the best hit's first
    line fits."""
    if budget is None:
        return _measured(_attempt(workspace, answer, None, 0)[0], workspace.config.encoding)
    chunks = [hit.chunk for hit in answer.hits]
    best = None
    low, high = 0, budget  # code budgets: the response fits at low (when best is set)
    while low <= high:
        middle = (low + high) // 2
        record, tokens = _attempt(workspace, answer, middle, budget)
        if tokens <= budget:
            best, low = record, middle + 1
            if high - low < budget // BISECT_SHARE:
                break
        else:
            high = middle - 1
    if best is None or (chunks and not best["hits"]):  # an empty answer would mislead
        raise ToolInputError(_nothing_fits(workspace, answer, budget))
    return _measured(best, workspace.config.encoding)


def _attempt(
    workspace: Workspace,
    answer,  # noqa: ANN001 - a SearchAnswer
    code: int | None,
    most: int,
) -> tuple[dict[str, Any], int]:
    """``answer``'s record with its hits read within ``code`` tokens of code, and the
    tokens of its text with ``most`` as its response_tokens (one count: the final number
    has no more digits)."""
    reads = read_within([hit.chunk for hit in answer.hits], code, workspace.config.encoding)
    hits = answer.hits[: len(reads)]
    record = search_record(workspace, replace(answer, hits=hits, reads=tuple(reads)))
    record["response_tokens"] = most
    text = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
    return record, count_tokens(text, workspace.config.encoding)


def _measured(record: dict[str, Any], encoding: str) -> tuple[dict[str, Any], str]:
    """``record`` and its compact JSON text, its ``response_tokens`` set to the tokens of
    that text."""
    text = ""
    for _ in range(4):  # the count's own digits may move it by a token: settles at once
        text = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
        tokens = count_tokens(text, encoding)
        if record.get("response_tokens") == tokens:
            break
        record["response_tokens"] = tokens
    return record, text


def _nothing_fits(workspace: Workspace, answer, budget: int) -> str:  # noqa: ANN001
    """What to say when no hit fits ``budget``: what the response costs without one, and
    with the first line of the best one."""
    alone = _attempt(workspace, answer, 0, budget)[1]
    if not answer.hits:
        return f"budget_tokens={budget} is too small: an answer with no hit takes {alone} tokens"
    first_line = line_tokens(answer.hits[0].chunk.text, workspace.config.encoding)[0]
    least = _attempt(workspace, answer, first_line, budget)[1]
    return (
        f"nothing fits in budget_tokens={budget}: the response takes {alone} tokens before "
        f"any hit, and {least} with the first line of the best one; give at least "
        f"{least + VARYING_TOKENS}"
    )


class PlainServer(MCPServer):
    """An MCP server whose tools answer arguments outside their schema with a plain
    sentence (``mcp_schema.plain_errors``), not pydantic's text and links."""

    async def call_tool(self, name, arguments, context=None):  # noqa: ANN001, ANN201
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):
                raise ToolError(plain_errors(name, exc.__cause__)) from None
            raise


def build_server(repos: Repositories) -> PlainServer:
    """The MCP server of ``repos`` (its four tools)."""
    server = PlainServer("nexus", instructions=INSTRUCTIONS)

    def answer(repo: str | None, call: Callable[[Workspace], Any]) -> Any:
        try:
            return repos.using(repo, call)
        except (ToolInputError, ValueError, KeyError) as exc:
            raise ToolError(str(exc).strip("'\"")) from None

    @server.tool()
    def search(
        query: Query,
        repo: Repo = None,
        top_k: TopK = 5,
        budget_tokens: Budget = None,
        strategy: Strategy = None,
    ) -> Annotated[CallToolResult, SearchResult]:
        """Search code by meaning and by name. Returns the top_k ranked hits (file, lines,
        symbol, kind, score, why, text); with budget_tokens, instead the hits that fit
        in that many tokens of response, in rank order (the last cut at a line). Also
        the tokens of the code and of the whole response, which tier answered and how
        fresh the index is."""

        def run(workspace: Workspace) -> CallToolResult:
            # A budget is read as deep as it lasts (the workspace's rule), here against the
            # whole response: the hits come whole, ``fitted`` reads them.
            depth = top_k if budget_tokens is None else max(top_k, READ_DEPTH)
            found = workspace.search(query, depth, strategy=strategy)
            record, text = fitted(workspace, replace(found, budget=budget_tokens), budget_tokens)
            return CallToolResult(
                content=[TextContent(type="text", text=text)], structured_content=record
            )

        return answer(repo, run)

    @server.tool()
    def chunks(file: File, repo: Repo = None) -> dict[str, Any]:
        """The chunks of one file, in line order, with their symbols, kinds, lines (from
        1) and token counts."""

        def run(workspace: Workspace) -> dict[str, Any]:
            rel = _file_in(workspace, file)
            found = workspace.chunks(rel)
            return {"repo": workspace.repo.name, "file": rel, "chunks": _records(found)}

        return answer(repo, run)

    @server.tool()
    def find_related(file: File, line: Line, repo: Repo = None, top_k: RelatedTopK = 5) -> Related:
        """The chunks most like the one that holds file:line (by embedding), best first."""

        def run(workspace: Workspace) -> dict[str, Any]:
            at, hits = workspace.related(_file_in(workspace, file), line, top_k)
            related = [
                _chunk_record(h.chunk) | {"rank": h.rank, "score": round(h.score, 4)} for h in hits
            ]
            return {"repo": workspace.repo.name, "at": _chunk_record(at), "related": related}

        return answer(repo, run)

    @server.tool()
    def index_status(repo: Repo = None) -> dict[str, Any]:
        """What is indexed: files, chunks, share embedded, tier, model, how fresh, and the
        cache folder (vectors, saved indexes, the fast tier's model)."""

        def run(workspace: Workspace) -> dict[str, Any]:
            refining = "quality" if repos.refining(workspace) else None
            cache = str(repos.settings.cache_folder)
            return workspace.status().to_dict() | {"refining": refining, "cache": cache}

        return answer(repo, run)

    return server


def _records(chunks) -> list[dict[str, Any]]:  # noqa: ANN001 - Chunks
    return [_chunk_record(chunk) for chunk in chunks]
