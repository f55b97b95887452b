"""Where AST chunk edges fall on real repositories (``nexus.chunking.edges``): chunks
that start inside another unit, own-line leading comments left in the chunk before
their definition, and chunks that start mid-line (sharing a line with the one before);
beside them, chunks under 32 tokens (a tail kept apart can be one) and over the budget.

    .venv/bin/python bench/chunking/chunk_edges.py REPO ...  # e.g. /tmp/nexus-questions/rich

Prints a markdown table (one row per repository and budget) and the first examples of
each fault; counting only, so no timing and no model.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from nexus.chunking.analysis import analyze  # noqa: E402
from nexus.chunking.edges import EdgeReport, edge_report  # noqa: E402
from nexus.chunking.pipeline import chunk_analysis  # noqa: E402
from nexus.config import ChunkConfig  # noqa: E402
from nexus.ingest.sources import open_repository  # noqa: E402

#: The default budget and the one issue 41 saw on excalidraw's App.tsx.
BUDGETS = ((320, 48), (256, 48))
SMALL = 32  # tokens: bench/chunking/chunking.py's fragment size


@dataclass
class Row:
    """One repository at one budget."""

    budget: str
    edges: EdgeReport = field(default_factory=EdgeReport)
    small: int = 0
    over: int = 0


def measure(folder: Path, budgets: tuple[tuple[int, int], ...]) -> list[Row]:
    """One row per budget over every chunkable file of ``folder`` (parsed once)."""
    repo = open_repository(folder)
    rows = [Row(f"{m}/{n}") for m, n in budgets]
    for source in repo.source_files():
        analysis = analyze(source, ChunkConfig().encoding)
        for (max_tokens, min_tokens), row in zip(budgets, rows, strict=True):
            config = ChunkConfig(max_tokens=max_tokens, min_tokens=min_tokens)
            chunks = chunk_analysis(analysis, config, repo=repo.name)
            row.edges.add(edge_report(analysis, chunks))
            row.small += sum(chunk.token_count < SMALL for chunk in chunks)
            row.over += sum(chunk.token_count > max_tokens for chunk in chunks)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="+", type=Path)
    args = parser.parse_args()
    print("| repository | max/min tokens | chunks | foreign starts | stranded comments |", end="")
    print(f" mid-line starts | under {SMALL} tokens | over budget |")
    print("|---|---|---|---|---|---|---|---|")
    examples: list[str] = []
    for folder in args.folders:
        for row in measure(folder, BUDGETS):
            report = row.edges
            print(
                f"| {folder.name} | {row.budget} | {report.chunks} | {report.foreign_starts} | "
                f"{report.stranded_riders} | {report.mid_line_starts} | {row.small} | {row.over} |"
            )
            examples += [f"{row.budget} {example}" for example in report.examples[:4]]
    print("\nFirst examples:\n" + "\n".join(f"- {example}" for example in examples))


if __name__ == "__main__":
    main()
