"""What Nexus knows about one language, as data: ``LanguageSpec`` and its parts.

Everything that knows a language lives in its spec: the node kinds the chunker uses,
what a doc comment is (``DocStyle``, read by ``nexus.evaluation.doc_comments``), how a
call is written (``CallSyntax``) and which callees say nothing (the query generator),
which lines are imports (search previews) and which paths hold tests (ranking). The
specs themselves are in ``languages.py``; a new language is one entry there.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache, cached_property

import tree_sitter

#: The ``module`` attribute of a grammar's PyPI package and the function that returns
#: its grammar (all pinned in pyproject.toml).
Grammar = tuple[str, str]

#: How a doc comment's summary is read (``nexus.evaluation.doc_comments``).
SUMMARIES = ("block", "lines", "docstring", "xml")


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
    # "block" (JSDoc / Javadoc), "lines" (Go, Rust), "docstring" (Python: the first
    # string of a body, not a comment), "xml" (C#: ``<summary>`` of ``///`` lines).
    summary: str = "block"
    blank_fill: bytes = b""  # what a blanked doc leaves before its newlines (Python ``""``)

    def __post_init__(self) -> None:
        if self.summary not in SUMMARIES:
            raise ValueError(f"DocStyle.summary must be one of {SUMMARIES}, got {self.summary!r}")


@dataclass(frozen=True)
class CallSyntax:
    """How a call is written, for the ``calls`` queries of the query generator.

    ``kinds``: call node kind -> the field holding its callee; ``members``: member
    access kinds (``x.m``), with the fields of their receiver and of the member's name.
    """

    kinds: Mapping[str, str]
    members: frozenset[str] = frozenset()
    receiver: str = ""
    name: str = ""


@dataclass(frozen=True)
class LanguageSpec:
    """Node kinds of one grammar, grouped by the role they play for chunking, and the
    rest of what Nexus knows about the language (doc comments, calls, imports, tests).

    Everything ``extract.py``, the chunker, the query generator, search previews and the
    ranking stage know about a language is here, so a new language is a new entry in
    ``LANGUAGES`` (and its table-driven tests).
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
    docs: DocStyle  # what a doc comment is (query generation, blanking)
    calls: CallSyntax  # how a call is written (``calls`` queries)
    # Callees that say nothing about intent (built-ins, ubiquitous helpers): left out
    # of ``calls`` queries.
    call_stoplist: frozenset[str]
    # A line of an import block, for search previews (which start past the imports).
    import_line: str
    # Paths of test files by this language's conventions (``_test.go``, ``*Tests.cs``),
    # beside the test folders of every language (``is_test_path``).
    test_paths: str = ""
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
    # Unit kind of method-like node kinds that are not plain methods (C# ``property``).
    member_kinds: Mapping[str, str] = field(default_factory=dict)
    # Unit kinds that neither nest what they hold one level deeper nor prefix its names
    # (C# ``namespace``: it wraps whole files, and its name is the folder path, like a
    # Java package): a class in one is at depth 0 and named ``OrderService``.
    transparent_kinds: frozenset[str] = frozenset()
    # The field of a method naming its owner type (Go's receiver).
    receiver_field: str = ""
    # How a definition is exported: "statement" (``export``), "public_name"
    # (module-level, no leading ``_``, listed in ``__all__`` if there is one),
    # "capitalized" (Go), "modifier" (a child, or a child of ``modifiers``, of a
    # kind in ``public_markers``: Java ``public``, Rust ``pub``).
    export_rule: str = "statement"
    public_markers: frozenset[str] = frozenset()
    # Imports (all but JS/TS, which have their own reader): what a top-level import
    # binds. ``import_aliases``: node kind -> its alias field (``import a as b``; the
    # statement's own kind too: C# ``using A = B;``); ``import_paths``: node kind ->
    # which segment of its path it binds, "first" (Python ``import a.b``) or "last"
    # (``java.util.List``); subtrees in ``import_skip`` fields (``from MODULE import``)
    # or of a wildcard kind bind nothing.
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
    # however small (Python, chosen on bench/retrieval/language_eval.py's tuning set: grouping
    # put small defs together in chunks many lines long for a lower doc MRR@10).
    groups_small_units: bool = True
    # Statements that may hold definitions whole (Python ``try:`` / ``if`` / ``with``
    # around a ``def``): a chunk that takes one whole is labelled with the units in it,
    # which the top-down chunker would otherwise never visit.
    definition_blocks: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        for pattern in (self.import_line, self.test_paths, self.regex):
            try:
                re.compile(pattern)
            except re.error as error:
                raise ValueError(f"{self.name}: bad regex {pattern!r}: {error}") from None

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
        grammar = load_grammar(self.grammar)
        return frozenset(grammar.node_kind_for_id(i) or "" for i in range(grammar.node_kind_count))


@cache
def load_grammar(grammar: Grammar) -> tree_sitter.Language:
    """A tree-sitter grammar from its PyPI wheel (imported on first use)."""
    module_name, function = grammar
    return tree_sitter.Language(getattr(importlib.import_module(module_name), function)())
