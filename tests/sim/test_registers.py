"""The simulated GPU's register file: the table's layout rules and live values."""
import sys
import threading
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "driver"))
from gpudbg_fakes import make_kernel, report  # noqa: E402

from gpudbg.driver import commands as C  # noqa: E402
from gpudbg.driver.channel import Channel  # noqa: E402
from gpudbg.dump.devcoredump.analyzer import A6XX_KEY_REGISTERS  # noqa: E402
from gpudbg.sim import registers as R  # noqa: E402
from gpudbg.sim.faults import CUDBGException, HangKind  # noqa: E402
from gpudbg.sim.gpu import SimGPU  # noqa: E402
from gpudbg.sim.memory.spaces import AllocationKind  # noqa: E402


class Gated:
    """An executor that holds every launch until `gate` opens."""

    def __init__(self):
        self.gate = threading.Event()
        self.running = threading.Event()

    def __call__(self, gpu, function, grid, block, shared, params, grid_id):
        self.running.set()
        assert self.gate.wait(10), "test gate never opened"


@pytest.fixture
def gpu():
    ex = Gated()
    g = SimGPU(executor=ex)
    g.ex = ex
    yield g
    ex.gate.set()
    g.shutdown()


def launch(gpu, name="k"):
    k = make_kernel(name)
    gpu.register_function(k)
    d = gpu.memory.alloc(C.DESCRIPTOR_BYTES, AllocationKind.LAUNCH)
    d.data[:] = list(C.encode_descriptor(
        code_address=k.code_address, grid_x=1, grid_y=1, grid_z=1, block_x=32, block_y=1, block_z=1,
        shared_bytes=0, param_address=0, param_size=0, grid_id=7, host_tid=0))
    return C.make(C.Opcode.LAUNCH, descriptor=d.base)


def regs(gpu):
    with gpu.cv:
        return {name: value for name, _off, value in R.read_all(gpu)}


# ---------------------------------------------------------------- the table
def test_offsets_unique_aligned_and_clear_of_the_a6xx_names():
    offsets = [r.offset for r in R.GLOBAL_REGISTERS]
    assert len(offsets) == len(set(offsets)) and all(o % 4 == 0 for o in offsets)
    a6xx = set()
    for index, bits in A6XX_KEY_REGISTERS.values():
        a6xx |= {index * 4, index * 4 + 4} if bits == 64 else {index * 4}
    channel = {R.channel_offset(i, n) for i in range(64) for n, *_ in R.CHANNEL_REGISTERS}
    assert not (a6xx & (set(offsets) | channel))
    assert all(r.meaning for r in R.GLOBAL_REGISTERS)


@settings(max_examples=60, deadline=None)
@given(ring=st.integers(0, 5000), which=st.integers(0, len(R.CHANNEL_REGISTERS) - 1))
def test_channel_register_names_and_offsets_round_trip(ring, which):
    suffix = R.CHANNEL_REGISTERS[which][0]
    off = R.channel_offset(ring, suffix)
    assert R.name_of(off) == f"CH{ring}_{suffix}"
    assert R.offset_of(f"CH{ring}_{suffix}") == off


def test_global_names_round_trip_and_unknown_names_fail():
    for r in R.GLOBAL_REGISTERS:
        assert R.name_of(r.offset) == r.name and R.offset_of(r.name) == r.offset
    assert R.name_of(0x0ffc) is None
    with pytest.raises(KeyError, match="NOPE"):
        R.offset_of("NOPE")
    with pytest.raises(KeyError, match="RB_NOTHING"):
        R.channel_offset(0, "RB_NOTHING")


def test_revision_comes_from_the_compute_capability(gpu):
    assert R.chip_id_parts(gpu) == (9, 0, R.MODEL_REVISION, 0)
    assert R.gpu_id(gpu) == 900 + R.MODEL_REVISION
    assert regs(gpu)["GPU_ID"] == 9 << 24 | R.MODEL_REVISION << 8


# ---------------------------------------------------------------- live values
def test_idle_gpu_reads_quiet(gpu):
    v = regs(gpu)
    assert v["RBBM_STATUS"] == 0 and v["FAULT_STATUS"] == 0 and v["CMD_RING"] == R.NO_RING
    assert v["SM_COUNT"] == gpu.model.sm_count and v["CLOCK_RATE_KHZ"] == gpu.model.clock_rate_khz
    assert v["CHANNEL_COUNT"] == 0


def test_channel_block_mirrors_the_ring_and_fences(gpu):
    ch = Channel(gpu, 3)
    gpu.ex.gate.set()
    fence = ch.push([launch(gpu)])
    ch.wait(fence)
    v = regs(gpu)
    assert (v["CH0_RB_BASE_HI"] << 32 | v["CH0_RB_BASE_LO"]) == ch.ring.base
    assert v["CH0_RB_SIZE"] == 4 * ch.ring.size
    assert v["CH0_RB_RPTR"] == ch.ring.get == v["CH0_RB_WPTR"] == ch.ring.put != 0
    assert v["CH0_FENCE_ISSUED"] == v["CH0_FENCE_RETIRED"] == fence
    assert (v["CH0_SEM_ADDR_HI"] << 32 | v["CH0_SEM_ADDR_LO"]) == ch.semaphore.address
    assert v["CH0_ID"] == ch.id and v["CH0_GROUP"] == 3 and v["CH0_STATUS"] == 0
    assert v["CHANNEL_COUNT"] == 1 and v["CLOCK_LO"] == gpu.clock_cycles > 0 and v["CLOCK_HI"] == 0


def test_status_while_a_kernel_runs_and_a_channel_waits(gpu):
    runner, waiter = Channel(gpu, 1), Channel(gpu, 1)
    flag = gpu.memory.alloc(8, AllocationKind.DEVICE)
    flag.data[:] = 0
    runner.push([launch(gpu)])
    assert gpu.ex.running.wait(10)
    waiter.push([C.make(C.Opcode.WAIT_VALUE, address=flag.base, value=1, flags=0, width=4)])
    v = regs(gpu)
    S, CS = R.RbbmStatus, R.ChannelStatus
    assert v["RBBM_STATUS"] == S.FE_BUSY | S.SM_BUSY | S.CH_PENDING | S.CH_BLOCKED | S.GPU_BUSY
    assert set(R.describe_status(v["RBBM_STATUS"])) >= {"SMs running a grid", "a channel waits on a semaphore or value"}
    assert v["CMD_RING"] == 0 and (v["CMD_ADDR_HI"] << 32 | v["CMD_ADDR_LO"]) == runner.ring.base
    assert v["CMD_HEADER"] >> 24 == C.Opcode.LAUNCH
    assert v["CH0_STATUS"] == CS.PENDING | CS.EXECUTING
    assert v["CH1_STATUS"] == CS.PENDING | CS.BLOCKED
    gpu.ex.gate.set()
    runner.wait()
    flag.data[0] = 1
    with gpu.cv:
        gpu.cv.notify_all()
    waiter.wait()
    assert regs(gpu)["RBBM_STATUS"] == 0


def test_latched_fault_fills_the_fault_block(gpu):
    r = report(CUDBGException.CUDBG_EXCEPTION_LANE_ILLEGAL_ADDRESS)
    r.address, r.sm, r.warp, r.lane, r.grid_id, r.access_size = 0x7000_1234_5678, 5, 3, 17, 42, 8
    with gpu.cv:
        R.latch(gpu, R.FaultLatch.from_report(r, ring=2, command_address=0xABC0))
    v = regs(gpu)
    F = R.FaultStatus
    assert v["FAULT_STATUS"] == F.FAULT | F.ADDRESS_VALID | F.LANE_VALID | F.PC_VALID
    assert v["FAULT_KIND"] == CUDBGException.CUDBG_EXCEPTION_LANE_ILLEGAL_ADDRESS and v["HANG_KIND"] == 0
    assert (v["FAULT_ADDR_HI"] << 32 | v["FAULT_ADDR_LO"]) == r.address
    assert v["FAULT_PC_LO"] == r.pc and v["FAULT_RING"] == 2 and v["FAULT_CMD_ADDR_LO"] == 0xABC0
    assert (v["FAULT_SM"], v["FAULT_WARP"], v["FAULT_LANE"], v["FAULT_GRID_LO"]) == (5, 3, 17, 42)
    assert v["FAULT_ACCESS_SIZE"] == 8 and v["RBBM_STATUS"] & R.RbbmStatus.FAULT


def test_latched_hang_sets_the_hang_bits(gpu):
    r = report(CUDBGException.CUDBG_EXCEPTION_NONE, HangKind.INSTRUCTION_BUDGET)
    with gpu.cv:
        R.latch(gpu, R.FaultLatch.from_report(r, ring=0, command_address=0))
    v = regs(gpu)
    assert v["HANG_KIND"] == R.HangCode.INSTRUCTION_BUDGET and v["FAULT_KIND"] == 0
    assert v["FAULT_STATUS"] & R.FaultStatus.HANG and not v["FAULT_STATUS"] & R.FaultStatus.FAULT
    assert v["FAULT_SM"] == R.U32    # no lane known
    assert v["RBBM_STATUS"] & R.RbbmStatus.HANG


def test_read_by_name(gpu):
    Channel(gpu, 1)
    assert R.read(gpu, "CHANNEL_COUNT") == 1
    with pytest.raises(KeyError, match="1 channel rings"):
        R.read(gpu, "CH1_RB_RPTR")
