"""Languages beyond JS/TS: one table of shapes per language, and the chunker's
invariants on generated and hostile code of each language.

Adding a language is a ``LanguageSpec`` in ``nexus/chunking/languages.py`` plus rows here.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nexus.chunking.extract import unit_at
from nexus.chunking.languages import LANGUAGES
from nexus.chunking.regex_baseline import regex_functions
from nexus.types import CHUNKABLE_LANGUAGES
from tests.chunking.test_chunking_invariants import check_invariants
from tests.helpers import analyze_text

PATHS = {
    "python": "pkg/mod.py",
    "go": "pkg/mod.go",
    "java": "pkg/Mod.java",
    "rust": "src/m.rs",
    "csharp": "src/Shop/Mod.cs",
}


def chunk(text: str, language: str, **settings_):
    from nexus.chunking.pipeline import chunk_analysis
    from nexus.config import ChunkConfig

    analysis = analyze_text(text, PATHS[language], language)
    return analysis, chunk_analysis(analysis, ChunkConfig(**settings_), repo="test")


def units_of(text: str, language: str) -> set[tuple]:
    units = analyze_text(text, PATHS[language], language).units
    return {(u.qualname, u.kind, u.start_line, u.end_line, u.exported) for u in units}


_CS = """using System;

namespace Shop.Orders
{
    /// <summary>Keeps orders.</summary>
    [Serializable]
    public class OrderService
    {
        private readonly int _x;
        public OrderService(int x) { _x = x; }

        /// <summary>
        /// Adds the line to the cart.
        /// </summary>
        public async Task<int> AddLine(Line line) => await Foo(line);

        public int Count { get; set; }

        internal void Merge(OrderService other)
        {
            string Key(Line l) => l.Sku;
            foreach (var line in other.Lines)
            {
                Add(Key(line), line);
            }
        }
    }

    public struct Point { public int X; }
    interface IOrders { int AddLine(Line line); }
    public enum Color { Red, Green }
    public record Money(decimal Amount, string Currency);
    public delegate void Handler(int x);
}
"""

# (language, source, expected (qualname, kind, start_line, end_line, exported))
SHAPES = [
    ("python", "def send(a):\n    return a\n", ("send", "function", 1, 2, True)),
    ("python", "async def load():\n    pass\n", ("load", "function", 1, 2, True)),
    ("python", "def _private():\n    pass\n", ("_private", "function", 1, 2, False)),
    (
        "python",
        'def f():\n    """Doc."""\n    return 1\n',  # the docstring is inside the span
        ("f", "function", 1, 3, True),
    ),
    (
        "python",
        "@app.get('/x')\n@auth\nasync def handler(req):\n    return req\n",
        ("handler", "function", 1, 4, True),  # decorators ride with the definition
    ),
    ("python", "class A(Base):\n    x = 1\n", ("A", "class", 1, 2, True)),
    (
        "python",
        "@dataclass\nclass Point:\n    x: int\n",
        ("Point", "class", 1, 3, True),
    ),
    ("python", "class A:\n    def m(self):\n        pass\n", ("A.m", "method", 2, 3, False)),
    (
        "python",
        "class A:\n    async def m(self):\n        pass\n",
        ("A.m", "method", 2, 3, False),
    ),
    (
        "python",
        "class A:\n    def __init__(self):\n        pass\n",
        ("A.__init__", "constructor", 2, 3, False),
    ),
    (
        "python",
        "class A:\n    @property\n    def v(self):\n        return 1\n",
        ("A.v", "method", 2, 4, False),
    ),
    (
        "python",
        "class A:\n    class B:\n        def m(self):\n            pass\n",
        ("A.B.m", "method", 3, 4, False),
    ),
    (
        "python",
        "def outer():\n    def inner():\n        pass\n    return inner\n",
        ("outer.inner", "function", 2, 3, False),
    ),
    (
        "python",
        "class A:\n    def m(self):\n        def helper():\n            pass\n",
        ("A.m.helper", "function", 3, 4, False),
    ),
    ("python", "square = lambda x: x * x\n", ("square", "lambda", 1, 1, True)),
    ("python", "key: Callable = lambda r: r.id\n", ("key", "lambda", 1, 1, True)),
    (
        "python",
        '__all__ = ["b"]\ndef a():\n    pass\ndef b():\n    pass\n',
        ("a", "function", 2, 3, False),  # not in __all__
    ),
    (
        "python",
        '__all__ = ("b",)\ndef a():\n    pass\ndef b():\n    pass\n',
        ("b", "function", 4, 5, True),
    ),
    # Go
    ("go", "package p\nfunc Send(a int) int {\n\treturn a\n}\n", ("Send", "function", 2, 4, True)),
    ("go", "package p\nfunc send() {}\n", ("send", "function", 2, 2, False)),
    (
        "go",
        "package p\nfunc (s *Server) Start() error {\n\treturn nil\n}\n",
        ("Server.Start", "method", 2, 4, True),  # the receiver names the owner
    ),
    ("go", "package p\nfunc (s Server) stop() {}\n", ("Server.stop", "method", 2, 2, False)),
    ("go", "package p\nfunc (*Server) Stop() {}\n", ("Server.Stop", "method", 2, 2, True)),
    # receivers read from the tree, not the text: generic, with a comment
    ("go", "package p\nfunc (s *Set[T]) Add(v T) {}\n", ("Set.Add", "method", 2, 2, True)),
    ("go", "package p\nfunc (Server /* c */) stop() {}\n", ("Server.stop", "method", 2, 2, False)),
    ("go", "package p\ntype Server struct {\n\taddr string\n}\n", ("Server", "struct", 2, 4, True)),
    (
        "go",
        "package p\ntype Handler interface {\n\tServe() error\n}\n",
        ("Handler", "interface", 2, 4, True),
    ),
    ("go", "package p\ntype ID int\n", ("ID", "type", 2, 2, True)),
    ("go", "package p\ntype Alias = int\n", ("Alias", "type", 2, 2, True)),
    ("go", "package p\ntype (\n\tA int\n\tb string\n)\n", ("b", "type", 4, 4, False)),
    # Java
    (
        "java",
        "public class Orders {\n  void run() {}\n}\n",
        ("Orders", "class", 1, 3, True),
    ),
    (
        "java",
        "class Orders {\n  @Override\n  public int size() { return 0; }\n}\n",
        ("Orders.size", "method", 2, 3, True),  # annotations are part of the method
    ),
    (
        "java",
        "class Orders {\n  Orders(int a) {}\n}\n",
        ("Orders.Orders", "constructor", 2, 2, False),
    ),
    (
        "java",
        "class A {\n  static class B {\n    void m() {}\n  }\n}\n",
        ("A.B.m", "method", 3, 3, False),
    ),
    ("java", "interface Api {\n  void find(int id);\n}\n", ("Api.find", "method", 2, 2, False)),
    ("java", "public interface Api {}\n", ("Api", "interface", 1, 1, True)),
    ("java", "enum Color { RED, GREEN }\n", ("Color", "enum", 1, 1, False)),
    ("java", "record Point(int x, int y) {}\n", ("Point", "class", 1, 1, False)),
    ("java", "@interface Marker {}\n", ("Marker", "interface", 1, 1, False)),
    # Rust
    ("rust", "pub fn send(a: i32) -> i32 {\n    a\n}\n", ("send", "function", 1, 3, True)),
    ("rust", "async fn load() {}\n", ("load", "function", 1, 1, False)),
    ("rust", "pub struct Point {\n    x: i32,\n}\n", ("Point", "struct", 1, 3, True)),
    ("rust", "enum Shape { Circle }\n", ("Shape", "enum", 1, 1, False)),
    ("rust", "pub trait Area {\n    fn area(&self) -> f64;\n}\n", ("Area", "trait", 1, 3, True)),
    (
        "rust",
        "trait Area {\n    fn area(&self) -> f64;\n}\n",
        ("Area.area", "method", 2, 2, False),
    ),
    (
        "rust",
        "impl<T> Wrapper<T> {\n    pub fn new() -> Self {\n        todo!()\n    }\n}\n",
        ("Wrapper.new", "method", 2, 4, True),
    ),
    (
        "rust",
        "impl Area for Point {\n    fn area(&self) -> f64 { 0.0 }\n}\n",
        ("Point", "impl", 1, 3, False),
    ),
    ("rust", "type Map = HashMap<String, i32>;\n", ("Map", "type", 1, 1, False)),
    ("rust", "mod inner {\n    pub fn helper() {}\n}\n", ("inner.helper", "function", 2, 2, True)),
    (
        "rust",
        "fn run() {\n    let double = |x: i32| x * 2;\n}\n",
        ("run.double", "lambda", 2, 2, False),
    ),
    # C#: a namespace is a unit, but neither a level nor a prefix of what it holds.
    ("csharp", _CS, ("Shop.Orders", "namespace", 3, 34, False)),
    ("csharp", _CS, ("OrderService", "class", 6, 27, True)),  # the [attribute] is inside
    ("csharp", _CS, ("OrderService.OrderService", "constructor", 10, 10, True)),
    ("csharp", _CS, ("OrderService.AddLine", "method", 15, 15, True)),
    ("csharp", _CS, ("OrderService.Count", "property", 17, 17, True)),
    ("csharp", _CS, ("OrderService.Merge", "method", 19, 26, False)),
    ("csharp", _CS, ("OrderService.Merge.Key", "function", 21, 21, False)),
    ("csharp", _CS, ("Point", "struct", 29, 29, True)),
    ("csharp", _CS, ("IOrders", "interface", 30, 30, False)),
    ("csharp", _CS, ("IOrders.AddLine", "method", 30, 30, False)),
    ("csharp", _CS, ("Color", "enum", 31, 31, True)),
    ("csharp", _CS, ("Money", "class", 32, 32, True)),  # a record, like Java's
    ("csharp", _CS, ("Handler", "type", 33, 33, True)),  # a delegate
    ("csharp", "namespace Shop;\nclass A { void M() {} }\n", ("A.M", "method", 2, 2, False)),
]


def test_every_grammar_with_a_spec_is_chunkable_and_loads():
    assert set(LANGUAGES) == CHUNKABLE_LANGUAGES
    for language in LANGUAGES:
        assert analyze_text("\n", "x", language).tree.root_node is not None


@pytest.mark.parametrize(("language", "source", "expected"), SHAPES)
def test_each_shape_of_definition_is_a_unit(language, source, expected):
    found = units_of(source, language)
    assert expected in found, sorted(found)


def test_python_lambda_not_bound_to_a_name_is_no_unit():
    found = units_of("items.sort(key=lambda r: r.id)\ndef f(a=lambda: 1):\n    pass\n", "python")
    assert {name for name, *_ in found} == {"f"}


def test_python_imports_bind_the_names_the_code_uses():
    text = (
        "import os, a.b as c\nimport x.y.z\n"
        "from m import (p, q as r)\nfrom . import s\nfrom t import *\n"
        "def f():\n    import late\n"
    )
    assert analyze_text(text, "m.py", "python").imported_names == (
        b"os",
        b"c",
        b"x",
        b"p",
        b"r",
        b"s",
    )


@pytest.mark.parametrize(
    ("language", "source", "expected"),
    [
        (
            "go",
            'package p\nimport (\n\t"fmt"\n\tstr "strings"\n\t_ "embed"\n)\nimport "net/http"\n',
            (b"fmt", b"str", b"http"),
        ),
        (
            "java",
            "import java.util.List;\nimport static java.lang.Math.max;\nimport java.io.*;\n",
            (b"List", b"max"),
        ),
        (
            "rust",
            "use std::collections::HashMap;\nuse crate::db::{self, Pool as P, models::*};\n"
            "use serde::{Deserialize, ser::Serialize};\n",
            (b"HashMap", b"P", b"Deserialize", b"Serialize"),
        ),
        (  # a namespace opened binds no name the code spells; an alias does
            "csharp",
            "using System.Linq;\nusing static System.Math;\nusing Json = System.Text.Json;\n"
            "global using Dict = System.Collections.Generic.Dictionary<string, int>;\n",
            (b"Json", b"Dict"),
        ),
    ],
)
def test_imports_bind_the_names_the_code_uses(language, source, expected):
    assert analyze_text(source, PATHS[language], language).imported_names == expected


def test_python_chunks_list_imports_and_keep_docstring_and_decorators():
    body = "\n".join(f"        total += db.fetch({i})" for i in range(10))
    text = (
        "import db\nfrom cache import memo\n\n\n"
        "class Orders:\n"
        '    """Orders of a customer."""\n\n'
        "    @memo\n"
        "    def total(self, customer):\n"
        '        """Sum of the customer\'s orders."""\n'
        f"        total = 0\n{body}\n        return total\n\n"
        "    def first(self):\n        return memo(self.rows[0])\n"
    )
    analysis, chunks = chunk(text, "python", max_tokens=120, min_tokens=0, profile="oop")
    check_invariants(analysis, chunks, 120)
    total = next(c for c in chunks if c.symbol == "Orders.total")
    assert total.text.lstrip().startswith('@memo\n    def total(self, customer):\n        """Sum')
    assert total.imports == ("db", "memo")
    assert total.parent == "Orders"


def test_small_python_defs_stand_alone_where_small_go_funcs_group():
    """Python's spec keeps every def a chunk of its own however small (grouping them
    lost doc MRR@10 and cost lines on the Python tuning set); Go groups them."""
    python = (
        "class Bag:\n"
        "    def discard(self, value):\n"
        "        if value in self._set:\n"
        "            self._set.remove(value)\n\n"
        "    _discard = discard\n\n"
        "    def pop(self, index=-1):\n"
        "        return self._list.pop(index)\n\n"
        "    def update(self, *iterables):\n"
        + "".join(f"        self._set.update(iterables[{i}])\n" for i in range(8))
    )
    # The class is over the budget, so it opens into its methods; discard and pop are
    # under min_tokens and would fit together.
    analysis, chunks = chunk(python, "python", max_tokens=100, min_tokens=64, profile="oop")
    check_invariants(analysis, chunks, 100)
    assert [c.symbol for c in chunks] == ["Bag.discard", "Bag.pop", "Bag.update"]
    assert chunks[0].text.startswith("class Bag:") and "_discard = discard" in chunks[0].text
    go = "func A() int {\n\treturn 1\n}\n\nfunc B() int {\n\treturn 2\n}\n"
    analysis, chunks = chunk(go, "go", max_tokens=100, min_tokens=64)
    check_invariants(analysis, chunks, 100)
    assert len(chunks) == 1


def test_auto_profile_decides_per_python_file():
    from nexus.chunking.pipeline import pick_profile

    classes = "class A:\n    def a(self):\n        pass\n    def b(self):\n        pass\n"
    functions = "def a():\n    pass\ndef b():\n    pass\ndef c():\n    pass\n"
    for text, expected in ((classes, "oop"), (functions, "functional")):
        from nexus.config import ChunkConfig

        analysis = analyze_text(text, "m.py", "python")
        assert pick_profile(analysis, ChunkConfig())[0].name == expected


def test_python_regex_baseline_finds_defs_by_indentation():
    text = (
        "async def a(x):\n    if x:\n        return 1\n\n    return 2\n"
        "b = lambda: 2\n"
        "class C:\n    def m(self):\n        # note\n        pass\n"
    )
    matches = regex_functions(text, "python")
    assert [(m.name, m.start_line, m.end_line) for m in matches] == [("a", 1, 5), ("m", 8, 10)]
    assert {u.qualname for u in analyze_text(text, "m.py", "python").units} == {
        "a",
        "b",
        "C",
        "C.m",
    }


@pytest.mark.parametrize(
    ("language", "source", "expected"),
    [
        (
            "go",
            "package p\nfunc A() {\n\tif x { y() }\n}\nfunc (s *S) B() {}\nvar c = func() {}\n",
            [("A", 2, 4), ("B", 5, 5)],
        ),
        (
            "java",
            "class C {\n  public static int a(int x) {\n    return x;\n  }\n  void b() {}\n}\n",
            [("a", 2, 4)],  # package-private methods have no modifier to match
        ),
        (
            "rust",
            "pub async fn a() {\n    b();\n}\nimpl S {\n    fn c(&self) {}\n}\n",
            [("a", 1, 3), ("c", 5, 5)],
        ),
        (
            "csharp",
            "class C {\n  public async Task<int> A(int x) {\n    return x;\n  }\n"
            "  private static List<T> B<T>() { }\n  void c() {}\n}\n",
            [("A", 2, 4), ("B", 5, 5)],  # no modifier, no match (as in Java)
        ),
    ],
)
def test_regex_baselines_of_brace_languages(language, source, expected):
    matches = regex_functions(source, language)
    assert [(m.name, m.start_line, m.end_line) for m in matches] == expected


@pytest.mark.parametrize(
    ("language", "oop", "functional"),
    [
        (
            "go",
            "package p\nfunc (s *S) A() {}\nfunc (s *S) B() {}\nfunc C() {}\n",
            "package p\nfunc A() {}\nfunc B() {}\nfunc (s *S) C() {}\n",
        ),
        (
            "rust",
            "impl S {\n    fn a(&self) {}\n    fn b(&self) {}\n}\nfn c() {}\n",
            "fn a() {}\nfn b() {}\nimpl S {\n    fn c(&self) {}\n}\n",
        ),
        (  # the members of classes inside a namespace count
            "csharp",
            "namespace N {\n  class S {\n    void A() {}\n    void B() {}\n  }\n}\n",
            "namespace N {\n  enum E { X }\n}\n",
        ),
    ],
)
def test_auto_profile_counts_receivers_and_impls_as_members(language, oop, functional):
    from nexus.chunking.pipeline import pick_profile
    from nexus.config import ChunkConfig

    for text, expected in ((oop, "oop"), (functional, "functional")):
        analysis = analyze_text(text, PATHS[language], language)
        assert pick_profile(analysis, ChunkConfig())[0].name == expected


@pytest.mark.parametrize(("language", "source", "expected"), SHAPES)
def test_unit_at_agrees_with_extract_units_on_every_node(language, source, expected):
    analysis = analyze_text(source, PATHS[language], language)
    units = analysis.units
    by_span = {(u.start_byte, u.end_byte): u for u in units}
    by_qualname = {u.qualname: u for u in units}
    found = set()
    stack = [analysis.tree.root_node]
    while stack:
        node = stack.pop()
        stack.extend(node.children)
        known = by_span.get((node.start_byte, node.end_byte))
        enclosing = by_qualname.get(known.parent) if known and known.parent else None
        unit = unit_at(node, language, enclosing, analysis.declared)
        if unit is not None:
            assert unit == known, node
            found.add((unit.start_byte, unit.end_byte))
    assert found == set(by_span)


# --- generated programs, per language ---------------------------------------------------

identifiers = st.sampled_from(["alpha", "beta_gamma", "δelta", "x", "fetch_user", "café", "run"])
strings = st.text(
    alphabet=st.sampled_from(list("abc XYZ {}():é中文🙂'")), min_size=0, max_size=60
).map(lambda s: '"' + s.replace('"', "") + '"')


@st.composite
def python_block(draw, indent: str = "", depth: int = 0) -> str:
    """Statements at one indentation level (never empty: ``pass`` stands in)."""
    lines = [draw(python_statement(indent, depth)) for _ in range(draw(st.integers(0, 6)))]
    return "\n".join(lines) or f"{indent}pass"


@st.composite
def python_statement(draw, indent: str, depth: int) -> str:
    name = draw(identifiers)
    inner = indent + "    "
    choice = draw(st.integers(0, 8 if depth < 3 else 3))
    if choice == 0:
        return f"{indent}{name} = {draw(strings)}"
    if choice == 1:
        return f"{indent}# {draw(strings)}"
    if choice == 2:
        return f"{indent}{name}({draw(strings)}, {draw(st.integers(0, 10**6))})"
    if choice == 3:
        return f"{indent}{name} = [" + ", ".join(draw(st.lists(strings, max_size=30))) + "]"
    body = draw(python_block(inner, depth + 1))
    if choice == 4:
        return f'{indent}def {name}(a, b):\n{inner}"""{name} docs."""\n{body}'
    if choice == 5:
        return f"{indent}@decorator({draw(strings)})\n{indent}async def {name}(a):\n{body}"
    if choice == 6:
        return f"{indent}if {name}:\n{body}\n{indent}else:\n{body}"
    if choice == 7:
        return f"{indent}{name} = lambda a: ({draw(strings)}, a)"
    methods = "\n".join(
        f"{inner}def {m}(self, x):\n{draw(python_block(inner + '    ', depth + 2))}"
        for m in draw(st.lists(identifiers, max_size=4, unique=True))
    )
    return f"{indent}class {name.capitalize()}(Base):\n{methods or inner + 'pass'}"


# Brace languages: statement and declaration templates per language ({n}: a name,
# {s}: a string, {b}: a block of statements).
BRACE_TEMPLATES = {
    "go": {
        "statements": (
            "{n} := {s}",
            "// {s}",
            "{n}({s}, 42)",
            "if {n} {{\n{b}\n}} else {{\n{b}\n}}",
        ),
        "declarations": (
            "// {n} docs\nfunc {N}(a int) int {{\n{b}\nreturn a\n}}",
            "func (s *Server) {N}(x string) {{\n{b}\n}}",
            "type {N} struct {{\n\tname string\n\tvalue int\n}}",
            "var {n} = []string{{{s}, {s}}}",
        ),
        "header": "package p\n\n",
    },
    "java": {
        "statements": (
            "var {n} = {s};",
            "// {s}",
            "{n}({s}, 42);",
            "if ({n}) {{\n{b}\n}} else {{\n{b}\n}}",
        ),
        "declarations": (
            "/** {n} docs */\n@Override\npublic int {n}(int a) {{\n{b}\nreturn a;\n}}",
            "static class {N} {{\nvoid run() {{\n{b}\n}}\n}}",
            "private String {n} = {s};",
            "enum {N} {{ RED, GREEN }}",
        ),
        "header": "import java.util.List;\n\npublic class Main {\n",
        "footer": "\n}\n",
    },
    "rust": {
        "statements": (
            "let {n} = {s};",
            "// {s}",
            "{n}({s}, 42);",
            "if {n} {{\n{b}\n}} else {{\n{b}\n}}",
        ),
        "declarations": (
            "/// {n} docs\n#[inline]\npub fn {n}(a: i32) -> i32 {{\n{b}\na\n}}",
            "impl {N} {{\nfn run(&self) {{\n{b}\n}}\n}}",
            "pub struct {N} {{\n    name: String,\n}}",
            "trait {N} {{\nfn area(&self) -> f64;\n}}",
        ),
        "header": "use std::fmt;\n\n",
    },
    "csharp": {
        "statements": (
            "var {n} = {s};",
            "// {s}",
            "{n}({s}, 42);",
            "if ({n}) {{\n{b}\n}} else {{\n{b}\n}}",
        ),
        "declarations": (
            "/// <summary>{n} docs</summary>\n[Obsolete]\n"
            "public int {N}(int a) {{\n{b}\nreturn a;\n}}",
            "class {N} {{\nvoid Run() {{\n{b}\n}}\npublic int P {{ get; set; }}\n}}",
            "private string {n} = {s};",
            "enum {N} {{ Red, Green }}",
        ),
        "header": "using System;\n\nnamespace Shop\n{\npublic class Main {\n",
        "footer": "\n}\n}\n",
    },
}


@st.composite
def brace_program(draw, language: str) -> str:
    templates = BRACE_TEMPLATES[language]

    def block(depth: int) -> str:
        lines = []
        for _ in range(draw(st.integers(0, 5))):
            options = templates["statements"][: 4 if depth < 2 else 3]
            template = draw(st.sampled_from(options))
            inner = block(depth + 1) if "{b}" in template else ""
            lines.append(fill(template, inner))
        return "\n".join(lines)

    def fill(template: str, inner: str) -> str:
        name = draw(identifiers).replace("δ", "d").replace("é", "e")  # ASCII names: Go/Java ok
        return template.format(n=name, N=name.capitalize(), s=draw(strings), b=inner)

    declarations = [
        fill(template, block(1))
        for template in draw(st.lists(st.sampled_from(templates["declarations"]), max_size=8))
    ]
    body = "\n\n".join(declarations)
    return templates["header"] + body + templates.get("footer", "\n")


PROGRAMS = {
    "python": st.lists(python_statement("", 0), max_size=10).map("\n\n".join),
    **{language: brace_program(language) for language in BRACE_TEMPLATES},
}


@pytest.mark.parametrize("language", sorted(PROGRAMS))
def test_invariants_hold_on_generated_programs(language):
    @settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(
        program=PROGRAMS[language],
        max_tokens=st.sampled_from([16, 32, 64, 128, 512]),
        min_fraction=st.sampled_from([0.0, 0.25, 0.5]),
        profile=st.sampled_from(["auto", "oop", "functional"]),
    )
    def check(program, max_tokens, min_fraction, profile):
        options = dict(
            max_tokens=max_tokens, min_tokens=int(max_tokens * min_fraction), profile=profile
        )
        analysis, chunks = chunk(program, language, **options)
        check_invariants(analysis, chunks, max_tokens)
        assert chunks == chunk(program, language, **options)[1]

    check()


# Hostile inputs, per language: (deep nesting, a syntax error, multi-byte text, CRLF).
HOSTILE = {
    "python": {
        "deep": "deep = " + "[" * 3000 + "1" + "]" * 3000 + "\n",
        "error": "def ok():\n    return 1\n\n"
        + "".join(f"def f{i}():\n    return {i}\n\n" for i in range(30))
        + "def broken(:\n    return ;;;\n",
        "multibyte": "s = '" + "日本語のテキスト🙂" * 300 + "'\ndef f():\n    return 'é'\n",
        "crlf": "def a():\r\n    return 1\r\n\r\ndef b():\r\n    return 2\r\n",
    },
    "go": {
        "deep": "package p\nvar deep = " + "(" * 3000 + "1" + ")" * 3000 + "\n",
        "error": "package p\nfunc ok() int {\n\treturn 1\n}\n"
        + "".join(f"func f{i}() int {{\n\treturn {i}\n}}\n" for i in range(30))
        + "func broken( {\n\treturn ;;; }}}\n",
        "multibyte": 'package p\nvar s = "' + "日本語のテキスト🙂" * 300 + '"\nfunc f() {}\n',
        "crlf": "package p\r\n\r\nfunc a() {\r\n\treturn\r\n}\r\n\r\nfunc b() {\r\n}\r\n",
    },
    "java": {
        "deep": "class D {\n  int deep = " + "(" * 3000 + "1" + ")" * 3000 + ";\n}\n",
        "error": "class ok {}\n"
        + "".join(f"class F{i} {{ int f() {{ return {i}; }} }}\n" for i in range(30))
        + "class broken { void m( {\n  return ;;; }}}\n",
        "multibyte": 'class S {\n  String s = "' + "日本語のテキスト🙂" * 300 + '";\n}\n',
        "crlf": "class a {\r\n  int x;\r\n}\r\n\r\nclass b {\r\n  int y;\r\n}\r\n",
    },
    "rust": {
        "deep": "fn deep() -> i32 {\n    " + "(" * 3000 + "1" + ")" * 3000 + "\n}\n",
        "error": "fn ok() -> i32 {\n    1\n}\n"
        + "".join(f"fn f{i}() -> i32 {{\n    {i}\n}}\n" for i in range(30))
        + "fn broken( {\n    return ;;; }}}\n",
        "multibyte": 'const S: &str = "' + "日本語のテキスト🙂" * 300 + '";\nfn f() {}\n',
        "crlf": "fn a() {\r\n    1;\r\n}\r\n\r\nfn b() {\r\n    2;\r\n}\r\n",
    },
    "csharp": {
        "deep": "class D {\n  int deep = " + "(" * 3000 + "1" + ")" * 3000 + ";\n}\n",
        "error": "namespace N {\nclass ok {}\n"
        + "".join(f"class F{i} {{ int f() {{ return {i}; }} }}\n" for i in range(30))
        + "class broken { void m( {\n  return ;;; }}}\n}\n",
        "multibyte": 'class S {\n  string s = "' + "日本語のテキスト🙂" * 300 + '";\n}\n',
        "crlf": "class a {\r\n  int x;\r\n}\r\n\r\nclass b {\r\n  int y;\r\n}\r\n",
    },
}


@pytest.mark.parametrize(
    ("language", "case"), [(lang, case) for lang in sorted(HOSTILE) for case in HOSTILE[lang]]
)
def test_invariants_hold_on_hostile_input(language, case):
    text = HOSTILE[language][case]
    analysis, chunks = chunk(text, language, max_tokens=32, min_tokens=0)
    check_invariants(analysis, chunks, 32)
    if case == "error":
        flagged = [c for c in chunks if c.has_error]
        assert flagged and not chunks[0].has_error
        assert any("broken" in c.text for c in flagged)
    if case == "crlf":
        symbols = [c.symbol for c in chunks]
        assert symbols[-2:] == ["a", "b"], [(c.symbol, c.text) for c in chunks]
        assert chunks[-1].end_line == text.rstrip().count("\n") + 1


REAL_PYTHON = ["textwrap.py", "json/decoder.py", "dataclasses.py"]


@pytest.mark.parametrize("name", REAL_PYTHON)
@pytest.mark.parametrize("max_tokens", [64, 512])
def test_invariants_hold_on_real_python(name, max_tokens):
    import sysconfig
    from pathlib import Path

    text = (Path(sysconfig.get_paths()["stdlib"]) / name).read_text(encoding="utf-8")
    analysis, chunks = chunk(text, "python", max_tokens=max_tokens, min_tokens=max_tokens // 8)
    check_invariants(analysis, chunks, max_tokens)
    assert any(c.symbol_kind in ("method", "function", "class") for c in chunks)


# --- everything else Nexus knows about a language, one row per language -----------------

# language -> (path, an import line, a documented function that calls three things,
#              (its doc's summary, the callees), a test file's path)
KNOWLEDGE = {
    "javascript": (
        "src/send.js",
        "import fs from 'fs';",
        "/** Sends the frame to the peer. */\nfunction send(frame) {\n"
        "  return socket.write(encode(frame));\n}\n",
        ("Sends the frame to the peer.", ["socket", "write", "encode"]),
        "src/send.test.js",
    ),
    "typescript": (
        "src/send.ts",
        "import { encode } from './codec';",
        "/** Sends the frame to the peer. */\nexport function send(frame: Frame): void {\n"
        "  socket.write(encode(frame));\n}\n",
        ("Sends the frame to the peer.", ["socket", "write", "encode"]),
        "src/send.spec.ts",
    ),
    "tsx": (
        "src/Send.tsx",
        '"use client";',
        "/** Sends the frame to the peer. */\nexport function send(frame: Frame) {\n"
        "  return socket.write(encode(frame));\n}\n",
        ("Sends the frame to the peer.", ["socket", "write", "encode"]),
        "src/__tests__/Send.tsx",
    ),
    "python": (
        "pkg/send.py",
        "from pkg.codec import encode",
        'def send(frame):\n    """Sends the frame to the peer."""\n'
        "    return socket.write(encode(frame))\n",
        ("Sends the frame to the peer.", ["socket", "write", "encode"]),
        "pkg/test_send.py",
    ),
    "go": (
        "net/send.go",
        "import (",
        "package net\n\n// Send sends the frame to the peer.\nfunc Send(f Frame) error {\n"
        "\treturn conn.Write(encode(f))\n}\n",
        ("Send sends the frame to the peer.", ["conn", "Write", "encode"]),
        "net/send_test.go",
    ),
    "java": (
        "src/Net.java",
        "import java.net.Socket;",
        "class Net {\n  /** Sends the frame to the peer. */\n  void send(Frame f) {\n"
        "    socket.write(Codec.encode(f));\n  }\n}\n",
        ("Sends the frame to the peer.", ["socket", "write", "Codec", "encode"]),
        "src/test/NetTest.java",
    ),
    "rust": (
        "src/net.rs",
        "use std::net::TcpStream;",
        "/// Sends the frame to the peer.\nfn send(f: Frame) {\n"
        "    stream.write(codec::encode(f));\n}\n",
        ("Sends the frame to the peer.", ["stream", "write", "codec", "encode"]),
        "tests/net.rs",
    ),
    "csharp": (
        "src/Net/Sender.cs",
        "using System.Net.Sockets;",
        'class Sender {\n  /// <summary>\n  /// Sends the <paramref name="frame"/> to the peer.\n'
        "  /// </summary>\n  void Send(Frame frame) {\n"
        "    socket.Write(Codec.Encode(frame));\n  }\n}\n",
        ("Sends the frame to the peer.", ["socket", "Write", "Codec", "Encode"]),
        "tests/Net.Tests/SenderTests.cs",
    ),
}


def test_every_chunkable_language_has_a_row_of_knowledge():
    assert set(KNOWLEDGE) == set(LANGUAGES) == CHUNKABLE_LANGUAGES


@pytest.mark.parametrize("language", sorted(KNOWLEDGE))
def test_each_language_knows_its_imports_docs_calls_and_tests(language):
    from nexus.chunking.grammar import parse
    from nexus.chunking.languages import import_line, is_test_path
    from nexus.evaluation.doc_comments import find_docs
    from nexus.evaluation.doc_summary import summary
    from nexus.evaluation.generate import called

    path, an_import, code, (doc, callees), test_path = KNOWLEDGE[language]
    assert import_line().match(an_import)
    tree = parse(code.encode(), language)
    docs = find_docs(tree, language).docs
    assert len(docs) == 1
    assert summary(code.encode()[docs[0].start : docs[0].end].decode(), language) == doc
    assert called(tree.root_node, language, set()) == callees
    assert is_test_path(test_path) and not is_test_path(path)
