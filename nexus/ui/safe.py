"""Text from outside (file names, symbols, query sets, URL parameters) shown as text.

Streamlit renders markdown (with GitHub extensions, directives and raw-HTML removal)
in ``st.markdown``, captions, alerts, headings and the labels of expanders, tabs,
metrics and widgets. A file named ``a![x](https://host/p.png).js`` or a symbol
``**bold**`` would otherwise become an image the browser fetches, a link or bold
text. Every page passes such text through this module; ordinary names look the same.
"""

from __future__ import annotations

import html
import re

#: Every ASCII punctuation character: CommonMark lets a backslash escape each one,
#: which also stops HTML tags, entities, ``:color[...]`` directives and ``$`` math.
_PUNCTUATION = re.compile(r"([!-/:-@\[-`{-~])")
_BACKTICKS = re.compile(r"`+")
#: Where GitHub-flavoured markdown finds a bare link (``https://``, ``www.``, an e-mail
#: address). Streamlit looks for them in the text after parsing, so a backslash does not
#: stop them; an invisible word joiner (U+2060) at each of these points does.
_AUTOLINK = re.compile(r"(?<=:)(?=//)|(?<=www)(?=\.)|(?=@)", re.IGNORECASE)
WORD_JOINER = "\u2060"


def _visible(value: object) -> str:
    """``str(value)`` on one line: control characters become their visible symbols
    (a newline could end a paragraph or a code span and start new markdown)."""
    out = []
    for char in str(value):
        point = ord(char)
        if point < 0x20 and char != "\t":
            out.append(chr(0x2400 + point))  # U+2400 block: ␊ for a newline
        elif point == 0x7F:
            out.append("\u2421")  # ␡
        elif 0x80 <= point < 0xA0:
            out.append("\ufffd")
        else:
            out.append(char)
    return "".join(out)


def md(value: object) -> str:
    """``value`` escaped for a markdown string: it renders as exactly its own text
    (with a word joiner where a bare link would start).

    Leading blanks are dropped: four of them would start a code block, and the page
    collapses them anyway.
    """
    text = _visible(value).lstrip(" \t")
    return _PUNCTUATION.sub(r"\\\1", _AUTOLINK.sub(WORD_JOINER, text))


def code(value: object) -> str:
    """``value`` as an inline code span (monospace, like a file name in backticks).

    The fence is one backtick longer than the longest run inside, so a backtick in
    the text cannot close the span early; inside a span nothing else is markdown.
    """
    text = _visible(value)
    if not text.strip():
        return md(text)
    fence = "`" * (max((len(run) for run in _BACKTICKS.findall(text)), default=0) + 1)
    if text[0] in "` " or text[-1] in "` ":
        text = f" {text} "  # CommonMark strips one space each side
    return f"{fence}{text}{fence}"


def plot(value: object) -> str:
    """``value`` for a Plotly label or hover text (Plotly reads ``<a>``, ``<b>``, ``<br>``)."""
    return html.escape(_visible(value))
