"""Scan summaries: exact counts on a hand-built report, and a table a person can read."""

from __future__ import annotations

import json

from nexus.ingest.scan import render_scan_table, summarize
from nexus.types import Category, FileInfo, ScanReport

C = Category

FILES = (
    FileInfo("src/a.js", 100, C.SOURCE, "javascript", "javascript source"),
    FileInfo("src/b.ts", 2_000, C.SOURCE, "typescript", "typescript source"),
    FileInfo("src/c.ts", 300, C.SOURCE, "typescript", "typescript source"),
    # chunked: as with --with-tests (left_out="" says a selection kept it)
    FileInfo("src/a.test.ts", 50, C.TEST, "typescript", "matches test pattern '*.test.*'", ""),
    FileInfo("tools/x.rb", 10, C.UNSUPPORTED, "ruby", "unsupported language (ruby): ..."),
    FileInfo("package.json", 20, C.CONFIG, "json", "'package.json' is a configuration file"),
    FileInfo("logo.png", 5_000, C.BINARY, None, "NUL byte at offset 12 (git's binary rule)"),
    FileInfo("big.js", 2_500_000, C.TOO_LARGE, "javascript", "2,500,000 bytes exceeds ..."),
)
REPORT = ScanReport(repo="demo", files=FILES, notes=("2 files and 1 directories ignored",))


def test_summarize_counts() -> None:
    summary = summarize(REPORT)
    assert summary["repo"] == "demo"
    assert summary["totals"] == {
        "files": 8,
        "bytes": 2_507_480,
        "chunkable_files": 4,
        "chunkable_bytes": 2_450,
        "skipped_files": 4,
    }
    # categories in Category order, zero counts left out
    assert summary["by_category"] == {
        "source": 3,
        "test": 1,
        "config": 1,
        "binary": 1,
        "too_large": 1,
        "unsupported": 1,
    }
    assert summary["by_language"] == {
        "typescript": 3,
        "javascript": 2,
        "(none)": 1,
        "json": 1,
        "ruby": 1,
    }
    assert summary["by_category_language"] == [
        {"category": "source", "language": "typescript", "files": 2, "bytes": 2_300},
        {"category": "source", "language": "javascript", "files": 1, "bytes": 100},
        {"category": "test", "language": "typescript", "files": 1, "bytes": 50},
        {"category": "config", "language": "json", "files": 1, "bytes": 20},
        {"category": "binary", "language": "(none)", "files": 1, "bytes": 5_000},
        {"category": "too_large", "language": "javascript", "files": 1, "bytes": 2_500_000},
        {"category": "unsupported", "language": "ruby", "files": 1, "bytes": 10},
    ]
    assert summary["chunkable_by_language"] == {"typescript": 3, "javascript": 1}
    assert summary["unsupported_languages"] == {"ruby": 1}
    assert [row["path"] for row in summary["skipped"]] == [  # type: ignore[index, union-attr]
        "tools/x.rb",
        "package.json",
        "logo.png",
        "big.js",
    ]
    assert summary["skipped"][2] == {  # type: ignore[index]
        "path": "logo.png",
        "category": "binary",
        "language": None,
        "size": 5_000,
        "reason": "NUL byte at offset 12 (git's binary rule)",
        "left_out": "",
    }
    assert summary["notes"] == ["2 files and 1 directories ignored"]


def test_summary_is_json_and_round_trips() -> None:
    summary = summarize(REPORT)
    assert json.loads(json.dumps(summary)) == summary


def test_empty_report() -> None:
    summary = summarize(ScanReport(repo="empty", files=()))
    assert summary["totals"] == {
        "files": 0,
        "bytes": 0,
        "chunkable_files": 0,
        "chunkable_bytes": 0,
        "skipped_files": 0,
    }
    assert summary["by_category"] == {}
    assert summary["skipped"] == []
    text = render_scan_table(ScanReport(repo="empty", files=(), notes=("empty repository",)))
    assert "0 files" in text
    assert "- empty repository" in text
    assert "Not chunked" not in text


def test_render_scan_table() -> None:
    text = render_scan_table(REPORT)
    lines = text.splitlines()
    assert lines[0] == "Repository: demo"
    assert lines[1] == "8 files (2.5 MB); 4 chunkable (2.5 KB), 4 not chunked"
    assert lines[2] == "Chunkable by language: typescript 3, javascript 1"
    assert lines[3] == ("Unsupported languages (no grammar; listed, not chunked): 1 file: ruby 1")
    assert lines[5].split() == ["category", "language", "files", "size"]
    assert lines[7].split() == ["source", "typescript", "2", "2.3", "KB"]
    assert "Not chunked (4 files):" in lines
    logo = next(line for line in lines if line.startswith("logo.png"))
    assert logo.split(None, 3)[1:] == [
        "binary",
        "(none)",
        "NUL byte at offset 12 (git's binary rule)",
    ]
    ruby = next(line for line in lines if line.startswith("tools/x.rb"))
    assert ruby.split(None, 3)[1:] == ["unsupported", "ruby", "unsupported language (ruby): ..."]
    assert lines[-2:] == ["Notes:", "- 2 files and 1 directories ignored"]
    # numbers are right-aligned: every row of the count table ends in the same column
    table = lines[5 : lines.index("", 5)]
    assert len({len(line) for line in table}) == 1
    assert text.endswith("\n")


def test_render_scan_table_caps_the_skipped_list() -> None:
    text = render_scan_table(REPORT, max_skipped=2)
    assert "tools/x.rb" in text
    assert "logo.png" not in text
    assert "... and 2 more" in text
