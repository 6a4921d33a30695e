"""A stand-in runtime implementation module for a real nvcc 13 program
(`-cudart shared`, tests/native/nvcc_program.cu): registration, the <<<>>>
launch sequence (push/pop configuration, __cudaGetKernel, __cudaLaunchKernel
with dim3 by value), printing what arrived."""
from __future__ import annotations

import ctypes
import struct

seen: list = []
config: list = []


def __cudaRegisterFatBinary(wrapper: int) -> int:
    seen.append(f"fatbin {ctypes.c_uint32.from_address(wrapper).value:#x}")
    return 0x77


def __cudaRegisterFunction(handle, hostFun, deviceFun, deviceName, *rest) -> None:
    seen.append(f"function {handle:#x} {ctypes.string_at(deviceName).decode()}")


def __cudaRegisterFatBinaryEnd(handle: int) -> None:
    seen.append(f"end {handle:#x}")


def cudaGetDeviceCount(p: int) -> int:
    print(*seen, sep="\n", flush=True)
    ctypes.c_int.from_address(p).value = len(seen)
    return 0


def __cudaPushCallConfiguration(grid: bytes, block: bytes, shmem: int, stream: int) -> int:
    config.append((grid, block, shmem, stream))
    return 0


def __cudaPopCallConfiguration(pgrid: int, pblock: int, pshmem: int, pstream: int) -> int:
    grid, block, shmem, stream = config.pop()
    ctypes.memmove(pgrid, grid, 12)
    ctypes.memmove(pblock, block, 12)
    ctypes.c_size_t.from_address(pshmem).value = shmem
    ctypes.c_void_p.from_address(pstream).value = stream
    return 0


def __cudaGetKernel(pkernel: int, stub: int) -> int:
    ctypes.c_void_p.from_address(pkernel).value = 0x99
    return 0


def __cudaLaunchKernel(kernel, grid: bytes, block: bytes, args: int, shmem: int, stream: int) -> int:
    n = ctypes.c_int.from_address(ctypes.c_void_p.from_address(args + 8).value).value
    print(f"launch {kernel:#x} grid {struct.unpack('3I', grid)} block {struct.unpack('3I', block)} "
          f"shmem {shmem} n {n}", flush=True)
    return 0
