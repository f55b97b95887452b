"""What the ``nexus mcp`` tools take and give back, as the schemas an agent reads.

An LLM calling a tool sees only its schema: names, types and these descriptions, with
ranges and defaults, so a call is right the first time (issue 41: it saw titles and
types only). Arguments are checked against the schema before a tool runs; an argument
outside it is answered with a plain sentence (``plain_errors``), not pydantic's text.
The output models allow extra keys: a field added to a record reaches the client.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

#: Most hits one search returns (an agent asking for more should set a budget instead).
MAX_TOP_K = 50
#: Longest query: a question or a few names, not a file (a 100 KB query took 10 s).
MAX_QUERY_CHARS = 2000

Repo = Annotated[
    str | None,
    Field(
        description="Which repository: the folder name of one this server was started with "
        "(index_status lists them), or a path under one. Default: the first. A subfolder "
        "(e.g. httpx/_transports) is indexed as a repository of its own: its first call "
        "builds that index, and paths in the answer are relative to the subfolder.",
    ),
]
Query = Annotated[
    str,
    Field(
        description="What to find: a question, words, or names of functions, classes or "
        f"files (1 to {MAX_QUERY_CHARS} characters).",
        min_length=1,
        max_length=MAX_QUERY_CHARS,
    ),
]
TopK = Annotated[
    int,
    Field(
        description=f"How many hits, 1 to {MAX_TOP_K}. Default 5. With budget_tokens the "
        "budget decides instead (hits in rank order while it lasts, up to 50).",
        ge=1,
        le=MAX_TOP_K,
    ),
]
Budget = Annotated[
    Annotated[int, Field(ge=1)] | None,
    Field(
        description="Most tokens the whole response may take (its JSON text: keys, paths, "
        "why and code, counted with the cl100k tokenizer). Hits come in rank order while "
        'they fit, the last cut at a line ("cut": true). At least 1; a budget too small '
        "for any hit is an error that says how much would fit one. Default: no budget, "
        "top_k whole hits.",
    ),
]
Strategy = Annotated[
    Literal["ast", "lines"] | None,
    Field(
        description="Which index: ast (chunks along functions, classes and other syntax "
        "units: the default) or lines (fixed windows of lines).",
    ),
]
File = Annotated[
    str,
    Field(
        description="A file's path relative to the repository root, as hits give it "
        "(e.g. src/services/refund.ts); an absolute path inside the repository works too.",
        min_length=1,
    ),
]
Line = Annotated[int, Field(description="A line of the file, counting from 1.", ge=1)]
RelatedTopK = Annotated[
    int,
    Field(description=f"How many related chunks, 1 to {MAX_TOP_K}. Default 5.", ge=1, le=MAX_TOP_K),
]


class ChunkRecord(BaseModel):
    """One chunk: where it lies and what it holds."""

    model_config = ConfigDict(extra="allow")

    file: str = Field(description="Path relative to the repository root.")
    start_line: int = Field(description="First line, counting from 1.")
    end_line: int = Field(description="Last line (inclusive).")
    symbol: str | None = Field(description="The function, class or other unit it holds.")
    kind: str | None = Field(description="The unit's kind (function, class, method...).")
    tokens: int = Field(description="Tokens of its text (cl100k).")


class RelatedHit(ChunkRecord):
    """A chunk like the one asked about."""

    rank: int = Field(description="1 for the most similar.")
    score: float = Field(description="Cosine similarity of the two chunks' embeddings.")


class Related(BaseModel):
    """``find_related``'s answer."""

    model_config = ConfigDict(extra="allow")

    repo: str = Field(description="The repository's folder name.")
    at: ChunkRecord = Field(description="The chunk that holds file:line.")
    related: list[RelatedHit] = Field(description="The most similar chunks, best first.")


class SearchHit(ChunkRecord):
    """A search hit, read within the budget."""

    rank: int = Field(description="1 for the best.")
    score: float = Field(description="The ranking score (higher is better).")
    why: str = Field(description="Why it ranks where it does, in one line.")
    cut: bool = Field(description="True when the budget ended inside it: text is its start.")
    text: str = Field(description="The chunk's code (up to end_line).")
    trimmed_from: list[int] | None = Field(
        default=None,
        description="The [start_line, end_line] the hit would show whole (its unit, or the "
        "unit with its neighbours) when it shows only some of them: the lines that match "
        "(the answer's top 10 fit 200 lines), or the rest when a better hit shows the "
        "others; read the file for the lines left out.",
    )


class SearchResult(BaseModel):
    """``search``'s answer."""

    model_config = ConfigDict(extra="allow")

    repo: str
    query: str
    strategy: str = Field(description="The index that answered: ast or lines.")
    tier: str = Field(description="The embedding tier that answered: fast or quality.")
    model: str = Field(description="The embedding model that answered.")
    rescored_by: str | None = Field(
        default=None, description="The model that scored the fast tier's best hits again."
    )
    rescore: str | None = Field(
        default=None, description="Whether they were scored again, or why not yet."
    )
    fresh: str = Field(description="When the files were last compared with the disk.")
    budget_tokens: int | None
    tokens_used: int = Field(description="Tokens of the hits' code.")
    response_tokens: int = Field(description="Tokens of this whole response (its JSON text).")
    hits: list[SearchHit]


def plain_errors(tool: str, error: ValidationError) -> str:
    """A tool's rejected arguments in one plain sentence: which argument, what is wrong,
    the value when it is short (never pydantic's links and type codes)."""
    said = []
    for problem in error.errors(include_url=False):
        where = ".".join(str(part) for part in problem["loc"]) or "arguments"
        value = repr(problem.get("input"))
        shown = f" (got {value})" if len(value) <= 40 and problem["type"] != "missing" else ""
        said.append(f"{where}: {problem['msg']}{shown}")
    return f"{tool}: " + "; ".join(said)
