"""Tree-sitter grammars and what each language calls a function, class, import, ...

Kept as data so a new language is a new ``LanguageSpec``, not new branches in the
chunker. Grammars come from the PyPI wheels; nothing is downloaded.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache, cached_property

import tree_sitter


@dataclass(frozen=True)
class LanguageSpec:
    """Node kinds of one grammar, grouped by the role they play for chunking."""

    name: str
    extensions: tuple[str, ...]
    function_kinds: frozenset[str]  # declarations that define a named function
    function_value_kinds: frozenset[str]  # function values (arrow, function expression)
    class_kinds: frozenset[str]
    type_kinds: frozenset[str]  # interface, type alias, enum: kind name by node kind
    method_kinds: frozenset[str]
    field_kinds: frozenset[str]  # class fields that may hold a function value
    import_kinds: frozenset[str]
    export_kinds: frozenset[str]
    comment_kinds: frozenset[str]
    decorator_kinds: frozenset[str]
    jsx_kinds: frozenset[str]
    # Overload signatures (``function f(a: string): void``): they ride with the
    # implementation of the same name that follows them, like its doc comment.
    signature_kinds: frozenset[str] = frozenset()

    @cached_property
    def unit_kinds(self) -> frozenset[str]:
        """Node kinds that may define a unit (``extract.py`` decides which do)."""
        return (
            self.function_kinds
            | self.function_value_kinds
            | self.class_kinds
            | self.type_kinds
            | self.method_kinds
        )


_JS_COMMON = dict(
    function_kinds=frozenset({"function_declaration", "generator_function_declaration"}),
    function_value_kinds=frozenset(
        {"arrow_function", "function_expression", "generator_function", "function"}
    ),
    class_kinds=frozenset({"class_declaration", "abstract_class_declaration", "class"}),
    method_kinds=frozenset({"method_definition"}),
    field_kinds=frozenset({"field_definition", "public_field_definition"}),
    import_kinds=frozenset({"import_statement"}),
    export_kinds=frozenset({"export_statement"}),
    comment_kinds=frozenset({"comment"}),
    decorator_kinds=frozenset({"decorator"}),
)

_TS_TYPES = frozenset(
    {"interface_declaration", "type_alias_declaration", "enum_declaration", "internal_module"}
)

_TS_SIGNATURES = frozenset({"function_signature", "method_signature"})

LANGUAGES: dict[str, LanguageSpec] = {
    "javascript": LanguageSpec(
        name="javascript",
        extensions=(".js", ".mjs", ".cjs", ".jsx"),
        type_kinds=frozenset(),
        jsx_kinds=frozenset({"jsx_element", "jsx_self_closing_element", "jsx_fragment"}),
        **_JS_COMMON,
    ),
    "typescript": LanguageSpec(
        name="typescript",
        extensions=(".ts", ".mts", ".cts"),
        type_kinds=_TS_TYPES,
        jsx_kinds=frozenset(),
        signature_kinds=_TS_SIGNATURES,
        **_JS_COMMON,
    ),
    "tsx": LanguageSpec(
        name="tsx",
        extensions=(".tsx",),
        type_kinds=_TS_TYPES,
        jsx_kinds=frozenset({"jsx_element", "jsx_self_closing_element", "jsx_fragment"}),
        signature_kinds=_TS_SIGNATURES,
        **_JS_COMMON,
    ),
}

#: Unit kind reported for each type-like node kind.
TYPE_UNIT_KINDS = {
    "interface_declaration": "interface",
    "type_alias_declaration": "type",
    "enum_declaration": "enum",
    "internal_module": "namespace",
}


def language_for_path(path: str) -> str | None:
    """The chunkable language of a path by its extension (``.d.ts`` is not source)."""
    lowered = path.lower()
    if lowered.endswith((".d.ts", ".d.mts", ".d.cts")):
        return None
    for spec in LANGUAGES.values():
        if lowered.endswith(spec.extensions):
            return spec.name
    return None


@cache
def get_language(language: str) -> tree_sitter.Language:
    """The tree-sitter grammar of one of ``LANGUAGES``."""
    if language == "javascript":
        import tree_sitter_javascript as grammar_js

        ts_language = tree_sitter.Language(grammar_js.language())
    elif language in ("typescript", "tsx"):
        import tree_sitter_typescript as grammar_ts

        raw = (
            grammar_ts.language_typescript()
            if language == "typescript"
            else (grammar_ts.language_tsx())
        )
        ts_language = tree_sitter.Language(raw)
    else:
        raise ValueError(f"no grammar for language {language!r}; known: {sorted(LANGUAGES)}")
    return ts_language


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


def unit_nodes(tree: tree_sitter.Tree, language: str) -> list[tree_sitter.Node]:
    """Nodes that may define a unit, in source order, found in one walk that runs in C."""
    return (
        tree_sitter.QueryCursor(_compiled_query(language)).captures(tree.root_node).get("unit", [])
    )


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
