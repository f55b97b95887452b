"""The AST chunker's contract, checked on generated and hostile code.

For every file: chunks are ordered and never overlap; each chunk's text is its
exact source slice; every non-whitespace byte is in some chunk; no chunk is over
``max_tokens``; the token count is exact; the result is deterministic.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nexus.chunking.analysis import FileAnalysis
from nexus.chunking.pipeline import chunk_analysis
from nexus.chunking.tokens import count_tokens
from nexus.config import ChunkConfig
from nexus.types import Chunk
from tests.helpers import analyze_text


def check_invariants(analysis: FileAnalysis, chunks: list[Chunk], max_tokens: int) -> None:
    data = analysis.data
    covered = bytearray(len(data))
    previous_end = 0
    for chunk in chunks:
        assert chunk.start_byte >= previous_end, "chunks overlap or are out of order"
        assert chunk.end_byte > chunk.start_byte
        assert data[chunk.start_byte : chunk.end_byte].decode("utf-8") == chunk.text
        assert chunk.token_count == count_tokens(chunk.text, analysis.tokens.encoding)
        assert chunk.token_count <= max_tokens, (chunk.token_count, chunk.text[:200])
        assert chunk.start_line == data[: chunk.start_byte].count(b"\n") + 1
        assert chunk.end_line == data[: chunk.end_byte].rstrip(b"\n").count(b"\n") + 1 or (
            chunk.end_line == data[: chunk.end_byte].count(b"\n") + 1
        )
        covered[chunk.start_byte : chunk.end_byte] = b"\x01" * (chunk.end_byte - chunk.start_byte)
        previous_end = chunk.end_byte
    missing = [i for i, byte in enumerate(data) if not covered[i] and not chr(byte).isspace()]
    assert not missing, f"uncovered bytes at {missing[:5]}: {data[missing[0] : missing[0] + 40]!r}"


def chunk_text(text: str, language: str = "typescript", **settings_) -> tuple[FileAnalysis, list]:
    path = {"javascript": "a.js", "typescript": "a.ts", "tsx": "a.tsx"}[language]
    analysis = analyze_text(text, path, language)
    config = ChunkConfig(**settings_)
    return analysis, chunk_analysis(analysis, config, repo="test")


# --- generated programs -------------------------------------------------------------------

identifiers = st.sampled_from(["alpha", "betaGamma", "δelta", "x", "fetchUser", "café", "run"])
strings = st.text(
    alphabet=st.sampled_from(list("abc XYZ {}();é中文🙂\\'")), min_size=0, max_size=60
).map(lambda s: '"' + s.replace("\\", "").replace('"', "") + '"')


@st.composite
def statements(draw, depth: int = 0) -> str:
    name = draw(identifiers)
    choice = draw(st.integers(0, 7 if depth < 3 else 3))
    if choice == 0:
        return f"const {name} = {draw(strings)};"
    if choice == 1:
        return f"// {draw(strings)}"
    if choice == 2:
        return f"{name}({draw(strings)}, {draw(st.integers(0, 10**6))});"
    if choice == 3:
        return f"let {name} = [" + ", ".join(draw(st.lists(strings, max_size=30))) + "];"
    body = "\n".join(draw(st.lists(statements(depth + 1), max_size=8)))
    if choice == 4:
        return f"/** {name} docs */\nexport function {name}(a, b) {{\n{body}\n}}"
    if choice == 5:
        return f"export const {name} = async (a) => {{\n{body}\n}};"
    if choice == 6:
        return f"if ({name}) {{\n{body}\n}} else {{\n{body}\n}}"
    methods = "\n".join(
        f"  {m}(x) {{\n{body}\n  }}" for m in draw(st.lists(identifiers, max_size=5, unique=True))
    )
    return f"class {name.capitalize()} extends Base {{\n{methods}\n}}"


programs = st.lists(statements(), min_size=0, max_size=12).map("\n\n".join)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    program=programs,
    max_tokens=st.sampled_from([16, 32, 64, 128, 512]),
    min_fraction=st.sampled_from([0.0, 0.25, 0.5]),
    profile=st.sampled_from(["auto", "oop", "functional", "frontend"]),
)
def test_invariants_hold_on_generated_programs(program, max_tokens, min_fraction, profile):
    min_tokens = int(max_tokens * min_fraction)
    analysis, chunks = chunk_text(
        program, max_tokens=max_tokens, min_tokens=min_tokens, profile=profile
    )
    check_invariants(analysis, chunks, max_tokens)
    _, again = chunk_text(program, max_tokens=max_tokens, min_tokens=min_tokens, profile=profile)
    assert chunks == again


# --- hostile inputs -----------------------------------------------------------------------


def test_empty_and_blank_files_give_no_chunks():
    for text in ["", "\n\n   \n", "\t"]:
        _, chunks = chunk_text(text)
        assert chunks == []


def test_a_single_line_far_over_budget_is_cut_at_token_starts():
    text = "const s = '" + "lorem ipsum dolor sit amet " * 400 + "';\n"
    analysis, chunks = chunk_text(text, max_tokens=64, min_tokens=0)
    assert len(chunks) > 10
    check_invariants(analysis, chunks, 64)


def test_multibyte_text_is_never_cut_inside_a_character():
    text = "const s = '" + "日本語のテキスト🙂" * 300 + "';\nfunction f() { return 'é'; }\n"
    analysis, chunks = chunk_text(text, max_tokens=32, min_tokens=0)
    check_invariants(analysis, chunks, 32)


def test_deep_nesting_does_not_hit_the_recursion_limit():
    depth = 5000
    text = "const deep = " + "[" * depth + "1" + "]" * depth + ";\n"
    analysis, chunks = chunk_text(text, max_tokens=256, min_tokens=0)
    check_invariants(analysis, chunks, 256)


def test_syntax_errors_still_chunk_and_are_flagged():
    text = (
        "function ok() {\n  return 1;\n}\n\n"
        + "\n".join(f"function f{i}() {{ return {i}; }}" for i in range(40))
        + "\nfunction broken( {\n  return ;;; }}}\n"
    )
    analysis, chunks = chunk_text(text, max_tokens=64, min_tokens=0)
    check_invariants(analysis, chunks, 64)
    flagged = [c for c in chunks if c.has_error]
    assert flagged and not chunks[0].has_error
    assert any("broken" in c.text for c in flagged)


def test_crlf_file_keeps_line_numbers():
    text = "function a() {\r\n  return 1;\r\n}\r\n\r\nfunction b() {\r\n  return 2;\r\n}\r\n"
    analysis, chunks = chunk_text(text, language="javascript", max_tokens=16, min_tokens=0)
    check_invariants(analysis, chunks, 16)
    assert [(c.symbol, c.start_line, c.end_line) for c in chunks] == [("a", 1, 3), ("b", 5, 7)]


def test_doc_comment_decorators_and_export_stay_with_their_declaration():
    filler = "\n".join(
        f"  m{i}(x: number): number {{\n    return x * {i} + {i};\n  }}" for i in range(8)
    )
    text = (
        "/** Charges customers. */\n@Injectable()\nexport class PaymentService {\n"
        f"  /** Pays. */\n  @Retry(3)\n  async pay(amount: number): Promise<void> {{\n"
        f"    await this.client.charge(amount);\n  }}\n{filler}\n}}\n"
    )
    _, chunks = chunk_text(text, max_tokens=48, min_tokens=0, profile="oop")
    first = chunks[0].text
    assert first.startswith("/** Charges customers. */\n@Injectable()\nexport class PaymentService")
    pay = next(c for c in chunks if c.symbol == "PaymentService.pay")
    assert pay.text.lstrip().startswith("/** Pays. */\n  @Retry(3)\n  async pay(")


def test_chunks_list_the_imports_they_use_and_their_symbol_context():
    text = (
        'import Stripe from "stripe";\nimport { Repo } from "./repo";\n\n'
        "export class Payments {\n"
        "  charge(a: number) {\n    return new Stripe(a).charges.create({ amount: a });\n  }\n"
        "  find(id: string) {\n    return Repo.find(id).then((row) => row.value + id);\n  }\n"
        "}\n"
    )
    analysis, chunks = chunk_text(text, "typescript", max_tokens=32, min_tokens=0, profile="oop")
    by_symbol = {c.symbol: c for c in chunks}
    assert by_symbol["Payments.charge"].imports == ("Stripe",)
    assert by_symbol["Payments.find"].imports == ("Repo",)
    assert by_symbol["Payments.find"].parent == "Payments"
    assert by_symbol["Payments.find"].embedding_text.startswith("a Payments.find\n  find(id")


def test_rechunking_reuses_chunks_whose_range_and_settings_are_unchanged():
    text = "\n".join(f"function f{i}(a) {{\n  return a * {i} + g(a, {i});\n}}\n" for i in range(30))
    analysis, first = chunk_text(text, "javascript", max_tokens=512, min_tokens=0)
    again = chunk_analysis(analysis, ChunkConfig(max_tokens=256, min_tokens=0), repo="test")
    assert again == first and all(a is b for a, b in zip(again, first, strict=True))
    merged = chunk_analysis(analysis, ChunkConfig(max_tokens=512, min_tokens=64), repo="test")
    assert len(merged) < len(first)  # other settings, other ranges: built anew
    check_invariants(analysis, merged, 512)


def test_small_type_declarations_join_a_neighbour_large_ones_stay_alone():
    body = "\n".join(f"  const v{i} = compute(a, {i});" for i in range(12))
    text = (
        f"export function first(a: number) {{\n{body}\n  return a;\n}}\n\n"
        "type Id = string;\n\n"
        f"export function second(a: number) {{\n{body}\n  return a;\n}}\n\n"
        "export interface Big {\n" + "\n".join(f"  field{i}: string;" for i in range(20)) + "\n}\n"
    )
    analysis, chunks = chunk_text(text, max_tokens=256, min_tokens=32, profile="oop")
    check_invariants(analysis, chunks, 256)
    assert not any(c.text.strip() == "type Id = string;" for c in chunks)
    assert any("type Id = string;" in c.text for c in chunks)
    assert any(c.symbol == "Big" and c.text.startswith("export interface Big") for c in chunks)


def test_overload_signatures_ride_with_their_implementation():
    signatures = "".join(
        f"/** Parses {t}. */\nexport function parse(value: {t}): {t}\n"
        for t in ("string", "number")
    )
    members = "  load(id: string): void\n  load(id: number): void\n  load(id: any) {\n  }\n"
    members += "".join(
        f"  save{i}(): void {{\n    this.flush({i}, this.rows);\n  }}\n" for i in range(6)
    )
    text = (
        f"{signatures}export function parse(value: any) {{\n  return value;\n}}\n\n"
        f"export class Store {{\n{members}}}\n\n"
        "export interface Api {\n  get(): void\n  put(): void\n}\n"
    )
    analysis, chunks = chunk_text(text, max_tokens=80, min_tokens=0, profile="oop")
    check_invariants(analysis, chunks, 80)
    parse = next(c for c in chunks if c.symbol == "parse")
    assert parse.text.startswith("/** Parses string. */\nexport function parse(value: string)")
    assert parse.text.endswith("return value;\n}")
    load = next(c for c in chunks if c.symbol == "Store.load")
    assert load.text.lstrip().startswith("load(id: string): void\n  load(id: number)")
    assert next(c for c in chunks if c.symbol == "Api").text.startswith("export interface Api")


def test_a_range_just_over_budget_is_cut_into_even_pieces():
    text = "const s = `\n" + "alpha beta gamma delta\n" * 26 + "`;\n"  # 2 pieces + 11 greedy
    analysis, chunks = chunk_text(text, max_tokens=64, min_tokens=0)
    check_invariants(analysis, chunks, 64)
    sizes = [c.token_count for c in chunks]
    assert len(sizes) == 3 and min(sizes) >= 40, sizes


def test_a_chunk_lists_the_units_it_holds_at_its_level_not_their_closures():
    text = (
        "export function outer(xs) {\n"
        "  const double = (x) => x * 2;\n"
        "  return xs.map(double);\n"
        "}\n"
        "export function other() {\n  return outer([1]);\n}\n"
    )
    analysis, chunks = chunk_text(text, "typescript", max_tokens=512, min_tokens=64)
    assert [c.symbols for c in chunks] == [("outer", "other")]
    assert chunks[0].symbol == "outer"  # the larger of the two
    # A budget that opens `outer` meets its closure: then the closure is listed.
    analysis, small = chunk_text(text, "typescript", max_tokens=16, min_tokens=0)
    assert any("outer.double" in c.symbols for c in small)


def test_ast_chunking_never_extracts_every_unit_of_the_file():
    """The chunker classifies the nodes it visits; the full unit list (a walk of the
    whole tree) is left for line chunks, fragmentation and ``nexus functions``."""
    text = "\n".join(
        f"function f{i}(a) {{\n  const g = () => a + {i};\n  return g;\n}}" for i in range(40)
    )
    analysis, chunks = chunk_text(text, "javascript", max_tokens=64, min_tokens=0)
    assert chunks and "units" not in vars(analysis)
    assert len(analysis.units) == 80  # on demand, with the closures
