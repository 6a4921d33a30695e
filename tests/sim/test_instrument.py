"""The instrumentation interface: a recording tool sees every memory
access in its real space (generic split per lane), barriers, warp-sync
masks, launches, allocations and host writes; nothing when uninstalled."""
from __future__ import annotations

import numpy as np
import pytest

import gpudbg
from gpudbg.sim import instrument
from gpudbg.sim.memory import Space
from gpudbg.sim.memory.spaces import AccessType

SRC = r"""
extern "C" __global__ void k(int *out, const int *in, int n) {
    __shared__ int s[64];
    int t = threadIdx.x;
    s[t] = in[t];
    __syncthreads();
    int v = s[(t + 1) % 64];
    v += __shfl_down_sync(0xffffffffu, v, 1);
    int *p = (t & 1) ? &s[t] : out + t;      // a generic pointer into two spaces
    *p = v;
    __syncwarp();
    atomicAdd(out + 64, 1);
}
"""


class Recorder(instrument.Tool):
    def __init__(self):
        self.events = []

    def launch_begin(self, launch):
        self.events.append(("launch", launch.kernel, launch.grid, launch.block))

    def launch_end(self, launch, fault):
        self.events.append(("end", fault))

    def memory(self, X, a):
        self.events.append(("mem", a.pc, a.space, a.kind, a.size, len(a.slots),
                            a.addresses.copy()))

    def barrier_arrival(self, X, arr):
        self.events.append(("arrive", arr.pc, len(arr.slots), arr.mode))

    def barrier_complete(self, X, blocks, barrier):
        self.events.append(("complete", tuple(blocks.tolist()), barrier))

    def warp_sync(self, X, sync):
        self.events.append(("sync", sync.op, len(sync.slots), int(sync.masks[0])))

    def allocated(self, memory, a):
        self.events.append(("alloc", a.size))

    def freed(self, memory, a):
        self.events.append(("free", a.size))

    def host_write(self, memory, address, nbytes):
        self.events.append(("hwrite", nbytes))


@pytest.fixture
def recorder():
    r = Recorder()
    instrument.install(r)
    yield r
    instrument.uninstall(r)


def test_recording_tool_sees_every_event_kind(recorder):
    m = gpudbg.compile(SRC, name="instr.cu")
    inp = gpudbg.to_device(np.arange(64, dtype=np.int32))
    out = gpudbg.zeros(65, np.int32)
    m.k[1, 64](out, inp, 64)
    host = out.to_host()
    ev = recorder.events
    kinds = {e[0] for e in ev}
    assert {"launch", "end", "mem", "arrive", "complete", "sync", "alloc", "hwrite"} <= kinds
    assert ("launch", "k", (1, 1, 1), (64, 1, 1)) in ev
    assert ("end", None) in ev
    mems = [e for e in ev if e[0] == "mem"]
    spaces = {(e[2], e[3]) for e in mems}
    assert (Space.GLOBAL, AccessType.READ) in spaces
    assert (Space.SHARED, AccessType.WRITE) in spaces
    assert (Space.SHARED, AccessType.READ) in spaces
    assert (Space.GLOBAL, AccessType.ATOMIC) in spaces
    # the generic store splits: odd threads into shared, even ones to global
    generic_pc = max(e[1] for e in mems if e[3] is AccessType.WRITE)
    split = [e for e in mems if e[1] == generic_pc or (e[3] is AccessType.WRITE and e[5] == 32)]
    assert {e[2] for e in split} >= {Space.GLOBAL, Space.SHARED}
    assert any(e[0] == "sync" and e[1] == "shfl.sync" and e[3] == 0xFFFFFFFF for e in ev)
    assert any(e[0] == "sync" and e[1] == "bar.warp.sync" for e in ev)
    assert any(e[0] == "complete" and e[1] == (0,) for e in ev)
    assert host[64] == 64


def test_nothing_reaches_an_uninstalled_tool():
    r = Recorder()
    instrument.install(r)
    instrument.uninstall(r)
    assert instrument.active() is None
    m = gpudbg.compile(SRC, name="instr.cu")
    out = gpudbg.zeros(65, np.int32)
    m.k[1, 64](out, gpudbg.zeros(64, np.int32), 64)
    out.to_host()
    assert r.events == []


def test_a_faulting_lane_reaches_no_tool(recorder):
    m = gpudbg.compile(r"""
    extern "C" __global__ void oob(int *p) { p[threadIdx.x * (1u << 28)] = 1; }
    """, name="oob_instr.cu")
    d = gpudbg.zeros(4, np.int32)
    with pytest.raises(gpudbg.KernelFaultError):
        m.oob[1, 2](d)
        d.to_host()
    assert not [e for e in recorder.events if e[0] == "mem"]
    ends = [e for e in recorder.events if e[0] == "end"]
    assert ends and ends[-1][1] is not None
