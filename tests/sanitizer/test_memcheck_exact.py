"""memcheck made exact, end to end on compiled kernels: every faulting
lane of an instruction counted (the FaultReport lists them), a stale
pointer after heavy reuse reported as a use after free naming where the
memory was freed, and the driver's launch parameter copy out of a kernel's
reach; each with its clean twin."""
from __future__ import annotations

import numpy as np
import pytest
from sanitizer_harness import checked

import gpudbg
from gpudbg.driver.engine import reset_engine
from gpudbg.runtime import mc
from gpudbg.sim import instrument
from gpudbg.sim.memory.spaces import AllocationKind

TAIL = r"""
extern "C" __global__ void tail(const int *in, int *out, int n, int bad_blocks) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int j = i;
    if (threadIdx.x >= 24 && blockIdx.x < bad_blocks) j = n + (1 << 22) + i;   // far past every allocation
    out[i] = in[j];
}
"""


def line_of(marker: str) -> int:
    with open(__file__) as f:
        hits = [i for i, text in enumerate(f, 1) if text.rstrip().endswith(marker)]
    assert len(hits) == 1, marker
    return hits[0]


def run_tail(bad_blocks: int):
    m = gpudbg.compile(TAIL, name="tail.cu")
    n = 128
    src, dst = gpudbg.to_device(np.arange(n, dtype=np.int32)), gpudbg.zeros(n, np.int32)
    m.tail[4, 32](src, dst, n, bad_blocks)
    return dst.to_host()


@pytest.mark.parametrize("tool", [None, "memcheck"])
def test_every_faulting_lane_is_counted(tool):
    reset_engine()
    try:
        if tool is None:
            with pytest.raises(gpudbg.KernelFaultError) as e:
                run_tail(3)
        else:
            with checked(tool) as rep, pytest.raises(gpudbg.KernelFaultError) as e:
                run_tail(3)
            assert rep.findings == []          # the fault is the simulator's own report
    finally:
        reset_engine()
    r = e.value.report
    assert r.faulting_count == 24
    expected = [((b, 0, 0), (t, 0, 0)) for b in range(3) for t in range(24, 32)]
    assert r.faulting_lanes == expected        # the reported thread first, then thread order
    assert (r.block, r.thread) == ((0, 0, 0), (24, 0, 0))
    assert r.faulting_blocks == ((0, 0, 0), (2, 0, 0))
    assert ("24 threads faulted at this instruction, in blocks (0,0,0)..(2,0,0); first: "
            "thread (24,0,0) in block (0,0,0), thread (25,0,0) in block (0,0,0), ") in r.format()


def test_one_faulting_block_is_named_as_one():
    reset_engine()
    try:
        with pytest.raises(gpudbg.KernelFaultError) as e:
            run_tail(1)
    finally:
        reset_engine()
    r = e.value.report
    assert r.faulting_count == 8 and r.faulting_blocks == ((0, 0, 0), (0, 0, 0))
    assert "8 threads faulted at this instruction, in block (0,0,0);" in r.format()


def test_a_kernel_within_bounds_does_not_fault():
    reset_engine()
    try:
        out = run_tail(0)
    finally:
        reset_engine()
    assert out.tolist() == list(range(128))


SHARED = r"""
extern "C" __global__ void shift(int *out, int by) {
    __shared__ int s[32];
    s[threadIdx.x] = threadIdx.x;
    __syncthreads();
    out[blockIdx.x * 32 + threadIdx.x] = s[threadIdx.x + by];
}
"""


@pytest.mark.parametrize("by,faulting", [(8, 2 * 8), (0, 0)])
def test_every_faulting_lane_of_a_shared_access_is_counted(by, faulting):
    reset_engine()
    try:
        m = gpudbg.compile(SHARED, name="shift.cu")
        out = gpudbg.zeros(64, np.int32)
        m.shift[2, 32](out, by)
        if faulting:
            with pytest.raises(gpudbg.KernelFaultError) as e:
                out.to_host()
        else:
            assert out.to_host().tolist() == list(range(32)) * 2
    finally:
        reset_engine()
    if faulting:
        r = e.value.report
        assert "out-of-bounds shared memory access" in r.message
        assert r.faulting_count == faulting and r.faulting_blocks == ((0, 0, 0), (1, 0, 0))
        assert r.faulting_lanes[:2] == [((0, 0, 0), (24, 0, 0)), ((0, 0, 0), (25, 0, 0))]


READ = r"""
extern "C" __global__ void read_first(const int *p, int *out) { out[threadIdx.x] = p[threadIdx.x]; }
"""


def stale_read(free_it: bool):
    """A 256-byte buffer freed, then 300 alloc/free cycles of the same size
    (and launches, each with its own parameter copy), then read."""
    m = gpudbg.compile(READ, name="stale.cu")
    err, out = mc.mcMalloc(128)
    err, once = mc.mcMalloc(256)
    if free_it:
        mc.mcFree(once)                                            # <- freed here
    for i in range(300):
        err, p = mc.mcMalloc(256)
        assert p != once
        mc.mcFree(p)
        if i % 100 == 0:
            m.read_first[1, 32](out, out)
    m.read_first[1, 32](once, out)
    err, = mc.mcDeviceSynchronize()
    return err, once


def test_use_after_free_under_reuse_pressure_names_the_free_site():
    with checked("memcheck") as rep:
        err, once = stale_read(True)
        report = mc.fault_report()
    assert err.name == "mcErrorIllegalAddress"
    assert report.message == (f"Invalid __global__ read of size 4 bytes: address 0x{once:x} is inside a "
                              f"freed 256-byte allocation at 0x{once:x} (device, freed at "
                              f"test_memcheck_exact.py:{line_of('# <- freed here')})")
    assert report.faulting_count == 32
    assert rep.findings == []                 # the sticky error is not an API finding too


def test_use_after_free_without_a_tool_still_says_freed():
    reset_engine()
    try:
        err, once = stale_read(True)
        message = mc.fault_report().message
    finally:
        reset_engine()
    assert err.name == "mcErrorIllegalAddress"
    assert message.endswith(f"is inside a freed 256-byte allocation at 0x{once:x} (device)")


def test_reading_live_memory_is_silent():
    with checked("memcheck") as rep:
        err, _once = stale_read(False)
    assert err.name == "mcSuccess" and rep.findings == []


POKE = r"""
extern "C" __global__ void poke(const unsigned long long *where, int atomic) {
    int *p = (int *)(where[0] + 64);
    if (atomic) atomicAdd(p, 1); else p[threadIdx.x] = 7;
}
"""


class AimAtOwnParameters(instrument.Tool):
    """When the driver allocates poke's launch copy, write its address
    where the kernel will read its target: the kernel then writes into its
    own, live, parameter copy."""

    def __init__(self, where_ptr: int | None):
        self.where = where_ptr
        self.launches: list[int] = []

    def allocated(self, memory, allocation):
        if allocation.kind is AllocationKind.LAUNCH and allocation.label == "launch poke":
            self.launches.append(allocation.base)
            if self.where is not None:
                memory.write(self.where, np.array([allocation.base], dtype=np.uint64))


@pytest.mark.parametrize("atomic", [0, 1])
def test_a_kernel_cannot_touch_its_launch_parameter_copy(atomic):
    with checked("memcheck"):
        m = gpudbg.compile(POKE, name="poke.cu")
        where = gpudbg.zeros(1, np.uint64)
        gpudbg.Device().synchronize()          # the zero fill lands before the tool's write
        aim = AimAtOwnParameters(where.ptr)
        instrument.install(aim)
        try:
            m.poke[1, 4](where, atomic)
            err, = mc.mcDeviceSynchronize()
            report = mc.fault_report()
        finally:
            instrument.uninstall(aim)
    base = aim.launches[-1]
    assert err.name == "mcErrorIllegalAddress"
    verb = "atomic" if atomic else "write"
    assert report.message == (f"Invalid __global__ {verb} of size 4 bytes: address 0x{base + 64:x} is "
                              f"inside driver memory (launch parameters of poke) that kernels cannot access")
    assert report.faulting_count == 4


def test_the_same_kernel_aimed_at_user_memory_runs():
    with checked("memcheck") as rep:
        m = gpudbg.compile(POKE, name="poke.cu")
        buf = gpudbg.zeros(32, np.int32)
        where = gpudbg.to_device(np.array([buf.ptr], dtype=np.uint64))
        m.poke[1, 4](where, 0)
        data = buf.to_host()
    assert data[16:20].tolist() == [7, 7, 7, 7] and rep.findings == []
