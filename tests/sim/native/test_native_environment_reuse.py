"""A wave restarted for the next launch or the next blocks of a grid
(WaveExecution.restart / restart_at) takes over the native environment
table of its last run (WaveEnvironment.rebind): the launch's parameters
and the blocks' indices must be the new ones, and code compiled since that
reads entries the table never filled must get a table of its own."""
from __future__ import annotations

import numpy as np
import pytest

from engines_pair import Out, engine_choice, run
from gpudbg.ptx.parser import parse
from gpudbg.sim.device_model import DeviceModel
from gpudbg.sim.gpu import SimGPU
from gpudbg.sim.loader import load_module
from gpudbg.sim.native import environment

HEAD = ".version 8.0\n.target sm_80\n.address_size 64\n"
# out[g] = blockIdx.x * 1000 + k, for g = blockIdx.x * blockDim.x + threadIdx.x
STAMP = HEAD + """
.visible .entry stamp(.param .u64 out, .param .u32 k)
{
    .reg .b32 %r<8>; .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [out];
    ld.param.u32 %r1, [k];
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mov.u32 %r4, %tid.x;
    mad.lo.s32 %r5, %r2, %r3, %r4;
    mad.lo.s32 %r6, %r2, 1000, %r1;
    mul.wide.u32 %rd2, %r5, 4;
    add.s64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r6;
    ret;
}
"""


@pytest.fixture
def counted(monkeypatch):
    built = []
    real = environment.WaveEnvironment.__init__

    def init(self, *a, **k):
        built.append(self)
        real(self, *a, **k)
    monkeypatch.setattr(environment.WaveEnvironment, "__init__", init)
    return built


def test_restarted_waves_take_over_the_table_with_their_own_parameters_and_blocks(counted):
    # two SMs of two 1024-thread blocks: 4 blocks a wave, 8 blocks 2 waves
    gpu = SimGPU(DeviceModel(sm_count=2))
    mod = load_module(gpu, parse(STAMP))
    with engine_choice("native"):
        for k in (7, 8, 9):
            r = run(STAMP, "stamp", (8,), (1024,), [Out(8 * 1024, np.uint32), k], module=mod)
            want = np.repeat(np.arange(8, dtype=np.uint32) * 1000 + k, 1024)
            assert np.array_equal(r[0], want)
    assert int(getattr(mod.program, "native_segments", 0)) > 0
    assert len(counted) == 1        # one table for 6 waves of 3 launches


def test_code_that_reads_entries_the_table_lacks_gets_a_new_table(counted):
    gpu = SimGPU(DeviceModel(sm_count=2))
    mod = load_module(gpu, parse(STAMP))
    with engine_choice("native"):
        run(STAMP, "stamp", (8,), (1024,), [Out(8 * 1024, np.uint32), 1], module=mod)
        mod.program.native_env_used.add(environment.ENV["smid"])   # as code compiled since would
        r = run(STAMP, "stamp", (8,), (1024,), [Out(8 * 1024, np.uint32), 2], module=mod)
    assert np.array_equal(r[0], np.repeat(np.arange(8, dtype=np.uint32) * 1000 + 2, 1024))
    assert len(counted) == 2
    assert counted[1].env[environment.ENV["smid"]] != 0
