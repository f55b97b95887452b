"""A hit's preview as HTML: numbered lines from the chunk's, matching lines marked, text escaped."""

from __future__ import annotations

import re

from nexus.retrieval.preview import Preview
from nexus.ui.render import preview_html


def test_lines_are_numbered_from_the_file_and_matches_are_marked() -> None:
    preview = Preview(41, ("const a = 1;", "upload(a);", ""), marked=(42,), matched=True)
    html = preview_html(preview, "javascript")
    assert re.findall(r'class="nx-ln"[^>]*>(\d+)<', html) == ["41", "42", "43"]
    assert re.findall(r'data-match="1">(\d+)<', html) == ["42"]


def test_source_text_is_escaped() -> None:
    preview = Preview(1, ("<script>alert(1)</script>",), marked=(), matched=False)
    for language in ("javascript", "no-such-language"):
        html = preview_html(preview, language)
        assert "<script>" not in html and "&lt;" in html
