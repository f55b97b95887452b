"""How many bytes of memory the things the dashboard keeps take, estimated cheaply.

Measuring a live object graph (tree-sitter trees, numpy arrays, usearch graphs) on
every cache insert would cost more than the work it guards, so sizes come from a
few figures measured once and scaled by what is cheap to count: bytes of source,
chunks, vector dimensions. ``bench/memory/server_memory.py`` re-measures them (tracemalloc,
which sees tree-sitter's allocations because py-tree-sitter allocates through
Python's allocator, and process RSS for usearch) and prints estimate vs measured.

Measured (tracemalloc, Python 3.11, tree-sitter-javascript; 1 MB generated plain JS
files and the sample repositories):

* a parsed file (``FileAnalysis``: tree ~38 B, token index ~2.7 B, units, imports
  and top-level classification ~3.8 B per source byte): 41-45 B per source byte on
  the generated files, 32-37 on the sample repositories. ``ANALYSIS_BYTES_PER_BYTE``
  takes the high end, so estimates err high.
* a ``Chunk``: ~900 B of fields and metadata plus its text.
* an index: its vectors twice (numpy for exact search, usearch for the graph) plus
  ~500 B per chunk of keys and graph links; the BM25 table ~1 B per byte of text.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from nexus.chunking.analysis import FileAnalysis
from nexus.ingest.sources import Repository
from nexus.types import Chunk

ANALYSIS_BYTES_PER_BYTE = 45
ANALYSIS_BYTES_PER_FILE = 4_000
CHUNK_BYTES = 900
INDEX_BYTES_PER_CHUNK = 500
LEXICAL_BYTES_PER_BYTE = 1.1
#: Per-file extras computed for one page (unit rows, highlighted lines), per source byte.
UNIT_ROWS_BYTES_PER_BYTE = 3
HIGHLIGHT_BYTES_PER_BYTE = 12


def parse_bytes(source_bytes: int) -> int:
    """Estimated footprint of one parsed file of ``source_bytes`` bytes."""
    return ANALYSIS_BYTES_PER_BYTE * source_bytes + ANALYSIS_BYTES_PER_FILE


def repo_parse_bytes(repo: Repository) -> int:
    """Estimated footprint of every chunkable file of ``repo`` parsed (before parsing)."""
    return sum(parse_bytes(info.size) for info in repo.files if info.chunkable)


def repo_bytes(repo: Repository) -> int:
    """The repository's kept contents (bytes objects and their paths)."""
    return sum(len(data) + len(path) + 100 for path, data in repo.contents.items())


def chunk_bytes(chunk: Chunk) -> int:
    return CHUNK_BYTES + len(chunk.text) + len(chunk.context)


def chunks_bytes(chunks: Iterable[Chunk]) -> int:
    return sum(chunk_bytes(c) for c in chunks)


def analysis_bytes(analysis: FileAnalysis) -> int:
    """A parsed file, with the chunks it remembers from earlier chunkings (``built``
    grows with every new setting; those chunks may also be counted in a chunk list,
    so the estimate errs high)."""
    return parse_bytes(len(analysis.data)) + chunks_bytes(analysis.built.values())


def index_bytes(chunks: Sequence[Chunk], dim: int) -> int:
    """A vector index of ``chunks`` with ``dim``-dimensional float32 vectors and its
    BM25 table (the chunks themselves are counted in their chunk list)."""
    text = sum(len(c.text) + len(c.context) for c in chunks)
    return len(chunks) * (2 * 4 * dim + INDEX_BYTES_PER_CHUNK) + int(LEXICAL_BYTES_PER_BYTE * text)
