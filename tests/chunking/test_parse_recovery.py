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
