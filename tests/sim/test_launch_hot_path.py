"""The launch path's shortcuts and the conditions each one relies on (issue
13 item 5: the device side's Python work per queued launch). Each test
shows a shortcut taken where its condition holds, and the general path
(same results) where it does not:

- a launch template is found under the dimensions as given (numpy ints,
  lists) and brings plain int tuples;
- a launch's reusable arrays are found by the template's own key, never
  while another grid holds them;
- a plain launch restarts the wave the last one kept; under a tool, beside
  another grid or with a cooperative workspace it builds one and keeps none
  (the debugger's case: test_wave_restart.py);
- a lone grid's SM placement is the default one; beside another grid, or
  larger than the empty GPU, it is placed for real; the last release
  leaves no owner;
- launch_grid off a GPU thread restores numpy's error state, also after a
  fault;
- the launch settings' snapshot follows a replaced os.environ;
- the front end reads a launch descriptor in place only when it lies in
  one allocation, and calls a replaced executor with the descriptor's
  cooperative and cluster fields.
"""
from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "driver"))
from gpudbg_fakes import make_kernel  # noqa: E402

from gpudbg.driver import commands as C  # noqa: E402
from gpudbg.driver.channel import Channel  # noqa: E402
from gpudbg.driver.status import CUresult  # noqa: E402
from gpudbg.ptx.parser import parse  # noqa: E402
from gpudbg.sim import executor, instrument, launch_settings, launch_template, sm_pool  # noqa: E402
from gpudbg.sim.faults import KernelFault  # noqa: E402
from gpudbg.sim.gpu import SimGPU  # noqa: E402
from gpudbg.sim.loader import load_module  # noqa: E402
from gpudbg.sim.memory.spaces import AllocationKind  # noqa: E402
from gpudbg.sim.sm_pool import BlockShape, SMPool  # noqa: E402

from test_launch_template import MARK  # noqa: E402  (out[global id] = blockIdx.x + 1)


@pytest.fixture
def mark():
    gpu = SimGPU()
    yield gpu, load_module(gpu, parse(MARK)).functions["mark"]
    gpu.shutdown()


def _launch(gpu, k, grid, block, out_bytes: int = 4 * 256) -> np.ndarray:
    out = gpu.memory.alloc(out_bytes).base
    gpu.memory.write(out, bytes(out_bytes))
    executor.launch_grid(gpu, k, grid, block, 0, out.to_bytes(8, "little"), 1)
    return np.frombuffer(gpu.memory.read(out, out_bytes), np.uint32)


# ------------------------------------------------------------------ templates
def test_numpy_dimensions_find_the_template_of_their_values(mark):
    gpu, k = mark
    t = launch_template.for_launch(gpu, k, (2, 1, 1), (32, 1, 1), 0, None)
    u = launch_template.for_launch(gpu, k, (np.int64(2), 1, 1), (np.uint32(32), 1, 1), np.int32(0), None)
    assert u is t
    assert t.grid == (2, 1, 1) and t.block == (32, 1, 1) and t.shared_bytes == 0
    assert all(type(d) is int for d in t.grid + t.block)


def test_a_shape_first_seen_with_numpy_dimensions_gets_plain_ints(mark):
    gpu, k = mark
    t = launch_template.for_launch(gpu, k, (np.int64(3), np.int64(1), 1), [32, 1, 1], np.uint16(0), [1, 1, 1])
    assert all(type(d) is int for d in t.grid + t.block) and type(t.shared_bytes) is int
    assert launch_template.for_launch(gpu, k, (3, 1, 1), (32, 1, 1), 0, None) is t


def test_list_dimensions_are_not_a_key_but_find_their_template(mark):
    gpu, k = mark
    t = launch_template.for_launch(gpu, k, [2, 1, 1], [32, 1, 1], 0, None)      # unhashable: canonical key
    assert launch_template.for_launch(gpu, k, (2, 1, 1), (32, 1, 1), 0, None) is t
    assert launch_template.for_launch(gpu, k, [2, 1, 1], [32, 1, 1], 0, None) is t


def test_a_launch_with_numpy_dimensions_runs_every_block(mark):
    gpu, k = mark
    got = _launch(gpu, k, (np.int64(4), 1, 1), (np.int32(32), 1, 1))
    assert got[:128].tolist() == np.repeat(np.arange(1, 5), 32).tolist()
    assert not got[128:].any()


def test_the_waves_of_a_huge_grid_stay_computed_on_demand(mark):
    gpu, k = mark
    t = launch_template.for_launch(gpu, k, (1, 1, 1), (32, 1, 1), 0, None)
    assert isinstance(t.waves, tuple) and list(t.waves) == list(t.plan.waves)
    per_wave = t.plan.blocks_per_wave
    big = launch_template.for_launch(gpu, k, (per_wave * (launch_template.WAVES_LISTED + 1), 1, 1),
                                     (32, 1, 1), 0, None)
    assert not isinstance(big.waves, tuple) and len(big.waves) == launch_template.WAVES_LISTED + 1


# ------------------------------------------------------------------ reusable arrays
def test_resources_a_running_grid_holds_are_not_handed_out_again(mark):
    gpu, k = mark
    t = launch_template.for_launch(gpu, k, (2, 1, 1), (32, 1, 1), 0, None)
    first = executor._checkout_resources(gpu, t.plan, k, 0, t)
    assert first.checked_out
    second = executor._checkout_resources(gpu, t.plan, k, 0, t)     # a concurrent grid of the same shape
    assert second is not first and second.checked_out
    first.checked_out = False
    second.checked_out = False
    assert executor._checkout_resources(gpu, t.plan, k, 0, t) is second    # the one kept on the GPU now


def test_a_new_template_of_the_shape_finds_the_arrays_by_their_key(mark):
    gpu, k = mark
    t = launch_template.for_launch(gpu, k, (2, 1, 1), (32, 1, 1), 0, None)
    res = executor._checkout_resources(gpu, t.plan, k, 0, t)
    res.checked_out = False
    gpu._launch_templates.clear()           # an equal key, not the same tuple: LaunchResources decides
    u = launch_template.for_launch(gpu, k, (2, 1, 1), (32, 1, 1), 0, None)
    assert u is not t and u.resources_key == t.resources_key and u.resources_key is not t.resources_key
    assert executor._checkout_resources(gpu, u.plan, k, 0, u) is res


def test_launches_hand_their_arrays_back_also_after_a_fault(mark):
    gpu, k = mark
    _launch(gpu, k, (2, 1, 1), (32, 1, 1))
    res = gpu._launch_resources[1]
    assert not res.checked_out
    with pytest.raises(KernelFault):
        executor.launch_grid(gpu, k, (2, 1, 1), (32, 1, 1), 0, (0x10).to_bytes(8, "little"), 2)
    assert not res.checked_out and gpu._launch_resources[1] is res


# ------------------------------------------------------------------ a kept wave restarted
def _kept(gpu):
    kept = next(reversed(gpu._launch_resources[1].kept_waves.values()), None)   # the last kept
    return None if kept is None else kept[2]


def test_a_plain_launch_keeps_its_wave_and_the_next_restarts_it(mark):
    gpu, k = mark
    _launch(gpu, k, (2, 1, 1), (32, 1, 1))
    X = _kept(gpu)
    assert X is not None
    got = _launch(gpu, k, (2, 1, 1), (32, 1, 1))
    assert _kept(gpu) is X and got[:64].tolist() == [1] * 32 + [2] * 32


class _Watcher(instrument.Tool):
    def __init__(self):
        self.waves = []

    def wave_begin(self, X):
        self.waves.append(X)


def test_a_launch_under_a_tool_gets_a_new_wave_and_keeps_none(mark):
    gpu, k = mark
    _launch(gpu, k, (2, 1, 1), (32, 1, 1))
    X = _kept(gpu)
    tool = _Watcher()
    instrument.install(tool)
    try:
        got = _launch(gpu, k, (2, 1, 1), (32, 1, 1))
    finally:
        instrument.uninstall(tool)
    assert len(tool.waves) == 1 and tool.waves[0] is not X
    assert _kept(gpu) is None and got[:64].tolist() == [1] * 32 + [2] * 32


def test_a_launch_beside_another_grid_gets_a_new_wave_and_keeps_none(mark):
    gpu, k = mark
    _launch(gpu, k, (2, 1, 1), (32, 1, 1))
    t = launch_template.for_launch(gpu, k, (2, 1, 1), (32, 1, 1), 0, None)
    pool = sm_pool.pool_for(gpu)
    other = pool.try_acquire("another grid", t.shape, 1)      # resident on SM 0
    try:
        got = _launch(gpu, k, (2, 1, 1), (32, 1, 1))
    finally:
        pool.release(other)
    assert _kept(gpu) is None and got[:64].tolist() == [1] * 32 + [2] * 32


def test_a_cooperative_launch_gets_a_new_wave_and_keeps_none(mark):
    gpu, k = mark
    _launch(gpu, k, (2, 1, 1), (32, 1, 1))
    out = gpu.memory.alloc(256).base
    executor.launch_grid(gpu, k, (2, 1, 1), (32, 1, 1), 0, out.to_bytes(8, "little"), 3, cooperative=True)
    assert _kept(gpu) is None
    assert np.frombuffer(gpu.memory.read(out, 256), np.uint32).tolist() == [1] * 32 + [2] * 32


def test_a_cooperative_launch_refused_for_its_workspace_hands_its_arrays_back(mark, monkeypatch):
    """The workspace is allocated inside the launch's try: a launch refused
    for want of it leaves its reusable arrays free, and the next launch
    of the shape gets the same ones (before, they stayed checked out and
    the next launch built new ones)."""
    gpu, k = mark
    _launch(gpu, k, (2, 1, 1), (32, 1, 1))
    res = gpu._launch_resources[1]

    def no_memory(gpu_, function):
        raise executor.LaunchAborted(f"the cooperative launch of {function.name} has no memory")
    monkeypatch.setattr(executor, "grid_workspace", no_memory)
    with pytest.raises(executor.LaunchAborted):
        executor.launch_grid(gpu, k, (2, 1, 1), (32, 1, 1), 0, bytes(8), 3, cooperative=True)
    assert res.checked_out is False
    assert _launch(gpu, k, (2, 1, 1), (32, 1, 1))[:64].tolist() == [1] * 32 + [2] * 32
    assert gpu._launch_resources[1] is res


# ------------------------------------------------------------------ SM pool
class _Model:
    sm_count = 2
    max_threads_per_sm = 2048
    max_blocks_per_sm = 32
    registers_per_sm = 65536
    shared_per_sm = 100 * 1024
    warp_slots_per_sm = 64
    lanes = 32
    register_allocation_unit = 256
    reserved_shared_per_block = 1024
    shared_allocation_unit = 128


def test_a_lone_grid_gets_the_default_placement_and_a_second_does_not():
    pool = SMPool(_Model())
    shape = BlockShape.of(_Model, 128, 32, 0, 16)
    a = pool.try_acquire("a", shape, 4)
    assert a.default and not a.applied and a.block_sm is None
    b = pool.try_acquire("b", shape, 4)
    assert not b.default and b.applied and a.applied      # the first one is written down now
    assert pool.resident_grids == 2
    pool.release(a)
    assert pool.resident_grids == 1          # b's owner still holds its placement
    pool.release(b)
    assert pool.resident_grids == 0 and not pool.used.any() and pool.free_warps.all()


def test_equal_shapes_that_are_not_the_same_object_each_get_their_capacity():
    pool = SMPool(_Model())
    one = BlockShape(4, (128, 1, 8192, 1024), 16)
    other = BlockShape(4, (128, 1, 8192, 1024), 16)
    for shape in (one, other, one):
        p = pool.try_acquire("g", shape, 8)
        assert p.default and p.nblocks == 8
        pool.release(p)
    assert pool.resident_grids == 0


def test_more_blocks_than_the_empty_gpu_holds_are_placed_for_real():
    pool = SMPool(_Model())
    shape = BlockShape(4, (128, 1, 8192, 1024), 16)
    lone = pool._empty_fit(shape) * pool.sm_count
    p = pool.try_acquire("g", shape, lone + 1)
    assert not p.default and p.nblocks == lone      # as many as fit, really placed
    pool.release(p)
    assert pool.resident_grids == 0 and not pool.used.any()


def test_the_last_release_leaves_no_owner_and_a_second_release_changes_nothing():
    pool = SMPool(_Model())
    shape = BlockShape(4, (128, 1, 8192, 1024), 16)
    p = pool.try_acquire("g", shape, 2)
    q = pool.try_acquire("g", shape, 2)       # the same owner twice (two waves beside each other)
    assert pool.resident_grids == 1
    pool.release(p)
    assert pool.resident_grids == 1
    pool.release(q)
    pool.release(q)
    assert pool.resident_grids == 0 and pool._owners == {} and pool._leases == {}


# ------------------------------------------------------------------ numpy's error state
def test_a_launch_off_a_gpu_thread_restores_numpy_error_state(mark):
    gpu, k = mark
    before = np.seterr(all="warn")
    try:
        _launch(gpu, k, (2, 1, 1), (32, 1, 1))
        assert np.geterr() == {"divide": "warn", "over": "warn", "under": "warn", "invalid": "warn"}
        with pytest.raises(KernelFault):
            executor.launch_grid(gpu, k, (2, 1, 1), (32, 1, 1), 0, (0x10).to_bytes(8, "little"), 2)
        assert np.geterr() == {"divide": "warn", "over": "warn", "under": "warn", "invalid": "warn"}
    finally:
        np.seterr(**before)


# ------------------------------------------------------------------ settings
def test_a_replaced_os_environ_is_read_at_the_next_launch(monkeypatch):
    monkeypatch.delenv("GPUDBG_HANG_TIMEOUT", raising=False)
    real = launch_settings.current()
    monkeypatch.setattr(os, "environ", {"GPUDBG_HANG_TIMEOUT": "7"})     # not the os module's mapping
    assert launch_settings.current().timeout == 7.0
    monkeypatch.undo()
    assert launch_settings.current() == real


# ------------------------------------------------------------------ front end
class _Calls:
    def __init__(self):
        self.calls = []

    def __call__(self, gpu, function, grid, block, shared, params, grid_id, **extra):
        self.calls.append((function.name, grid, block, shared, params, grid_id, extra))


@pytest.fixture
def fed():
    rec = _Calls()
    gpu = SimGPU(executor=rec)
    gpu.rec = rec
    yield gpu
    gpu.shutdown()


def _descriptor(gpu, kernel, at=None, **fields):
    gpu.register_function(kernel)
    values = dict(code_address=kernel.code_address, grid_x=3, grid_y=2, grid_z=1, block_x=64, block_y=1,
                  block_z=1, shared_bytes=16, param_address=0, param_size=0, grid_id=9, host_tid=0)
    values.update(fields)
    data = C.encode_descriptor(**values)
    if at is None:
        d = gpu.memory.alloc(C.DESCRIPTOR_BYTES, AllocationKind.LAUNCH)
        at = d.base
    gpu.memory.write(at, data)
    return at


def test_a_replaced_executor_gets_the_descriptor_and_its_cooperative_and_cluster_fields(fed):
    k = make_kernel("k")
    ch = Channel(fed, 1)
    ch.push([C.make(C.Opcode.LAUNCH, descriptor=_descriptor(fed, k))])
    ch.push([C.make(C.Opcode.LAUNCH, descriptor=_descriptor(fed, k, cooperative=1, cluster_x=2, cluster_y=1,
                                                            cluster_z=1, grid_id=10))])
    ch.wait()
    assert fed.rec.calls == [("k", (3, 2, 1), (64, 1, 1), 16, b"", 9, {}),
                             ("k", (3, 2, 1), (64, 1, 1), 16, b"", 10,
                              {"cooperative": True, "cluster": (2, 1, 1)})]


@pytest.mark.parametrize("where", ["unmapped", "straddling"])
def test_a_descriptor_not_inside_one_allocation_faults_the_channel_precisely(fed, where):
    k = make_kernel("k")
    fed.register_function(k)
    if where == "unmapped":
        at = 0x7_0000_0000
    else:
        a = fed.memory.alloc(64, AllocationKind.LAUNCH)
        at = a.base + 64 - 8            # the descriptor would run past the allocation's end
    ch = Channel(fed, 1)
    ch.push([C.make(C.Opcode.LAUNCH, descriptor=at)])
    ch.wait()
    assert ch.error.status is CUresult.CUDA_ERROR_ILLEGAL_ADDRESS
    assert "LAUNCH" in ch.error.message and f"0x{at:x}" in ch.error.message
    assert fed.rec.calls == []


def test_launches_of_two_channels_each_see_their_own_descriptor(fed):
    # the in-place read is per command: two streams' launches never mix fields
    gate = threading.Event()
    seen = []

    def run(gpu, function, grid, block, shared, params, grid_id, **extra):
        gate.wait(10)
        seen.append((grid_id, grid))
    fed.executor = run
    a, b = Channel(fed, 1), Channel(fed, 1)
    k = make_kernel("k")
    for i in range(3):
        a.push([C.make(C.Opcode.LAUNCH, descriptor=_descriptor(fed, k, grid_id=100 + i, grid_x=1 + i))])
        b.push([C.make(C.Opcode.LAUNCH, descriptor=_descriptor(fed, k, grid_id=200 + i, grid_x=5 + i))])
    gate.set()
    a.wait(), b.wait()
    assert sorted(seen) == [(100 + i, (1 + i, 2, 1)) for i in range(3)] + [(200 + i, (5 + i, 2, 1))
                                                                            for i in range(3)]
