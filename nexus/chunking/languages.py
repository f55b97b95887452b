"""The languages Nexus chunks, one ``LanguageSpec`` each, and what a path says of them.

Kept as data so a new language is a new ``LanguageSpec`` (``spec.py`` says what each
field means), not new branches in the chunker, the query generator, previews or
ranking. Parsing with their grammars is ``grammar``'s job.
"""

from __future__ import annotations

import re
from functools import cache

from nexus.chunking.spec import CallSyntax, DocStyle, LanguageSpec


def _names(text: str) -> frozenset[str]:
    return frozenset(text.split())


#: Test folders of every language (a file under one is a test, whatever its name);
#: each spec adds its own file-naming conventions (``LanguageSpec.test_paths``).
TEST_FOLDERS = r"(^|/)(tests?|__tests__|spec|e2e|testing|testdata|fixtures|__mocks__)/"

_JS_BUILTINS = _names(
    "call apply bind push pop shift unshift slice splice concat join indexOf lastIndexOf "
    "includes hasOwnProperty toString valueOf keys values entries assign create "
    "defineProperty isArray from of Object Array String Number Boolean Math JSON console "
    "log require Error TypeError RangeError Symbol Promise then catch resolve reject super "
    "parseInt parseFloat isNaN max min floor ceil round abs length forEach map filter "
    "reduce some every toLowerCase toUpperCase trim split replace substring substr charAt "
    "charCodeAt test exec match set get has delete add Set Map getPrototypeOf "
    "setPrototypeOf freeze this undefined startsWith endsWith sort reverse fill find "
    "findIndex flat Date RegExp Function WeakMap WeakSet"
)

#: JSDoc / TSDoc: the ``/** */`` right before a definition (one blank line at most;
#: ``//`` comments and decorators between are skipped).
_JSDOC = DocStyle(
    comment_kinds=frozenset({"comment"}),
    prefixes=(b"/**",),
    runs=False,
    max_gap=2,
    skipped=frozenset({"decorator"}),
    skip_line_comments=True,
)

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
    docs=_JSDOC,
    calls=CallSyntax(
        {"call_expression": "function", "new_expression": "constructor"},
        frozenset({"member_expression"}),
        "object",
        "property",
    ),
    call_stoplist=_JS_BUILTINS,
    # ``import``/``require``/re-exports and directives (``"use client"``).
    import_line=(
        r"""\s*(?:import\b|export\s+(?:\*|\{[^}]*\}?)\s*(?:from\b|$)|"""
        r"""(?:const|let|var)\s+[\w{}\s,]+=\s*require\(|["']use\s+(?:strict|client|server)["'])"""
    ),
    test_paths=r"[._-](test|spec)\.\w+$",
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
        # The docstring: the first statement of a module, class or ``def`` if a string.
        docs=DocStyle(
            comment_kinds=frozenset(),
            prefixes=(),
            runs=False,
            max_gap=0,
            summary="docstring",
            blank_fill=b'""',
        ),
        calls=CallSyntax({"call": "function"}, frozenset({"attribute"}), "object", "attribute"),
        call_stoplist=_names(
            "len str int float bool list dict set tuple range enumerate zip map filter sorted "
            "reversed isinstance issubclass hasattr getattr setattr iter next super print repr "
            "type min max sum any all abs append extend pop get items keys values format join "
            "split strip self cls object"
        ),
        import_line=r"\s*(?:import\b|from\s+\S+\s+import\b)",
        test_paths=r"(^|/)test_[^/]*$|_test\.\w+$",  # pytest's default naming
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
        # The run of ``//`` lines right above a declaration (``go doc``'s rule).
        docs=DocStyle(
            comment_kinds=frozenset({"comment"}),
            prefixes=(b"//", b"/*"),
            runs=True,
            max_gap=1,
            parents=frozenset({"source_file", "field_declaration_list", "interface_type"}),
            summary="lines",
        ),
        calls=CallSyntax(
            {"call_expression": "function"}, frozenset({"selector_expression"}), "operand", "field"
        ),
        call_stoplist=_names(
            "append cap clear close complex copy delete imag len make max min new panic print "
            "println real recover bool byte complex64 complex128 error float32 float64 int int8 "
            "int16 int32 int64 rune string uint uint8 uint16 uint32 uint64 uintptr any"
        ),
        import_line=r"\s*(?:package\s|import\b)",
        test_paths=r"_test\.\w+$",
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
        # Javadoc: the ``/** */`` right before a definition.
        docs=DocStyle(
            comment_kinds=frozenset({"block_comment"}),
            prefixes=(b"/**",),
            runs=False,
            max_gap=2,
            skip_line_comments=True,
        ),
        # ``object.name(...)``: the object is read apart (``generate.called``).
        calls=CallSyntax({"method_invocation": "name", "object_creation_expression": "type"}),
        call_stoplist=_names(
            "equals hashCode toString size isEmpty get set add put contains length valueOf "
            "format println String Object Integer Long List Map Set ArrayList HashMap Objects"
        ),
        import_line=r"\s*(?:package\s|import\b)",
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
        # The run of ``///`` lines (or one ``/** */``) above an item, attributes between
        # skipped; ``//!`` and ``/*! */`` are blanked too, never attached.
        docs=DocStyle(
            comment_kinds=frozenset({"line_comment", "block_comment"}),
            prefixes=(b"///", b"/**"),
            runs=True,
            max_gap=1,
            skipped=frozenset({"attribute_item"}),
            blank_only=(b"//!", b"/*!"),
            summary="lines",
        ),
        calls=CallSyntax(
            {"call_expression": "function", "macro_invocation": "macro"},
            frozenset({"field_expression", "scoped_identifier"}),
            "value",
            "field",
        ),
        call_stoplist=_names(
            "unwrap expect clone into to_string to_owned iter len is_empty push get insert "
            "map Ok Err Some Box Vec String new default format println panic assert"
        ),
        import_line=r"\s*(?:use\s|extern\s+crate\s)",
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
    "csharp": LanguageSpec(
        name="csharp",
        extensions=(".cs",),
        grammar=("tree_sitter_c_sharp", "language"),
        lexer="csharp",
        function_kinds=frozenset({"local_function_statement"}),
        function_value_kinds=frozenset(),
        class_kinds=frozenset({"class_declaration", "record_declaration"}),
        method_kinds=frozenset(
            {"method_declaration", "constructor_declaration", "property_declaration"}
        ),
        constructor_kinds=frozenset({"constructor_declaration"}),
        member_kinds={"property_declaration": "property"},
        import_kinds=frozenset({"using_directive"}),
        comment_kinds=frozenset({"comment"}),
        decorator_kinds=frozenset(),  # ``[Attribute]`` lists are inside the declaration
        # XML doc comments: the run of ``///`` lines right above, read for ``<summary>``.
        docs=DocStyle(
            comment_kinds=frozenset({"comment"}),
            prefixes=(b"///", b"/**"),
            runs=True,
            max_gap=1,
            summary="xml",
        ),
        calls=CallSyntax(
            {"invocation_expression": "function", "object_creation_expression": "type"},
            frozenset({"member_access_expression"}),
            "expression",
            "name",
        ),
        call_stoplist=_names(
            "ToString Equals GetHashCode GetType nameof typeof Add Remove Contains ContainsKey "
            "TryGetValue Count Any All First FirstOrDefault Single SingleOrDefault Where Select "
            "ToList ToArray ToDictionary OrderBy OrderByDescending Sum Max Min Format Join "
            "Concat IsNullOrEmpty IsNullOrWhiteSpace WriteLine ConfigureAwait FromResult "
            "CompletedTask Dispose Console Math String Task List Dictionary HashSet Exception "
            "ArgumentNullException ArgumentException InvalidOperationException ThrowIfNull var"
        ),
        # ``using X;`` / ``using static X;`` / ``using A = X;`` and ``namespace X;``.
        import_line=(
            r"\s*(?:(?:global\s+)?using\s+(?:static\s+)?[\w.]+\s*;|"
            r"using\s+\w+\s*=\s*[\w.]+(?:<[^;]*>)?\s*;|namespace\s+[\w.]+\s*;)"
        ),
        # xUnit / NUnit / MSTest conventions: ``OrderServiceTests.cs`` and a test
        # project folder (``Tests/``, ``Shop.Tests/``).
        test_paths=r"[a-z0-9]Tests?\.cs$|(^|/)([\w.]*\.)?Tests?/[^/]*\.cs$",
        type_kinds={
            "struct_declaration": "struct",
            "interface_declaration": "interface",
            "enum_declaration": "enum",
            "delegate_declaration": "type",
            "namespace_declaration": "namespace",
        },
        transparent_kinds=frozenset({"namespace"}),
        export_rule="modifier",
        public_markers=frozenset({"public"}),
        # ``using System.Linq;`` opens a namespace and binds no name the code spells
        # out; ``using Json = System.Text.Json;`` binds ``Json``.
        import_aliases={"using_directive": "name"},
        import_wildcards=frozenset({"identifier", "qualified_name", "generic_name"}),
        **_BRACES,
        opener_heads=(b"//", b"/*", b"[", b"using"),
        regex=(
            r"^[ \t]*(?:(?:public|protected|private|internal|static|virtual|override|"
            r"abstract|sealed|async|extern|unsafe|new|partial)[ \t]+)+"
            r"[\w<>\[\].,?() ]+[ \t]+(\w+)[ \t]*(?:<[^>]*>)?[ \t]*\("
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


@cache
def _test_path_re() -> re.Pattern[str]:
    return re.compile(
        "|".join([TEST_FOLDERS, *(s.test_paths for s in LANGUAGES.values() if s.test_paths)])
    )


def is_test_path(path: str) -> bool:
    """Whether a path holds tests: under a test folder, or named as a test by the
    conventions of any language (tests of one language sit beside code of another)."""
    return _test_path_re().search(path) is not None


@cache
def import_line() -> re.Pattern[str]:
    """A line of an import block in any of ``LANGUAGES`` (their specs' ``import_line``;
    any, as a file of one language may hold another's, like JS in an HTML-ish TSX)."""
    return re.compile("|".join(f"(?:{s.import_line})" for s in LANGUAGES.values()))


def lexer_name(language: str | None) -> str:
    """The Pygments lexer for a language (its own name when Nexus does not chunk it)."""
    spec = LANGUAGES.get(language or "")
    return spec.lexer if spec is not None else (language or "text")
