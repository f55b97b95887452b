"""Find every function-like and type-like unit of a file.

Units are what users ask for ("the function that moves an S3 object"), so the
chunker uses them for boundaries and metadata, the fragmentation analysis checks
them for being intact, and ``nexus functions`` lists them. A file's imports and
exports are read in ``imports``; the regex baseline that shows what line-pattern
tools miss is ``regex_baseline``.
"""

from __future__ import annotations

import re
from functools import lru_cache

import tree_sitter

from nexus.chunking.grammar import unit_nodes
from nexus.chunking.imports import declared_exports
from nexus.chunking.languages import LANGUAGES, LanguageSpec
from nexus.chunking.nodes import first_of_type, node_text
from nexus.types import Unit

ANONYMOUS = "<anonymous>"


def span_kinds(spec: LanguageSpec) -> frozenset[str]:
    """Node kinds a unit's span can have: its definition or a wrapper around it."""
    return spec.unit_kinds | frozenset(spec.wrappers) | frozenset(spec.bindings)


def _name(node: tree_sitter.Node, kind: str, spec: LanguageSpec) -> str:
    """A definition's name (``impl<T> Wrapper<T>``: ``Wrapper``); ``kind``: its node kind."""
    text = node_text(node.child_by_field_name(spec.name_fields.get(kind, "name")))
    return text.split("<", 1)[0].strip()


def _statement_span(node: tree_sitter.Node, spec: LanguageSpec) -> tree_sitter.Node:
    """Climb from a definition to the statement that holds it (keeping ``export`` and
    decorators)."""
    current, parent = node, node.parent  # .parent walks down from the root: ask once
    while parent is not None and parent.type in spec.wrappers:
        # A declaration of several names (``const a = 1, b = () => 2``) is not one
        # unit's span.
        kind = current.type
        if sum(child.type == kind for child in parent.named_children) > 1:
            break
        current, parent = parent, parent.parent
    return current


#: Keywords that make a method an accessor (JS/TS); grammars without them skip the test.
ACCESSOR_KEYWORDS = frozenset({"get", "set"})


def _method_kind(name_node: tree_sitter.Node | None, name: str, spec: LanguageSpec) -> str:
    """``get`` and ``set`` come right before a method's name."""
    if name in spec.constructor_names:
        return "constructor"
    if name_node is None or spec.node_kinds.isdisjoint(ACCESSOR_KEYWORDS):
        return "method"
    keyword = name_node.prev_sibling
    if keyword is not None and keyword.type in ACCESSOR_KEYWORDS:
        return "getter" if keyword.type == "get" else "setter"
    return "method"


def _function_value_name(
    node: tree_sitter.Node, spec: LanguageSpec
) -> tuple[str, str, tree_sitter.Node] | None:
    """(name, kind, span node) for a function value bound to a name, else None."""
    kind = spec.value_kinds.get(node.type, "function_expression")
    parent = node.parent
    if parent is None:
        return None
    binding = spec.bindings.get(parent.type)
    if binding is not None:
        name_field, value_field = binding
        if parent.child_by_field_name(value_field) == node:
            return (
                node_text(parent.child_by_field_name(name_field)),
                kind,
                _statement_span(parent, spec),
            )
        return None
    if parent.type == "arguments" and parent.parent is not None:
        call = parent.parent
        holder = call.parent
        if (
            call.type == "call_expression"
            and holder is not None
            and holder.type == "variable_declarator"
            and holder.child_by_field_name("value") == call
        ):
            name = node_text(holder.child_by_field_name("name"))
            return name, "wrapped_function", _statement_span(holder, spec)
    if parent.type == "export_statement":  # export default function () {}
        own = node.child_by_field_name("name")
        return (node_text(own) or "default"), kind, parent
    return None


#: Nodes that hold a declaration's modifiers: Java's list, C#'s one per keyword.
_MODIFIER_HOLDERS = ("modifiers", "modifier")


def _has_marker(node: tree_sitter.Node, markers: frozenset[str]) -> bool:
    """A child of ``node`` (or of its ``modifiers``) is one of ``markers``."""
    for child in node.children:
        kind = child.type
        if kind in markers:
            return True
        if kind in _MODIFIER_HOLDERS:  # a loop: a third faster than any() over a generator
            for modifier in child.children:
                if modifier.type in markers:
                    return True
    return False


def _is_exported(
    definition: tree_sitter.Node,
    span: tree_sitter.Node,
    name: str,
    enclosing: Unit | None,
    spec: LanguageSpec,
    declared: frozenset[str] | None,
) -> bool:
    """Whether the unit is part of its module's interface, by the language's rule.

    Python: module-level, public, and in ``__all__`` when the module has one. JS/TS:
    ``export ...``, a definition assigned to ``module.exports``/``exports.x``, or a
    top-level name the file exports later (``module.exports.x = x``, ``exports.x = x``,
    ``module.exports = { x }``). Go: a capitalised name. Java, Rust: ``public``, ``pub``."""
    rule = spec.export_rule
    if rule == "public_name":
        if enclosing is not None or name.startswith("_"):
            return False
        return declared is None or name in declared
    if rule == "capitalized":
        return name[:1].isupper()
    if rule == "modifier":
        return _has_marker(definition, spec.public_markers)
    if span.type == "export_statement":
        return True
    if name.startswith(("module.exports", "exports.")):
        return True
    return enclosing is None and name in _commonjs_exports(_root(span))


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
        target = node_text(assignment.child_by_field_name("left"))
        value = assignment.child_by_field_name("right")
        if value is None or not (
            target.startswith("exports.") or target.startswith("module.exports")
        ):
            continue
        if value.type == "identifier":
            names.add(node_text(value))
        elif value.type == "object" and target == "module.exports":
            for prop in value.named_children:
                if prop.type == "shorthand_property_identifier":
                    names.add(node_text(prop))
                elif prop.type == "pair":
                    inner = prop.child_by_field_name("value")
                    if inner is not None and inner.type == "identifier":
                        names.add(node_text(inner))
    return frozenset(names)


def _object_owner(node: tree_sitter.Node) -> str | None:
    """Name an object literal is bound to (``const api = { ... }`` -> ``api``)."""
    parent = node.parent
    if parent is not None and parent.type == "variable_declarator":
        return node_text(parent.child_by_field_name("name")) or None
    if parent is not None and parent.type == "assignment_expression":
        return node_text(parent.child_by_field_name("left")) or None
    return None


def _classify(
    node: tree_sitter.Node, spec: LanguageSpec
) -> tuple[str, str, tree_sitter.Node] | None:
    """(name, kind, span node) when ``node`` defines a unit."""
    kind_of = node.type
    if kind_of in spec.function_kinds:
        return _name(node, kind_of, spec), "function", _statement_span(node, spec)
    if kind_of in spec.class_kinds:
        name = _name(node, kind_of, spec)
        if kind_of == "class" and not name:
            bound = _function_value_name(node, spec)
            if bound is None:
                return None
            name = bound[0]
            return name, "class", bound[2]
        return name, "class", _statement_span(node, spec)
    if kind_of in spec.type_kinds:
        unit_kind = spec.type_kinds[kind_of]
        if spec.type_shapes:
            shape = node.child_by_field_name("type")
            unit_kind = spec.type_shapes.get(shape.type, unit_kind) if shape else unit_kind
        return _name(node, kind_of, spec), unit_kind, _statement_span(node, spec)
    if kind_of in spec.method_kinds:
        name_node = node.child_by_field_name("name")
        name = node_text(name_node)
        if kind_of in spec.constructor_kinds:
            return name, "constructor", node
        if kind_of in spec.member_kinds:
            return name, spec.member_kinds[kind_of], node
        return name, _method_kind(name_node, name, spec), node
    if kind_of in spec.function_value_kinds:
        return _function_value_name(node, spec)
    return None


def definition_below(node: tree_sitter.Node, spec: LanguageSpec) -> tree_sitter.Node | None:
    """The function, class or type node that a statement defines, looking down through
    the wrappers ``_statement_span`` climbs (``export``, ``const x =``, decorators)."""
    current: tree_sitter.Node | None = node
    while current is not None:
        kind = current.type
        if kind in spec.unit_kinds:
            return current
        fields = spec.wrappers.get(kind)
        if fields is None:
            return None
        if fields:
            below = None
            for name in fields:
                below = current.child_by_field_name(name)
                if below is not None:
                    break
        else:
            below = _only_child(current, spec.comment_kinds)
        if kind == "variable_declarator" and below is not None and below.type == "call_expression":
            # memo(() => ...): the function value passed to the call
            arguments = below.child_by_field_name("arguments")
            values = [] if arguments is None else arguments.named_children
            below = next((v for v in values if v.type in spec.function_value_kinds), None)
        current = below
    return None


def _only_child(node: tree_sitter.Node, skip: frozenset[str]) -> tree_sitter.Node | None:
    """The one named child of ``node`` whose kind is not in ``skip``, else None."""
    if node.named_child_count == 1:  # most wrappers: no list of children to build
        only = node.named_child(0)
        return None if only is None or only.type in skip else only
    named = [child for child in node.named_children if child.type not in skip]
    return named[0] if len(named) == 1 else None


def unit_at(
    node: tree_sitter.Node,
    language: str,
    enclosing: Unit | None,
    declared: frozenset[str] | None = None,
) -> Unit | None:
    """The unit whose span is ``node`` (``enclosing`` is the unit around it), or None.

    The chunker asks this of the few nodes it visits, top-down, instead of
    extracting every unit of the file: the same answer as ``extract_units`` for
    these nodes (a test checks every node of the sample repos). ``declared``: the
    module's declared exports (Python ``__all__``), see ``declared_exports``.
    """
    spec = LANGUAGES[language]
    definition = definition_below(node, spec)
    if definition is None:
        return None
    classified = _classify(definition, spec)
    if classified is None:
        return None
    name, kind, span = classified
    # Mostly the span is ``node`` itself, the same object: no bytes to compare.
    if span is not node and (span.start_byte, span.end_byte) != (node.start_byte, node.end_byte):
        return None
    return _unit(definition, name or ANONYMOUS, kind, span, enclosing, spec, declared)


#: Unit kinds whose direct functions are methods, where the grammar does not say.
METHOD_OWNERS = frozenset({"class", "impl", "trait"})


def _unit(
    node: tree_sitter.Node,
    name: str,
    kind: str,
    span: tree_sitter.Node,
    enclosing: Unit | None,
    spec: LanguageSpec,
    declared: frozenset[str] | None,
) -> Unit:
    """A ``Unit`` record for a classified definition inside ``enclosing``."""
    owner = _member_owner(node, spec) or (enclosing.qualname if enclosing else None)
    qualname = f"{owner}.{name}" if owner and "." not in name else name
    if (
        kind == "function"
        and spec.methods_in_classes
        and enclosing is not None
        and enclosing.kind in METHOD_OWNERS
    ):
        kind = _method_kind(None, name, spec)
    return Unit(
        name=name.rsplit(".", 1)[-1],
        qualname=qualname,
        kind=kind,
        start_line=span.start_point.row + 1,
        end_line=span.end_point.row + 1,
        start_byte=span.start_byte,
        end_byte=span.end_byte,
        parent=enclosing.qualname if enclosing else None,
        exported=_is_exported(node, span, name, enclosing, spec, declared),
    )


def extract_units(
    tree: tree_sitter.Tree,
    language: str,
    roots: list[tree_sitter.Node] | None = None,
) -> list[Unit]:
    """Every unit of a parsed file, in source order, nested ones with their parent.

    Candidates come from one tree-sitter query (the walk runs in C, so deep
    nesting costs no Python recursion); the enclosing unit is the nearest earlier
    unit whose span contains this one. A unit's span is the whole definition
    statement (``export``, ``const x =`` included), never its doc comment. ``roots``:
    where to look instead of the tree's root (a recovered file's blocks).
    """
    spec = LANGUAGES[language]
    declared = declared_exports(tree, language)
    found: list[tuple[tree_sitter.Node, str, str, tree_sitter.Node]] = []
    seen_spans: set[tuple[int, int]] = set()
    candidates = [node for root in roots or [tree.root_node] for node in unit_nodes(root, language)]
    for node in candidates:
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
        enclosing = open_units[-1] if open_units else None
        unit = _unit(node, name, kind, span, enclosing, spec, declared)
        units.append(unit)
        if kind not in spec.transparent_kinds:  # what a namespace holds is not inside it
            open_units.append(unit)
    return units


def _member_owner(node: tree_sitter.Node, spec: LanguageSpec) -> str | None:
    """The object a literal's method or ``key: function`` belongs to, if bound to a name."""
    if spec.receiver_field and node.type in spec.method_kinds:  # Go: func (s *Server) Start()
        return _receiver_type(node.child_by_field_name(spec.receiver_field))
    if "object" not in spec.node_kinds:  # no object literals (Go, Java, Python, Rust)
        return None
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


#: A Go receiver of one name and one plain type: ``(s *Server)``, ``(s Server)``, ``(Server)``.
_PLAIN_RECEIVER = re.compile(rb"\((?:[A-Za-z_]\w* +)?\*?([A-Za-z_]\w*)\)")


def _receiver_type(receiver: tree_sitter.Node | None) -> str | None:
    """The type a Go method belongs to: the first type name in its receiver.

    A plain receiver that parsed without error is read from its text: its last word
    is its only type name, the first its own name (walking its nodes was the largest
    cost of classifying a method). Others (generics, comments) are walked.
    """
    if receiver is None:
        return None
    plain = None if receiver.has_error else _PLAIN_RECEIVER.fullmatch(receiver.text or b"")
    if plain is not None:
        return plain.group(1).decode()
    return node_text(first_of_type(receiver, "type_identifier")) or None
