"""Schedules (sim/schedule.py): the random interleaving of warps shows a
missing __syncthreads by changing a racy kernel's output, is reproducible
by seed, and stays a legal schedule: correct programs (barriers, atomics,
warp-synchronous code after divergence) give their right answer."""
from __future__ import annotations

import numpy as np
import pytest

import gpudbg
from gpudbg.sim import schedule

RACY = r"""
extern "C" __global__ void racy(int *out, int base) {
    __shared__ int s[128];
    int t = threadIdx.x;
    s[t] = t + base;
    // missing __syncthreads(): the next warp may not have written yet
    out[t] = s[(t + 32) % 128];
}
"""

CORRECT = r"""
extern "C" __global__ void reduce(const int *in, int *out) {
    __shared__ int s[256];
    int t = threadIdx.x;
    s[t] = in[blockIdx.x * 256 + t];
    __syncthreads();
    for (int k = 128; k > 0; k >>= 1) {
        if (t < k) s[t] += s[t + k];
        __syncthreads();
    }
    if (t == 0) out[blockIdx.x] = s[0];
}

extern "C" __global__ void count(int *counter, int *slots) {
    int mine = atomicAdd(counter, 1);
    slots[mine] = 1;
}

extern "C" __global__ void warpsum(const int *in, int *out) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int v = in[t];
    if (threadIdx.x & 1) v *= 2; else v += 1;      // diverge, then reconverge for the shuffle
    __syncwarp();
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    if ((threadIdx.x & 31) == 0) out[t / 32] = v;
}
"""


@pytest.fixture
def restore_schedule():
    gpudbg.Device(0).reset()      # no sticky error left by an earlier test
    yield
    schedule.reset()


def run_racy(base: int) -> np.ndarray:
    m = gpudbg.compile(RACY, name="racy_schedule.cu")
    out = gpudbg.zeros(128, np.int32)
    m.racy[1, 128](out, base)
    return out.to_host()


def expected_racy(base: int) -> np.ndarray:
    return (np.arange(128) + 32) % 128 + base


def test_random_schedule_changes_a_racy_kernels_output(restore_schedule):
    schedule.configure("lowest-pc", 0)
    assert (run_racy(1000) == expected_racy(1000)).all()   # lowest-pc hides the race
    differing = []
    for seed in range(6):
        schedule.configure("random", seed)
        base = 2000 + 1000 * seed
        got = run_racy(base)
        if not (got == expected_racy(base)).all():
            differing.append(seed)
    assert differing, "no seed exposed the missing __syncthreads"


def test_same_seed_same_interleaving(restore_schedule):
    outputs = []
    for _ in range(2):
        run_racy(7)                      # same stale shared memory before each seeded run
        schedule.configure("random", 11)
        outputs.append(run_racy(50))
        schedule.configure("lowest-pc", 0)
    assert (outputs[0] == outputs[1]).all()
    assert not (outputs[0] == expected_racy(50)).all()   # seed 11 does show the race


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_correct_programs_stay_correct_under_random_schedules(restore_schedule, seed):
    schedule.configure("random", seed)
    m = gpudbg.compile(CORRECT, name="correct_schedule.cu")
    data = np.random.default_rng(seed).integers(0, 100, 4 * 256, dtype=np.int32)
    out = gpudbg.zeros(4, np.int32)
    m.reduce[4, 256](gpudbg.to_device(data), out)
    assert out.to_host().tolist() == data.reshape(4, 256).sum(axis=1).tolist()

    counter, slots = gpudbg.zeros(1, np.int32), gpudbg.zeros(3 * 96, np.int32)
    m.count[3, 96](counter, slots)
    assert counter.to_host()[0] == 288 and (slots.to_host() == 1).all()

    vals = np.arange(128, dtype=np.int32)
    sums = gpudbg.zeros(4, np.int32)
    m.warpsum[2, 64](gpudbg.to_device(vals), sums)
    t = np.arange(128)
    v = np.where(t & 1, vals * 2, vals + 1)
    assert sums.to_host().tolist() == v.reshape(4, 32).sum(axis=1).tolist()


def test_environment_selects_and_validates_the_schedule(restore_schedule, monkeypatch):
    schedule.reset()
    monkeypatch.setenv("GPUDBG_SCHEDULE", "random")
    monkeypatch.setenv("GPUDBG_SEED", "11")
    assert isinstance(schedule.for_launch(), schedule.RandomSchedule)
    assert schedule.describe() == "random (seed 11)"
    schedule.configure("lowest-pc", 0)
    run_racy(7)
    schedule.reset()                       # the environment's random schedule, from seed 11
    first = run_racy(50)
    schedule.configure("lowest-pc", 0)
    run_racy(7)
    schedule.configure("random", 11)       # the same seed through configure: the same steps
    assert (run_racy(50) == first).all()
    assert not (first == expected_racy(50)).all()
    schedule.reset()
    monkeypatch.setenv("GPUDBG_SEED", "-1")
    with pytest.raises(schedule.ScheduleError, match="GPUDBG_SEED='-1' must be a non-negative integer"):
        schedule.from_environment()
    monkeypatch.setenv("GPUDBG_SEED", "x")
    with pytest.raises(schedule.ScheduleError, match="GPUDBG_SEED='x' is not an integer seed"):
        schedule.from_environment()
    monkeypatch.setenv("GPUDBG_SEED", "3")
    monkeypatch.setenv("GPUDBG_SCHEDULE", "fastest")
    with pytest.raises(schedule.ScheduleError, match="GPUDBG_SCHEDULE='fastest' is not a schedule"):
        schedule.from_environment()
    with pytest.raises(schedule.ScheduleError):
        schedule.configure("sideways", 0)


def test_a_bad_environment_refuses_the_launch_with_an_error(restore_schedule, monkeypatch):
    schedule.reset()
    monkeypatch.setenv("GPUDBG_SCHEDULE", "fastest")
    m = gpudbg.compile(RACY, name="racy_refused.cu")
    out = gpudbg.zeros(128, np.int32)
    with pytest.raises(Exception) as e:
        m.racy[1, 128](out, 1)
        out.to_host()
    assert "GPUDBG_SCHEDULE='fastest' is not a schedule" in str(e.value)
    assert "Traceback" not in str(e.value)
    gpudbg.Device(0).reset()
