"""Small builders shared by tests."""

from __future__ import annotations

from nexus.chunking.analysis import FileAnalysis, analyze
from nexus.config import DEFAULT_ENCODING
from nexus.types import Category, FileInfo, SourceFile


def make_source(
    text: str, path: str = "src/example.ts", language: str = "typescript"
) -> SourceFile:
    data = text.encode("utf-8")
    info = FileInfo(path, len(data), Category.SOURCE, language, "test fixture")
    return SourceFile(info=info, text=text, data=data)


def analyze_text(
    text: str, path: str = "src/example.ts", language: str = "typescript"
) -> FileAnalysis:
    return analyze(make_source(text, path, language), DEFAULT_ENCODING)
