"""Ignore rules, lowest priority first: ``default_ignores``, then each ``.gitignore``
from the root down (each relative to its own directory), then ``ignore_patterns``.

Like git, a file inside an ignored directory cannot be re-included, and ignored
directories are not walked. Ignored files are not listed; the notes count them.
"""

from __future__ import annotations

from collections import Counter

import pathspec

from nexus.ingest.repository import IngestSettings


class IgnoreRules:
    """Layered gitignore specs; later layers (deeper .gitignore, extra patterns) win."""

    def __init__(self, settings: IngestSettings) -> None:
        self._defaults = pathspec.GitIgnoreSpec.from_lines(settings.default_ignores)
        self._extra = pathspec.GitIgnoreSpec.from_lines(settings.ignore_patterns)
        self._gitignores: dict[str, pathspec.GitIgnoreSpec] = {}  # "" or "a/b/" -> spec
        self._dir_memo: dict[str, bool] = {}
        self.counts: Counter[tuple[str, str]] = Counter()  # (files|directories, source)
        self.notes: list[str] = []

    def add_gitignore(self, directory: str, raw: bytes) -> None:
        """Load the .gitignore of ``directory`` ("" for the root)."""
        lines = raw.decode("utf-8", errors="replace").splitlines()
        where = f"{directory}/.gitignore" if directory else ".gitignore"
        try:
            spec = pathspec.GitIgnoreSpec.from_lines(lines)
        except Exception:  # keep the good lines of a file with a bad pattern
            good = [line for line in lines if _valid_pattern(line)]
            self.notes.append(f"skipped {len(lines) - len(good)} invalid pattern(s) in {where}")
            spec = pathspec.GitIgnoreSpec.from_lines(good)
        self._gitignores[f"{directory}/" if directory else ""] = spec

    def rule(self, rel: str, is_dir: bool) -> str | None:
        """Which rule source ignores ``rel`` itself (ancestors not checked), or None."""
        parts = rel.split("/")
        layers: list[tuple[str, str, pathspec.GitIgnoreSpec]] = [
            ("", "default ignores", self._defaults)
        ]
        for depth in range(len(parts)):
            base = "/".join(parts[:depth]) + "/" if depth else ""
            if base in self._gitignores:
                layers.append((base, ".gitignore", self._gitignores[base]))
        layers.append(("", "ignore_patterns", self._extra))
        verdict: str | None = None
        for base, source, spec in layers:
            include = spec.check_file(rel[len(base) :] + ("/" if is_dir else "")).include
            if include is not None:
                verdict = source if include else None
        return verdict

    def ignored(self, rel: str, is_dir: bool) -> bool:
        """Check ``rel`` and count it if ignored (its ancestors must already be checked)."""
        source = self.rule(rel, is_dir)
        if source is not None:
            self.counts[("directories" if is_dir else "files", source)] += 1
        return source is not None

    def ignored_with_ancestors(self, rel: str) -> bool:
        """For flat listings (zips): a file is ignored if any ancestor directory is."""
        parts = rel.split("/")
        for depth in range(1, len(parts)):
            directory = "/".join(parts[:depth])
            if directory not in self._dir_memo:
                self._dir_memo[directory] = self.ignored(directory, is_dir=True)
            if self._dir_memo[directory]:
                return True
        return self.ignored(rel, is_dir=False)

    def summary(self) -> list[str]:
        if not self.counts:
            return list(self.notes)
        files = sum(n for (kind, _), n in self.counts.items() if kind == "files")
        dirs = sum(n for (kind, _), n in self.counts.items() if kind == "directories")
        by_source = Counter[str]()
        for (_, source), n in self.counts.items():
            by_source[source] += n
        sources = ", ".join(f"{source}: {n}" for source, n in sorted(by_source.items()))
        file_word = "file" if files == 1 else "files"
        dir_word = "directory" if dirs == 1 else "directories"
        line = (
            f"{files} {file_word} and {dirs} {dir_word} ignored ({sources}); "
            "ignored directories are not read"
        )
        return [*self.notes, line]


def _valid_pattern(line: str) -> bool:
    try:
        pathspec.GitIgnoreSpec.from_lines([line])
    except Exception:
        return False
    return True
