"""The chunking contract on every file of every bundled sample repo, at several budgets."""

from __future__ import annotations

from pathlib import Path

import pytest

from nexus.chunking.analysis import analyze
from nexus.chunking.pipeline import chunk_analysis
from nexus.config import ChunkConfig
from nexus.evaluation.query_sets import load_queries
from nexus.ingest.sources import open_repository
from tests.chunking.test_chunking_invariants import check_invariants

SAMPLES = Path(__file__).resolve().parents[1] / "sample_repos"
REPOS = sorted(p.name for p in SAMPLES.iterdir() if p.is_dir())


@pytest.fixture(scope="module", params=REPOS)
def analyses(request):
    repo = open_repository(SAMPLES / request.param)
    return repo, [analyze(source, ChunkConfig().encoding) for source in repo.source_files()]


@pytest.mark.parametrize("budget", [(64, 0), (256, 16), (512, 64)])
@pytest.mark.parametrize("profile", ["auto", "oop", "functional", "frontend"])
def test_invariants_on_every_sample_file(analyses, budget, profile):
    repo, files = analyses
    max_tokens, min_tokens = budget
    config = ChunkConfig(max_tokens=max_tokens, min_tokens=min_tokens, profile=profile)
    for analysis in files:
        chunks = chunk_analysis(analysis, config, repo=repo.name)
        check_invariants(analysis, chunks, max_tokens)
        lone = [c for c in chunks if c.text.strip() in {"}", "{", ")", "};", "});", "export"}]
        assert not lone, f"{analysis.source.info.path}: lone brace or keyword chunks {lone}"


def test_sample_repos_have_query_sets_whose_targets_exist():
    for name in REPOS:
        queries = load_queries(SAMPLES / name / "queries.jsonl")
        assert len(queries) >= 20
        for query in queries:
            lines = (SAMPLES / name / query.target.file).read_text().splitlines()
            assert query.target.end_line <= len(lines)
            span = lines[query.target.start_line - 1 : query.target.end_line]
            header = next(line for line in span if not line.lstrip().startswith("@"))
            assert query.target.name in header, query.id  # decorators come first


def test_broken_file_chunks_and_flags_its_errors():
    repo = open_repository(SAMPLES / "express-images")
    source = repo.read("src/legacy/broken.js")
    analysis = analyze(source, ChunkConfig().encoding)
    chunks = chunk_analysis(analysis, ChunkConfig(), repo=repo.name)
    check_invariants(analysis, chunks, ChunkConfig().max_tokens)
    assert any(c.has_error for c in chunks)


def test_python_query_targets_are_exactly_the_units_nexus_finds():
    """The Python sample sets are machine-checked: each target is a unit Nexus extracts,
    with the same qualified name, kind and lines."""
    for name in REPOS:
        repo = open_repository(SAMPLES / name)
        for query in load_queries(SAMPLES / name / "queries.jsonl"):
            if not query.target.file.endswith(".py"):
                continue
            units = analyze(repo.read(query.target.file), ChunkConfig().encoding).units
            found = {(u.qualname, u.kind, u.start_line, u.end_line) for u in units}
            target = query.target
            assert (target.qualname, target.kind, target.start_line, target.end_line) in found
