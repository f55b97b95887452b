"""Nexus: syntax-aware chunking of code repositories for retrieval."""

__version__ = "0.1.0"
