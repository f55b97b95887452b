"""Summaries of a ``ScanReport``: a JSON-ready dict and a plain-text table.

Both are what ``nexus scan`` prints; the dict is also what the dashboard shows,
so the two never disagree about what was skipped and why.
"""

from __future__ import annotations

from collections import Counter

from nexus.ingest.classify import unsupported_language
from nexus.tables import text_table
from nexus.types import Category, FileInfo, ScanReport

_UNKNOWN = "(none)"  # shown for files whose language is not recognised


def summarize(report: ScanReport) -> dict[str, object]:
    """Counts by category, language and both, plus every skipped file with its reason.

    "Skipped" means not chunked (``not info.chunkable``). All keys are strings and
    all values JSON types, so ``json.dumps`` works on the result as is.
    """
    files = report.files
    by_category = Counter(info.category for info in files)
    by_language = Counter(_language(info) for info in files)
    chunkable = [info for info in files if info.chunkable]
    return {
        "repo": report.repo,
        "totals": {
            "files": len(files),
            "bytes": sum(info.size for info in files),
            "chunkable_files": len(chunkable),
            "chunkable_bytes": sum(info.size for info in chunkable),
            "skipped_files": len(files) - len(chunkable),
        },
        "by_category": {str(c): by_category[c] for c in Category if by_category[c]},
        "by_language": _most_first(by_language),
        "chunkable_by_language": _most_first(Counter(_language(info) for info in chunkable)),
        "unsupported_languages": unsupported_counts(files),
        "by_category_language": [
            {"category": str(c), "language": lang, "files": n, "bytes": size}
            for c, lang, n, size in _pair_rows(files)
        ],
        "skipped": [
            {
                "path": info.path,
                "category": str(info.category),
                "language": info.language,
                "size": info.size,
                "reason": info.reason,
                "left_out": info.left_out or "",
            }
            for info in _skipped(files)
        ],
        "notes": list(report.notes),
    }


def render_scan_table(report: ScanReport, *, max_skipped: int | None = None) -> str:
    """A readable plain-text report: totals, a category x language table, skipped files.

    ``max_skipped`` caps the skipped-file listing (None lists them all).
    """
    files = report.files
    chunkable = [info for info in files if info.chunkable]
    skipped = _skipped(files)
    lines = [
        f"Repository: {report.repo}",
        f"{len(files):,} files ({_size(sum(i.size for i in files))}); "
        f"{len(chunkable):,} chunkable ({_size(sum(i.size for i in chunkable))}), "
        f"{len(skipped):,} not chunked",
    ]
    if chunkable:
        by_language = Counter(_language(info) for info in chunkable)
        lines.append(f"Chunkable by language: {counts_text(_most_first(by_language))}")
    if unsupported := unsupported_counts(files):
        lines.append(unsupported_line(unsupported))
    lines.append("")
    rows = [[str(c), lang, f"{n:,}", _size(size)] for c, lang, n, size in _pair_rows(files)]
    lines += text_table(["category", "language", "files", "size"], rows, right=frozenset({2, 3}))
    if skipped:
        shown = skipped if max_skipped is None else skipped[:max_skipped]
        lines += ["", f"Not chunked ({len(skipped):,} files):"]
        lines += text_table(
            ["path", "category", "language", "reason"],
            [[info.path, str(info.category), _language(info), _why_not(info)] for info in shown],
        )
        if len(shown) < len(skipped):
            lines.append(f"... and {len(skipped) - len(shown):,} more")
    if report.notes:
        lines += ["", "Notes:", *(f"- {note}" for note in report.notes)]
    return "\n".join(lines) + "\n"


def unsupported_counts(files: tuple[FileInfo, ...]) -> dict[str, int]:
    """Files per code language Nexus has no grammar for (listed, never chunked)."""
    return _most_first(Counter(filter(None, map(unsupported_language, files))))


def unsupported_line(counts: dict[str, int]) -> str:
    """One line naming the files of languages without a grammar, per language."""
    total = sum(counts.values())
    return (
        f"Unsupported languages (no grammar; listed, not chunked): {total:,} "
        f"file{'' if total == 1 else 's'}: {counts_text(counts)}"
    )


def counts_text(counts: dict[str, int]) -> str:
    """``python 3, go 1``: counts per name, in the order given."""
    return ", ".join(f"{name} {n:,}" for name, n in counts.items())


def _most_first(counts: Counter[str]) -> dict[str, int]:
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def _why_not(info: FileInfo) -> str:
    """The classification's reason, and the selection's when it left the file out."""
    return f"{info.reason}; {info.left_out}" if info.left_out else info.reason


def _language(info: FileInfo) -> str:
    return info.language or _UNKNOWN


def _skipped(files: tuple[FileInfo, ...]) -> list[FileInfo]:
    return [info for info in files if not info.chunkable]


def _pair_rows(files: tuple[FileInfo, ...]) -> list[tuple[Category, str, int, int]]:
    """(category, language, files, bytes) rows in category order, then most files first."""
    counts: Counter[tuple[Category, str]] = Counter()
    sizes: Counter[tuple[Category, str]] = Counter()
    for info in files:
        counts[(info.category, _language(info))] += 1
        sizes[(info.category, _language(info))] += info.size
    order = list(Category)
    keys = sorted(counts, key=lambda k: (order.index(k[0]), -counts[k], k[1]))
    return [(c, lang, counts[(c, lang)], sizes[(c, lang)]) for c, lang in keys]


def _size(n: int) -> str:
    if n < 1000:
        return f"{n:,} B"
    if n < 1_000_000:
        return f"{n / 1000:,.1f} KB"
    return f"{n / 1_000_000:,.1f} MB"
