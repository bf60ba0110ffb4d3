"""Protobuf's wire format written directly, for the parts of a request built per decision.

Why: building a message field by field and serializing it costs the protobuf runtime a
call per field and a copy per nested message; a request's view and events are a few
integers and card lists whose encodings are known in advance. Protobuf defines a
message's encoding as its fields' encodings one after another (a nested message as a
length-delimited field holding its own encoding) and parsing concatenated encodings as
merging them, so :mod:`arena.server.request_wire` and :mod:`arena.server.view_wire` join
these under tags read from the generated descriptors, never written down again.
``tests/test_request_wire.py`` reads every request of whole matches back with protobuf.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import Final

from google.protobuf.message import Message

LEN: Final = 2  # wire type of a length-delimited field (a message, bytes, a packed list)
_U64: Final = (1 << 64) - 1  # a negative int32 is written as its 64-bit two's complement


def _varint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


# Lengths, seqs and the clock's milliseconds are mostly below this: a look-up (~140 KB).
TABLED: Final = 4096
SMALL: Final = [_varint(n) for n in range(TABLED)]
# The rest recur too (a time bank of 30,000 ms, a trick's winner -1 in ten bytes).
_big: Final = functools.lru_cache(maxsize=1024)(_varint)


def varint(n: int) -> bytes:
    """``n`` (0 ≤ n < 2**64) as a base-128 varint, low group first."""
    if n < TABLED:
        return SMALL[n]
    return _big(n)


def signed(n: int) -> bytes:
    """An int32 or int64 ``n`` as a varint (a negative one in ten bytes, as protobuf)."""
    if 0 <= n < TABLED:
        return SMALL[n]
    return _big(n & _U64)


def number(message: type[Message], name: str) -> int:
    """The field number of ``message.name``, from the generated descriptor."""
    return int(message.DESCRIPTOR.fields_by_name[name].number)


def tag(field: int, wire_type: int) -> bytes:
    return varint(field << 3 | wire_type)


class Scalar:
    """One varint field (an integer or an enum): its tag, written only for a value that
    is not 0 (proto3 leaves defaults out)."""

    __slots__ = ("tag",)

    def __init__(self, message: type[Message], name: str) -> None:
        self.tag = tag(number(message, name), 0)

    def __call__(self, value: int) -> bytes:
        if not value:
            return b""
        if 0 < value < TABLED:
            return self.tag + SMALL[value]
        return self.tag + _big(value & _U64)


class Nested:
    """One length-delimited field: tag, length, payload."""

    __slots__ = ("tag",)

    def __init__(self, message: type[Message], name: str) -> None:
        self.tag = tag(number(message, name), LEN)

    def __call__(self, payload: bytes) -> bytes:
        n = len(payload)
        return self.tag + (SMALL[n] if n < TABLED else _big(n)) + payload


class Packed:
    """One repeated integer field, packed (proto3's default): nothing when empty."""

    __slots__ = ("field",)

    def __init__(self, message: type[Message], name: str) -> None:
        self.field = Nested(message, name)

    def __call__(self, values: Iterable[int]) -> bytes:
        # the table inline: no call per value (hand sizes, points) unless one is past it
        payload = b"".join([SMALL[v] if 0 <= v < TABLED else signed(v) for v in values])
        return self.field(payload) if payload else b""


__all__ = ["LEN", "Nested", "Packed", "Scalar", "number", "signed", "tag", "varint"]
