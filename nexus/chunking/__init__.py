"""Chunking: languages as data, unit extraction, the recursive AST chunker, token counts.

Takes ``SourceFile``s and a ``ChunkConfig``; hands on ``Chunk``s with metadata and context.
"""

# Bumped whenever the chunks (text, ranges, metadata, context line) for the same files and
# settings change. Saved indexes are keyed by it, so an index built by an older chunker is
# rebuilt, never served; tests/test_chunks_version.py fails until it is bumped.
CHUNKS_VERSION = 6
