"""The ascii85 dialect of Linux's include/linux/ascii85.h, one u32 at a time.

The kernel encodes each native dword on its own: `z` for zero, otherwise five
base-85 digits (most significant first, '!' + digit). So a blob is a plain
sequence of 5-character groups and single `z`s, never a partial group, and
the dword count is the group count. That makes decoding a vectorised job:
validate the grammar with one regular expression, expand `z` to `!!!!!`,
reshape to (n, 5) and fold the digits with numpy (megabyte blobs are common).
It does not do Adobe framing (`<~ ~>`), `y`, padding or line wrapping,
because the kernel never emits them; such input is rejected with its column.
"""
from __future__ import annotations

import re
from typing import Iterable

import numpy as np

_GROUPS = re.compile(rb"(?:z|[!-u]{5})*")
_POWERS = np.array([85 ** 4, 85 ** 3, 85 ** 2, 85, 1], dtype=np.uint64)
U32_MAX = 0xFFFF_FFFF


class Ascii85Error(ValueError):
    """Text that is not a kernel ascii85 blob; `column` is 0-based."""

    def __init__(self, column: int, message: str):
        super().__init__(f"column {column + 1}: {message}")
        self.column = column
        self.reason = message


def encode_dword(value: int) -> str:
    if not 0 <= value <= U32_MAX:
        raise ValueError(f"dword {value!r} does not fit in 32 bits")
    if value == 0:
        return "z"
    digits = []
    for _ in range(5):
        value, d = divmod(value, 85)
        digits.append(chr(33 + d))
    return "".join(reversed(digits))


def encode(dwords: Iterable[int] | np.ndarray) -> str:
    """Every dword encoded, zeros as `z`; trimming is the caller's choice."""
    arr = np.asarray(dwords if isinstance(dwords, np.ndarray) else list(dwords), dtype=np.int64)
    if arr.size and (arr.min() < 0 or arr.max() > U32_MAX):
        raise ValueError("dwords must be in [0, 2**32)")
    vals = arr.astype(np.uint64)
    digits = (vals[:, None] // _POWERS[None, :]) % 85 + 33
    chars = digits.astype(np.uint8)
    # a zero dword becomes "z" plus four NUL placeholders that are then dropped
    # (real digits are >= '!', so NUL never occurs otherwise)
    chars[vals == 0] = (ord("z"), 0, 0, 0, 0)
    flat = chars.ravel()
    return flat[flat != 0].tobytes().decode("ascii")


def _locate_error(raw: bytes) -> Ascii85Error:
    end = _GROUPS.match(raw).end()  # type: ignore[union-attr]
    ch = raw[end:end + 1]
    if not ch:
        return Ascii85Error(end, f"incomplete final group ({len(raw) - end} characters; groups have 5)")
    c = ch[0]
    if c == ord("z"):
        return Ascii85Error(end, "'z' inside a 5-character group")
    if ord("!") <= c <= ord("u"):
        start = end
        k = 0
        while start + k < len(raw) and ord("!") <= raw[start + k] <= ord("u") and k < 5:
            k += 1
        bad = raw[start + k:start + k + 1]
        if not bad:
            return Ascii85Error(start, f"incomplete final group ({k} characters; groups have 5)")
        return Ascii85Error(start + k, f"invalid character {chr(bad[0])!r} inside a group")
    return Ascii85Error(end, f"invalid character {chr(c)!r} (allowed: '!'..'u' and 'z')")


def decode(text: str) -> np.ndarray:
    """The dwords (uint32 array) encoded in `text`, which is the payload only:
    no leading or trailing whitespace."""
    try:
        raw = text.encode("ascii")
    except UnicodeEncodeError as exc:
        raise Ascii85Error(exc.start, f"non-ASCII character {text[exc.start]!r}") from None
    if _GROUPS.fullmatch(raw) is None:
        raise _locate_error(raw)
    expanded = raw.replace(b"z", b"!!!!!")
    if not expanded:
        return np.zeros(0, dtype=np.uint32)
    digits = np.frombuffer(expanded, dtype=np.uint8).reshape(-1, 5).astype(np.uint64) - 33
    values = digits @ _POWERS
    over = np.nonzero(values > U32_MAX)[0]
    if over.size:
        group = int(over[0])
        # column of that group in the original text: count characters of earlier groups
        col = _group_column(raw, group)
        raise Ascii85Error(col, f"group {raw[col:col + 5].decode()!r} is larger than 0xffffffff")
    return values.astype(np.uint32)


def _group_column(raw: bytes, group: int) -> int:
    col = 0
    for _ in range(group):
        col += 1 if raw[col] == ord("z") else 5
    return col


def trim_trailing_zeros(dwords: np.ndarray) -> np.ndarray:
    """The kernel's `datalen`: up to and including the last non-zero dword."""
    nz = np.flatnonzero(dwords)
    return dwords[: int(nz[-1]) + 1] if nz.size else dwords[:0]


def dwords_from_bytes(data: bytes) -> np.ndarray:
    """Memory bytes (little-endian dwords) as a uint32 array."""
    if len(data) % 4:
        raise ValueError(f"{len(data)} bytes is not a whole number of dwords")
    return np.frombuffer(data, dtype="<u4").astype(np.uint32)


def bytes_from_dwords(dwords: np.ndarray) -> bytes:
    return np.asarray(dwords, dtype=np.uint32).astype("<u4").tobytes()
