"""Large real source files are chunked by default, exactly like small ones."""

from __future__ import annotations

from pathlib import Path

from nexus.chunking.pipeline import chunk_repository
from nexus.config import ChunkConfig
from nexus.ingest.sources import open_repository
from nexus.types import Category
from tests.helpers import large_typescript


def test_a_5_mb_source_file_is_chunked_whole(tmp_path: Path) -> None:
    text = large_typescript(5_000_000)
    path = tmp_path / "repo" / "src" / "checker.ts"
    path.parent.mkdir(parents=True)
    path.write_text(text, encoding="utf-8")
    repo = open_repository(tmp_path / "repo")
    (info,) = repo.files
    assert (info.category, info.chunkable) == (Category.SOURCE, True), info.reason
    config = ChunkConfig()
    chunks = chunk_repository(repo, config)
    data = text.encode("utf-8")
    assert all(c.token_count <= config.max_tokens for c in chunks)
    assert all(a.end_byte <= b.start_byte for a, b in zip(chunks, chunks[1:], strict=False))
    assert all(c.text == data[c.start_byte : c.end_byte].decode() for c in chunks)
    covered = b"".join(data[c.start_byte : c.end_byte] for c in chunks)
    assert b"".join(covered.split()) == b"".join(data.split())  # every visible byte, once
    assert "Service999" in {c.symbol for c in chunks}
