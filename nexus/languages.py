"""Tree-sitter grammars and what each language calls a function, class, import, ...

Kept as data so a new language is a new ``LanguageSpec``, not new branches in the
chunker. Grammars come from the PyPI wheels; nothing is downloaded.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

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
    """One query for everything a file analysis needs from the tree: unit candidates,
    ERROR/MISSING nodes and JSX, built from the spec's kinds the grammar knows."""

    def alternatives(kinds: frozenset[str]) -> str:
        known = sorted(k for k in kinds if language.id_for_node_kind(k, True) is not None)
        return " ".join(f"({kind})" for kind in known)

    unit_kinds = (
        spec.function_kinds
        | spec.function_value_kinds
        | spec.class_kinds
        | spec.type_kinds
        | spec.method_kinds
    )
    jsx = f"[{alternatives(spec.jsx_kinds)}] @jsx" if spec.jsx_kinds else ""
    signature = f"[{alternatives(spec.signature_kinds)}] @signature" if spec.signature_kinds else ""
    return f"[{alternatives(unit_kinds)}] @unit (ERROR) @error (MISSING) @error {jsx} {signature}"


@cache
def _compiled_query(language: str) -> tree_sitter.Query:
    grammar = get_language(language)
    return tree_sitter.Query(grammar, _query_source(LANGUAGES[language], grammar))


def capture_nodes(tree: tree_sitter.Tree, language: str) -> dict[str, list[tree_sitter.Node]]:
    """Unit candidates (``unit``), ERROR/MISSING nodes (``error``), JSX (``jsx``) and
    signatures (``signature``) of a whole tree, in one walk that runs in C."""
    return tree_sitter.QueryCursor(_compiled_query(language)).captures(tree.root_node)


def parse(data: bytes, language: str) -> tree_sitter.Tree:
    """Parse UTF-8 source bytes; syntax errors give ERROR nodes, never an exception."""
    return get_parser(language).parse(data)
