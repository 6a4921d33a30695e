"""Launch templates (sim/launch_template.py): a launch shape's plan and
sizes are computed once and reused only while everything they derive from
is unchanged; a new grid, block, shared size, module, kernel attribute,
stack limit or device model gets a template of its own, and launches of
changing shapes still run every block."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from gpudbg.ptx.parser import parse
from gpudbg.sim import launch_template
from gpudbg.sim.executor import launch_grid
from gpudbg.sim.gpu import SimGPU
from gpudbg.sim.loader import load_module

# out[blockIdx.x * blockDim.x + threadIdx.x] = blockIdx.x + 1
MARK = """
.version 7.0
.target sm_80
.address_size 64
.visible .entry mark(.param .u64 out)
{
  .reg .u32 %r<6>;
  .reg .u64 %rd<4>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %ctaid.x;
  mov.u32 %r2, %ntid.x;
  mov.u32 %r3, %tid.x;
  mad.lo.u32 %r4, %r1, %r2, %r3;
  add.u32 %r5, %r1, 1;
  mul.wide.u32 %rd2, %r4, 4;
  add.u64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r5;
  ret;
}
"""


@pytest.fixture
def mark():
    gpu = SimGPU()
    return gpu, load_module(gpu, parse(MARK)).functions["mark"]


def test_the_same_shape_reuses_its_template(mark):
    gpu, k = mark
    t = launch_template.for_launch(gpu, k, (2, 1, 1), (32, 1, 1), 0, None)
    assert launch_template.for_launch(gpu, k, (2, 1, 1), (32, 1, 1), 0, (1, 1, 1)) is t
    assert t.plan.nblocks == 2 and t.plan.threads_per_block == 32


@pytest.mark.parametrize("grid,block,shared", [((3, 1, 1), (32, 1, 1), 0), ((2, 1, 1), (64, 1, 1), 0),
                                               ((2, 1, 1), (32, 1, 1), 4096)])
def test_another_shape_gets_its_own(mark, grid, block, shared):
    gpu, k = mark
    t = launch_template.for_launch(gpu, k, (2, 1, 1), (32, 1, 1), 0, None)
    u = launch_template.for_launch(gpu, k, grid, block, shared, None)
    assert u is not t
    assert (u.plan.nblocks, u.plan.threads_per_block) == (grid[0], block[0])
    assert u.segment_bytes == k.static_shared + shared


def test_a_changed_kernel_stack_limit_or_model_makes_a_new_template(mark):
    gpu, k = mark
    shape = ((2, 1, 1), (32, 1, 1), 0, None)
    t = launch_template.for_launch(gpu, k, *shape)
    k2 = load_module(gpu, parse(MARK)).functions["mark"]     # the module loaded again
    assert launch_template.for_launch(gpu, k2, *shape).function() is k2
    k.num_regs += 8
    u = launch_template.for_launch(gpu, k, *shape)
    assert u is not t and u.num_regs == k.num_regs
    gpu.stack_size = 4096
    v = launch_template.for_launch(gpu, k, *shape)
    assert v is not u and v.stack_limit == 4096
    gpu.model = dataclasses.replace(gpu.model, sm_count=1)
    w = launch_template.for_launch(gpu, k, *shape)
    assert w is not v and w.model is gpu.model


def test_templates_kept_are_bounded(mark):
    gpu, k = mark
    for g in range(1, launch_template.TEMPLATES_KEPT + 10):
        launch_template.for_launch(gpu, k, (g, 1, 1), (32, 1, 1), 0, None)
    assert len(gpu._launch_templates) == launch_template.TEMPLATES_KEPT


def test_launches_of_changing_shapes_run_every_block(mark):
    gpu, k = mark
    out = gpu.memory.alloc(4 * 4 * 64).base
    for grid, block in [((1, 1, 1), (32, 1, 1)), ((4, 1, 1), (32, 1, 1)), ((1, 1, 1), (32, 1, 1)),
                        ((2, 1, 1), (64, 1, 1)), ((4, 1, 1), (64, 1, 1))]:
        gpu.memory.write(out, bytes(4 * 4 * 64))
        params = out.to_bytes(8, "little")
        launch_grid(gpu, k, grid, block, 0, params, 1)
        got = np.frombuffer(gpu.memory.read(out, 4 * 4 * 64), np.uint32)
        n = grid[0] * block[0]
        assert (got[:n] == np.repeat(np.arange(1, grid[0] + 1), block[0])).all(), (grid, block)
        assert not got[n:].any()
