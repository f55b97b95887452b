"""The order a build embeds in: cached chunks, then sources, tests, support, docs."""

from __future__ import annotations

import bisect

import pytest
from helpers import make_chunk

from nexus.runtime.embed_order import (
    DOCS,
    SOURCE,
    SUPPORT,
    TESTS,
    embedding_order,
    file_ends,
    file_rank,
    file_tier,
)


@pytest.mark.parametrize(
    ("path", "tier"),
    [
        ("packages/core/src/index.ts", SOURCE),
        ("src/app.py", SOURCE),
        ("packages/core/test/client.test.ts", TESTS),
        ("packages/core/src/client.spec.ts", TESTS),
        ("nexus/test_cli.py", TESTS),
        ("pkg/server_test.go", TESTS),
        ("packages/angular/setup-test.ts", TESTS),
        ("dev-packages/e2e-tests/app/page.tsx", SUPPORT),
        ("packages/node/fixtures/app.js", SUPPORT),
        ("examples/basic/main.py", SUPPORT),
        ("scripts/release.js", SUPPORT),
        ("typedoc.js", SUPPORT),
        ("packages/core/vite.config.ts", SUPPORT),
        (".size-limit.js", DOCS),
        ("docs/guide/setup.md", DOCS),
        ("packages/core/README.md", DOCS),
        (".agents/skills/triage/run.py", DOCS),
        (".github/workflows/lint.js", DOCS),
    ],
)
def test_each_file_gets_its_tier(path: str, tier: int) -> None:
    assert file_tier(path) == tier


def test_src_folders_first_shallow_before_deep_and_ties_by_path() -> None:
    paths = [
        "packages/core/src/utils/deep/x.ts",
        "packages/b/src/index.ts",
        "packages/a/src/index.ts",
        "packages/a/browser.js",
        "docs/a.md",
        "packages/a/test/index.test.ts",
    ]
    assert sorted(paths, key=file_rank) == [
        "packages/a/src/index.ts",
        "packages/b/src/index.ts",
        "packages/core/src/utils/deep/x.ts",
        "packages/a/browser.js",  # a package's root, outside its src: after every src
        "packages/a/test/index.test.ts",
        "docs/a.md",
    ]


def test_cached_chunks_come_first_then_files_by_rank_each_in_its_own_order() -> None:
    chunks = [
        make_chunk("doc1", file="docs/a.md"),
        make_chunk("doc2", file="docs/a.md"),
        make_chunk("test1", file="src/a.test.ts"),
        make_chunk("src2", file="src/b.ts", start=20),
        make_chunk("src1", file="src/b.ts", start=1),  # the file's own order is kept
        make_chunk("src3", file="src/a.ts"),
    ]
    ordered = embedding_order(chunks, cached=[2, 1])
    assert [c.id for c in ordered] == ["doc2", "test1", "src3", "src2", "src1", "doc1"]
    assert sorted(c.id for c in embedding_order(chunks)) == sorted(c.id for c in chunks)


def test_file_ends_count_the_files_whose_every_chunk_is_in() -> None:
    ordered = [
        make_chunk("a1", file="a.ts"),
        make_chunk("b1", file="b.ts"),
        make_chunk("a2", file="a.ts"),
        make_chunk("c1", file="c.ts"),
    ]
    ends = file_ends(ordered)
    assert ends == [2, 3, 4]
    embedded = [bisect.bisect_right(ends, done) for done in range(5)]
    assert embedded == [0, 0, 1, 2, 3]  # a.ts only once its second chunk is in
