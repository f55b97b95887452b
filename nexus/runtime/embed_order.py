"""The order a background build embeds its chunks in: most useful files first.

Every chunk is searchable by keywords as soon as the files are chunked; the order only
decides which part of the repository dense search covers first. Chunks already in the
embedding cache come first (they cost a cache read, not the model: a build resumed
after a restart answers densely over all of them at once), then the files in
``file_rank`` order: package sources (in ``src``/``lib`` first) before tests, before
examples, fixtures, scripts and the root's configuration files, before docs and
dot-files; shallow before deep within a tier; ties by path.
On sentry-javascript in path order the first hits came from ``.agents/skills/``.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from pathlib import PurePosixPath

from nexus.types import Chunk

SOURCE, TESTS, SUPPORT, DOCS = 0, 1, 2, 3

#: Folders whose files test the code rather than are it.
TEST_DIRS = frozenset({"test", "tests", "__tests__", "spec", "specs", "e2e", "integration-tests"})
#: Folders of code around the product: examples, fixtures, benchmarks, scripts, mocks.
SUPPORT_DIRS = frozenset(
    {
        "example",
        "examples",
        "fixture",
        "fixtures",
        "__fixtures__",
        "mocks",
        "__mocks__",
        "__snapshots__",
        "bench",
        "benchmark",
        "benchmarks",
        "scripts",
        "demo",
        "demos",
        "samples",
        "playground",
        "dev-packages",
        "vendor",
    }
)
#: Folders of prose about the code.
DOC_DIRS = frozenset({"doc", "docs", "documentation", "guide", "guides"})
#: File name parts that mark a test file (``foo.test.ts``, ``test_foo.py``, ``foo_test.go``).
TEST_MARKS = (".test.", ".spec.", "test_", "_test.", "-test.")
#: Folders that hold a package's own code: their files come before the other sources of
#: a tier (a package's root holds its build and test set-up).
SOURCE_DIRS = frozenset({"src", "lib", "source", "sources"})
#: Extensions of prose files (read by keywords as well as anything; embedded last).
DOC_SUFFIXES = frozenset({".md", ".mdx", ".rst", ".txt", ".adoc"})


def file_tier(path: str) -> int:
    """``SOURCE``, ``TESTS``, ``SUPPORT`` or ``DOCS``: how useful a file's chunks are to
    a first dense answer (lower first)."""
    pure = PurePosixPath(path)
    folders = [part.lower() for part in pure.parts[:-1]]
    name = pure.name.lower()
    if pure.suffix.lower() in DOC_SUFFIXES or any(f in DOC_DIRS for f in folders):
        return DOCS
    if name.startswith(".") or any(f.startswith(".") for f in folders):  # .github, .agents
        return DOCS
    # Files at the root and ``*.config.*`` files configure the build; they are not it.
    if not folders or ".config." in name or any(f in SUPPORT_DIRS for f in folders):
        return SUPPORT
    if any(f in TEST_DIRS for f in folders) or any(mark in name for mark in TEST_MARKS):
        return TESTS
    return SOURCE


def file_rank(path: str) -> tuple[int, bool, int, str]:
    """The sort key of a file: its tier, whether it is outside a ``SOURCE_DIRS`` folder,
    its depth in folders, its path."""
    folders = path.lower().split("/")[:-1]
    outside = not any(folder in SOURCE_DIRS for folder in folders)
    return file_tier(path), outside, len(folders), path


def embedding_order(chunks: Sequence[Chunk], cached: Collection[int] = ()) -> list[Chunk]:
    """``chunks`` in the order to embed them: the positions in ``cached`` first (in
    their order), then the others by ``file_rank`` of their file, each file's chunks in
    their own order (the sort is stable)."""
    first = [chunks[i] for i in sorted(cached)]
    taken = set(cached)
    rest = [chunk for i, chunk in enumerate(chunks) if i not in taken]
    ranks = {path: file_rank(path) for path in {chunk.file for chunk in rest}}
    return first + sorted(rest, key=lambda chunk: ranks[chunk.file])


def file_ends(chunks: Sequence[Chunk]) -> list[int]:
    """For each file, how many of ``chunks`` must be embedded before all of its chunks
    are, ascending: ``bisect_right(ends, done)`` files are embedded once ``done`` are."""
    ends: dict[str, int] = {}
    for position, chunk in enumerate(chunks, start=1):
        ends[chunk.file] = position
    return sorted(ends.values())
