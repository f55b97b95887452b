"""Retrieval: embed chunks (with a cache), index them by vector and keyword, rank, search.

Takes ``Chunk``s; hands on a searchable index and ranked ``Hit``s for a query.
"""
