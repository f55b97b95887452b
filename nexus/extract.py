"""Find every function-like and type-like unit of a file, and its imports.

Units are what users ask for ("the function that moves an S3 object"), so the
chunker uses them for boundaries and metadata, the fragmentation analysis checks
them for being intact, and ``nexus functions`` lists them. A regex extractor is
kept beside it as the baseline that shows what line-pattern tools miss.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache

import tree_sitter

from nexus.languages import LANGUAGES, TYPE_UNIT_KINDS, LanguageSpec, unit_nodes
from nexus.types import Unit

ANONYMOUS = "<anonymous>"

# Nodes that wrap a unit's definition and belong to its span (``export``, ``const x =``,
# ``a.b = ...;``): climbed from the function value up to the statement.
_BINDING_WRAPPERS = {
    "variable_declarator",
    "lexical_declaration",
    "variable_declaration",
    "assignment_expression",
    "expression_statement",
    "export_statement",
}


def span_kinds(spec: LanguageSpec) -> frozenset[str]:
    """Node kinds a unit's span can have: its definition or a wrapper around it."""
    return spec.unit_kinds | spec.field_kinds | _BINDING_WRAPPERS | {"pair"}


def _text(node: tree_sitter.Node | None) -> str:
    if node is None or node.text is None:
        return ""
    return node.text.decode("utf-8", errors="replace")


def _statement_span(node: tree_sitter.Node) -> tree_sitter.Node:
    """Climb from a definition to the statement that holds it (keeping ``export``)."""
    current, parent = node, node.parent  # .parent walks down from the root: ask once
    while parent is not None and parent.type in _BINDING_WRAPPERS:
        # A declaration with several declarators is not one unit's span.
        declares = parent.type in ("lexical_declaration", "variable_declaration")
        if declares and len(_declarators(parent)) > 1:
            break
        current, parent = parent, parent.parent
    return current


def _declarators(declaration: tree_sitter.Node) -> list[tree_sitter.Node]:
    return [child for child in declaration.named_children if child.type == "variable_declarator"]


def _method_kind(name_node: tree_sitter.Node | None, name: str) -> str:
    """``get`` and ``set`` come right before a method's name."""
    if name == "constructor":
        return "constructor"
    keyword = name_node.prev_sibling if name_node is not None else None
    if keyword is not None and keyword.type in ("get", "set"):
        return "getter" if keyword.type == "get" else "setter"
    return "method"


def _function_value_name(node: tree_sitter.Node) -> tuple[str, str, tree_sitter.Node] | None:
    """(name, kind, span node) for a function value bound to a name, else None."""
    kind = "arrow" if node.type == "arrow_function" else "function_expression"
    parent = node.parent
    if parent is None:
        return None
    if parent.type == "variable_declarator" and parent.child_by_field_name("value") == node:
        return _text(parent.child_by_field_name("name")), kind, _statement_span(parent)
    if parent.type == "assignment_expression" and parent.child_by_field_name("right") == node:
        return _text(parent.child_by_field_name("left")), kind, _statement_span(parent)
    if parent.type == "pair" and parent.child_by_field_name("value") == node:
        return _text(parent.child_by_field_name("key")), kind, parent
    if parent.type in ("field_definition", "public_field_definition"):
        name_node = parent.child_by_field_name("name") or parent.child_by_field_name("property")
        return _text(name_node), kind, parent
    if parent.type == "arguments" and parent.parent is not None:
        call = parent.parent
        holder = call.parent
        if (
            call.type == "call_expression"
            and holder is not None
            and holder.type == "variable_declarator"
            and holder.child_by_field_name("value") == call
        ):
            name = _text(holder.child_by_field_name("name"))
            return name, "wrapped_function", _statement_span(holder)
    if parent.type == "export_statement":  # export default function () {}
        own = node.child_by_field_name("name")
        return (_text(own) or "default"), kind, parent
    return None


def _is_exported(span: tree_sitter.Node, name: str, top_level: bool) -> bool:
    """``export ...``, a definition assigned to ``module.exports``/``exports.x``, or a
    top-level name the file exports later (``module.exports.x = x``, ``exports.x = x``,
    ``module.exports = { x }``)."""
    if span.type == "export_statement":
        return True
    if name.startswith(("module.exports", "exports.")):
        return True
    return top_level and name in _commonjs_exports(_root(span))


def _root(node: tree_sitter.Node) -> tree_sitter.Node:
    while node.parent is not None:
        node = node.parent
    return node


@lru_cache(maxsize=8)
def _commonjs_exports(root: tree_sitter.Node) -> frozenset[str]:
    """Names a file exports by CommonJS assignment at its top level (read once per tree)."""
    names: set[str] = set()
    for statement in root.children:
        assignment = statement.named_child(0) if statement.type == "expression_statement" else None
        if assignment is None or assignment.type != "assignment_expression":
            continue
        target = _text(assignment.child_by_field_name("left"))
        value = assignment.child_by_field_name("right")
        if value is None or not (
            target.startswith("exports.") or target.startswith("module.exports")
        ):
            continue
        if value.type == "identifier":
            names.add(_text(value))
        elif value.type == "object" and target == "module.exports":
            for prop in value.named_children:
                if prop.type == "shorthand_property_identifier":
                    names.add(_text(prop))
                elif prop.type == "pair":
                    inner = prop.child_by_field_name("value")
                    if inner is not None and inner.type == "identifier":
                        names.add(_text(inner))
    return frozenset(names)


def _object_owner(node: tree_sitter.Node) -> str | None:
    """Name an object literal is bound to (``const api = { ... }`` -> ``api``)."""
    parent = node.parent
    if parent is not None and parent.type == "variable_declarator":
        return _text(parent.child_by_field_name("name")) or None
    if parent is not None and parent.type == "assignment_expression":
        return _text(parent.child_by_field_name("left")) or None
    return None


def _classify(
    node: tree_sitter.Node, spec: LanguageSpec
) -> tuple[str, str, tree_sitter.Node] | None:
    """(name, kind, span node) when ``node`` defines a unit."""
    kind_of = node.type
    if kind_of in spec.function_kinds:
        return _text(node.child_by_field_name("name")), "function", _statement_span(node)
    if kind_of in spec.class_kinds:
        name = _text(node.child_by_field_name("name"))
        if kind_of == "class" and not name:
            bound = _function_value_name(node)
            if bound is None:
                return None
            name = bound[0]
            return name, "class", bound[2]
        return name, "class", _statement_span(node)
    if kind_of in spec.type_kinds:
        return (
            _text(node.child_by_field_name("name")),
            TYPE_UNIT_KINDS[kind_of],
            _statement_span(node),
        )
    if kind_of in spec.method_kinds:
        name_node = node.child_by_field_name("name")
        name = _text(name_node)
        return name, _method_kind(name_node, name), node
    if kind_of in spec.function_value_kinds:
        return _function_value_name(node)
    return None


def definition_below(node: tree_sitter.Node, spec: LanguageSpec) -> tree_sitter.Node | None:
    """The function, class or type node that a statement defines, looking down through
    the wrappers ``_statement_span`` climbs (``export``, ``const x =``, ``a.b =``)."""
    current: tree_sitter.Node | None = node
    while current is not None:
        kind = current.type
        if kind in spec.unit_kinds:
            return current
        if kind == "export_statement":
            current = current.child_by_field_name("declaration") or current.child_by_field_name(
                "value"
            )
        elif kind in ("lexical_declaration", "variable_declaration"):
            declarators = _declarators(current)
            current = declarators[0] if len(declarators) == 1 else None
        elif kind == "variable_declarator":
            current = current.child_by_field_name("value")
            if current is not None and current.type == "call_expression":  # memo(() => ...)
                arguments = current.child_by_field_name("arguments")
                values = [] if arguments is None else arguments.named_children
                current = next((v for v in values if v.type in spec.function_value_kinds), None)
        elif kind == "assignment_expression":
            current = current.child_by_field_name("right")
        elif kind == "expression_statement":
            current = current.named_child(0) if current.named_child_count else None
        elif kind == "pair" or kind in spec.field_kinds:
            current = current.child_by_field_name("value")
        else:
            return None
    return None


def unit_at(node: tree_sitter.Node, language: str, enclosing: Unit | None) -> Unit | None:
    """The unit whose span is ``node`` (``enclosing`` is the unit around it), or None.

    The chunker asks this of the few nodes it visits, top-down, instead of
    extracting every unit of the file: the same answer as ``extract_units`` for
    these nodes (a test checks every node of the sample repos).
    """
    spec = LANGUAGES[language]
    definition = definition_below(node, spec)
    if definition is None:
        return None
    classified = _classify(definition, spec)
    if classified is None:
        return None
    name, kind, span = classified
    if span.start_byte != node.start_byte or span.end_byte != node.end_byte:
        return None
    return _unit(definition, name or ANONYMOUS, kind, span, enclosing, spec)


def _unit(
    node: tree_sitter.Node,
    name: str,
    kind: str,
    span: tree_sitter.Node,
    enclosing: Unit | None,
    spec: LanguageSpec,
) -> Unit:
    """A ``Unit`` record for a classified definition inside ``enclosing``."""
    owner = _member_owner(node, spec) or (enclosing.qualname if enclosing else None)
    qualname = f"{owner}.{name}" if owner and "." not in name else name
    return Unit(
        name=name.rsplit(".", 1)[-1],
        qualname=qualname,
        kind=kind,
        start_line=span.start_point.row + 1,
        end_line=span.end_point.row + 1,
        start_byte=span.start_byte,
        end_byte=span.end_byte,
        parent=enclosing.qualname if enclosing else None,
        exported=_is_exported(span, name, enclosing is None),
    )


def extract_units(
    tree: tree_sitter.Tree,
    language: str,
) -> list[Unit]:
    """Every unit of a parsed file, in source order, nested ones with their parent.

    Candidates come from one tree-sitter query (the walk runs in C, so deep
    nesting costs no Python recursion); the enclosing unit is the nearest earlier
    unit whose span contains this one. A unit's span is the whole definition
    statement (``export``, ``const x =`` included), never its doc comment.
    """
    spec = LANGUAGES[language]
    found: list[tuple[tree_sitter.Node, str, str, tree_sitter.Node]] = []
    seen_spans: set[tuple[int, int]] = set()
    for node in unit_nodes(tree, language):
        classified = _classify(node, spec)
        if classified is None:
            continue
        name, kind, span = classified
        key = (span.start_byte, span.end_byte)
        if key in seen_spans:
            continue
        seen_spans.add(key)
        found.append((node, name or ANONYMOUS, kind, span))
    found.sort(key=lambda item: (item[3].start_byte, -item[3].end_byte))

    units: list[Unit] = []
    open_units: list[Unit] = []  # enclosing chain of the current position
    for node, name, kind, span in found:
        while open_units and open_units[-1].end_byte < span.end_byte:
            open_units.pop()
        unit = _unit(node, name, kind, span, open_units[-1] if open_units else None, spec)
        units.append(unit)
        open_units.append(unit)
    return units


def _member_owner(node: tree_sitter.Node, spec: LanguageSpec) -> str | None:
    """The object a literal's method or ``key: function`` belongs to, if bound to a name."""
    kind = node.type
    if kind in spec.method_kinds:
        container = node.parent
    elif kind in spec.function_value_kinds or kind in spec.class_kinds:  # `key: ...`
        parent = node.parent
        container = parent.parent if parent is not None and parent.type == "pair" else None
    else:
        return None
    if container is not None and container.type == "object":
        return _object_owner(container)
    return None


def imported_identifiers(tree: tree_sitter.Tree) -> Iterator[tree_sitter.Node]:
    """The identifiers bound by top-level ``import`` statements and ``require()``
    declarations (``import {a as b}``: ``b``; ``const {x} = require(...)``: ``x``)."""
    for statement in tree.root_node.named_children:
        kind = statement.type
        if kind == "import_statement":
            yield from _imported_locals(statement)
        elif kind in ("lexical_declaration", "variable_declaration"):
            for declarator in _declarators(statement):
                value = declarator.child_by_field_name("value")
                if value is None or value.type != "call_expression":
                    continue
                if _text(value.child_by_field_name("function")) != "require":
                    continue
                for node in _walk(declarator.child_by_field_name("name")):
                    if node.type in ("identifier", "shorthand_property_identifier_pattern"):
                        yield node


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


def _walk(node: tree_sitter.Node | None):
    """All descendants of ``node`` (pre-order), iteratively."""
    if node is None:
        return
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(current.children))


_REGEX_FUNCTION = re.compile(r"^(?:export\s+)?(?:async\s+)?function\s+(\w+)\s*\(", re.MULTILINE)


@dataclass(frozen=True)
class RegexMatch:
    """A function the regex baseline found: name and 1-based line range."""

    name: str
    start_line: int
    end_line: int


def regex_functions(text: str) -> list[RegexMatch]:
    """The regex baseline: top-of-line ``function`` declarations, closed by brace counting.

    It sees no arrows, methods or assignments, and brace counting is fooled by
    braces in strings, which is the point of showing it.
    """
    matches = []
    for match in _REGEX_FUNCTION.finditer(text):
        depth = 0
        opened = False
        end = len(text)
        for index in range(match.end(), len(text)):
            char = text[index]
            if char == "{":
                depth += 1
                opened = True
            elif char == "}":
                depth -= 1
                if opened and depth == 0:
                    end = index
                    break
        start_line = text.count("\n", 0, match.start()) + 1
        matches.append(RegexMatch(match.group(1), start_line, text.count("\n", 0, end) + 1))
    return matches
