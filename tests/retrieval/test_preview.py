"""Hit previews: the lines that match the query, else the unit's head past the imports."""

from __future__ import annotations

import pytest

from nexus.retrieval.preview import hit_preview
from tests import helpers

IMPORTS_THEN_CODE = "\n".join(
    [
        "import fs from 'fs';",
        "import {",
        "  resize,",
        "  crop,",
        "} from './image';",
        "const sharp = require('sharp');",
        "",
        "export function makeThumbnail(path) {",
        "  const image = fs.readFileSync(path);",
        "  return image;",
        "}",
        "",
        "function upload(bucket, data) {",
        "  // send the thumbnail to the bucket",
        "  return bucket.put(data);",
        "}",
    ]
)
PYTHON = "\n".join(
    [
        "from __future__ import annotations",
        "from os import (",
        "    path,",
        ")",
        "import json",
        "",
        "",
        "def load(name):",
        "    return json.loads(path.join(name))",
    ]
)
GO = "\n".join(
    [
        "package store",
        "",
        "import (",
        '\t"fmt"',
        ")",
        "",
        "func Save(key string) error {",
        '\treturn fmt.Errorf("no %s", key)',
        "}",
    ]
)


def chunk(text: str, start: int = 100, symbol: str | None = None, language: str = "javascript"):
    end = start + text.count("\n")
    return helpers.make_chunk(
        "c", start=start, end=end, text=text, symbol=symbol, language=language
    )


@pytest.mark.parametrize(
    ("text", "query", "size", "first", "marked", "matched"),
    [
        # Matches: the window around them, starting two lines above the first one.
        (IMPORTS_THEN_CODE, "upload to a bucket", 4, 111, (112, 113, 114), True),
        # The window holding the most distinct query words wins over a repeated one.
        (IMPORTS_THEN_CODE, "thumbnail bucket", 3, 112, (112, 113, 114), True),
        # Identifiers are split like the keyword index splits them (makeThumbnail).
        (IMPORTS_THEN_CODE, "make a thumbnail", 3, 105, (107,), True),
        # A match in the last lines: the window ends at the chunk's end.
        (IMPORTS_THEN_CODE, "put", 4, 112, (114,), True),
        # No word in common: the head past the import block (multi-line import, require).
        (IMPORTS_THEN_CODE, "zebra giraffe", 3, 107, (), False),
        (PYTHON, "unrelated words", 2, 107, (), False),
        (GO, "unrelated words", 3, 106, (), False),
        # A query of stopwords only matches nothing.
        (IMPORTS_THEN_CODE, "the of and", 2, 107, (), False),
    ],
)
def test_preview_window(text, query, size, first, marked, matched) -> None:
    preview = hit_preview(chunk(text), query, size)
    assert (preview.start_line, preview.marked, preview.matched) == (first, marked, matched)
    lines = text.split("\n")
    assert preview.lines == tuple(lines[first - 100 : first - 100 + size])
    assert preview.end_line == first + len(preview.lines) - 1


def test_without_a_match_the_preview_starts_at_the_units_definition() -> None:
    preview = hit_preview(chunk(IMPORTS_THEN_CODE, symbol="upload"), "zebra", 2)
    assert preview.lines == (
        "function upload(bucket, data) {",
        "  // send the thumbnail to the bucket",
    )
    assert preview.start_line == 112


def test_a_short_chunk_is_shown_whole() -> None:
    preview = hit_preview(chunk("const a = 1;\nconst b = 2;"), "zebra")
    assert preview.lines == ("const a = 1;", "const b = 2;") and preview.start_line == 100


def test_a_chunk_of_imports_only_shows_its_first_lines() -> None:
    preview = hit_preview(chunk("import a from 'a';\nimport b from 'b';"), "zebra", 1)
    assert preview.lines == ("import a from 'a';",)
