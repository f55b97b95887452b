"""Chunkers: the recursive AST chunker and the fixed-line baseline, over one Chunk type."""
