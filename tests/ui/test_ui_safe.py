"""nexus/ui/safe.py: outside text renders as exactly that text, never as markdown or HTML."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest
from hypothesis import given
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from nexus.ui import safe

#: The payloads of issue 13 and a few more constructs Streamlit's markdown knows.
PAYLOADS = [
    "proj/a`![x](https:/evil.invalid/zipname.png)`b.js",
    "![k](https://evil.invalid/key.png)",
    "**bold** [kl](https://evil.invalid/kl)",
    "__dunder_name__",
    "<img src=https://evil.invalid/img.png onerror=alert(1)>",
    "path:[Click here to sign in again](https://evil.invalid/login)",
    "a\n\n![x](https://evil.invalid/nl.png)",
    "``` fenced",
    "<https://evil.invalid/auto>",
    "$x$ :red[y] ~~gone~~ &amp; # h",
]
MARKDOWN = MarkdownIt("commonmark").enable(["table", "strikethrough"])


class _Reader(HTMLParser):
    """The tags and the text content of rendered HTML."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: set[str] = set()
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list) -> None:
        self.tags.add(tag)

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def rendered(markdown: str) -> tuple[set[str], str]:
    reader = _Reader()
    reader.feed(MARKDOWN.render(markdown))
    text = "".join(reader.text).replace(safe.WORD_JOINER, "")
    return reader.tags, " ".join(text.split())


def shown(value: str) -> str:
    """What the user should read: the text itself, control characters made visible."""
    return " ".join(safe._visible(value).replace(safe.WORD_JOINER, "").split())


@pytest.mark.parametrize("payload", PAYLOADS)
def test_payloads_render_as_their_own_text(payload: str) -> None:
    tags, text = rendered(safe.md(payload))
    assert tags <= {"p"}, tags
    assert text == shown(payload)
    tags, text = rendered(f"see {safe.code(payload)} here")
    assert tags == {"p", "code"}
    assert text == f"see {shown(payload)} here"


@given(st.text(max_size=60))
def test_any_text_renders_as_itself(value: str) -> None:
    tags, text = rendered(safe.md(value))
    assert tags <= {"p"}, tags
    assert text == shown(value)
    tags, text = rendered(f"x {safe.code(value)} y")
    assert tags <= {"p", "code"}
    assert text == " ".join(f"x {shown(value)} y".split())


def test_ordinary_names_look_the_same() -> None:
    assert safe.code("src/app.js") == "`src/app.js`"
    assert safe.md("getImage") == "getImage"
    assert safe.plot("doc") == "doc"


@pytest.mark.parametrize(
    "link", ["https://evil.invalid/x", "HTTP://evil.invalid", "www.evil.invalid", "me@evil.invalid"]
)
def test_bare_links_are_broken_invisibly(link: str) -> None:
    """Streamlit links these in the parsed text, where backslashes are gone."""
    escaped = safe.md(f"see {link} now")
    assert safe.WORD_JOINER in escaped
    unescaped = re.sub(r"\\(.)", r"\1", escaped)
    assert not re.search(r"https?://|www\.|\w@", unescaped, re.IGNORECASE)


def test_control_characters_stay_on_one_line() -> None:
    assert safe.md("a\nb") == "a\u240ab"
    assert "\n" not in safe.code("a\r\n\n![x](y)")


def test_plot_text_is_html_escaped() -> None:
    assert safe.plot('<a href="https://evil.invalid">x</a>') == (
        "&lt;a href=&quot;https://evil.invalid&quot;&gt;x&lt;/a&gt;"
    )
