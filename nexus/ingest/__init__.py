"""Ingestion: read a folder or zip safely, apply ignore rules, classify and select files.

Takes a path or an archive; hands on a ``Repository`` of ``SourceFile``s and a ``ScanReport``.
``sources.open_repository`` is the way in; ``folders``, ``zips`` and ``ignore`` read,
``repository`` holds what they hand on, ``classify`` and ``selection`` decide each file.
"""
