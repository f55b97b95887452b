"""Tree-sitter grammars and what each language calls a function, class, import, ...

Kept as data so a new language is a new ``LanguageSpec``, not new branches in the
chunker. Grammars come from the PyPI wheels; nothing is downloaded.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache, cached_property

import tree_sitter

#: The ``module`` attribute of each grammar's PyPI package and the function that
#: returns its grammar (all pinned in pyproject.toml).
Grammar = tuple[str, str]


@dataclass(frozen=True)
class LanguageSpec:
    """Node kinds of one grammar, grouped by the role they play for chunking.

    Everything ``extract.py`` and the chunker know about a language is here, so a
    new language is a new entry in ``LANGUAGES`` (and its table-driven tests).
    """

    name: str
    extensions: tuple[str, ...]
    grammar: Grammar  # (PyPI module, function returning the grammar)
    lexer: str  # Pygments lexer name, for the dashboard
    function_kinds: frozenset[str]  # declarations that define a named function
    function_value_kinds: frozenset[str]  # function values (arrow, lambda)
    class_kinds: frozenset[str]
    method_kinds: frozenset[str]
    import_kinds: frozenset[str]
    comment_kinds: frozenset[str]
    decorator_kinds: frozenset[str]  # ride with the definition they precede
    # Unit kind of each type-like node kind (interface, type alias, enum, struct...).
    type_kinds: Mapping[str, str] = field(default_factory=dict)
    # A type's kind read from its ``type`` field (Go ``type X struct``: struct).
    type_shapes: Mapping[str, str] = field(default_factory=dict)
    # The field holding a definition's name where it is not ``name`` (Rust ``impl``).
    name_fields: Mapping[str, str] = field(default_factory=dict)
    # Nodes around a definition that belong to its span (``export``, ``const x =``,
    # ``@decorator``), with the fields that lead down to the definition; ``()`` for
    # "its only named child".
    wrappers: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # Where a function value gets its name: parent kind -> (name field, value field).
    bindings: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    # Unit kind of each function-value node kind (default ``function_expression``).
    value_kinds: Mapping[str, str] = field(default_factory=dict)
    export_kinds: frozenset[str] = frozenset()  # ``export ...`` statements
    jsx_kinds: frozenset[str] = frozenset()
    # Overload signatures (``function f(a: string): void``): they ride with the
    # implementation of the same name that follows them, like its doc comment.
    signature_kinds: frozenset[str] = frozenset()
    # A function directly inside a class is its method (Python ``def`` in ``class``).
    methods_in_classes: bool = False
    constructor_names: frozenset[str] = frozenset()
    constructor_kinds: frozenset[str] = frozenset()
    # The field of a method naming its owner type (Go's receiver).
    receiver_field: str = ""
    # How a definition is exported: "statement" (``export``), "public_name"
    # (module-level, no leading ``_``, listed in ``__all__`` if there is one),
    # "capitalized" (Go), "modifier" (a child, or a child of ``modifiers``, of a
    # kind in ``public_markers``: Java ``public``, Rust ``pub``).
    export_rule: str = "statement"
    public_markers: frozenset[str] = frozenset()
    # Imports (all but JS/TS, which have their own reader): what a top-level import
    # binds. ``import_aliases``: node kind -> its alias field (``import a as b``);
    # ``import_paths``: node kind -> which segment of its path it binds, "first"
    # (Python ``import a.b``) or "last" (``java.util.List``); subtrees in
    # ``import_skip`` fields (``from MODULE import``) or of a wildcard kind bind nothing.
    import_aliases: Mapping[str, str] = field(default_factory=dict)
    import_paths: Mapping[str, str] = field(default_factory=dict)
    import_skip: frozenset[str] = frozenset()
    import_wildcards: frozenset[str] = frozenset()
    # Text that opens what follows it: a small chunk ending or starting with it joins
    # the chunk after it (``class A {``, ``def f():`` , a comment, an import).
    opener_tails: tuple[bytes, ...] = ()
    opener_heads: tuple[bytes, ...] = ()
    # The regex baseline of ``nexus functions`` and how it finds a block's end.
    regex: str = ""
    regex_blocks: str = "braces"  # or "indent"
    # Units under ``min_tokens`` group with adjacent small units into one chunk (JS/TS:
    # one-line arrows and getters). False: every unit that fits is a chunk of its own,
    # however small (Python, chosen on bench/language_eval.py's tuning set: grouping
    # put small defs together in chunks many lines long for a lower doc MRR@10).
    groups_small_units: bool = True
    # Statements that may hold definitions whole (Python ``try:`` / ``if`` / ``with``
    # around a ``def``): a chunk that takes one whole is labelled with the units in it,
    # which the top-down chunker would otherwise never visit.
    definition_blocks: frozenset[str] = frozenset()

    @cached_property
    def rider_kinds(self) -> frozenset[str]:
        """Nodes that ride with the node they precede: comments and decorators."""
        return self.comment_kinds | self.decorator_kinds

    @cached_property
    def unit_kinds(self) -> frozenset[str]:
        """Node kinds that may define a unit (``extract.py`` decides which do)."""
        return (
            self.function_kinds
            | self.function_value_kinds
            | self.class_kinds
            | frozenset(self.type_kinds)
            | self.method_kinds
        )

    @cached_property
    def node_kinds(self) -> frozenset[str]:
        """Every node kind the grammar has: a test for a kind it lacks can be skipped."""
        grammar = get_language(self.name)
        return frozenset(grammar.node_kind_for_id(i) or "" for i in range(grammar.node_kind_count))


_JS_WRAPPERS = {
    "export_statement": ("declaration", "value"),
    "lexical_declaration": (),
    "variable_declaration": (),
    "variable_declarator": ("value",),
    "assignment_expression": ("right",),
    "expression_statement": (),
    "pair": ("value",),
    "field_definition": ("value",),
    "public_field_definition": ("value",),
}

_JS_COMMON = dict(
    function_kinds=frozenset({"function_declaration", "generator_function_declaration"}),
    function_value_kinds=frozenset(
        {"arrow_function", "function_expression", "generator_function", "function"}
    ),
    class_kinds=frozenset({"class_declaration", "abstract_class_declaration", "class"}),
    method_kinds=frozenset({"method_definition"}),
    import_kinds=frozenset({"import_statement"}),
    export_kinds=frozenset({"export_statement"}),
    comment_kinds=frozenset({"comment"}),
    decorator_kinds=frozenset({"decorator"}),
    wrappers=_JS_WRAPPERS,
    bindings={
        "variable_declarator": ("name", "value"),
        "assignment_expression": ("left", "right"),
        "pair": ("key", "value"),
        "field_definition": ("property", "value"),
        "public_field_definition": ("name", "value"),
    },
    value_kinds={"arrow_function": "arrow"},
    constructor_names=frozenset({"constructor"}),
    opener_tails=(b"{", b"(", b"[", b"=>", b"=", b",", b"<", b">"),
    opener_heads=(b"//", b"/*", b"@", b"import"),
    regex=r"^(?:export\s+)?(?:async\s+)?function\s+(\w+)\s*\(",
)

#: Opening text of brace languages (Go, Java, Rust).
_BRACES = dict(opener_tails=(b"{", b"(", b"[", b"=", b",", b"<", b"->"))

_TS_TYPES = {
    "interface_declaration": "interface",
    "type_alias_declaration": "type",
    "enum_declaration": "enum",
    "internal_module": "namespace",
}

_TS_SIGNATURES = frozenset({"function_signature", "method_signature"})
_JSX = frozenset({"jsx_element", "jsx_self_closing_element", "jsx_fragment"})

LANGUAGES: dict[str, LanguageSpec] = {
    "javascript": LanguageSpec(
        name="javascript",
        extensions=(".js", ".mjs", ".cjs", ".jsx"),
        grammar=("tree_sitter_javascript", "language"),
        lexer="javascript",
        jsx_kinds=_JSX,
        **_JS_COMMON,
    ),
    "typescript": LanguageSpec(
        name="typescript",
        extensions=(".ts", ".mts", ".cts"),
        grammar=("tree_sitter_typescript", "language_typescript"),
        lexer="typescript",
        type_kinds=_TS_TYPES,
        signature_kinds=_TS_SIGNATURES,
        **_JS_COMMON,
    ),
    "tsx": LanguageSpec(
        name="tsx",
        extensions=(".tsx",),
        grammar=("tree_sitter_typescript", "language_tsx"),
        lexer="tsx",
        type_kinds=_TS_TYPES,
        jsx_kinds=_JSX,
        signature_kinds=_TS_SIGNATURES,
        **_JS_COMMON,
    ),
    "python": LanguageSpec(
        name="python",
        extensions=(".py", ".pyi"),
        grammar=("tree_sitter_python", "language"),
        lexer="python",
        function_kinds=frozenset({"function_definition"}),
        function_value_kinds=frozenset({"lambda"}),
        class_kinds=frozenset({"class_definition"}),
        method_kinds=frozenset(),
        import_kinds=frozenset({"import_statement", "import_from_statement"}),
        comment_kinds=frozenset({"comment"}),
        decorator_kinds=frozenset(),  # inside decorated_definition, part of its span
        wrappers={
            "decorated_definition": ("definition",),
            "expression_statement": (),
            "assignment": ("right",),
        },
        bindings={"assignment": ("left", "right")},
        value_kinds={"lambda": "lambda"},
        methods_in_classes=True,
        constructor_names=frozenset({"__init__"}),
        export_rule="public_name",
        import_aliases={"aliased_import": "alias"},
        import_paths={"dotted_name": "first"},
        import_skip=frozenset({"module_name"}),
        import_wildcards=frozenset({"wildcard_import"}),
        opener_tails=(b":", b"(", b"[", b"{", b"=", b","),
        opener_heads=(b"#", b"@", b"import", b"from"),
        regex=r"^[ \t]*(?:async[ \t]+)?def[ \t]+(\w+)",
        regex_blocks="indent",
        groups_small_units=False,
        definition_blocks=frozenset({"try_statement", "if_statement", "with_statement"}),
    ),
    "go": LanguageSpec(
        name="go",
        extensions=(".go",),
        grammar=("tree_sitter_go", "language"),
        lexer="go",
        function_kinds=frozenset({"function_declaration"}),
        function_value_kinds=frozenset(),
        class_kinds=frozenset(),
        method_kinds=frozenset({"method_declaration"}),
        import_kinds=frozenset({"import_declaration"}),
        comment_kinds=frozenset({"comment"}),
        decorator_kinds=frozenset(),
        type_kinds={"type_spec": "type", "type_alias": "type"},
        type_shapes={"struct_type": "struct", "interface_type": "interface"},
        wrappers={"type_declaration": ()},
        receiver_field="receiver",
        export_rule="capitalized",
        import_aliases={"import_spec": "name"},
        import_paths={"interpreted_string_literal": "last"},
        **_BRACES,
        opener_heads=(b"//", b"/*", b"import"),
        regex=r"^func[ \t]+(?:\([^)]*\)[ \t]*)?(\w+)",
    ),
    "java": LanguageSpec(
        name="java",
        extensions=(".java",),
        grammar=("tree_sitter_java", "language"),
        lexer="java",
        function_kinds=frozenset(),
        function_value_kinds=frozenset(),
        class_kinds=frozenset({"class_declaration", "record_declaration"}),
        method_kinds=frozenset({"method_declaration", "constructor_declaration"}),
        constructor_kinds=frozenset({"constructor_declaration"}),
        import_kinds=frozenset({"import_declaration"}),
        comment_kinds=frozenset({"line_comment", "block_comment"}),
        decorator_kinds=frozenset(),  # annotations are inside `modifiers`
        type_kinds={
            "interface_declaration": "interface",
            "annotation_type_declaration": "interface",
            "enum_declaration": "enum",
        },
        export_rule="modifier",
        public_markers=frozenset({"public"}),
        import_paths={"scoped_identifier": "last", "identifier": "last"},
        import_wildcards=frozenset({"asterisk"}),
        **_BRACES,
        opener_heads=(b"//", b"/*", b"@", b"import"),
        regex=(
            r"^[ \t]*(?:(?:public|protected|private|static|final|abstract|synchronized)[ \t]+)+"
            r"[\w<>\[\].,? ]+[ \t]+(\w+)[ \t]*\("
        ),
    ),
    "rust": LanguageSpec(
        name="rust",
        extensions=(".rs",),
        grammar=("tree_sitter_rust", "language"),
        lexer="rust",
        function_kinds=frozenset({"function_item", "function_signature_item"}),
        function_value_kinds=frozenset({"closure_expression"}),
        class_kinds=frozenset(),
        method_kinds=frozenset(),
        import_kinds=frozenset({"use_declaration"}),
        comment_kinds=frozenset({"line_comment", "block_comment"}),
        decorator_kinds=frozenset({"attribute_item", "inner_attribute_item"}),
        type_kinds={
            "struct_item": "struct",
            "enum_item": "enum",
            "union_item": "struct",
            "trait_item": "trait",
            "impl_item": "impl",
            "type_item": "type",
            "mod_item": "namespace",
        },
        name_fields={"impl_item": "type"},
        wrappers={"let_declaration": ("value",)},
        bindings={"let_declaration": ("pattern", "value")},
        value_kinds={"closure_expression": "lambda"},
        methods_in_classes=True,
        export_rule="modifier",
        public_markers=frozenset({"visibility_modifier"}),
        import_aliases={"use_as_clause": "alias"},
        import_paths={"scoped_identifier": "last", "identifier": "last"},
        import_skip=frozenset({"path"}),
        import_wildcards=frozenset({"use_wildcard"}),
        **_BRACES,
        opener_heads=(b"//", b"/*", b"#[", b"#![", b"use"),
        regex=(
            r"^[ \t]*(?:pub(?:\([^)]*\))?[ \t]+)?"
            r"(?:(?:const|async|unsafe|extern(?:[ \t]+\"[^\"]*\")?)[ \t]+)*fn[ \t]+(\w+)"
        ),
    ),
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


def lexer_name(language: str | None) -> str:
    """The Pygments lexer for a language (its own name when Nexus does not chunk it)."""
    spec = LANGUAGES.get(language or "")
    return spec.lexer if spec is not None else (language or "text")


@cache
def get_language(language: str) -> tree_sitter.Language:
    """The tree-sitter grammar of one of ``LANGUAGES``, from its PyPI wheel."""
    spec = LANGUAGES.get(language)
    if spec is None:
        raise ValueError(f"no grammar for language {language!r}; known: {sorted(LANGUAGES)}")
    module_name, function = spec.grammar
    module = importlib.import_module(module_name)
    return tree_sitter.Language(getattr(module, function)())


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
