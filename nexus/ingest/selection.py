"""Which of a repository's files are chunked: globs and category switches.

Classification says what a file is (``classify``); the selection says whether
Nexus chunks it. A file the selection leaves out is still scanned and listed,
with the reason in ``FileInfo.left_out``. By default only source files are
chunked: tests, generated, vendored and minified code would crowd the index with
near-duplicates and fixtures, so each comes back only when asked for
(``--with-tests``, ``[files] tests = true``, ...).

Globs are gitignore patterns relative to the repository root (``src/``,
``*.ts``, ``lib/**/*.js``, ``!keep.js``): the same language as ``.gitignore``.
Languages (``--language python,go``, ``[files] languages = ["python"]``) keep
only the files of those languages; each must be one Nexus has a grammar for.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from functools import cached_property

import pathspec

from nexus.types import CHUNKABLE_LANGUAGES, SELECTABLE_CATEGORIES, Category, FileInfo

#: The category switches, one per category that is left out unless switched on.
SWITCHES: dict[str, Category] = {
    "tests": Category.TEST,
    "generated": Category.GENERATED,
    "vendored": Category.VENDORED,
    "minified": Category.MINIFIED,
}


@dataclass(frozen=True)
class FileSelection:
    """Globs and category switches; checks itself on construction."""

    include: tuple[str, ...] = ()  # if any: only files matching one of these
    exclude: tuple[str, ...] = ()  # files matching one of these are left out
    languages: tuple[str, ...] = ()  # if any: only files of these languages
    tests: bool = False
    generated: bool = False
    vendored: bool = False
    minified: bool = False

    def __post_init__(self) -> None:
        for name in ("include", "exclude"):
            value = getattr(self, name)
            if isinstance(value, str):
                raise ValueError(f"{name} must be a list of globs, not a string: [{value!r}]")
            patterns = tuple(value)
            if not all(isinstance(p, str) and p.strip() for p in patterns):
                raise ValueError(f"{name} must hold non-empty glob strings, got {patterns!r}")
            try:
                pathspec.GitIgnoreSpec.from_lines(patterns)
            except Exception as exc:  # pathspec raises several types for bad patterns
                raise ValueError(f"{name} holds an invalid glob pattern: {exc}") from exc
            object.__setattr__(self, name, patterns)
        object.__setattr__(self, "languages", _languages(self.languages))
        for name in SWITCHES:
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"{name} must be true or false, got {getattr(self, name)!r}")

    @cached_property
    def _include(self) -> pathspec.GitIgnoreSpec:
        return pathspec.GitIgnoreSpec.from_lines(self.include)

    @cached_property
    def _exclude(self) -> pathspec.GitIgnoreSpec:
        return pathspec.GitIgnoreSpec.from_lines(self.exclude)

    def left_out(self, info: FileInfo) -> str:
        """Why this selection leaves a file out ("" when it is chunked or never could be)."""
        if info.language not in CHUNKABLE_LANGUAGES or info.category not in SELECTABLE_CATEGORIES:
            return ""  # the classification's reason already says why it is not chunked
        if self.exclude and self._exclude.match_file(info.path):
            return "matches an exclude pattern (--exclude / [files] exclude)"
        if self.include and not self._include.match_file(info.path):
            return "matches no include pattern (--include / [files] include)"
        if self.languages and info.language not in self.languages:
            return (
                f"{info.language} is not among the selected languages "
                f"{', '.join(self.languages)} (--language / [files] languages)"
            )
        for switch, category in SWITCHES.items():
            if info.category is category and not getattr(self, switch):
                return (
                    f"{category} files are left out by default "
                    f"(--with-{switch} / [files] {switch} = true)"
                )
        return ""

    def apply(self, info: FileInfo) -> FileInfo:
        """``info`` with ``left_out`` set by this selection."""
        return replace(info, left_out=self.left_out(info))

    def with_(self, **changes: object) -> FileSelection:
        """A copy with some settings changed (validated again)."""
        return replace(self, **changes)

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> FileSelection:
        """Build from a ``[files]`` table, naming unknown keys instead of ignoring them."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown [files] settings {unknown}; known: {sorted(known)}")
        return cls(**data)  # type: ignore[arg-type]


def _languages(value: object) -> tuple[str, ...]:
    """The selected languages, checked: a list of names Nexus chunks, deduplicated."""
    if isinstance(value, str):
        raise ValueError(f"languages must be a list of names, not a string: [{value!r}]")
    names = tuple(value)  # type: ignore[arg-type]
    unknown = [n for n in names if not isinstance(n, str) or n not in CHUNKABLE_LANGUAGES]
    if unknown:
        raise ValueError(
            f"unknown or unsupported language(s) {', '.join(map(repr, unknown))}; "
            f"Nexus chunks {', '.join(sorted(CHUNKABLE_LANGUAGES))}"
        )
    return tuple(dict.fromkeys(names))


def parse_languages(text: str) -> tuple[str, ...]:
    """Language names typed as ``python,go`` or one a line, lower-cased."""
    return tuple(n.strip().lower() for n in text.replace(",", "\n").splitlines() if n.strip())


DEFAULT_SELECTION = FileSelection()
