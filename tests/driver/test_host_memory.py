"""Pinned, managed and registered memory are the host program's own memory,
shared with the simulated GPU by address (no copies); device pointers are
not host memory (a host dereference faults)."""
from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from gpudbg import cabi
from gpudbg.driver.engine import get_engine, reset_engine
from gpudbg.driver.status import CUresult, EngineError
from gpudbg.runtime import mc
from gpudbg.runtime.errors import mcError_t as E
from gpudbg.sim.gpu import DEVICE_VA_SIZE
from gpudbg.sim.memory import host_mapping as hm

S = E.mcSuccess
pytestmark = pytest.mark.skipif(hm.arena() is None, reason=f"no device arena: {hm.arena_error()}")

PTX = """.version 8.0
.target sm_80
.address_size 64
.visible .entry twice(.param .u64 p, .param .u32 n)
{
    .reg .pred %p<2>;
    .reg .b32 %r<6>;
    .reg .b64 %rd<5>;
    ld.param.u64 %rd1, [p];
    ld.param.u32 %r1, [n];
    mov.u32 %r2, %tid.x;
    setp.ge.u32 %p1, %r2, %r1;
    @%p1 bra DONE;
    cvta.to.global.u64 %rd2, %rd1;
    mul.wide.u32 %rd3, %r2, 4;
    add.s64 %rd4, %rd2, %rd3;
    ld.global.u32 %r3, [%rd4];
    shl.b32 %r4, %r3, 1;
    add.u32 %r5, %r4, 1;
    st.global.u32 [%rd4], %r5;
DONE:
    ret;
}
"""


def _twice():
    err, m = mc.mcModuleLoadData(PTX)
    assert err == S, mc.last_error_message()
    return mc.mcModuleGetFunction(m, "twice")[1]


def _launch(f, ptr: int, n: int):
    assert mc.mcLaunchKernel(f, 1, n, [ptr, n]) == (S,), mc.last_error_message()
    return mc.mcDeviceSynchronize()


def _perms_at(address: int) -> str | None:
    with open("/proc/self/maps") as fh:
        for line in fh:
            rng, perms = line.split()[:2]
            lo, hi = (int(x, 16) for x in rng.split("-"))
            if lo <= address < hi:
                return perms
    return None


ALLOCATORS = {
    "mcMallocHost": lambda n: mc.mcMallocHost(n),
    "mcHostAlloc": lambda n: mc.mcHostAlloc(n, mc.mcHostAllocFlags.mcHostAllocMapped),
    "mcMallocManaged": lambda n: mc.mcMallocManaged(n),
}


@pytest.mark.parametrize("api", sorted(ALLOCATORS))
def test_host_writes_by_address_are_what_kernels_see_and_back(real, api):
    n = 64
    err, p = ALLOCATORS[api](4 * n)
    assert err == S
    host = (ctypes.c_uint32 * n).from_address(p)        # the program's own view: p[i]
    for i in range(n):
        host[i] = i
    f = _twice()
    assert _launch(f, p, n) == (S,)                      # no mcMemcpy anywhere
    assert list(host) == [2 * i + 1 for i in range(n)]
    host[5] = 100
    assert _launch(f, p, n) == (S,)
    assert host[5] == 201 and host[6] == 27
    free = mc.mcFreeHost if api != "mcMallocManaged" else mc.mcFree
    assert free(p) == (S,)
    assert _perms_at(p) == "---p"                        # the host pointer is gone too


def test_pinned_pointer_is_the_device_pointer_and_host_view_is_the_same_memory(real):
    _, p = mc.mcMallocHost(16)
    assert mc.mcHostGetDevicePointer(p, 0) == (S, p)
    v = mc.host_view(p, 16, np.uint32)
    v[:] = [1, 2, 3, 4]
    assert ctypes.string_at(p, 8) == b"\x01\0\0\0\x02\0\0\0"
    assert v.ctypes.data == p
    _, d = mc.mcMalloc(16)
    assert mc.mcMemcpy(d, p, 16, mc.mcMemcpyKind.mcMemcpyHostToDevice) == (S,)
    assert mc.mcMemset(p, 0, 4) == (S,)
    assert list(v) == [0, 2, 3, 4]


def test_a_host_dereference_of_a_device_pointer_is_sigsegv():
    code = """
        import ctypes
        from gpudbg.runtime import mc
        _, p = mc.mcMallocHost(8)
        _, m = mc.mcMallocManaged(8)
        ctypes.memmove(p, b"pin", 3)
        ctypes.memmove(m, b"man", 3)
        print(ctypes.string_at(p, 3).decode(), ctypes.string_at(m, 3).decode(), flush=True)
        _, d = mc.mcMalloc(8)
        ctypes.string_at(d, 4)
        print("survived", flush=True)
    """
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                       text=True, timeout=60, env=dict(os.environ, GPUDBG_DEVICES="1"))
    assert r.stdout.split() == ["pin", "man"], r.stderr
    assert r.returncode == -signal.SIGSEGV


def test_kernel_faults_are_found_before_memory_is_touched(real):
    _, p = mc.mcMallocHost(4 * 8)              # the rest of its page is mapped host memory
    f = _twice()
    assert _launch(f, p, 9) == (E.mcErrorIllegalAddress,)
    assert mc.fault_report().address == p + 32
    reset_engine(num_devices=1)
    _, d = mc.mcMalloc(16)
    assert _launch(_twice(), d + (1 << 30), 1) == (E.mcErrorIllegalAddress,)  # PROT_NONE in the host


def test_registered_raw_host_address_is_shared_through_its_device_pointer(real):
    n = 32
    buf = ctypes.create_string_buffer(4 * n)            # memory of the "C program"
    addr = ctypes.addressof(buf)
    host = (ctypes.c_uint32 * n).from_address(addr)
    for i in range(n):
        host[i] = 10 + i
    ctx = get_engine().current_context()
    ctx.memory.register_host(cabi.host_view(addr, 4 * n), 4 * n, 0)
    err, dptr = mc.mcHostGetDevicePointer(addr, 0)
    assert err == S and dptr != addr and get_engine().resolve_pointer(dptr) is not None
    assert mc.mcHostGetDevicePointer(addr + 8, 0) == (S, dptr + 8)
    assert mc.mcHostGetFlags(addr) == (S, 0)
    assert _launch(_twice(), dptr, n) == (S,)
    assert list(host) == [2 * (10 + i) + 1 for i in range(n)]
    assert mc.mcFreeHost(addr) == (E.mcErrorInvalidValue,)
    assert "mcHostUnregister" in mc.last_error_message()
    ctx.memory.unregister_host(addr)                    # by the host address itself
    assert mc.mcHostGetDevicePointer(addr, 0)[0] == E.mcErrorInvalidValue
    assert get_engine().resolve_pointer(dptr) is None


def test_what_cannot_be_registered_is_refused_without_touching_it(real):
    ctx = get_engine().current_context()
    _, p = mc.mcMallocHost(64)
    _, d = mc.mcMalloc(64)
    cases = [(p, CUresult.CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED, "pinned or managed"),
             (d, CUresult.CUDA_ERROR_INVALID_VALUE, "not host memory"),
             (hm.arena().end - 4096, CUresult.CUDA_ERROR_INVALID_VALUE, "not host memory"),
             (0x1000, CUresult.CUDA_ERROR_INVALID_VALUE, "not mapped memory")]
    for address, status, words in cases:
        with pytest.raises(EngineError) as e:
            ctx.memory.register_host(cabi.host_view(address, 64), 64, 0)
        assert e.value.status == status and words in str(e.value), hex(address)


def test_memory_accounting(real):
    free0, total = mc.mcMemGetInfo()[1:]
    _, p = mc.mcMallocHost(1 << 20)
    assert mc.mcMemGetInfo()[1:] == (free0, total)           # pinned: host RAM
    _, m = mc.mcMallocManaged(1 << 20)
    assert mc.mcMemGetInfo()[1:] == (free0 - (1 << 20), total)
    assert mc.mcFree(m) == (S,) and mc.mcFreeHost(p) == (S,)
    assert mc.mcMemGetInfo()[1:] == (free0, total)


def test_every_device_maps_host_memory_in_its_own_window():
    reset_engine(num_devices=2)
    try:
        ptrs = []
        for dev in (0, 1):
            assert mc.mcSetDevice(dev) == (S,)
            mem = get_engine().current_context().gpu.memory
            assert mem.host_backed
            _, p = mc.mcMallocHost(4 * 4)
            assert mem.base <= p < mem.va_limit
            host = (ctypes.c_uint32 * 4).from_address(p)
            host[:] = [1, 2, 3, 4]
            assert _launch(_twice(), p, 4) == (S,)
            assert list(host) == [3, 5, 7, 9]
            ptrs.append(p)
        assert ptrs[1] - ptrs[0] == DEVICE_VA_SIZE
    finally:
        reset_engine()


def test_reset_engine_gives_pages_back_and_reuses_the_arena():
    reset_engine(num_devices=1)
    arena = hm.arena()
    _, p = mc.mcMallocHost(64)
    _, m = mc.mcMallocManaged(64)
    window = get_engine().current_context().gpu.memory
    assert _perms_at(p).startswith("rw") and _perms_at(m).startswith("rw")
    reset_engine(num_devices=1)
    assert _perms_at(p) == "---p" and _perms_at(m) == "---p"
    assert hm.live_ranges(window.base, window.va_limit) == []
    assert hm.arena() is arena
    _, p2 = mc.mcMallocHost(64)
    assert p2 == p and ctypes.string_at(p2, 4) == b"\0\0\0\0"
    reset_engine()


def test_all_sixteen_device_windows_lie_in_the_arena():
    engine = reset_engine(num_devices=16)
    try:
        arena = hm.arena()
        windows = [engine.device(i).gpu.memory for i in range(16)]
        assert all(m.host_backed and arena.covers(m.base, m.va_limit - m.base) for m in windows)
        assert [m.base for m in windows] == [arena.base + i * DEVICE_VA_SIZE for i in range(16)]
    finally:
        reset_engine()
