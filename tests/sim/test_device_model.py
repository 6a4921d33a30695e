from dataclasses import FrozenInstanceError

import pytest
from hypothesis import given, settings, strategies as st

from gpudbg.sim.device_model import DeviceModel, occupancy

M = DeviceModel()


def test_h100_numbers():
    assert (M.sm_count, M.compute_capability, M.warp_size) == (132, (9, 0), 32)
    assert M.shared_per_sm == 233472 and M.shared_per_block_optin == 232448
    assert M.pci_bus_id == "0000:1b:00.0" and len(M.uuid) == 16
    other = M.for_ordinal(1)
    assert other.uuid != M.uuid and other.pci_bus_id == "0000:1c:00.0"
    with pytest.raises(FrozenInstanceError):
        M.sm_count = 1


@pytest.mark.parametrize("threads,regs,shared,expected", [
    (256, 32, 0, 8),        # warps: 64 / 8
    (1024, 32, 0, 2),
    (32, 0, 0, 32),         # block limit
    (256, 64, 0, 4),        # 64 regs * 32 = 2048 per warp; 65536/2048 = 32 warps / 8
    (256, 255, 0, 1),       # 255 -> 8192 regs/warp * 8 warps = the whole file
    (512, 255, 0, 0),       # 16 warps * 8192 > 65536 per block
    (128, 255, 0, 2),       # 8 warps by registers, 4 warps per block
    (256, 32, 48 * 1024, 4),   # (49152+1024) rounded: 233472 // 50176 = 4
    (64, 16, 100 * 1024, 2),
    (64, 16, 227 * 1024 + 1, 0),
    (1025, 16, 0, 0),
])
def test_occupancy_table(threads, regs, shared, expected):
    assert occupancy(M, threads, regs, shared) == expected


@settings(max_examples=80, deadline=None)
@given(st.integers(1, 1024), st.integers(0, 255), st.integers(0, 227 * 1024))
def test_occupancy_respects_every_limit(threads, regs, shared):
    n = occupancy(M, threads, regs, shared)
    warps = -(-threads // 32)
    assert 0 <= n <= M.max_blocks_per_sm
    assert n * warps <= M.warp_slots_per_sm
    if regs:
        per_warp = -(-regs * 32 // 256) * 256
        assert n * warps * per_warp <= M.registers_per_sm
    assert n * (-(-(shared + 1024) // 128) * 128) <= M.shared_per_sm
    if n and occupancy(M, threads, regs, shared) < M.max_blocks_per_sm:
        # one more block would break some limit
        more = n + 1
        assert (more * warps > M.warp_slots_per_sm
                or (regs and more * warps * (-(-regs * 32 // 256) * 256) > M.registers_per_sm)
                or more * (-(-(shared + 1024) // 128) * 128) > M.shared_per_sm)
