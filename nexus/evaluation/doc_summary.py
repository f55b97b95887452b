"""A doc query's text: the summary of a doc comment, without the definition's own name.

The summary is read by the language's ``DocStyle.summary`` rule: the first paragraph
of a ``/** */`` comment (JSDoc, Javadoc), the first sentence of a docstring or of a
``//`` / ``///`` run (Go, Rust), the ``<summary>`` of C#'s XML doc lines. Tags, links
and markup are dropped, but code spans keep their backticks until the name is removed:
a name is removed only where it is written as code (``remove_name``), so the same
word in prose stays ("`.text()` renders text as text/plain" -> "renders text as
text/plain").
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from nexus.chunking.languages import LANGUAGES

#: The longest summary, in words, before it is cut at a sentence (then hard at ``HARD_MAX``).
MAX_WORDS = 40
HARD_MAX = 60
_HTML_TAGS = (
    "span|p|br|code|b|i|em|strong|a|pre|ul|li|ol|div|img|sup|sub|kbd|tt|h[1-6]|table|tr|"
    "td|th|blockquote|hr|dl|dt|dd|small"
)
_SUMMARY_TAGS = ("@summary", "@description", "@desc", "@classdesc")
_INLINE_RULES = (  # (pattern, replacement): links, HTML and markup down to their words
    (r"!\[[^\]]*\]\([^)]*\)", " "),
    (r"\{@(?:link|linkcode|linkplain|code|see)\s+([^}|\s]+)\s*\|\s*([^}]*)\}", r"\2"),
    (r"\{@(?:link|linkcode|linkplain)\s+([^}\s]+)\s+([^}]+)\}", r"\2"),
    # A bare link or ``{@code x}`` is code: kept as a code span.
    (r"\{@(?:link|linkcode|linkplain|code|see)\s*([^}\s][^}]*)\}", r"`\1`"),
    (r"\{@(?:link|linkcode|linkplain|code|see|inheritDoc|inheritdoc)\s*\}", ""),
    (r"\[\[([^\]]+)\]\]", r"\1"),
    (r"\[([^\]]+)\]\([^)]*\)", r"\1"),
)
#: C# XML doc tags: references and code become code spans, the rest their text.
_XML_RULES = (
    (r"<(?:see|seealso)\s+(?:c?ref|langword|href)=\"(?:\w:)?([^\"]*)\"\s*/>", r"`\1`"),
    (r"<(?:paramref|typeparamref)\s+name=\"([^\"]*)\"\s*/>", r"`\1`"),
    (r"<c>(.*?)</c>", r"`\1`"),
    (r"</?(?:para|see|seealso|b|i|em|strong|list|item|description|term)\b[^<>]*>", " "),
)
#: A sentence ends at ``.``, ``!`` or ``?`` (inside a code span's closing backtick too).
_SENTENCE_END = r"(?:(?<=[.!?])|(?<=[.!?]`))"


def summary(doc: str, language: str) -> str:
    """The doc query's text: the summary of a doc comment's own text ("" if none)."""
    return plain(marked_summary(doc, language))


def marked_summary(doc: str, language: str) -> str:
    """The summary with its code spans still in backticks (what ``remove_name`` reads)."""
    style = LANGUAGES[language].docs.summary
    if style == "docstring":
        return _docstring_summary(doc)
    if doc.startswith("/**") or style == "block":
        return _block_summary(doc)
    return _xml_summary(doc) if style == "xml" else _line_summary(doc)


def plain(text: str) -> str:
    """A marked summary as the query reads: backticks and bold dropped, spaces single."""
    return " ".join(text.replace("`", "").replace("**", "").split())


def words(text: str) -> int:
    """Words that hold a letter or digit (``-`` and ``*`` alone do not count)."""
    return sum(1 for word in text.split() if re.search(r"[A-Za-z0-9]", word))


def _clean_inline(text: str) -> str:
    for pattern, replacement in _INLINE_RULES:
        text = re.sub(pattern, replacement, text)
    text = re.sub(rf"</?(?:{_HTML_TAGS})\b[^<>]*>", " ", text, flags=re.I)
    for entity, char in (("&lt;", "<"), ("&gt;", ">"), ("&amp;", "&"), ("&nbsp;", " ")):
        text = text.replace(entity, char)
    return " ".join(text.replace("**", "").split())


def _shorten(text: str) -> str:
    """Whole sentences up to ``MAX_WORDS`` words (the first one always), at most ``HARD_MAX``."""
    if words(text) <= MAX_WORDS:
        return text
    sentences = re.split(rf"{_SENTENCE_END}\s+(?=[A-Z`'\"(\[])", text)
    out = sentences[0]
    for sentence in sentences[1:]:
        if words(f"{out} {sentence}") > MAX_WORDS:
            break
        out += " " + sentence
    return " ".join(out.split()[:HARD_MAX]) if words(out) > HARD_MAX else out


def _block_summary(raw: str) -> str:
    """The first paragraph of a ``/** */`` comment's free text (else its ``@summary`` or
    ``@description``), stopped at a blank line, code fence, heading, example or list."""
    body = raw[3:-2] if raw.endswith("*/") else raw[3:]
    lines = [re.sub(r"^\s*\*(?!/) ?", "", line.rstrip()) for line in body.split("\n")]
    free: list[str] = []
    tags: list[tuple[str, list[str]]] = []
    for line in lines:
        tag = re.match(r"@(\w+)\s*(.*)", line.strip())
        if tag:
            tags.append(("@" + tag.group(1), [tag.group(2)]))
        elif tags:
            tags[-1][1].append(line)
        else:
            free.append(line)
    candidates = [free] + [body for want in _SUMMARY_TAGS for name, body in tags if name == want]
    for candidate in candidates:
        text = _clean_inline(" ".join(_first_paragraph(candidate)))
        if plain(text):
            return _shorten(text)
    return ""


def _first_paragraph(lines: list[str]) -> list[str]:
    paragraph: list[str] = []
    in_code = False
    for line in lines:
        text = line.strip()
        if text.startswith(("```", "~~~")):
            if paragraph:
                break
            in_code = not in_code
        elif in_code:
            continue
        elif not text or re.match(r"^(#+\s|example\b|examples?:|usage:|<pre|\|)", text, re.I):
            if paragraph:
                break
        elif paragraph and re.match(r"^([-*+]|\d+[.)])\s", text):
            break  # a bullet list ends the summary paragraph
        else:
            paragraph.append(text)
    return paragraph


def _first_sentence(paragraph: str) -> str:
    """The first sentence of a paragraph, at most ``MAX_WORDS`` words."""
    sentence = re.split(rf"{_SENTENCE_END}\s", " ".join(paragraph.split()), maxsplit=1)[0]
    return " ".join(sentence.split()[:MAX_WORDS])


def _docstring_summary(doc: str) -> str:
    """The first sentence of a docstring's first paragraph."""
    text = re.sub(r"^[rRbBuU]{0,2}(\"\"\"|'''|\"|')", "", doc.strip())
    text = text.strip().strip("\"'").strip()
    first = re.split(r"\n\s*\n|\n\s*(?:>>>|Example|Args:|Parameters|:param)", text)[0]
    return _first_sentence(first)


def _line_paragraph(doc: str) -> str:
    """The first paragraph of a ``//`` / ``///`` doc comment (indented code and
    ``Deprecated:`` left out)."""
    lines: list[str] = []
    for raw in doc.splitlines():
        line = re.sub(r"^\s*(///?|/\*+|\*+/?)", "", raw).removesuffix("*/")
        if not line.strip() or line.startswith(("\t", "   ")):
            if lines:
                break
            continue
        if line.strip().startswith("Deprecated:"):
            break
        lines.append(line.strip())
    return " ".join(lines)


def _line_summary(doc: str) -> str:
    """The first sentence of a ``//`` / ``///`` doc comment (doc links' brackets left out)."""
    return _first_sentence(re.sub(r"\[([^\]\s]+)\]", r"\1", _line_paragraph(doc)))


def line_doc_summary(doc: str) -> str:
    """The first sentence of a ``//`` / ``///`` doc comment, as plain text."""
    return plain(_line_summary(doc))


def _xml_summary(doc: str) -> str:
    """The first sentence of a C# XML doc comment's ``<summary>`` (else of its text)."""
    text = " ".join(re.sub(r"^\s*///?", "", line).strip() for line in doc.splitlines())
    found = re.search(r"<summary>(.*?)(?:</summary>|$)", text, re.S)
    text = found.group(1) if found else re.sub(r"<(\w+)\b[^<>]*>.*?</\1>", " ", text)
    for pattern, replacement in _XML_RULES:
        text = re.sub(pattern, replacement, text)
    text = re.sub(r"<[^<>]*>", " ", text)
    for entity, char in (("&lt;", "<"), ("&gt;", ">"), ("&amp;", "&")):
        text = text.replace(entity, char)
    return _first_sentence(text)


# --- the definition's own name, removed where it is written as code ------------------

#: A code span (backticks, reST's double ones too), after an optional reST role.
_CODE_SPAN = re.compile(r"(?::[\w.:+-]+:)?(`+)(.+?)\1")
#: What may follow a name written as code: type arguments, then a call's arguments.
_CALL_TAIL = r"(?:<[^<>\s]*>)?(?:\([^()]*\))?"
_MARK = "\x00"


@lru_cache(maxsize=1024)
def _mention_patterns(name: str) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """(a code span that is ``name``, a mention of ``name`` as code in running text)."""
    n = re.escape(name)
    whole_span = re.compile(rf"(?:new\s+)?(?:[\w$.#:?()]*(?:\.|#|::))?{n}(?:<.*>)?(?:\(.*\))?;?")
    forms = [  # Class.name, Foo#bar, Foo::bar, c.req.param(), .req.param()
        rf"(?<![\w$])(?:\.|#|\?\.)?(?:[\w$]+(?:\(\))?(?:\.|#|::|\?\.))+{n}{_CALL_TAIL}",
        rf"(?<![\w$)\]])(?:\.|#|\?\.){n}{_CALL_TAIL}",  # .name() / #name
        rf"(?<![\w$.#])(?:new\s+)?{n}(?:<[^<>\s]*>)?\([^()]*\)",  # name(...)
    ]
    if _looks_like_code(name):  # parse_body, parseBody, ParseBody: never a prose word
        forms.append(rf"(?<![\w$.#]){n}")
    elif name[:1].isupper():  # Go's Wrap inside a sentence ("the point Wrap is called")
        forms.append(rf"(?<=[^.!?\s] ){n}")
    mention = re.compile(rf"(?:{'|'.join(forms)})(?![\w$])")
    return whole_span, mention


def _looks_like_code(name: str) -> bool:
    """An identifier no prose word spells: ``_`` or ``$`` or a digit in it, or a capital
    after its first letter (``parseBody``, ``ParseBody``, ``parse_body``)."""
    return bool(re.search(r"[_$0-9]", name) or re.search(r"[A-Z]", name[1:]))


def _bare_names(names: Iterable[str]) -> list[str]:
    """The last segment of each name (``Context.body`` -> ``body``), longest first."""
    bare = {re.split(r"\.|#|::", n)[-1] for n in names if n and not n.startswith("<")}
    return sorted((b for b in bare if b), key=len, reverse=True)


def mentions_name(text: str, names: Iterable[str]) -> bool:
    """Whether ``text`` (a query) still mentions one of ``names`` as code."""
    return any(_mention_patterns(n)[1].search(text) for n in _bare_names(names))


def remove_name(marked: str, names: Iterable[str]) -> str:
    """The query: a marked summary without mentions of the definition's own ``names``
    written as code, as plain text.

    A mention is code: a code span that is the name or holds a mention of it
    (`` `.text()` ``, `` `c.req.param()` ``), and in running text a leading dot
    (``.body()``), a call (``parseBody()``), a qualified name (``Context.body``,
    ``Foo#bar``, ``Foo::bar``), a name no prose word spells (``parse_body``), a
    capitalised name inside a sentence (Go's "the point Wrap is called"), or the name
    opening the summary (Go's "Get returns ..."). Never a part of another word or a
    prose word: "text" stays in "renders text as text/plain".
    """
    bare = _bare_names(names)
    if not bare:
        return plain(marked)
    patterns = [_mention_patterns(n) for n in bare]
    out: list[str] = []
    last = 0
    for span in _CODE_SPAN.finditer(marked):
        out.append(_without_mentions(marked[last : span.start()], patterns))
        code = span.group(2).strip()
        is_mention = any(whole.fullmatch(code) or inside.search(code) for whole, inside in patterns)
        out.append(_MARK if is_mention else span.group(0))
        last = span.end()
    out.append(_without_mentions(marked[last:], patterns))
    text = "".join(out)
    for name in bare:  # the name opening the summary, as Go's convention writes it
        text = re.sub(rf"^\s*{re.escape(name)}(?=\s+\w)", _MARK, text)
    return _tidy(text)


def _without_mentions(prose: str, patterns: list[tuple[re.Pattern[str], re.Pattern[str]]]) -> str:
    for _, mention in patterns:
        prose = mention.sub(_MARK, prose)
    return prose


def _tidy(text: str) -> str:
    """Plain text with each removed mention's leftovers gone: ``(name)``, ``'name'``,
    the space before a following comma or stop, a comma or stop left first."""
    if _MARK not in text:
        return plain(text)
    text = re.sub(rf"\(\s*{_MARK}\s*\)", _MARK, text)  # "(name)"
    text = re.sub(rf"(['\"])\s*{_MARK}\s*\1", _MARK, text)  # "'name'"
    text = plain(text)  # backticks go before the stops are tidied
    text = re.sub(rf"\s*{_MARK}\s*(?=[,.;:!?)](?:\s|$))", "", text)  # "name."
    text = " ".join(text.replace(_MARK, " ").split())
    return re.sub(r"^[,.;:]\s*", "", text)
