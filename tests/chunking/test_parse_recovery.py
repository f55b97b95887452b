"""A file whose root is ERROR keeps its units; only chunks of the broken region are flagged.

The fixture is cut from hono's ``src/types.ts`` (MIT, attribution in the file): the
pinned tree-sitter-typescript cannot read HandlerInterface's call signatures, and
before recovery everything after them was tokens, not declarations.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from nexus.chunking.pipeline import chunk_analysis
from nexus.config import ChunkConfig
from tests.helpers import analyze_text

FIXTURE = Path(__file__).resolve().parents[1] / "data" / "parse_errors" / "hono_types.ts"
TEXT = FIXTURE.read_text()
DECLARATION = re.compile(
    r"^(?:export )?(?:abstract )?(?:type|interface|class|function|const) (\w+)", re.M
)
DECLARED = DECLARATION.findall(TEXT)
# HandlerInterface's lines that do not parse: from its second call signature to its end.
BROKEN = (TEXT[: TEXT.index("// app.get(handler x2)")].count("\n") + 1, 112)
CONFIGS = [ChunkConfig(), ChunkConfig(max_tokens=128, min_tokens=16), ChunkConfig(strategy="lines")]


@pytest.fixture(scope="module")
def analysis():
    return analyze_text(TEXT, "src/types.ts")


def test_the_fixture_still_fails_to_parse(analysis) -> None:
    assert analysis.tree.root_node.type == "ERROR"
    assert len(DECLARED) == 19


def test_every_top_level_declaration_is_a_unit(analysis) -> None:
    top = [unit.name for unit in analysis.units if unit.parent is None]
    assert top == DECLARED


@pytest.mark.parametrize("config", CONFIGS, ids=["ast", "ast-128", "lines"])
def test_chunks_name_every_declaration_and_flag_only_the_broken_region(
    analysis, config: ChunkConfig
) -> None:
    chunks = chunk_analysis(analysis, config, repo="hono")
    named = {symbol for chunk in chunks for symbol in chunk.symbols}
    if config.strategy == "ast":
        assert set(DECLARED) <= named
    first, last = BROKEN
    for chunk in chunks:
        holds_broken = chunk.start_line <= last and chunk.end_line >= first
        assert chunk.has_error == holds_broken, (chunk.start_line, chunk.end_line)
    assert any(not chunk.has_error for chunk in chunks if chunk.start_line > last)


@pytest.mark.parametrize("config", CONFIGS[:2], ids=["ast", "ast-128"])
def test_recovered_chunks_keep_the_invariants(analysis, config: ChunkConfig) -> None:
    chunks = chunk_analysis(analysis, config, repo="hono")
    data = analysis.data
    covered: set[int] = set()
    for before, chunk in zip([None, *chunks], chunks, strict=False):
        assert before is None or before.end_byte <= chunk.start_byte
        assert data[chunk.start_byte : chunk.end_byte].decode() == chunk.text
        assert chunk.token_count <= config.max_tokens
        covered.update(range(chunk.start_line, chunk.end_line + 1))
    lines = TEXT.split("\n")
    assert {n for n, line in enumerate(lines, 1) if line.strip()} <= covered


def test_a_file_that_parses_is_not_read_again() -> None:
    assert analyze_text("export type A = 1\nexport function f() {}\n").recovery is None
    # An error inside a statement leaves the root a program: nothing to recover.
    broken_body = analyze_text("function f() { let = ; }\nfunction g() {}\n")
    assert broken_body.tree.root_node.type == "program"
    assert broken_body.recovery is None


# A declaration the grammar reads only in part: its unit stops where the parser gave up.
ROUTER = """export type Id = string

export interface Router<E> {
  <P extends string>(path: P, handler: H<E, P>): Router<E>

  // two handlers
  <P extends string, I extends Input = {}>(
    path: P,
    ...handlers: [H<E, P, I>, H<E, P, I>]
  ): Router<E & I>

  // many handlers
  <P extends string>(path: P, ...handlers: H<E, P>[]): Router<E>
}
"""


@pytest.mark.parametrize("config", CONFIGS, ids=["ast", "ast-128", "lines"])
def test_chunks_inside_an_unreadable_declaration_carry_its_name(analysis, config) -> None:
    """hono's HandlerInterface: the chunks past its first call signature were module
    code with no symbol; they lie inside it, so they are its pieces."""
    handler = next(u for u in analysis.units if u.name == "HandlerInterface")
    assert (handler.start_line, handler.end_line) == (56, BROKEN[1])

    def share_inside(c) -> float:
        lines = min(c.end_line, handler.end_line) - max(c.start_line, handler.start_line) + 1
        return lines / c.n_lines

    inside = [c for c in chunk_analysis(analysis, config, repo="hono") if share_inside(c) > 0.5]
    assert inside
    assert {(c.symbol, c.symbol_kind) for c in inside} == {("HandlerInterface", "interface")}


@pytest.mark.parametrize(
    "config",
    [ChunkConfig(max_tokens=24, min_tokens=0), ChunkConfig(strategy="lines", line_window=5)],
    ids=["ast-24", "lines-5"],
)
def test_a_declaration_cut_short_by_an_error_keeps_its_chunks(config) -> None:
    """The same without recovery: the root is a program, the interface node ends at
    its first signature, and what follows inside it was module code."""
    found = analyze_text(ROUTER, "src/router.ts")
    assert found.recovery is None and found.error_ranges
    router = next(u for u in found.units if u.name == "Router")
    assert (router.start_line, router.end_line) == (3, 14)
    chunks = chunk_analysis(found, config, repo="x")
    assert [c.symbol for c in chunks if c.start_line >= 3] == ["Router"] * sum(
        c.start_line >= 3 for c in chunks
    )
    assert len(chunks) > 2
