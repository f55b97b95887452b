"""The line baseline and the fragmentation analysis, on hand-made files."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from nexus.chunking.fragmentation import cuts_at_start, summarize, unit_fates
from nexus.chunking.pipeline import chunk_analysis
from nexus.chunking.tokens import TokenIndex, count_tokens
from nexus.config import ChunkConfig
from tests.helpers import analyze_text

TEXT = "\n".join(
    [f"function f{i}() {{\n  const a = {i};\n  return a * 2;\n}}\n" for i in range(10)]
)


def test_line_windows_have_the_requested_size_and_overlap():
    analysis = analyze_text(TEXT, "a.js", "javascript")
    config = ChunkConfig(strategy="lines", line_window=7, line_overlap=2)
    chunks = chunk_analysis(analysis, config, repo="t")
    assert [c.start_line for c in chunks[:3]] == [1, 6, 11]
    assert all(c.n_lines <= 7 for c in chunks)
    assert all(c.strategy == "lines" and c.profile == "lines" for c in chunks)
    data = analysis.data
    assert all(data[c.start_byte : c.end_byte].decode() == c.text for c in chunks)


def test_blank_windows_are_skipped():
    analysis = analyze_text("const a = 1;\n" + "\n" * 30 + "const b = 2;\n", "a.js", "javascript")
    chunks = chunk_analysis(analysis, ChunkConfig(strategy="lines", line_window=10), repo="t")
    assert [c.start_line for c in chunks] == [1, 31]


def test_fragmentation_counts_split_and_diluted_units():
    analysis = analyze_text(TEXT, "a.js", "javascript")
    lines = chunk_analysis(analysis, ChunkConfig(strategy="lines", line_window=7), repo="t")
    ast = chunk_analysis(analysis, ChunkConfig(max_tokens=64, min_tokens=0), repo="t")
    by_lines = summarize(unit_fates(analysis.units, lines))
    by_ast = summarize(unit_fates(analysis.units, ast))
    assert by_ast.units == by_lines.units == 10
    assert by_ast.intact == 10 and by_ast.mean_dilution == 1.0
    # 5-line functions in 7-line windows: most are cut, all are diluted.
    assert by_lines.split >= 4 and by_lines.mean_pieces_when_split == 2
    assert by_lines.mean_dilution < 1.0


def test_token_index_estimates_match_exact_counts_on_whole_lines():
    data = TEXT.encode()
    index = TokenIndex(data, ChunkConfig().encoding)
    assert index.estimate(0, len(data)) == count_tokens(TEXT, ChunkConfig().encoding)
    first_function = data.index(b"function f1")
    assert index.estimate(0, first_function) == count_tokens(
        data[:first_function].decode(), ChunkConfig().encoding
    )


@settings(max_examples=300, deadline=None)
@given(
    text=st.text(
        alphabet=st.sampled_from(list("ab Z9_{}();.,'\"\t\r\n\n\n  é中🙂=>/*")), max_size=300
    ),
    cut=st.tuples(st.floats(0, 1), st.floats(0, 1)),
)
# A newline, blanks, a newline: one pre-token, so the line start inside is no boundary.
@example(text="\n\t\n", cut=(0.0, 1.0))
@example(text="a\n  \n\tb", cut=(0.0, 1.0))
def test_exact_count_of_any_slice_equals_encoding_it_alone(text, cut):
    data = text.encode()
    a, b = sorted(int(x * len(text)) for x in cut)
    start, end = len(text[:a].encode()), len(text[:b].encode())
    index = TokenIndex(data, ChunkConfig().encoding)
    expected = count_tokens(text[a:b], ChunkConfig().encoding)
    assert index.exact(data, start, end) == expected


REAL_FILES = sorted(
    path
    for root in ("sample_repos/py-orders", "tests/data/polyglot", "sample_repos/ts-payments")
    for path in Path(__file__).resolve().parents[2].joinpath(root).rglob("*")
    if path.suffix in {".py", ".go", ".java", ".rs", ".ts"}
)


@pytest.mark.parametrize("path", REAL_FILES, ids=lambda path: path.name)
def test_exact_count_of_line_ranges_of_real_code_equals_encoding_them_alone(path):
    """Chunk-shaped slices (a line start to the end of a later line, blanks trimmed)
    of real files: most end in a letter or a punctuation run (``)``, ``}``, ``):``),
    whose count comes from the file's tokens."""
    data = path.read_bytes()
    index = TokenIndex(data, ChunkConfig().encoding)
    line_starts = [0] + [at + 1 for at, byte in enumerate(data) if byte == 0x0A]
    step = max(1, len(line_starts) // 40)
    for first in line_starts[::step]:
        for last in line_starts[::step]:
            end = len(data[:last].rstrip())
            if end > first:
                expected = count_tokens(data[first:end].decode(), ChunkConfig().encoding)
                assert index.exact(data, first, end) == expected, (path.name, first, end)


def test_a_line_window_is_labelled_with_the_unit_it_holds_most_of():
    """A window holding the last two lines of ``a`` and all of ``b`` is about ``b``;
    one holding the head of a long ``c`` and a small whole ``d`` is about ``c``."""
    text = (
        "function a() {\n  const x = 1;\n  const y = 2;\n  return x + y;\n}\n"  # L1-5
        "function b() {\n  return 2;\n}\n"  # L6-8
        "function c() {\n" + "  call();\n" * 8 + "}\n"  # L9-18
    )
    analysis = analyze_text(text, "a.js", "javascript")
    config = ChunkConfig(strategy="lines", line_window=4)
    chunks = chunk_analysis(analysis, config, repo="t")
    assert [(c.start_line, c.symbol) for c in chunks][:3] == [(1, "a"), (5, "b"), (9, "c")]


def test_a_line_window_inside_a_class_names_the_method_it_holds_most_of():
    text = (
        "class K {\n  m1() {\n    one();\n    two();\n  }\n"  # L1-5
        "  m2() {\n    three();\n  }\n}\n"  # L6-9
    )
    analysis = analyze_text(text, "a.js", "javascript")
    chunks = chunk_analysis(analysis, ChunkConfig(strategy="lines", line_window=4), repo="t")
    by_start = {c.start_line: c.symbol for c in chunks}
    assert by_start[5] == "K.m2"


#: (language, head of a function, one body statement, its end): the body fits the budget
#: alone, but not with the head.
SPLIT_HEADS = [
    ("python", "def compute(alpha, beta, gamma):\n", "    v{i} = alpha * {i} + beta\n", ""),
    (
        "go",
        "func Compute(alpha int, beta int, gamma int) int {\n",
        "\tv{i} := alpha*{i} + beta\n\t_ = v{i}\n",
        "\treturn gamma\n}\n",
    ),
    (
        "typescript",
        "export function compute(alpha: number, beta: number, gamma: number): number {\n",
        "  const v{i} = alpha * {i} + beta;\n",
        "  return gamma;\n}\n",
    ),
    (
        "java",
        "  int compute(int alpha, int beta, int gamma) {\n",
        "    int v{i} = alpha * {i} + beta;\n",
        "    return gamma;\n  }\n",
    ),
    (
        "rust",
        "fn compute(alpha: i32, beta: i32, gamma: i32) -> i32 {\n",
        "    let v{i} = alpha * {i} + beta;\n",
        "    gamma\n}\n",
    ),
]


@pytest.mark.parametrize(("language", "head", "statement", "end"), SPLIT_HEADS)
def test_a_split_functions_head_stays_with_its_first_statements(
    language: str, head: str, statement: str, end: str
) -> None:
    text = head + "".join(statement.format(i=i) for i in range(40)) + end
    if language == "java":  # methods live in classes; the class's own head is not the case here
        text = "class Demo {\n  static final int BASE = 1;\n\n" + text + "}\n"
    extension = {"python": "py", "go": "go", "typescript": "ts", "java": "java", "rust": "rs"}
    analysis = analyze_text(text, f"src/demo.{extension[language]}", language)
    total = analysis.tokens.exact(analysis.data, 0, len(analysis.data))
    config = ChunkConfig(max_tokens=total - 3, min_tokens=32)
    chunks = chunk_analysis(analysis, config, repo="demo")
    assert all(c.token_count <= config.max_tokens for c in chunks)
    with_head = next(c for c in chunks if head.strip().splitlines()[-1] in c.text)
    assert "v0 =" in with_head.text or "v0 :=" in with_head.text
    head_line = text[: text.index(head.strip().splitlines()[-1])].count("\n") + 1
    assert all(c.token_count >= config.min_tokens for c in chunks if c.end_line >= head_line)
    assert " ".join(c.text for c in chunks).split() == text.split()  # nothing lost


def _method(name: str, lines: int) -> str:
    body = "".join(f"    const v{i} = this.{name}Step({i});\n" for i in range(lines))
    return f"  {name}(): number {{\n{body}    return 0;\n  }}\n"


#: A class of three whole members: too large for one chunk at 64 tokens, each method fits.
CLASS = (
    "export class Router {\n  routes: string[] = [];\n\n"
    + "\n".join(_method(name, 3) for name in ("add", "match", "dispatch"))
    + "}\n"
)


def test_a_class_divided_between_whole_members_is_not_split():
    analysis = analyze_text(CLASS, "router.ts")
    chunks = chunk_analysis(analysis, ChunkConfig(max_tokens=64, min_tokens=0), repo="t")
    fates = {f.unit.qualname: f for f in unit_fates(analysis.units, chunks)}
    assert not fates["Router"].intact and fates["Router"].divided
    assert fates["Router"].status == f"divided in {fates['Router'].pieces}"
    assert all(fates[f"Router.{m}"].intact for m in ("add", "match", "dispatch"))
    summary = summarize(list(fates.values()))
    assert (summary.split, summary.divided, summary.mean_pieces_when_split) == (0, 1, 0.0)
    assert cuts_at_start(analysis.units, chunks) == [[]] * len(chunks)


def test_a_cut_inside_a_member_splits_the_member_and_names_it():
    analysis = analyze_text(CLASS, "router.ts")
    dispatch = next(u for u in analysis.units if u.name == "dispatch")
    # Windows of 10 lines: the third starts inside dispatch (L18-23 of L1-24).
    chunks = chunk_analysis(analysis, ChunkConfig(strategy="lines", line_window=10), repo="t")
    assert [c.start_line for c in chunks] == [1, 11, 21]
    fates = {f.unit.qualname: f for f in unit_fates(analysis.units, chunks)}
    assert fates["Router"].divided and not fates["Router"].split
    assert fates["Router.dispatch"].split and fates["Router.dispatch"].pieces == 2
    summary = summarize(list(fates.values()))
    assert summary.split == sum(f.split for f in fates.values())
    assert summary.mean_pieces_when_split == 2
    cuts = cuts_at_start(analysis.units, chunks)
    assert cuts == [[], [], [dispatch]]  # the innermost unit, not "cuts Router L1-24"


def test_a_function_cut_between_its_closures_is_split():
    inner = "".join(f"  const f{i} = () => {{\n    return {i};\n  }};\n" for i in range(8))
    analysis = analyze_text(f"function outer() {{\n{inner}  return 1;\n}}\n", "a.ts")
    chunks = chunk_analysis(analysis, ChunkConfig(strategy="lines", line_window=10), repo="t")
    outer = next(f for f in unit_fates(analysis.units, chunks) if f.unit.name == "outer")
    assert outer.split and outer.pieces == len(chunks)
