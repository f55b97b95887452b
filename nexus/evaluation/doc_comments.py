"""Doc comments: which comment documents which definition, its summary, and blanking.

The rules are those of the benchmark sets (``shared/eval`` for JS/TS, ``bench/
language_eval.py`` for Python and Go), kept as data in each language's spec
(``LanguageSpec.docs``, a ``DocStyle``):

* JS/TS and Java: the ``/** */`` comment right before a definition (at most one blank
  line between; ``//`` comments and decorators in between are skipped);
* Python: the docstring, the first statement of a module, class or ``def`` if a string;
* Go: the run of ``//`` comments on lines of their own ending on the line right above
  a declaration (``go doc``'s rule);
* Rust: the run of ``///`` comments (or one ``/** */``) above an item, attributes in
  between skipped; ``//!`` and ``/*! */`` are blanked too, never targets;
* C#: the run of ``///`` XML doc lines right above (attributes are inside the
  declaration); the summary is the text of ``<summary>``.

Blanking keeps every line number: a doc comment becomes as many newlines as it spans
(``""`` first in Python, so the body stays valid; one space for a comment inside a
line), and the lines it leaves holding only whitespace are emptied.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import tree_sitter

from nexus.chunking.grammar import get_language
from nexus.chunking.languages import LANGUAGES
from nexus.chunking.spec import DocStyle

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


def supported(language: str | None) -> bool:
    """Whether doc comments of ``language`` are read (every chunkable language's are)."""
    return language in LANGUAGES


def find_docs(tree: tree_sitter.Tree, language: str) -> FileDocs:
    """The doc comments of a parsed file, by the rules of ``language`` (its spec's
    ``docs``)."""
    style = LANGUAGES[language].docs
    if style.summary == "docstring":
        return _python_docs(tree)
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
    spec = LANGUAGES[language]
    kinds = sorted(spec.docs.comment_kinds & spec.node_kinds)
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
    fill = LANGUAGES[language].docs.blank_fill
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
