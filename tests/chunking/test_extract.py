"""Extraction of function-like units: one row per shape of definition."""

from __future__ import annotations

from pathlib import Path

import pytest

from nexus.chunking.extract import extract_units, unit_at
from nexus.chunking.languages import language_for_path
from nexus.chunking.pipeline import chunk_analysis
from nexus.chunking.regex_baseline import regex_functions
from nexus.config import ChunkConfig
from tests.helpers import analyze_text

SAMPLE_REPOS = Path(__file__).resolve().parents[2] / "sample_repos"

CASES = [
    # (language, source, expected (qualname, kind, start_line, end_line, exported))
    ("javascript", "function send(a) {\n  return a;\n}\n", ("send", "function", 1, 3, False)),
    ("javascript", "async function load() {}\n", ("load", "function", 1, 1, False)),
    ("javascript", "function* gen() { yield 1; }\n", ("gen", "function", 1, 1, False)),
    ("javascript", "export function f() {}\n", ("f", "function", 1, 1, True)),
    ("javascript", "export default function main() {}\n", ("main", "function", 1, 1, True)),
    ("javascript", "const add = (a, b) => a + b;\n", ("add", "arrow", 1, 1, False)),
    ("javascript", "let g = function () {};\n", ("g", "function_expression", 1, 1, False)),
    (
        "javascript",
        "res.send = function send(body) {\n  return body;\n};\n",
        ("res.send", "function_expression", 1, 3, False),
    ),
    (
        "javascript",
        "module.exports.x = async (a) => a;\n",
        ("module.exports.x", "arrow", 1, 1, True),
    ),
    (
        "javascript",
        "exports.y = function () {};\n",
        ("exports.y", "function_expression", 1, 1, True),
    ),
    (
        "javascript",
        "A.prototype.b = function () {};\n",
        ("A.prototype.b", "function_expression", 1, 1, False),
    ),
    (
        "javascript",
        "const o = {\n  k: function () {},\n};\n",
        ("o.k", "function_expression", 2, 2, False),
    ),
    ("javascript", "const o = {\n  m() {},\n};\n", ("o.m", "method", 2, 2, False)),
    ("javascript", "var f = memoize(function f(a) {});\n", ("f", "wrapped_function", 1, 1, False)),
    ("javascript", "class A {\n  m() {}\n}\n", ("A.m", "method", 2, 2, False)),
    ("javascript", "class A {\n  get v() { return 1; }\n}\n", ("A.v", "getter", 2, 2, False)),
    ("javascript", "class A {\n  set v(x) {}\n}\n", ("A.v", "setter", 2, 2, False)),
    (
        "javascript",
        "class A {\n  constructor() {}\n}\n",
        ("A.constructor", "constructor", 2, 2, False),
    ),
    ("javascript", "class A {\n  h = () => 1;\n}\n", ("A.h", "arrow", 2, 2, False)),
    ("typescript", "export interface I {\n  a: string;\n}\n", ("I", "interface", 1, 3, True)),
    ("typescript", "type T<X> = X[];\n", ("T", "type", 1, 1, False)),
    ("typescript", "enum Color { Red }\n", ("Color", "enum", 1, 1, False)),
    (
        "typescript",
        "abstract class Base<T> {\n  abstract find(): T;\n  all() {}\n}\n",
        ("Base.all", "method", 3, 3, False),
    ),
    (
        "typescript",
        "@Injectable()\nexport class S {\n  @Retry(3)\n  async pay(): Promise<void> {}\n}\n",
        ("S.pay", "method", 4, 4, False),
    ),
    ("tsx", "export const Button = () => <button />;\n", ("Button", "arrow", 1, 1, True)),
]


@pytest.mark.parametrize(("language", "source", "expected"), CASES)
def test_each_shape_of_definition_is_a_unit(language, source, expected):
    path = {"javascript": "a.js", "typescript": "a.ts", "tsx": "a.tsx"}[language]
    units = analyze_text(source, path, language).units
    found = {(u.qualname, u.kind, u.start_line, u.end_line, u.exported) for u in units}
    assert expected in found, sorted(found)


def test_nested_function_belongs_to_its_enclosing_unit():
    units = analyze_text(
        "function outer() {\n  function inner() {}\n}\n", "a.js", "javascript"
    ).units
    inner = next(u for u in units if u.name == "inner")
    assert inner.parent == "outer"
    assert inner.qualname == "outer.inner"


def test_class_with_decorator_spans_from_decorator_and_export():
    text = "@Injectable()\nexport class S {\n  run() {}\n}\n"
    cls = next(u for u in analyze_text(text).units if u.kind == "class")
    assert (cls.start_line, cls.end_line, cls.exported) == (1, 4, True)


def test_imports_from_import_and_require():
    text = (
        'import Stripe from "stripe";\n'
        'import { Repo as R, X } from "./repo";\n'
        'import * as fs from "fs";\n'
        'const path = require("path");\n'
        'const { a, b: c } = require("./lib");\n'
    )
    names = analyze_text(text).imported_names
    assert names == (b"Stripe", b"R", b"X", b"fs", b"path", b"a", b"c")


def test_regex_baseline_sees_declarations_only():
    text = (
        "export async function a(x) {\n  if (x) { return 1; }\n}\n"
        "const b = () => 2;\n"
        "class C { m() {} }\n"
    )
    matches = regex_functions(text, "javascript")
    assert [(m.name, m.start_line, m.end_line) for m in matches] == [("a", 1, 3)]
    units = analyze_text(text, "a.js", "javascript").units
    assert {u.qualname for u in units} == {"a", "b", "C", "C.m"}


def _all_nodes(tree):
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(node.children)


def _sample_sources():
    for path in sorted(SAMPLE_REPOS.rglob("*")):
        language = language_for_path(str(path))
        if language and path.is_file():
            yield path, language
    for language, source, _ in CASES:
        yield source, language


@pytest.mark.parametrize(("source", "language"), list(_sample_sources()), ids=str)
def test_unit_at_agrees_with_extract_units_on_every_node(source, language):
    """The chunker's top-down ``unit_at`` and the full bottom-up extraction are two
    readings of one rule: on every node they must find the same units."""
    text = source.read_text(encoding="utf-8") if isinstance(source, Path) else source
    analysis = analyze_text(text, "src/x." + {"tsx": "tsx"}.get(language, "ts"), language)
    units = extract_units(analysis.tree, language)
    by_span = {(u.start_byte, u.end_byte): u for u in units}
    by_qualname = {u.qualname: u for u in units}
    found = set()
    for node in _all_nodes(analysis.tree):
        expected = by_span.get((node.start_byte, node.end_byte))
        enclosing = by_qualname.get(expected.parent) if expected and expected.parent else None
        unit = unit_at(node, language, enclosing, analysis.declared)
        if unit is None:
            continue
        assert unit == expected, node
        found.add((unit.start_byte, unit.end_byte))
    assert found == set(by_span)


@pytest.mark.parametrize(
    ("language", "source", "expected"),
    [
        ("tsx", "export const A = () => <div>x</div>;\n", True),
        ("tsx", "export const A = () => <Icon />;\n", True),
        ("tsx", "export const A = () => <>x</>;\n", True),
        ("javascript", "const A = () => <div />;\n", True),
        ("tsx", 'const html = "</div>"; // a/>b\nconst r = /<\\/p>/;\n', False),
        ("typescript", "const xs: Array<Map<string, number>> = [];\n", False),
    ],
)
def test_jsx_is_found_by_its_tags_not_by_text_that_looks_like_them(language, source, expected):
    assert analyze_text(source, "src/x.tsx", language).has_jsx is expected


def test_syntax_errors_are_found_without_walking_clean_subtrees():
    analysis = analyze_text("function ok() { return 1; }\nfunction bad( {\n", "a.js", "javascript")
    assert analysis.error_ranges
    assert all(start >= len("function ok() { return 1; }\n") for start, _ in analysis.error_ranges)
    assert analyze_text("function ok() {}\n", "a.js", "javascript").error_ranges == []


def test_commonjs_exports_after_the_definition_mark_the_unit_exported():
    text = (
        "function a() {}\nconst b = () => 1;\nfunction c() {}\nfunction d() {}\n"
        "function e() {\n  function a() {}\n}\nfunction f() {}\n"
        "module.exports.a = a;\nexports.bee = b;\nmodule.exports = { c, dd: d };\n"
    )
    units = analyze_text(text, "a.js", "javascript").units
    exported = {u.qualname: u.exported for u in units}
    assert exported == {
        "a": True, "b": True, "c": True, "d": True, "e": False, "e.a": False, "f": False
    }  # fmt: skip


def test_a_chunk_of_a_commonjs_exported_function_is_exported():
    text = "function moveObject() {\n  return 1;\n}\nmodule.exports.moveObject = moveObject;\n"
    analysis = analyze_text(text, "a.js", "javascript")
    chunks = chunk_analysis(analysis, ChunkConfig(max_tokens=16, min_tokens=0), repo="t")
    assert next(c for c in chunks if c.symbol == "moveObject").exported
