"""A ring buffer of 32-bit command words living in simulated device memory.

The host is the only writer of `put` (wptr) and the GPU front end the only
writer of `get` (rptr), both word offsets in [0, size). One word always stays
free so that put == get means empty. Commands may straddle the end: words
are addressed modulo the size, so wraparound needs no padding command. The
ring does no locking of its own; the channel and front end hold the GPU's
condition variable around every pointer update.
"""
from __future__ import annotations

import array
import struct
from typing import Any, Sequence

import numpy as np

from gpudbg.driver.commands import (FORMATS, Command, Opcode, decode_one, decode_packed, encode, launch,
                                    payload_words)

MAX_COMMAND_WORDS = 1 + max(payload_words(op) for op in FORMATS)   # header + the longest payload
RELEASE_WORDS = 1 + payload_words(Opcode.SEM_RELEASE)              # header, address, value
_release_words = struct.Struct(f"<{RELEASE_WORDS}I").unpack_from
_LAUNCH_HEADER = encode(launch(0))[0]


class RingFullError(ValueError):
    """A single write larger than the ring can ever hold."""


class Ring:
    def __init__(self, allocation: Any, name: str):
        if allocation.size < 16 or allocation.size % 4:
            raise ValueError(f"ring {name}: size {allocation.size} must be a multiple of 4, >= 16")
        self.allocation = allocation
        self.name = name
        self.base: int = allocation.base
        self.words = allocation.data[: allocation.size].view(np.uint32)
        self.size = len(self.words)
        self.peek = memoryview(self.words).__getitem__    # the word at an offset, an int (no numpy scalar)
        self._bytes = allocation.data[: allocation.size]      # the same memory, for struct unpacks
        # the same words as a memoryview of 32-bit C ints: a push's few words go in as an
        # array.array, cheaper than numpy converting a short list (None where 'I' is not 32-bit)
        slots = memoryview(self.words)
        self._slots = slots if slots.format == "I" and array.array("I").itemsize == 4 else None
        self.put = 0
        self.get = 0

    def used(self) -> int:
        return (self.put - self.get) % self.size

    def free(self) -> int:
        return self.size - 1 - self.used()

    def empty(self) -> bool:
        return self.put == self.get

    def write(self, words: Sequence[int]) -> None:
        """Copy words at put and advance it (caller checked free())."""
        n = len(words)
        put, size = self.put, self.size
        if n > size - 1 - (put - self.get) % size:
            raise RingFullError(f"ring {self.name}: {n} words do not fit in {self.free()} free")
        end = put + n
        if end < size:      # no wrap (the common case): one slice
            if self._slots is not None:
                self._slots[put:end] = array.array("I", words)   # OverflowError as numpy for a bad word
            else:
                self.words[put:end] = words
            self.put = end
            return
        arr = np.asarray(words, dtype=np.uint32)
        first = size - put
        self.words[put:] = arr[:first]
        self.words[: n - first] = arr[first:]
        self.put = end - size

    def word_at(self, offset: int) -> int:
        return int(self.words[offset % self.size])

    def decode_at(self, offset: int) -> Command:
        """Decode the command whose header is at `offset` (wrapping). Away
        from the end, the payload is unpacked in one go (commands.decode_packed;
        the front end decodes every command twice: to pick it and to retire
        it), or, for what that refuses, the longest command's words are read
        in one slice and decoded from the list. A LAUNCH, the command of
        nearly every push, is commands.launch's of its descriptor address
        (the one Command per launch block, not a new one per decode)."""
        if 0 <= offset and offset + MAX_COMMAND_WORDS <= self.size:
            peek = self.peek
            header = peek(offset)
            if header == _LAUNCH_HEADER:
                return launch(peek(offset + 1) | peek(offset + 2) << 32)
            cmd = decode_packed(header, self._bytes, 4 * offset + 4)
            if cmd is not None:
                return cmd
            return decode_one(self.words[offset:offset + MAX_COMMAND_WORDS].tolist().__getitem__,
                              offset, self.name)

        def rd(i: int) -> int:
            return self.word_at(offset + i)
        return decode_one(rd, offset, self.name)

    def release_value_at(self, offset: int, head: tuple[int, int, int]) -> int | None:
        """The value of the SEM_RELEASE at `offset` whose header and address
        words are `head`, else None (another command there, or one that
        wraps): the front end retires the fence closing every push by its
        words, without decoding a Command for it."""
        if offset + RELEASE_WORDS > self.size:
            return None
        header, lo, hi, value_lo, value_hi = _release_words(self._bytes, 4 * offset)
        if header != head[0] or lo != head[1] or hi != head[2]:
            return None
        return value_lo | value_hi << 32

    def pending(self) -> list[tuple[int, Command]]:
        """Decode everything between get and put: (offset, command)."""
        out = []
        off = self.get
        while off != self.put:
            cmd = self.decode_at(off)
            out.append((off, cmd))
            off = (off + cmd.size_words) % self.size
        return out
