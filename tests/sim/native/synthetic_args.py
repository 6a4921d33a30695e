"""Arguments for a kernel nobody wrote a test for: every parameter gets a
deterministic value of its type, so any kernel of a PTX corpus can be
launched and run under both engines.

Pointers (64-bit integer parameters) point at a fresh 64 KiB buffer of
small integers (i % 61 as int32: valid indices and loop counts, and, read
as floats, subnormals that exercise flush-to-zero); 32-bit integers are
200, floats 1.5 and 0.25, and by-value structures are words of 64 (CUB's
GridEvenShare and friends then describe a finite amount of work). What a
kernel makes of these is arbitrary: many fault or loop until the
instruction budget; both outcomes are compared like any other.
"""
from __future__ import annotations

import struct

import numpy as np

BUFFER_BYTES = 1 << 16


def synthetic_params(gpu, function) -> bytes:
    """The kernel's parameter block, with a fresh buffer per pointer."""
    params = bytearray(function.param_size)
    words = (np.arange(BUFFER_BYTES // 4, dtype=np.int32) % 61).view(np.uint8)
    for p in function.params:
        if p.type in ("u64", "b64", "s64") and p.size == 8:
            buf = gpu.memory.alloc(BUFFER_BYTES)
            gpu.memory.write(buf.base, words)
            struct.pack_into("<Q", params, p.offset, buf.base)
        elif p.type in ("u32", "s32", "b32") and p.size == 4:
            struct.pack_into("<I", params, p.offset, 200)
        elif p.type == "f32":
            struct.pack_into("<f", params, p.offset, 1.5)
        elif p.type == "f64":
            struct.pack_into("<d", params, p.offset, 0.25)
        else:
            fill = np.full(p.size // 4 + 1, 64, np.int32).view(np.uint8)[:p.size]
            params[p.offset:p.offset + p.size] = fill.tobytes()
    return bytes(params)
