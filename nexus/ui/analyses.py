"""Parsed files, chunks, unit fates and search targets of the current repository,
cached per file content and settings for every session."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Hashable

from nexus.chunking.analysis import FileAnalysis, analyze
from nexus.chunking.fragmentation import UnitFate, unit_fates
from nexus.chunking.pipeline import chunk_analysis
from nexus.chunking.regex_baseline import regex_functions
from nexus.config import DEFAULT_ENCODING, ChunkConfig, dump_config_toml
from nexus.evaluation.query_sets import Target
from nexus.evaluation.report import function_rows
from nexus.ingest.sources import Repository
from nexus.runtime import footprint
from nexus.types import Chunk, Unit
from nexus.ui import cache, render, repos

#: Estimated bytes of one unit's fate and of one search target (measured: ~130 and ~400).
FATE_BYTES = 200
TARGET_BYTES = 500


def file_key(repo: Repository, path: str, config: ChunkConfig | None = None) -> tuple[str, ...]:
    """What a view of one file depends on: the repository's name (chunk ids carry it),
    the file's path and contents, and the settings."""
    settings = () if config is None else (index_settings(config),)
    return (repo.name, path, repos.file_digest(repo, path), *settings)


def settings_key(config: ChunkConfig) -> tuple[str, str]:
    """What a view of the whole repository depends on: its contents, file selection and
    the settings that change chunks (the keyword weight does not)."""
    return (repos.repo_key(), index_settings(config))


def file_analysis(
    repo: Repository, path: str, encoding: str = DEFAULT_ENCODING, digest: str | None = None
) -> FileAnalysis:
    """The parsed file, cached by path and content hash (parsing is the expensive step).

    Its size is taken again when it grew: it remembers the chunks of each setting it
    was chunked with (summing them on every use took 10-50 ms a rerun on a file of
    thousands of chunks). A build's thread has no session: it passes the ``digest``.
    """
    key = ("analysis", path, digest or repos.file_digest(repo, path), encoding)
    analysis = cache.cached(
        key, lambda: analyze(repo.read(path), encoding), footprint.analysis_bytes
    )
    grown = (id(analysis), len(analysis.built))
    if _SIZED.get(key) != grown:
        cache.memory().resize(key, footprint.analysis_bytes(analysis))
        _SIZED[key] = grown
    return analysis


#: Per analysis cache key: the analysis and how many chunks it remembered when last sized.
_SIZED: dict[Hashable, tuple[int, int]] = {}


def file_chunks(
    repo: Repository, path: str, analysis: FileAnalysis, config: ChunkConfig
) -> list[Chunk]:
    """One file's chunks under ``config`` (``analysis`` is ``file_analysis``'s), kept per
    file content and settings for every session: moving a slider back to a value
    re-chunks nothing (lib.dom.d.ts takes ~0.15 s a time). Callers must not change it."""
    key = ("file_chunks", *file_key(repo, path, config))
    return cache.cached(
        key, lambda: chunk_analysis(analysis, config, repo=repo.name), footprint.chunks_bytes
    )


def repo_analyses(
    repo: Repository,
    encoding: str = DEFAULT_ENCODING,
    progress: Callable[[int, int, str], None] | None = None,
) -> list[FileAnalysis]:
    """Every chunkable file analysed (cached per file); ``progress(done, total, path)``.

    A repository that passed ``check_fits`` holds at most half the budget, so the
    list can be held while the rest of the cache makes room.
    """
    paths = repos.chunkable_paths(repo)
    out = []
    for done, path in enumerate(paths):
        if progress is not None:
            progress(done, len(paths), path)
        out.append(file_analysis(repo, path, encoding))
    return out


def index_settings(config: ChunkConfig) -> str:
    """The settings chunks and indexes depend on: the keyword weight and the ranking are
    applied at query time, so changing them rebuilds nothing."""
    return dump_config_toml(config.with_(lexical_weight=0.0, ranking=True))


def repo_chunks(repo: Repository, config: ChunkConfig) -> list[Chunk]:
    """Chunks of the whole repository under ``config`` (cached by contents + settings;
    files are parsed one at a time, so a file dropped from memory is not held)."""

    def build() -> list[Chunk]:
        chunks: list[Chunk] = []
        for path in repos.chunkable_paths(repo):
            analysis = file_analysis(repo, path, config.encoding)
            chunks.extend(chunk_analysis(analysis, config, repo=repo.name))
        return chunks

    return cache.cached(
        ("chunks", repos.repo_key(), index_settings(config)), build, footprint.chunks_bytes
    )


def unit_rows(repo: Repository, path: str) -> tuple[list[dict[str, object]], int]:
    """The file's units (with ``regex_found``) and how many functions the regex finds
    (shared: callers must not change them)."""

    def build() -> tuple[list[dict[str, object]], int]:
        source = repo.read(path)
        return function_rows(source), len(regex_functions(source.text, str(source.info.language)))

    size = footprint.UNIT_ROWS_BYTES_PER_BYTE * len(repo.contents.get(path, b"")) + 1000
    return cache.cached(("unit_rows", path, repos.file_digest(repo, path)), build, lambda _: size)


def repo_fates(repo: Repository, config: ChunkConfig) -> dict[str, list[UnitFate]]:
    """Per file, what ``config``'s chunks do to each unit (intact, pieces, dilution)."""

    def units_of(path: str) -> list[Unit]:
        return file_analysis(repo, path, config.encoding).units

    def build() -> dict[str, list[UnitFate]]:
        by_file: dict[str, list[Chunk]] = {}
        for chunk in repo_chunks(repo, config):
            by_file.setdefault(chunk.file, []).append(chunk)
        return {
            path: unit_fates(units_of(path), by_file.get(path, []))
            for path in repos.chunkable_paths(repo)
        }

    def size(fates: dict[str, list[UnitFate]]) -> int:
        return sum(FATE_BYTES * len(found) + 200 for found in fates.values())

    return cache.cached(("fates", repos.repo_key(), dump_config_toml(config)), build, size)


#: Seconds a page waits for the unit targets before drawing without them (tests wait
#: longer, so a small repository's list is always there on the first run).
TARGETS_WAIT_S = 2.0
_TARGET_THREADS: dict[Hashable, threading.Thread] = {}
_LOCK = threading.Lock()


def unit_targets(
    repo: Repository, wait_s: float | None = None, start: bool = True
) -> dict[str, Target] | None:
    """Every unit of the repository as a search target, keyed ``path:qualname:start``
    (built once per repository, shared: callers must not change it), or None while a
    thread still parses the files for them (a large repository's first answer must not
    wait for that; ask again). Waits ``wait_s`` (default ``TARGETS_WAIT_S``) for them;
    with ``start=False`` only says whether they are listed (no thread is started)."""
    key = ("targets", repos.repo_key())
    found = cache.memory().get(key)
    if found is not None or not start:
        return found
    digests = {path: repos.file_digest(repo, path) for path in repos.chunkable_paths(repo)}

    def build() -> dict[str, Target]:
        targets = {}
        for path, digest in digests.items():
            for unit in file_analysis(repo, path, digest=digest).units:
                targets[f"{path}:{unit.qualname}:{unit.start_line}"] = Target(
                    file=path,
                    start_line=unit.start_line,
                    end_line=unit.end_line,
                    name=unit.name,
                    qualname=unit.qualname,
                    kind=unit.kind,
                )
        return targets

    with _LOCK:
        thread = _TARGET_THREADS.get(key)
        if thread is None or not thread.is_alive() and key not in cache.memory():
            thread = threading.Thread(
                target=cache.cached,
                args=(key, build, lambda found: TARGET_BYTES * len(found) + 1000),
                name="nexus-unit-targets",
                daemon=True,
            )
            _TARGET_THREADS[key] = thread
            thread.start()
    thread.join(TARGETS_WAIT_S if wait_s is None else wait_s)
    return cache.memory().get(key)


def highlighted(text: str, language: str) -> list[str]:
    """Pygments HTML per line, computed once per file content (not on every rerun;
    shared: callers must not change it)."""
    key = ("highlighted", hashlib.sha256(text.encode()).hexdigest(), language)
    size = footprint.HIGHLIGHT_BYTES_PER_BYTE * len(text) + 1000
    return cache.cached(key, lambda: render.highlighted_lines(text, language), lambda _: size)
