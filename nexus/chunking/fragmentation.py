"""How chunks treat units: intact, split into pieces, or diluted by unrelated code.

This is the measurement behind the claim that line windows cut functions in half
and pad the rest; the compare page and the chunking benchmark both use it.

A unit is *split* when a chunk boundary falls inside its code. A class (interface,
impl, ...) too large for one chunk is *divided* between its members instead: its
members are whole, or are split themselves and counted as such. Counting the class
as split counted every chunk of it as a piece (hono's ``Hono`` class: 15 pieces,
none of its methods cut), so AST chunking read worse than line windows.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from itertools import accumulate
from statistics import mean

from nexus.chunking.profiles import TYPE_KINDS
from nexus.types import Chunk, Unit

#: Units made of members: when no chunk holds all of one, it is divided between its
#: members, not split (a cut in a member splits the member). A type alias is no
#: container: a cut in it cuts its definition.
CONTAINER_KINDS = TYPE_KINDS - {"type"}


@dataclass(frozen=True)
class UnitFate:
    """What the chunks of a file did to one unit."""

    unit: Unit
    pieces: int  # chunks holding part of the unit (1 when intact)
    intact: bool  # one chunk holds the whole unit
    dilution: float  # share of that chunk's lines that are the unit's own (1.0 = pure)

    @property
    def divided(self) -> bool:
        """Not in one chunk, but a container: divided between its members, not split."""
        return not self.intact and self.unit.kind in CONTAINER_KINDS

    @property
    def split(self) -> bool:
        """A chunk boundary falls inside the unit's own code."""
        return not self.intact and self.unit.kind not in CONTAINER_KINDS

    @property
    def status(self) -> str:
        if self.intact:
            return "intact"
        return f"{'divided' if self.divided else 'split'} in {self.pieces}"


@dataclass(frozen=True)
class FragmentationSummary:
    """Totals over a set of unit fates (a file, or a whole repository)."""

    units: int
    intact: int
    split: int  # a boundary inside the unit's code (see the module docstring)
    mean_pieces_when_split: float
    mean_dilution: float
    divided: int = 0  # classes and the like divided between their members

    @property
    def intact_share(self) -> float:
        return self.intact / self.units if self.units else 1.0


def unit_fates(units: Iterable[Unit], chunks: list[Chunk]) -> list[UnitFate]:
    """Fate of each unit under the chunks of the same file (chunks may overlap)."""
    fates = []
    for unit in units:
        holding = [
            c for c in chunks if c.start_byte < unit.end_byte and c.end_byte > unit.start_byte
        ]
        whole = [
            c for c in holding if c.start_byte <= unit.start_byte and c.end_byte >= unit.end_byte
        ]
        if whole:
            best = min(whole, key=lambda c: c.n_lines)
            fates.append(UnitFate(unit, 1, True, min(1.0, unit.n_lines / best.n_lines)))
            continue
        shares = []
        for chunk in holding:
            own = min(chunk.end_line, unit.end_line) - max(chunk.start_line, unit.start_line) + 1
            shares.append(min(1.0, max(own, 0) / chunk.n_lines))
        fates.append(UnitFate(unit, len(holding), False, mean(shares) if shares else 0.0))
    return fates


def summarize(fates: list[UnitFate]) -> FragmentationSummary:
    """Counts and means over fates."""
    split = [f for f in fates if f.split]
    intact = sum(f.intact for f in fates)
    return FragmentationSummary(
        units=len(fates),
        intact=intact,
        split=len(split),
        mean_pieces_when_split=mean(f.pieces for f in split) if split else 0.0,
        mean_dilution=mean(f.dilution for f in fates) if fates else 1.0,
        divided=len(fates) - intact - len(split),
    )


def _whole_test(chunks: list[Chunk]) -> Callable[[Unit], bool]:
    """``held(unit)``: does one chunk hold all of the unit? Chunks sorted by start and
    the largest end so far, so each test is a bisection, not a pass over every chunk
    (a 39,000-line file has ~1,500 units and ~1,300 chunks)."""
    ordered = sorted(chunks, key=lambda c: c.start_byte)
    starts = [c.start_byte for c in ordered]
    reach = list(accumulate((c.end_byte for c in ordered), max))

    def held(unit: Unit) -> bool:
        i = bisect_right(starts, unit.start_byte) - 1
        return i >= 0 and reach[i] >= unit.end_byte

    return held


def cuts_at_start(units: Iterable[Unit], chunks: list[Chunk]) -> list[list[Unit]]:
    """Per chunk, the innermost unit its first line cuts (none, or one): what Compare
    marks on the line. A class divided there between two of its members is not cut;
    a chunk starting inside a method names the method, not its class."""
    held = _whole_test(chunks)
    split = [u for u in units if u.kind not in CONTAINER_KINDS and not held(u)]
    out: list[list[Unit]] = []
    for chunk in chunks:
        cut = [u for u in split if u.start_byte < chunk.start_byte < u.end_byte]
        # Units nest: the innermost is the one that starts last (ends first on a tie).
        innermost = max(cut, key=lambda u: (u.start_byte, -u.end_byte), default=None)
        out.append([innermost] if innermost is not None else [])
    return out


def piece_numbers(units: Iterable[Unit], chunks: list[Chunk]) -> list[tuple[int, int] | None]:
    """Per chunk, ``(k, n)`` when it is the k-th of the n chunks that carry a split
    unit's name (the pieces of one function), else None."""
    out: list[tuple[int, int] | None] = [None] * len(chunks)
    held = _whole_test(chunks)
    named: dict[str, list[int]] = {}
    for i, c in enumerate(chunks):
        if c.symbol:
            named.setdefault(c.symbol, []).append(i)
    for unit in units:
        if unit.qualname not in named or held(unit):
            continue
        pieces = [
            i
            for i in named[unit.qualname]
            if chunks[i].start_byte < unit.end_byte and chunks[i].end_byte > unit.start_byte
        ]
        if len(pieces) > 1:
            for k, i in enumerate(pieces, start=1):
                out[i] = (k, len(pieces))
    return out
