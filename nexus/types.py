"""The plain data that flows between Nexus modules: files, units, chunks.

Records are frozen dataclasses (cached, hashed, pickled), except the two built by
the thousand per file, ``Unit`` and ``Chunk``: slotted and not frozen, because a
frozen dataclass sets each field through ``object.__setattr__`` and builds 5x
slower (about 3 ms of the chunking benchmark's 105 ms floor). Treat them as
read-only all the same: chunks are cached and shared between re-chunks of a file.
Line numbers are 1-based and inclusive; byte offsets index the file's UTF-8
bytes (``SourceFile.data``), never a ``str``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from nexus.chunking.languages import LANGUAGES


class Category(StrEnum):
    """What a file is, which decides whether it is chunked."""

    SOURCE = "source"
    TEST = "test"
    CONFIG = "config"
    DOCS = "docs"
    GENERATED = "generated"
    VENDORED = "vendored"
    MINIFIED = "minified"
    LOCKFILE = "lockfile"
    BINARY = "binary"
    TOO_LARGE = "too_large"
    UNSUPPORTED = "unsupported"


#: Languages Nexus parses and chunks: one per ``LanguageSpec``; other recognised
#: languages are only reported.
CHUNKABLE_LANGUAGES = frozenset(LANGUAGES)

#: Categories whose files may be chunked (when their language is chunkable); the file
#: selection (``nexus.ingest.selection``) decides which are: by default only ``source``.
SELECTABLE_CATEGORIES = frozenset(
    {Category.SOURCE, Category.TEST, Category.GENERATED, Category.VENDORED, Category.MINIFIED}
)


@dataclass(frozen=True)
class FileInfo:
    """One file of a repository and how it was classified."""

    path: str  # POSIX path relative to the repository root
    size: int  # bytes on disk / in the zip
    category: Category
    language: str | None  # "javascript", "tsx", "python", "json", "markdown", ... or None
    reason: str  # human-readable: why this category
    # Why the file selection leaves it out ("" = it does not; None = no selection was
    # applied, so the default holds: only source files are chunked).
    left_out: str | None = None

    @property
    def chunkable(self) -> bool:
        """Chunked: a chunkable language and a category the selection keeps."""
        if self.language not in CHUNKABLE_LANGUAGES:
            return False
        if self.left_out is None:
            return self.category is Category.SOURCE
        return not self.left_out and self.category in SELECTABLE_CATEGORIES


@dataclass(frozen=True)
class SourceFile:
    """The decoded content of a file, ready to parse.

    ``data`` is the UTF-8 encoding of ``text`` (after a BOM is removed and invalid
    bytes are replaced with U+FFFD), so tree-sitter byte offsets index ``data``
    and ``data[a:b].decode()`` is always safe at node boundaries.
    """

    info: FileInfo
    text: str
    data: bytes
    decode_errors: int = 0  # count of invalid UTF-8 sequences replaced
    had_bom: bool = False


@dataclass(slots=True)  # read-only by convention: see the module docstring
class Unit:
    """A function-like or type-like definition found in a file (see ``nexus.chunking.extract``)."""

    name: str  # bare name, e.g. "createSubscription" ("<anonymous>" if none)
    qualname: str  # symbol path, e.g. "PaymentService.createSubscription"
    kind: str  # function, arrow, function_expression, method, constructor, getter, ...
    start_line: int
    end_line: int
    start_byte: int
    end_byte: int
    parent: str | None  # qualname of the enclosing unit, if any
    exported: bool = False

    @property
    def n_lines(self) -> int:
        return self.end_line - self.start_line + 1


@dataclass(slots=True)  # read-only by convention: see the module docstring
class Chunk:
    """One retrievable piece of a file: its exact source slice plus metadata.

    Invariant: ``text == data[start_byte:end_byte].decode()`` of its file.
    """

    id: str
    repo: str
    file: str
    language: str
    strategy: str  # "ast" or "lines"
    start_line: int
    end_line: int
    start_byte: int
    end_byte: int
    token_count: int
    text: str
    context: str = ""  # the context line put before the code when it is embedded
    symbol: str | None = None  # qualname of the main unit in the chunk
    symbol_kind: str | None = None
    parent: str | None = None
    symbols: tuple[str, ...] = ()  # the units it holds at its own level (not closures)
    imports: tuple[str, ...] = ()  # file imports the chunk uses
    exported: bool = False
    profile: str = ""
    has_error: bool = False
    # The chunk starts after code on its first line, which the chunk before ends on:
    # a cut no line break could take (a line over the budget, or no cut that fits).
    starts_mid_line: bool = False

    @property
    def n_lines(self) -> int:
        return self.end_line - self.start_line + 1

    @property
    def embedding_text(self) -> str:
        """The text that is embedded: the context line, then the code."""
        return f"{self.context}\n{self.text}" if self.context else self.text

    def to_dict(self) -> dict[str, object]:
        """The JSONL export record (one chunk per line), ``embedding_text`` included."""
        record = {name: getattr(self, name) for name in self.__dataclass_fields__}
        record["symbols"] = list(self.symbols)
        record["imports"] = list(self.imports)
        record["embedding_text"] = self.embedding_text
        return record

    @classmethod
    def from_dict(cls, record: dict[str, object]) -> Chunk:
        """Inverse of ``to_dict``."""
        data = {k: v for k, v in record.items() if k in cls.__dataclass_fields__}
        data["symbols"] = tuple(data.get("symbols", ()))  # type: ignore[arg-type]
        data["imports"] = tuple(data.get("imports", ()))  # type: ignore[arg-type]
        return cls(**data)  # type: ignore[arg-type]


@dataclass(frozen=True)
class ScanReport:
    """What ingestion saw: every file with its category, plus repository-level notes."""

    repo: str
    files: tuple[FileInfo, ...]
    notes: tuple[str, ...] = field(default_factory=tuple)
