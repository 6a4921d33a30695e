"""Helpers for calling gpudbg.cuda_runtime exports as the drop-in
libcudart does: C arguments as ints/bytes, outputs through ctypes memory."""
from __future__ import annotations

import ctypes
import struct
from pathlib import Path

from gpudbg.cuda_runtime import exports as rt

FATBIN = (Path(__file__).parent / "fixtures" / "kernels.fatbin").read_bytes()
WRAPPER_MAGIC = 0x466243B1


def check(rc: int) -> None:
    assert rc == 0, f"cudaError {rc}: {ctypes.string_at(rt.cudaGetErrorName(rc)).decode()}"


def dim3(x: int, y: int = 1, z: int = 1) -> bytes:
    return struct.pack("<3I", x, y, z)


def cstr(text: str) -> ctypes.Array:
    return ctypes.create_string_buffer(text.encode())


def addr(obj: ctypes._CData) -> int:
    return ctypes.addressof(obj)


class Program:
    """kernels.fatbin registered with fake host stubs and shadows, the way
    nvcc's static constructors register a translation unit (getattr: a
    class body would mangle the __cuda names)."""

    def __init__(self, fatbin: bytes = FATBIN):
        self.image = ctypes.create_string_buffer(fatbin, len(fatbin))
        self.wrapper = (ctypes.c_uint32 * 6)()
        struct.pack_into("<iiQQ", self.wrapper, 0, WRAPPER_MAGIC, 1, addr(self.image), 0)
        self.stubs = {name: ctypes.c_char(0) for name in ("vecadd", "scaled", "_Z5pairs4PairPd")}
        self.scale = ctypes.c_int(0)          # host shadows of __device__ int scale
        self.offset = (ctypes.c_float * 4)()  # and __constant__ float offset[4]
        self._names: list = []
        self.handle = getattr(rt, '__cudaRegisterFatBinary')(addr(self.wrapper))
        for name, stub in self.stubs.items():
            n = cstr(name)
            self._names.append(n)
            getattr(rt, '__cudaRegisterFunction')(self.handle, addr(stub), addr(n), addr(n), -1, 0, 0, 0, 0, 0)
        s, o = cstr("scale"), cstr("offset")
        self._names += [s, o]
        getattr(rt, '__cudaRegisterVar')(self.handle, addr(self.scale), addr(s), addr(s), 0, 4, 0, 0)
        getattr(rt, '__cudaRegisterVar')(self.handle, addr(self.offset), addr(o), addr(o), 0, 16, 1, 0)
        getattr(rt, '__cudaRegisterFatBinaryEnd')(self.handle)

    def stub(self, name: str) -> int:
        return addr(self.stubs[name])

    def unregister(self) -> None:
        getattr(rt, '__cudaUnregisterFatBinary')(self.handle)


class Args:
    """A `void **args` array: each entry points at one argument's bytes."""

    def __init__(self, *values: ctypes._CData):
        self.values = values
        self.array = (ctypes.c_void_p * max(1, len(values)))(*[addr(v) for v in values])

    @property
    def address(self) -> int:
        return addr(self.array)


def out_u64() -> ctypes.c_uint64:
    return ctypes.c_uint64(0)


def malloc(nbytes: int) -> int:
    p = out_u64()
    check(rt.cudaMalloc(addr(p), nbytes))
    return p.value
