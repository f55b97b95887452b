"""Doc comments: which comment documents which definition, its summary, and blanking.

The rules are those of the benchmark sets (``shared/eval`` for JS/TS, ``bench/
language_eval.py`` for Python and Go), kept as data per language:

* JS/TS and Java: the ``/** */`` comment right before a definition (at most one blank
  line between; ``//`` comments and decorators in between are skipped);
* Python: the docstring, the first statement of a module, class or ``def`` if a string;
* Go: the run of ``//`` comments on lines of their own ending on the line right above
  a declaration (``go doc``'s rule);
* Rust: the run of ``///`` comments (or one ``/** */``) above an item, attributes in
  between skipped; ``//!`` and ``/*! */`` are blanked too, never targets.

Blanking keeps every line number: a doc comment becomes as many newlines as it spans
(``""`` first in Python, so the body stays valid; one space for a comment inside a
line), and the lines it leaves holding only whitespace are emptied.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

import tree_sitter

from nexus.chunking.languages import LANGUAGES, get_language


@dataclass(frozen=True)
class DocStyle:
    """What a doc comment is in one language and how its summary is read."""

    comment_kinds: frozenset[str]  # node kinds a doc comment can have
    prefixes: tuple[bytes, ...]  # a doc comment's text starts with one of these
    runs: bool  # consecutive line comments form one doc comment (Go, Rust ``///``)
    max_gap: int  # rows from the doc's last line to the definition's first, at most
    skipped: frozenset[str] = frozenset()  # nodes between doc and definition (decorators)
    skip_line_comments: bool = False  # ``//`` comments between are skipped (JS/TS)
    parents: frozenset[str] | None = None  # where docs may stand (None: anywhere)
    blank_only: tuple[bytes, ...] = ()  # doc comments blanked, never attached (``//!``)
    summary: str = "block"  # "block" (JSDoc / Javadoc) or "lines" (Go, Rust)


_JSDOC = DocStyle(
    comment_kinds=frozenset({"comment"}),
    prefixes=(b"/**",),
    runs=False,
    max_gap=2,
    skipped=frozenset({"decorator"}),
    skip_line_comments=True,
)

#: The doc comment rules of each language (Python's docstrings are read apart).
DOC_STYLES: dict[str, DocStyle] = {
    "javascript": _JSDOC,
    "typescript": _JSDOC,
    "tsx": _JSDOC,
    "java": DocStyle(
        comment_kinds=frozenset({"block_comment"}),
        prefixes=(b"/**",),
        runs=False,
        max_gap=2,
        skip_line_comments=True,
    ),
    "go": DocStyle(
        comment_kinds=frozenset({"comment"}),
        prefixes=(b"//", b"/*"),
        runs=True,
        max_gap=1,
        parents=frozenset({"source_file", "field_declaration_list", "interface_type"}),
        summary="lines",
    ),
    "rust": DocStyle(
        comment_kinds=frozenset({"line_comment", "block_comment"}),
        prefixes=(b"///", b"/**"),
        runs=True,
        max_gap=1,
        skipped=frozenset({"attribute_item"}),
        blank_only=(b"//!", b"/*!"),
        summary="lines",
    ),
}
#: What a blanked doc comment leaves before its newlines.
BLANK_FILL = {"python": b'""'}
PYTHON_OWNERS = frozenset({"module", "function_definition", "class_definition"})


@dataclass(frozen=True)
class Doc:
    """A doc comment (bytes ``start:end`` of its file) and the span of what it documents
    (the definition's statement: decorators and ``export`` included)."""

    start: int
    end: int
    owner_start: int
    owner_end: int


@dataclass(frozen=True)
class FileDocs:
    """The doc comments of one file: those attached to a definition, and every span
    to blank (attached or not)."""

    docs: tuple[Doc, ...]
    blanks: tuple[tuple[int, int], ...]


def supported(language: str) -> bool:
    return language == "python" or language in DOC_STYLES


def find_docs(tree: tree_sitter.Tree, language: str) -> FileDocs:
    """The doc comments of a parsed file, by the rules of ``language``."""
    if language == "python":
        return _python_docs(tree)
    style = DOC_STYLES[language]
    comments = _comments(tree, language)
    blanks = [
        (c.start_byte, c.end_byte)
        for c in comments
        if _is_doc(c, style) or (c.text or b"").startswith(style.blank_only)
    ]
    docs: list[Doc] = []
    parents = {c.parent.id: c.parent for c in comments if c.parent is not None}
    for parent in parents.values():
        if style.parents is None or parent.type in style.parents:
            docs += _attached(parent, style)
    if style.parents is not None:  # Go: a comment is a doc only where it documents
        blanks = sorted({(d.start, d.end) for d in docs})
    return FileDocs(tuple(sorted(docs, key=lambda d: d.start)), tuple(sorted(set(blanks))))


@cache
def _comment_query(language: str) -> tree_sitter.Query:
    kinds = sorted(DOC_STYLES[language].comment_kinds & LANGUAGES[language].node_kinds)
    return tree_sitter.Query(get_language(language), " ".join(f"({k}) @c" for k in kinds))


def _comments(tree: tree_sitter.Tree, language: str) -> list[tree_sitter.Node]:
    found = tree_sitter.QueryCursor(_comment_query(language)).captures(tree.root_node)
    return sorted(found.get("c", []), key=lambda n: n.start_byte)


def _is_doc(node: tree_sitter.Node, style: DocStyle) -> bool:
    text = node.text or b""
    return node.type in style.comment_kinds and text.startswith(style.prefixes) and text != b"/**/"


def _last_row(node: tree_sitter.Node) -> int:
    """The last row holding the node's text (a line comment may end past its newline)."""
    row, column = node.end_point
    return row - 1 if column == 0 and row > node.start_point.row else row


def _attached(parent: tree_sitter.Node, style: DocStyle) -> list[Doc]:
    """The doc comments among ``parent``'s children and the child each documents."""
    docs: list[Doc] = []
    pending: list[tree_sitter.Node] = []  # the doc comment (or run) waiting for its owner
    last_row = -1  # the last row of the previous child or skipped node
    for child in parent.children:
        start_row = child.start_point.row
        if not child.is_named:
            last_row = _last_row(child)
            continue
        if _is_doc(child, style):
            own_line = start_row > last_row
            follows = pending and style.runs and start_row == _last_row(pending[-1]) + 1
            pending = (
                [*pending, child] if follows else ([child] if own_line or not style.runs else [])
            )
        elif pending and start_row - last_row <= style.max_gap:
            text = child.text or b""
            if child.type in style.skipped or (
                style.skip_line_comments and child.type in style.comment_kinds and text[:2] == b"//"
            ):
                pass
            elif child.type not in style.comment_kinds:
                docs.append(
                    Doc(
                        pending[0].start_byte,
                        pending[-1].end_byte,
                        child.start_byte,
                        child.end_byte,
                    )
                )
                pending = []
            else:
                pending = []
        else:
            pending = []
        last_row = _last_row(child)
    return docs


def _python_docs(tree: tree_sitter.Tree) -> FileDocs:
    docs: list[Doc] = []
    cursor_stack = [tree.root_node]
    while cursor_stack:  # iterative: deep nesting must not hit the recursion limit
        node = cursor_stack.pop()
        cursor_stack.extend(reversed(node.named_children))
        if node.type not in PYTHON_OWNERS:
            continue
        body = node if node.type == "module" else node.child_by_field_name("body")
        first = body.named_children[0] if body is not None and body.named_children else None
        value = first.named_children[0] if first is not None and first.named_children else None
        if first is None or first.type != "expression_statement" or value is None:
            continue
        if value.type == "string":
            owner = (
                node.parent if node.parent and node.parent.type == "decorated_definition" else node
            )
            docs.append(Doc(value.start_byte, value.end_byte, owner.start_byte, owner.end_byte))
    docs.sort(key=lambda d: d.start)
    return FileDocs(tuple(docs), tuple((d.start, d.end) for d in docs))


def blank(data: bytes, spans: tuple[tuple[int, int], ...], language: str) -> bytes:
    """``data`` with each span (bytes) blanked, every line number unchanged."""
    if not spans:
        return data
    fill = BLANK_FILL.get(language, b"")
    out, last, touched = bytearray(), 0, set()
    for start, end in spans:
        newlines = data.count(b"\n", start, end)
        first = data.count(b"\n", 0, start)
        touched.update(range(first, first + newlines + 1))
        out += data[last:start]
        out += fill + b"\n" * newlines if newlines or fill else b" "
        last = end
    out += data[last:]
    lines = bytes(out).split(b"\n")
    for row in touched:
        if row < len(lines) and not lines[row].strip():
            lines[row] = b""
    return b"\n".join(lines)


# --- summaries: the doc query's text --------------------------------------------------

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
    (r"\{@(?:link|linkcode|linkplain|code|see|inheritDoc|inheritdoc)\s*([^}]*)\}", r"\1"),
    (r"\[\[([^\]]+)\]\]", r"\1"),
    (r"\[([^\]]+)\]\([^)]*\)", r"\1"),
)


def summary(doc: str, language: str) -> str:
    """The doc query's text: the summary of a doc comment's own text ("" if none)."""
    if language == "python":
        return docstring_summary(doc)
    if DOC_STYLES[language].summary == "lines" and not doc.startswith("/**"):
        return line_doc_summary(doc)
    return block_doc_summary(doc)


def words(text: str) -> int:
    """Words that hold a letter or digit (``-`` and ``*`` alone do not count)."""
    return sum(1 for word in text.split() if re.search(r"[A-Za-z0-9]", word))


def _clean_inline(text: str) -> str:
    for pattern, replacement in _INLINE_RULES:
        text = re.sub(pattern, replacement, text)
    text = re.sub(rf"</?(?:{_HTML_TAGS})\b[^<>]*>", " ", text, flags=re.I)
    for entity, char in (("&lt;", "<"), ("&gt;", ">"), ("&amp;", "&"), ("&nbsp;", " ")):
        text = text.replace(entity, char)
    return " ".join(text.replace("`", "").replace("**", "").split())


def _shorten(text: str) -> str:
    """Whole sentences up to ``MAX_WORDS`` words (the first one always), at most ``HARD_MAX``."""
    if words(text) <= MAX_WORDS:
        return text
    sentences = re.split(r"(?<=[.!?])\s+(?=[A-Z`'\"(\[])", text)
    out = sentences[0]
    for sentence in sentences[1:]:
        if words(f"{out} {sentence}") > MAX_WORDS:
            break
        out += " " + sentence
    return " ".join(out.split()[:HARD_MAX]) if words(out) > HARD_MAX else out


def block_doc_summary(raw: str) -> str:
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
        if text:
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


def first_sentence(paragraph: str) -> str:
    """The first sentence of a paragraph, at most ``MAX_WORDS`` words, backticks dropped."""
    sentence = re.split(r"(?<=[.!?])\s", " ".join(paragraph.split()), maxsplit=1)[0]
    return " ".join(sentence.split()[:MAX_WORDS]).replace("`", "")


def docstring_summary(doc: str) -> str:
    """The first sentence of a docstring's first paragraph."""
    text = re.sub(r"^[rRbBuU]{0,2}(\"\"\"|'''|\"|')", "", doc.strip())
    text = text.strip().strip("\"'").strip()
    first = re.split(r"\n\s*\n|\n\s*(?:>>>|Example|Args:|Parameters|:param)", text)[0]
    return first_sentence(first)


def line_doc_summary(doc: str) -> str:
    """The first sentence of a ``//`` / ``///`` doc comment's first paragraph (indented
    code, ``Deprecated:`` and doc links' brackets left out)."""
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
    return first_sentence(re.sub(r"\[([^\]\s]+)\]", r"\1", " ".join(lines)))


def remove_name(text: str, names: list[str]) -> str:
    """``text`` without verbatim, whole-identifier mentions of the definition's own
    names (qualified forms too: ``Foo#bar()``, ``res.bar``, ``bar()``)."""
    mark = "\x00"
    original = text
    for name in sorted({n for n in names if n}, key=len, reverse=True):
        text = re.sub(
            rf"(?<![\w$#.])(?:[\w$]+[#.])*{re.escape(name)}(?:\(\))?(?![\w$])", mark, text
        )
    if text == original:
        return text
    text = re.sub(rf"\(\s*{mark}\s*\)", mark, text)  # "(name)"
    text = re.sub(rf"(['\"`])\s*{mark}\s*\1", mark, text)  # "'name'"
    text = re.sub(rf"\s*{mark}\s*(?=[,.;:!?)](?:\s|$))", "", text)  # "name."
    text = " ".join(text.replace(mark, " ").split())
    return re.sub(r"^[,.;:]\s*", "", text)
