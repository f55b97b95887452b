"""Chunkers: the recursive AST chunker and the fixed-line baseline, over one Chunk type."""

# Bumped whenever the chunks (text, ranges, metadata, context line) for the same files and
# settings change. Saved indexes are keyed by it, so an index built by an older chunker is
# rebuilt, never served; tests/test_chunks_version.py fails until it is bumped.
CHUNKS_VERSION = 2
