"""Definitions inside a statement the chunker places whole (``try:``, ``if``, ``with``) still
name the chunk that holds them: without it the chunk had no symbol, and the ranking stage
took it for module code."""

from __future__ import annotations

import pytest

from nexus.chunking.pipeline import chunk_analyses
from nexus.config import ChunkConfig
from tests import helpers

# A long function on each side, so the block between them is a chunk of its own.
FILLER = "def {name}(items):\n" + "".join(
    f"    total_{i} = sum(item.size_{i} for item in items)\n" for i in range(25)
)

BODY = "".join(f"        value = value.replace('{i}', '<{i}>')\n" for i in range(8))
HELPER = "    def helper(value):\n" + BODY + "        return value\n"
BLOCKS = {
    "try": "try:\n    from _speedups import quick\n\n"
    + HELPER
    + "\nexcept ImportError:\n\n"
    + HELPER,
    "if": 'if sys.platform == "win32":\n\n' + HELPER + "else:\n\n" + HELPER,
    "with": "with lock:\n\n" + HELPER,
}


@pytest.mark.parametrize("block", BLOCKS)
def test_a_definition_inside_a_block_names_its_chunk(block: str) -> None:
    text = "\n\n".join([FILLER.format(name="before"), BLOCKS[block], FILLER.format(name="after")])
    analysis = helpers.analyze_text(text, "pkg/util.py", "python")
    chunks = chunk_analyses([analysis], ChunkConfig(max_tokens=512), repo="demo")
    holding = [c for c in chunks if "def helper" in c.text]
    assert len(holding) == 1 and "def before" not in holding[0].text
    assert holding[0].symbol == "helper"
    assert holding[0].symbol_kind == "function"
    assert "helper" in holding[0].context
