"""What a settings change did to a file's chunks, in words a user can check.

After a slider or profile move the dashboard says which chunks are new, which are
gone and which boundaries moved, or plainly that nothing changed (at 512/64 every
profile gives the same chunks on many files; a bigger budget often does too).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields

from nexus.config import ChunkConfig
from nexus.types import Chunk


@dataclass(frozen=True)
class ChunkDiff:
    """Two chunkings of one file compared by their byte spans."""

    before: int  # chunks before
    after: int  # chunks after
    kept: int  # chunks with the same span in both
    added: tuple[tuple[int, int], ...]  # line spans only in the new chunks
    removed: tuple[tuple[int, int], ...]  # line spans only in the old chunks
    moved: tuple[int, ...]  # lines where a chunk starts in one chunking but not the other

    @property
    def unchanged(self) -> bool:
        return not self.added and not self.removed

    def summary(self) -> str:
        """One sentence: the counts, and the first lines where the boundaries differ."""
        if self.unchanged:
            return f"Nothing changed: the same {self.after} chunks as before."
        text = (
            f"{self.before} → {self.after} chunks: {self.kept} unchanged, "
            f"{len(self.added)} new, {len(self.removed)} gone"
        )
        if self.moved:
            lines = ", ".join(f"L{n}" for n in self.moved[:6])
            more = f" and {len(self.moved) - 6} more" if len(self.moved) > 6 else ""
            text += f"; boundaries differ at {lines}{more}"
        return text + "."


def diff_chunks(before: Sequence[Chunk], after: Sequence[Chunk]) -> ChunkDiff:
    """Compare two chunkings of the same file."""
    old = {(c.start_byte, c.end_byte): (c.start_line, c.end_line) for c in before}
    new = {(c.start_byte, c.end_byte): (c.start_line, c.end_line) for c in after}
    starts_old = {c.start_line for c in before}
    starts_new = {c.start_line for c in after}
    return ChunkDiff(
        before=len(before),
        after=len(after),
        kept=len(old.keys() & new.keys()),
        added=tuple(sorted(lines for span, lines in new.items() if span not in old)),
        removed=tuple(sorted(lines for span, lines in old.items() if span not in new)),
        moved=tuple(sorted(starts_old ^ starts_new)),
    )


def setting_changes(old: ChunkConfig, new: ChunkConfig) -> list[str]:
    """``["max_tokens 512 → 1024"]``: the settings that differ, in field order."""
    return [
        f"{f.name} {getattr(old, f.name)} → {getattr(new, f.name)}"
        for f in fields(ChunkConfig)
        if getattr(old, f.name) != getattr(new, f.name)
    ]
