"""Every relative link in the README and docs/ points at a file (and heading) that exists.

Docs move between files as the project grows; a link that silently breaks sends a newcomer
nowhere, so the links are checked like code.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "bench" / "README.md"]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to dashes."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    return {slug(m.group(1)) for m in re.finditer(r"^#+\s+(.*)$", text, re.MULTILINE)}


def relative_links(page: Path) -> list[str]:
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    return [t for t in LINK.findall(text) if not re.match(r"[a-z]+:", t)]


def broken_links(page: Path) -> list[str]:
    broken = []
    for target in relative_links(page):
        path_part, _, anchor = target.partition("#")
        dest = (page.parent / path_part).resolve() if path_part else page
        if not dest.exists():
            broken.append(f"{target} (no such file)")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            broken.append(f"{target} (no heading #{anchor})")
    return broken


@pytest.mark.parametrize("page", [p for p in PAGES if p.exists()], ids=lambda p: p.name)
def test_every_relative_link_resolves(page: Path) -> None:
    assert broken_links(page) == []


def test_the_checker_finds_a_broken_link(tmp_path: Path) -> None:
    (tmp_path / "there.md").write_text("# Here it is\n", encoding="utf-8")
    page = tmp_path / "page.md"
    page.write_text(
        "[ok](there.md) [ok](there.md#here-it-is) [web](https://x.y/z)\n"
        "[gone](missing.md) [bad](there.md#nowhere)\n```\n[code](not-a-link.md)\n```\n",
        encoding="utf-8",
    )
    assert broken_links(page) == [
        "missing.md (no such file)",
        "there.md#nowhere (no heading #nowhere)",
    ]


#: A file of the repository named in running text or a command: ``nexus/retrieval/rescore.py``,
#: ``bench/speed/scale.py``. Modules and scripts move; the pages must follow them.
NAMED_FILE = re.compile(
    r"(?<![\w./-])((?:nexus|bench|tests|scripts)/[\w./-]*\w\.(?:py|md|json|sh))"
)


def missing_files(page: Path, root: Path = ROOT) -> list[str]:
    text = page.read_text(encoding="utf-8")
    return sorted({p for p in NAMED_FILE.findall(text) if not (root / p).exists()})


@pytest.mark.parametrize("page", [p for p in PAGES if p.exists()], ids=lambda p: p.name)
def test_every_named_file_exists(page: Path) -> None:
    assert missing_files(page) == []


def test_the_checker_finds_a_file_that_moved(tmp_path: Path) -> None:
    (tmp_path / "nexus").mkdir()
    (tmp_path / "nexus" / "here.py").write_text("", encoding="utf-8")
    page = tmp_path / "page.md"
    page.write_text(
        "`nexus/here.py`, `python bench/gone.py --help`, ../shared/nexus/x.py, "
        "see nexus/here.py.\n",
        encoding="utf-8",
    )
    assert missing_files(page, tmp_path) == ["bench/gone.py"]
