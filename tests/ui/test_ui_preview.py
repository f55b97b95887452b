"""A hit's preview as HTML: numbered lines from the chunk's, matching lines marked, text
escaped, coloured as part of the whole chunk."""

from __future__ import annotations

import re

from nexus.retrieval.preview import Preview
from nexus.ui.render import preview_html
from tests import helpers

TEXT = "/**\n * Resize it.\n * @returns nothing\n */\nconst a = 1;\nupload(a);\n"


def chunk(text: str = TEXT, language: str = "javascript"):
    return helpers.make_chunk(
        "c", start=40, end=40 + text.count("\n"), text=text, language=language
    )


def test_lines_are_numbered_from_the_file_and_matches_are_marked() -> None:
    preview = Preview(44, ("const a = 1;", "upload(a);", ""), marked=(45,), matched=True)
    html = preview_html(preview, chunk())
    assert re.findall(r'class="nx-ln"[^>]*>(\d+)<', html) == ["44", "45", "46"]
    assert re.findall(r'data-match="1">(\d+)<', html) == ["45"]


def test_a_window_inside_a_comment_is_coloured_as_a_comment() -> None:
    inside = preview_html(Preview(41, (" * Resize it.", " * @returns nothing"), (), False), chunk())
    whole = preview_html(Preview(40, tuple(TEXT.split("\n")[:3]), (), False), chunk())
    rows = re.findall(r'class="nx-src"[^>]*>(.*?)</div>', inside)
    assert rows == re.findall(r'class="nx-src"[^>]*>(.*?)</div>', whole)[1:3]
    assert "solid #F00" not in inside  # no error tokens (red boxes)


def test_source_text_is_escaped() -> None:
    for language in ("javascript", "no-such-language"):
        text = "<script>alert(1)</script>"
        html = preview_html(Preview(40, (text,), (), False), chunk(text, language))
        assert "<script>" not in html and "&lt;" in html
