"""Out-parameters for calling cu* functions directly: a ctypes value and
its address, as a C caller passes it."""
from __future__ import annotations

import ctypes


class Out:
    def __init__(self, ctype):
        self.c = ctype()

    @property
    def addr(self) -> int:
        return ctypes.addressof(self.c)

    @property
    def value(self):
        return self.c.value


def out_i32() -> Out:
    return Out(ctypes.c_int)


def out_u32() -> Out:
    return Out(ctypes.c_uint)


def out_u64() -> Out:
    return Out(ctypes.c_uint64)


def check(result: int) -> None:
    assert result == 0, f"CUresult {result}"


def addr(buf) -> int:
    """The address of a numpy array's or ctypes object's first byte."""
    if hasattr(buf, "ctypes"):
        return buf.ctypes.data
    return ctypes.addressof(buf)
