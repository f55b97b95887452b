"""Parsing with the grammars of ``LANGUAGES``: parsers, the unit query, syntax errors, JSX.

Grammars come from the PyPI wheels; nothing is downloaded. Parsers and compiled
queries are built once per process.
"""

from __future__ import annotations

from functools import cache

import tree_sitter

from nexus.chunking.languages import LANGUAGES, LanguageSpec
from nexus.chunking.spec import load_grammar


def get_language(language: str) -> tree_sitter.Language:
    """The tree-sitter grammar of one of ``LANGUAGES``, from its PyPI wheel."""
    spec = LANGUAGES.get(language)
    if spec is None:
        raise ValueError(f"no grammar for language {language!r}; known: {sorted(LANGUAGES)}")
    return load_grammar(spec.grammar)


@cache
def get_parser(language: str) -> tree_sitter.Parser:
    """A parser for one of ``LANGUAGES`` (cached per process)."""
    return tree_sitter.Parser(get_language(language))


def _query_source(spec: LanguageSpec, language: tree_sitter.Language) -> str:
    """A query for every node that may define a unit, built from the spec's kinds the
    grammar knows."""
    known = sorted(k for k in spec.unit_kinds if language.id_for_node_kind(k, True) is not None)
    return "[" + " ".join(f"({kind})" for kind in known) + "] @unit"


@cache
def _compiled_query(language: str) -> tree_sitter.Query:
    grammar = get_language(language)
    return tree_sitter.Query(grammar, _query_source(LANGUAGES[language], grammar))


def unit_nodes(root: tree_sitter.Node, language: str) -> list[tree_sitter.Node]:
    """Nodes at or under ``root`` that may define a unit, in source order, found in one
    walk that runs in C."""
    return tree_sitter.QueryCursor(_compiled_query(language)).captures(root).get("unit", [])


def error_ranges(tree: tree_sitter.Tree) -> list[tuple[int, int]]:
    """Byte ranges of ERROR and MISSING nodes, sorted; only subtrees that hold one are
    entered, so a file without syntax errors costs nothing."""
    found = []
    stack = [tree.root_node] if tree.root_node.has_error else []
    while stack:
        node = stack.pop()
        if node.is_error or node.is_missing:
            found.append((node.start_byte, node.end_byte))
        stack.extend(child for child in node.children if child.has_error)
    return sorted(found)


#: Tokens every JSX element holds: ``</`` of a closing tag or ``/>`` of a self-closing
#: one. The grammars have them as tokens of JSX tags only.
_JSX_MARKERS = ("</", "/>")


def contains_jsx(tree: tree_sitter.Tree, data: bytes, language: str) -> bool:
    """Whether the file holds a JSX element: a ``</`` or ``/>`` that the parser read
    as a token (in a string, comment or regex it is not one). Found with
    ``bytes.find``, not a walk of the whole tree."""
    if not LANGUAGES[language].jsx_kinds:
        return False
    root = tree.root_node
    for marker in _JSX_MARKERS:
        at = data.find(marker.encode())
        while at != -1:
            token = root.descendant_for_byte_range(at, at + len(marker))
            if token is not None and token.type == marker:
                return True
            at = data.find(marker.encode(), at + 1)
    return False


def parse(data: bytes, language: str) -> tree_sitter.Tree:
    """Parse UTF-8 source bytes; syntax errors give ERROR nodes, never an exception."""
    return get_parser(language).parse(data)
