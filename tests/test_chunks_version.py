"""The chunker's output is pinned to CHUNKS_VERSION, which keys saved indexes."""

import hashlib
import json
from pathlib import Path

from nexus.chunking import CHUNKS_VERSION
from nexus.chunking.pipeline import chunk_repository
from nexus.chunking.profiles import PROFILE_NAMES
from nexus.config import ChunkConfig
from nexus.ingest.sources import open_repository

TESTS = Path(__file__).resolve().parent
# The sample repositories hold JS, TS, TSX, Python and C#; tests/data/polyglot Go, Java and Rust;
# tests/data/parse_errors a file whose root is ERROR (since version 3).
REPOSITORIES = sorted(p for p in (TESTS.parent / "sample_repos").iterdir() if p.is_dir())
REPOSITORIES += [TESTS / "data" / "polyglot", TESTS / "data" / "parse_errors"]

# The digest of every test repository's chunks for each CHUNKS_VERSION. When a change
# moves a chunk, bump CHUNKS_VERSION and record the new digest, so saved indexes rebuild.
DIGESTS = {
    2: "049bf7ffe6a0be6521a517e731a62332de2a09ae6722798815fd27dca23a92be",  # without parse_errors
    # A file whose root is ERROR is read again in blocks (nexus/chunking/recovery.py);
    # version 2's chunker gave dd3b1c87... for these repositories.
    3: "956f7929bb74765a0dbf891a3d088efd18df351c647603b477e379f2ae46b263",
    # Definitions inside a Python try/if/with placed whole now name their chunk
    # (LanguageSpec.definition_blocks); the sample repositories hold no such block, so
    # their digest is version 3's, but saved indexes of other code must relabel.
    4: "956f7929bb74765a0dbf891a3d088efd18df351c647603b477e379f2ae46b263",
    # A unit that opens a top-level block holding a syntax error runs to the block's end
    # (recovery.stretch): hono's HandlerInterface pieces are named after it, no longer
    # module code. And C# (sample_repos/inventory_csharp).
    5: "fc1f97e2abd946f2ca660e7227ccc4e3761147be7f2c371ee7ab2357c6da4038",
    # Chunk edges on unit edges (issue 41): the tail of a split function joins its own
    # function, a leading comment placed apart never joins the chunk before, a cut inside
    # a line moves to a line break where the budget allows, and every chunk says whether
    # it starts mid-line (the new field ``starts_mid_line``).
    6: "8d5f5659fbdb35988215145ec724edd28f79a372798c7541ea1d604eb886f17f",
}


def chunks_digest() -> str:
    """sha256 of every chunk record of every test repository, both strategies, each profile."""
    # Budgets pinned: the digests follow the chunker, not the defaults (512/64 until 2 Dec).
    base = ChunkConfig(max_tokens=512, min_tokens=64)
    configs = [base.with_(profile=name) for name in PROFILE_NAMES]
    configs += [base.with_(strategy="lines"), ChunkConfig(max_tokens=128, min_tokens=16)]
    digest = hashlib.sha256()
    for folder in REPOSITORIES:
        repo = open_repository(folder)
        for config in configs:
            for chunk in chunk_repository(repo, config):
                digest.update(json.dumps(chunk.to_dict(), sort_keys=True).encode() + b"\n")
    return digest.hexdigest()


def test_chunk_output_matches_its_version() -> None:
    assert chunks_digest() == DIGESTS[CHUNKS_VERSION], (
        "the chunks of the sample repositories changed: bump nexus.chunking.CHUNKS_VERSION "
        "and record the new digest in DIGESTS"
    )
