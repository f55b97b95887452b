"""The line baseline and the fragmentation analysis, on hand-made files."""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from nexus.config import ChunkConfig
from nexus.fragmentation import summarize, unit_fates
from nexus.pipeline import chunk_analysis
from nexus.tokens import TokenIndex, count_tokens
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
