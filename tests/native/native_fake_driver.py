"""A stand-in driver implementation module for the drop-in library tests
(named by GPUDBG_NATIVE_IMPL_CUDA): a few cu* functions that write through
their out-pointers with ctypes, and a record of what they were called with."""
from __future__ import annotations

import ctypes
import threading

calls: list[tuple] = []


def cuInit(flags: int) -> int:
    calls.append(("cuInit", flags))
    return 0 if flags == 0 else 1


def cuDriverGetVersion(p: int) -> int:
    if not p:
        return 1
    ctypes.c_int.from_address(p).value = 13000
    return 0


def cuDeviceGetCount(p: int) -> int:
    ctypes.c_int.from_address(p).value = 1
    return 0


def cuDeviceGetName(buf: int, length: int, dev: int) -> int:
    name = f"gpudbg fake {dev} on {threading.current_thread().name}".encode()[: length - 1]
    ctypes.memmove(buf, name + b"\0", len(name) + 1)
    return 0


def cuMemAlloc_v2(pptr: int, size: int) -> int:
    ctypes.c_uint64.from_address(pptr).value = 0x7F0000000000 + size
    return 0


def cuLaunchKernel(f, gx, gy, gz, bx, by, bz, shmem, stream, params, extra) -> int:
    calls.append(("cuLaunchKernel", f, gx, gy, gz, bx, by, bz, shmem, stream, params, extra))
    return gx + gy + gz + bx + by + bz + shmem


def cuLaunchKernel_ptsz(*args) -> int:
    return 7


def cuCtxSynchronize() -> int:
    raise RuntimeError("this fake implementation fails on purpose")


def cuMemsetD8_v2(dst, value, n) -> None:
    calls.append(("cuMemsetD8_v2", dst, value, n))


def last_call() -> tuple:
    return calls[-1]
