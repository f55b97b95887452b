"""What a file imports and exports: the names its top-level imports bind, and a Python
module's ``__all__``. The chunker adds them to chunk headers and metadata."""

from __future__ import annotations

from collections.abc import Iterator

import tree_sitter

from nexus.chunking.languages import LANGUAGES, LanguageSpec
from nexus.chunking.nodes import node_text, walk


def declared_exports(tree: tree_sitter.Tree, language: str) -> frozenset[str] | None:
    """The names a Python module lists in ``__all__ = [...]`` (or a tuple), else None:
    then every public module-level name is exported."""
    if LANGUAGES[language].export_rule != "public_name":
        return None
    root = tree.root_node
    if b"__all__" not in (root.text or b"__all__"):  # most modules: no statement to read
        return None
    declared = None
    for statement in root.named_children:
        assignment = statement.named_child(0) if statement.type == "expression_statement" else None
        if assignment is None or assignment.type not in ("assignment", "augmented_assignment"):
            continue
        if node_text(assignment.child_by_field_name("left")) != "__all__":
            continue
        value = assignment.child_by_field_name("right")
        names = [
            node_text(part).strip("\"'")
            for part in (value.named_children if value is not None else [])
            if part.type == "string"
        ]
        keep = declared if assignment.type == "augmented_assignment" and declared else frozenset()
        declared = keep | frozenset(names)
    return declared


def imported_names(tree: tree_sitter.Tree, language: str) -> Iterator[bytes]:
    """The names (UTF-8) bound by top-level imports.

    JS/TS: ``import`` statements and ``require()`` declarations (``import {a as b}``:
    ``b``; ``const {x} = require(...)``: ``x``). Python: ``import a.b`` binds ``a``,
    ``import a as b`` and ``from m import a as b`` bind ``b``, ``from m import a``
    binds ``a``. Go: the package name (alias or last path segment); Java: the class;
    Rust: the last segment of each ``use`` path or its alias.
    """
    spec = LANGUAGES[language]
    if spec.import_paths or spec.import_aliases:
        yield from _spec_imports(tree, spec)
        return
    for statement in tree.root_node.named_children:
        kind = statement.type
        if kind == "import_statement":
            yield from (node.text or b"" for node in _imported_locals(statement))
        elif kind in ("lexical_declaration", "variable_declaration"):
            for declarator in _declarators(statement):
                value = declarator.child_by_field_name("value")
                if value is None or value.type != "call_expression":
                    continue
                if node_text(value.child_by_field_name("function")) != "require":
                    continue
                for node in walk(declarator.child_by_field_name("name")):
                    if node.type in ("identifier", "shorthand_property_identifier_pattern"):
                        yield node.text or b""


def _spec_imports(tree: tree_sitter.Tree, spec: LanguageSpec) -> Iterator[bytes]:
    """Names bound by top-level imports, read with the spec's import tables."""
    for statement in tree.root_node.named_children:
        if statement.type in spec.import_kinds:
            yield from _statement_imports(statement, spec)


def _statement_imports(statement: tree_sitter.Node, spec: LanguageSpec) -> list[bytes]:
    """The names one import statement binds: its named descendants in pre-order, down
    to the first alias or path on each branch.

    Walked with a cursor, which gives each node's field name as it goes (a quarter
    faster than ``children`` lists with ``field_name_for_child``).
    """
    names: list[bytes] = []
    own_alias = spec.import_aliases.get(statement.type)  # C# ``using A = B;``
    if own_alias and (alias_node := statement.child_by_field_name(own_alias)) is not None:
        return [alias_node.text or b""]
    cursor = statement.walk()
    if not cursor.goto_first_child():
        return names
    while True:
        node = cursor.node
        descend = node.is_named
        if descend:
            kind = node.type
            alias = spec.import_aliases.get(kind)
            if kind in spec.import_wildcards or (
                spec.import_skip and cursor.field_name in spec.import_skip
            ):
                descend = False
            elif alias and (alias_node := node.child_by_field_name(alias)) is not None:
                name = alias_node.text or b""
                if name not in (b"_", b"."):  # Go: blank and dot imports bind no name
                    names.append(name)
                descend = False
            elif kind in spec.import_paths:
                following = node.next_named_sibling if spec.import_wildcards else None
                if following is None or following.type not in spec.import_wildcards:
                    names.append(_segment(node.text or b"", spec.import_paths[kind]))
                descend = False
        if descend and cursor.goto_first_child():
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():  # at the statement again: done
                return names


def _segment(path: bytes, which: str) -> bytes:
    """The ``first`` or ``last`` segment of an import path split at ``.``, ``/``, ``::``
    (quotes stripped); string methods, three times as fast as ``re.split``."""
    parts = path.strip(b"\"'`").replace(b"::", b"/").replace(b".", b"/")
    return parts.split(b"/", 1)[0] if which == "first" else parts.rsplit(b"/", 1)[-1]


def _declarators(declaration: tree_sitter.Node) -> list[tree_sitter.Node]:
    return [child for child in declaration.named_children if child.type == "variable_declarator"]


def _imported_locals(statement: tree_sitter.Node) -> list[tree_sitter.Node]:
    """The identifiers an ``import`` statement binds: default, ``* as ns``, ``{a, b as c}``."""
    locals_: list[tree_sitter.Node] = []
    for clause in statement.named_children:
        if clause.type != "import_clause":
            continue
        for part in clause.named_children:
            if part.type == "identifier":
                locals_.append(part)
            elif part.type == "namespace_import" and part.named_children:
                locals_.append(part.named_children[-1])
            elif part.type == "named_imports":
                for specifier in part.named_children:
                    if specifier.type == "import_specifier":
                        alias = specifier.child_by_field_name("alias")
                        locals_.append(alias or specifier.child_by_field_name("name"))
    return locals_
