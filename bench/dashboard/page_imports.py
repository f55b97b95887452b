"""How many names each dashboard page imports from ``nexus``: a page that only draws
needs few (issue 28: "the pages only draw").

Run: ``.venv/bin/python bench/dashboard/page_imports.py`` (prints a Markdown table). Counts every
name bound by ``from nexus... import a, b`` and every ``import nexus...`` in
``app.py`` and ``pages/*.py``, read with ``ast`` (nothing is imported); and how many of
them come from the pipeline rather than from ``nexus.ui`` (the dashboard's own views
and adapters).
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def nexus_names(source: str) -> list[str]:
    """The names a module binds from ``nexus`` (``module.name``), in order."""
    names = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "nexus":
            names += [f"{node.module}.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.Import):
            names += [a.name for a in node.names if a.name.split(".")[0] == "nexus"]
    return names


def main(root: Path = ROOT) -> None:
    pages = [root / "app.py", *sorted((root / "pages").glob("*.py"))]
    print("| page | lines | names from nexus | of them from the pipeline (not nexus.ui) |")
    print("|---|---|---|---|")
    for page in pages:
        text = page.read_text(encoding="utf-8")
        names = nexus_names(text)
        pipeline = [name for name in names if not name.startswith("nexus.ui.")]
        lines = len(text.splitlines())
        print(f"| {page.relative_to(root)} | {lines} | {len(names)} | {len(pipeline)} |")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT)
