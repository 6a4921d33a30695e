"""Findings of the 30-minute API fuzz run (fuzz/api.py, two threads), each
fixed: nothing may come back as mcErrorUnknown (a gpudbg bug)."""
from __future__ import annotations

import sys
import threading

import pytest

from gpudbg.driver.engine import reset_engine
from gpudbg.runtime import mc
from gpudbg.runtime.errors import mcError_t as E


@pytest.fixture(autouse=True)
def engine():
    reset_engine()
    yield
    reset_engine()


def test_two_threads_freeing_one_stream_ordered_block_give_one_free_and_one_error():
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    try:
        results: list = []
        for _ in range(150):
            err, p = mc.mcMallocAsync(256, None)
            assert err == E.mcSuccess
            gate = threading.Barrier(2)

            def free():
                gate.wait()
                results.append(mc.mcFreeAsync(p, None)[0])

            threads = [threading.Thread(target=free) for _ in range(2)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        assert mc.mcDeviceSynchronize()[0] == E.mcSuccess
    finally:
        sys.setswitchinterval(old)
    assert E.mcErrorUnknown not in results
    assert results.count(E.mcSuccess) == 150 and results.count(E.mcErrorInvalidValue) == 150


def test_launch_extra_that_is_not_a_list_is_invalid_value():
    ptx = (b".version 7.8\n.target sm_90\n.address_size 64\n"
           b".visible .entry k()\n{\n    ret;\n}\n")
    err, mod = mc.mcModuleLoadData(ptx)
    assert err == E.mcSuccess
    err, fn = mc.mcModuleGetFunction(mod, "k")
    assert err == E.mcSuccess
    import numpy as np
    err, = mc.mcModuleLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, None, None, np.True_)
    assert err == E.mcErrorInvalidValue
    assert "extra must be" in mc.last_error_message()


def test_a_block_freed_on_another_device_before_its_allocation_ran_is_an_error(monkeypatch):
    """Found by the API fuzzer (two threads, two devices): the cross-device
    free unmapped a block whose POOL_ALLOC had not run yet: an internal
    'not the start of a mapping' error."""
    monkeypatch.setenv("GPUDBG_DEVICES", "2")
    reset_engine()
    assert mc.mcSetDevice(1)[0] == E.mcSuccess
    err, word = mc.mcMallocHost(8)
    err, s1 = mc.mcStreamCreate()
    assert mc.mcStreamWaitValue32(s1, word, 1, 0)[0] == E.mcSuccess     # holds s1 back
    err, p = mc.mcMallocAsync(256, s1)
    assert err == E.mcSuccess
    assert mc.mcSetDevice(0)[0] == E.mcSuccess
    err, s0 = mc.mcStreamCreate()
    err, = mc.mcFreeAsync(p, s0)
    assert err == E.mcErrorInvalidValue
    assert "before its allocation took place" in mc.last_error_message()
    import numpy as np
    np.frombuffer((__import__("ctypes").c_uint32 * 1).from_address(word), dtype=np.uint32)[0] = 1
    assert mc.mcSetDevice(1)[0] == E.mcSuccess
    assert mc.mcStreamSynchronize(s1)[0] == E.mcSuccess
    assert mc.mcFreeAsync(p, s1)[0] == E.mcSuccess          # the block is still the program's to free
    assert mc.mcStreamSynchronize(s1)[0] == E.mcSuccess
