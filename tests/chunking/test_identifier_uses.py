"""``identifier_uses``: whole-identifier occurrences of imported names, both ways it
finds them (a scan per name in small files, one numpy pass over identifier runs in
large ones) against a plain reference."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from nexus.chunking.analysis import IDENTIFIER_BYTES, identifier_uses

NAME = st.lists(st.sampled_from([b"a", b"b", b"_", b"$", "é".encode()]), min_size=1, max_size=3)
TEXT = st.lists(st.sampled_from([b"a", b"b", b"_", b"$", b" ", b".", b"\n", "é".encode()]))


def reference(data: bytes, names: list[bytes]) -> tuple[list[int], list[int]]:
    found = []
    for index, name in enumerate(names):
        at = data.find(name)  # every occurrence, overlapping ones too
        while at != -1:
            end = at + len(name)
            if (at == 0 or data[at - 1] not in IDENTIFIER_BYTES) and (
                end == len(data) or data[end] not in IDENTIFIER_BYTES
            ):
                found.append((at, index))
            at = data.find(name, at + 1)
    found.sort()
    return [at for at, _ in found], [index for _, index in found]


@settings(max_examples=150, deadline=None)
@given(TEXT, st.lists(NAME.map(b"".join), max_size=6, unique=True), st.booleans(), st.booleans())
def test_uses_are_the_whole_identifier_occurrences(pieces, names, large, odd_name):
    data = b"".join(pieces) * 3
    if odd_name:
        names = [*names, b"a.b"]  # not an identifier: found by bytes.find
    if large:  # past the size where the numpy pass over identifier runs takes over
        data += b" " * 600_000 + data
    names = list(dict.fromkeys(names))
    assert identifier_uses(data, tuple(names)) == reference(data, names)


def test_a_name_inside_a_longer_word_is_no_use():
    data = b"e = 1\nthe(e, de, e_, $e, e1)\n" + b" " * 600_000 + b"e"
    offsets, indexes = identifier_uses(data, (b"the", b"e"))
    assert [data[a : a + 3] for a in offsets] == [b"e =", b"the", b"e, ", b"e"]
    assert indexes == [1, 0, 1, 1]


def test_a_longer_run_in_a_names_bucket_is_no_use():
    # Same first and last byte, 32 bytes longer: the numpy pass puts it in the name's
    # bucket, and its first bytes equal the name.
    data = b"abc" + b"x" * 31 + b"c abc" + b" " * 600_000
    assert identifier_uses(data, (b"abc",)) == ([36], [0])
