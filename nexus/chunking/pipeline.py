"""Chunk a file or a whole repository with one ``ChunkConfig``: the library's entry point."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from nexus.chunking.analysis import FileAnalysis, UnitTable, analyze
from nexus.chunking.ast import ast_spans
from nexus.chunking.base import build_chunks
from nexus.chunking.lines import line_spans
from nexus.chunking.profiles import Profile, choose_profile, resolve_profile
from nexus.config import ChunkConfig
from nexus.ingest.sources import Repository
from nexus.types import Chunk, SourceFile


def pick_profile(
    analysis: FileAnalysis, config: ChunkConfig, custom: dict[str, Profile] | None = None
) -> tuple[Profile, str]:
    """The profile used for a file, and why (``auto`` decides per file)."""
    named = resolve_profile(config.profile, custom)
    if named is not None:
        return named, f"profile {named.name!r} chosen in the settings"
    return choose_profile(analysis.top_level, analysis.has_jsx)


def chunk_analysis(
    analysis: FileAnalysis,
    config: ChunkConfig,
    *,
    repo: str,
    custom_profiles: dict[str, Profile] | None = None,
) -> list[Chunk]:
    """Chunks of one analysed file (cheap: the parse and tokenization are reused)."""
    if config.strategy == "lines":
        spans = line_spans(analysis, config.line_window, config.line_overlap)
        units = analysis.unit_table
        profile_name = "lines"
    else:
        profile, _ = pick_profile(analysis, config, custom_profiles)
        spans, met = ast_spans(analysis, config.max_tokens, config.min_tokens, profile)
        units = UnitTable(met)
        profile_name = profile.name
    return build_chunks(
        analysis,
        spans,
        units,
        repo=repo,
        strategy=config.strategy,
        profile=profile_name,
        context_header=config.context_header,
    )


def analyze_files(
    files: Iterable[SourceFile],
    encoding: str,
    progress: Callable[[int, str], None] | None = None,
) -> list[FileAnalysis]:
    """Parse and tokenize every file once; ``progress(i, path)`` is called per file."""
    analyses = []
    for index, source in enumerate(files):
        if progress is not None:
            progress(index, source.info.path)
        analyses.append(analyze(source, encoding))
    return analyses


def chunk_analyses(
    analyses: Iterable[FileAnalysis],
    config: ChunkConfig,
    *,
    repo: str,
    custom_profiles: dict[str, Profile] | None = None,
) -> list[Chunk]:
    """Chunks of many analysed files, in file order."""
    chunks: list[Chunk] = []
    for analysis in analyses:
        chunks.extend(chunk_analysis(analysis, config, repo=repo, custom_profiles=custom_profiles))
    return chunks


def chunk_repository(
    repo: Repository,
    config: ChunkConfig,
    *,
    custom_profiles: dict[str, Profile] | None = None,
    progress: Callable[[int, str], None] | None = None,
) -> list[Chunk]:
    """Chunks of every chunkable file of a repository, in path order, in this process.

    Each file's analysis is dropped once it is chunked (``nexus.runtime.stream`` does the
    same on worker processes, file by file).
    """
    chunks: list[Chunk] = []
    for index, source in enumerate(repo.source_files()):
        if progress is not None:
            progress(index, source.info.path)
        analysis = analyze(source, config.encoding)
        chunks += chunk_analysis(analysis, config, repo=repo.name, custom_profiles=custom_profiles)
    return chunks
