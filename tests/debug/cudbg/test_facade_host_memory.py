"""Host memory through the cudbg facade: pinned/registered host memory at
its host address, device-to-host address translation, managed regions."""
from __future__ import annotations

import numpy as np
import pytest

import gpudbg
from gpudbg import mc
from gpudbg.debug.cudbg import facade as F
from gpudbg.debug.cudbg.enums import CUDBGResult as R


@pytest.fixture
def api():
    res, api = F.cudbgGetAPI(F.CUDBG_API_VERSION_MAJOR, F.CUDBG_API_VERSION_MINOR, F.CUDBG_API_VERSION_REVISION)
    assert res is R.CUDBG_SUCCESS and api.initialize() == (R.CUDBG_SUCCESS,)
    try:
        yield api
    finally:
        api.finalize()


def _ok(result):
    assert result[0] is R.CUDBG_SUCCESS, result
    return result[1:] if len(result) > 2 else result[1]


def test_pinned_memory_reads_writes_and_host_address(api):
    err, host = mc.mcHostAlloc(64)
    assert err == 0
    err, dev_mem = mc.mcMalloc(64)
    try:
        mc.mcMemset(host, 0x5A, 64)
        mc.mcDeviceSynchronize()
        assert _ok(api.readPinnedMemory(host + 8, 4)) == b"\x5a" * 4
        assert api.writePinnedMemory(host, b"\x01\x02\x03\x04", 4) == (R.CUDBG_SUCCESS,)
        assert _ok(api.readPinnedMemory(host, 4)) == b"\x01\x02\x03\x04"
        assert _ok(api.getHostAddrFromDeviceAddr(0, host + 16)) == host + 16
        assert api.getHostAddrFromDeviceAddr(0, dev_mem)[0] is R.CUDBG_ERROR_INVALID_ARGS
        assert api.readPinnedMemory(dev_mem, 4)[0] is R.CUDBG_ERROR_MEMORY_MAPPING_FAILED
        assert api.readPinnedMemory(host + 60, 8)[0] is R.CUDBG_ERROR_MEMORY_MAPPING_FAILED
    finally:
        mc.mcFreeHost(host)
        mc.mcFree(dev_mem)


def test_managed_memory_regions_in_address_order(api):
    ptrs = [mc.mcMallocManaged(n)[1] for n in (256, 4096, 1024)]
    try:
        regions, count = _ok(api.getManagedMemoryRegionInfo(0, 16))
        mine = sorted((p, n) for p, n in zip(ptrs, (256, 4096, 1024)))
        got = [(r.startAddress, r.size) for r in regions]
        assert count == len(regions) and [g for g in got if g in mine] == mine
        assert got == sorted(got)
        start = mine[1][0] + 10
        regions, count = _ok(api.getManagedMemoryRegionInfo(start, 1))
        assert count == 1 and regions[0].startAddress == mine[1][0]
        err, dev_mem = mc.mcMalloc(16)
        assert api.getManagedMemoryRegionInfo(dev_mem, 4)[0] is R.CUDBG_ERROR_INVALID_ADDRESS
        mc.mcFree(dev_mem)
    finally:
        for p in ptrs:
            mc.mcFree(p)
