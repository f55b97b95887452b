"""The baseline: fixed windows of N lines with an overlap of M, no syntax involved."""

from __future__ import annotations

from nexus.chunking.analysis import FileAnalysis


def line_spans(analysis: FileAnalysis, window: int, overlap: int) -> list[tuple[int, int, int]]:
    """Byte ranges of windows of ``window`` lines, each starting ``window - overlap``
    lines after the previous one; windows holding only blank lines are skipped.

    Returns ``(start_byte, end_byte, exact tokens)``; windows may exceed any budget.
    """
    data = analysis.data
    starts = analysis.line_starts
    n_lines = len(starts)
    step = window - overlap
    spans: list[tuple[int, int, int]] = []
    for first in range(0, n_lines, step):
        last = min(first + window, n_lines)
        start = starts[first]
        end = starts[last] if last < n_lines else len(data)
        while end > start and data[end - 1 : end].isspace():
            end -= 1
        if data[start:end].strip():
            spans.append((start, end, analysis.tokens.exact(data, start, end)))
        if last == n_lines:
            break
    return spans
