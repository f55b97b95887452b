"""Rows and text tables for units and chunks: what ``nexus functions`` and
``nexus chunk`` print, and what the dashboard shows as tables."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from nexus.chunking.analysis import analyze
from nexus.chunking.regex_baseline import regex_functions
from nexus.config import DEFAULT_ENCODING
from nexus.ingest.selection import FileSelection
from nexus.ingest.sources import IngestError, IngestSettings, decode_source, read_file
from nexus.tables import text_table
from nexus.types import CHUNKABLE_LANGUAGES, Chunk, SourceFile

#: A file named on the command line is read even if it is a test.
NAMED_FILE = FileSelection(tests=True)


def load_single_file(path: Path) -> SourceFile:
    """Read one source file with the classification and limits of ``scan``, refusing
    what ``chunk`` would not chunk (binary, too large, minified, no grammar...)."""
    info, data = read_file(path, IngestSettings(selection=NAMED_FILE))
    if data is None or not info.chunkable:
        raise IngestError(
            f"{path} is not chunked ({info.category}: {info.reason}); pass a "
            f"{', '.join(sorted(CHUNKABLE_LANGUAGES))} source or test file"
        )
    return decode_source(info, data)


def function_rows(source: SourceFile) -> list[dict[str, object]]:
    """One row per unit, with whether the regex baseline found it too."""
    analysis = analyze(source, DEFAULT_ENCODING)
    regex_hits = {
        (m.name, m.start_line) for m in regex_functions(source.text, str(source.info.language))
    }
    return [
        {
            "name": unit.qualname,
            "kind": unit.kind,
            "lines": unit.n_lines,
            "start_line": unit.start_line,
            "end_line": unit.end_line,
            "parent": unit.parent,
            "exported": unit.exported,
            "regex_found": (unit.name, unit.start_line) in regex_hits,
        }
        for unit in analysis.units
    ]


def functions_table(source: SourceFile) -> tuple[list[dict[str, object]], str]:
    """Rows and a text table of a file's units, with the regex baseline's count beside."""
    rows = function_rows(source)
    regex_count = len(regex_functions(source.text, str(source.info.language)))
    lines = text_table(
        ["unit", "kind", "lines", "range", "regex"],
        [
            [
                str(row["name"]),
                str(row["kind"]),
                str(row["lines"]),
                f"{row['start_line']}-{row['end_line']}",
                "yes" if row["regex_found"] else "MISSED",
            ]
            for row in rows
        ],
        right=frozenset({2}),
    )
    kinds = Counter(str(row["kind"]) for row in rows)
    summary = (
        f"{len(rows)} units ({', '.join(f'{n} {k}' for k, n in kinds.most_common())}); "
        f"the regex baseline finds {regex_count}"
    )
    return rows, "\n".join([*lines, "", summary])


def chunks_table(chunks: list[Chunk], max_tokens: int) -> str:
    """A text table of chunks and a one-line summary of sizes."""
    lines = text_table(
        ["file", "lines", "tokens", "kind", "symbol"],
        [
            [
                c.file,
                f"{c.start_line}-{c.end_line}",
                str(c.token_count),
                c.symbol_kind or "",
                (c.symbol or "") + (" [ERROR]" if c.has_error else ""),
            ]
            for c in chunks
        ],
        right=frozenset({2}),
    )
    sizes = [c.token_count for c in chunks]
    over = sum(1 for n in sizes if n > max_tokens)
    files = {c.file: c.language for c in chunks}
    by_language = Counter(files.values()).most_common()
    summary = (
        f"{len(chunks)} chunks in {len(files)} files "
        f"({', '.join(f'{lang} {n}' for lang, n in by_language) or 'none'}); "
        f"tokens min {min(sizes, default=0)} / mean {sum(sizes) / max(len(sizes), 1):.0f} / "
        f"max {max(sizes, default=0)}; {over} over {max_tokens}"
    )
    return "\n".join([*lines, "", summary])
