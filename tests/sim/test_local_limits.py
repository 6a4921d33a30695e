"""Local memory beyond what the device allows fails the module load (more
than 512 KiB per thread, as ptxas refuses) or the launch (more than the
device can back for every thread it holds: CUDA_ERROR_OUT_OF_MEMORY), with
the kernel and the sizes named, never as an internal simulator error."""
from __future__ import annotations

import numpy as np
import pytest

import gpudbg
from gpudbg import mcError_t
from gpudbg.ptx.parser import parse
from gpudbg.runtime import mc
from gpudbg.runtime.api.last_error import last_error_message
from gpudbg.sim import launch_limits, launch_resources
from gpudbg.sim.debug_port import LaunchAborted
from gpudbg.sim.executor import launch_grid
from gpudbg.sim.gpu import SimGPU
from gpudbg.sim.loader import load_module
from gpudbg.sim.program import LoadError
from kernels import OPTIMIZED, kernel_ptx

KIB = 1024


def local_ptx(nbytes: int) -> str:
    return f"""
.version 7.0
.target sm_80
.address_size 64
.visible .entry big(.param .u64 out)
{{
  .local .align 4 .b8 buf[{nbytes}];
  .reg .u64 %rd<3>;
  .reg .u32 %r<2>;
  mov.u32 %r1, 7;
  st.local.u32 [buf+{nbytes - 4}], %r1;
  ld.local.u32 %r1, [buf+{nbytes - 4}];
  ld.param.u64 %rd1, [out];
  cvta.to.global.u64 %rd2, %rd1;
  st.global.u32 [%rd2], %r1;
  ret;
}}
"""


def test_more_than_512_kib_per_thread_fails_the_load_and_frees_the_module():
    gpu = SimGPU()
    before = gpu.memory.used
    with pytest.raises(LoadError) as e:
        load_module(gpu, parse(local_ptx(512 * KIB + 16), "big.ptx"))
    assert "big.ptx:" in str(e.value) and "entry function big uses too much local data" in str(e.value)
    assert f"{512 * KIB + 16} bytes" in str(e.value) and "524288 max" in str(e.value)
    assert gpu.memory.used == before
    k = load_module(gpu, parse(local_ptx(512 * KIB), "ok.ptx")).functions["big"]
    assert k.local_size == 512 * KIB


def test_a_huge_local_array_through_the_api_is_an_invalid_module_not_an_internal_error():
    src = r"""extern "C" __global__ void big(int *out, int i) {
        volatile char buf[1 << 20];
        buf[i] = 1;
        out[0] = buf[(i * 7) % (1 << 20)];
    }"""
    with pytest.raises(gpudbg.GPUError) as e:
        gpudbg.compile(src, name="huge_local.cu")
    text = str(e.value)
    assert "uses too much local data" in text and "1048576 bytes" in text and "internal" not in text


def test_a_launch_whose_local_memory_cannot_be_backed_fails_with_out_of_memory():
    err, mod = mc.mcModuleLoadData(local_ptx(512 * KIB).encode())
    assert err is mcError_t.mcSuccess
    err, fn = mc.mcModuleGetFunction(mod, "big")
    err, out = mc.mcMalloc(4)
    err = mc.mcLaunchKernel(fn, (1, 1, 1), (1, 1, 1), [out], 0, None)[0]
    assert err is mcError_t.mcErrorMemoryAllocation
    msg = last_error_message()
    assert "kernel big needs 524288 bytes of local memory per thread" in msg and "free" in msg
    assert mc.mcGetLastError()[0] is mcError_t.mcErrorMemoryAllocation
    # not sticky: the context goes on working
    assert mc.mcDeviceSynchronize()[0] is mcError_t.mcSuccess
    err, small = mc.mcModuleLoadData(local_ptx(4 * KIB).encode())
    err, fn2 = mc.mcModuleGetFunction(small, "big")
    assert mc.mcLaunchKernel(fn2, (1, 1, 1), (32, 1, 1), [out], 0, None)[0] is mcError_t.mcSuccess
    assert mc.mcDeviceSynchronize()[0] is mcError_t.mcSuccess
    host = np.zeros(1, np.uint32)
    assert mc.mcMemcpy(host, out, 4, mc.mcMemcpyKind.mcMemcpyDeviceToHost)[0] is mcError_t.mcSuccess
    assert host[0] == 7
    mc.mcFree(out)
    mc.mcModuleUnload(mod)
    mc.mcModuleUnload(small)


def test_the_reason_names_the_kernel_and_every_size():
    gpu = SimGPU()
    k = load_module(gpu, parse(local_ptx(512 * KIB))).functions["big"]
    m = gpu.model
    why = launch_limits.local_memory_problem(m, k, 1024, 80 << 30)
    threads = m.sm_count * m.max_threads_per_sm
    assert why == (f"kernel big needs {512 * KIB} bytes of local memory per thread, {512 * KIB * threads} "
                   f"bytes for the {threads} threads the device holds at once, but only {80 << 30} bytes "
                   f"of device memory are free")
    assert launch_limits.local_memory_problem(m, k, 1024, 512 * KIB * threads) is None


def test_the_executor_refuses_what_it_cannot_back_as_a_launch_error(monkeypatch):
    gpu = SimGPU()
    k = load_module(gpu, parse(local_ptx(64 * KIB))).functions["big"]
    buf = gpu.memory.alloc(64)
    params = int(buf.base).to_bytes(8, "little")
    gpu.memory.used = gpu.memory.capacity - 1024     # the device is nearly full
    with pytest.raises(LaunchAborted) as e:
        launch_grid(gpu, k, (1, 1, 1), (32, 1, 1), 0, params, 1)
    assert isinstance(e.value, launch_resources.LaunchOutOfResources) and "kernel big needs 65536 bytes" in str(e.value)
    gpu.memory.used = 0

    def no_host_memory(*a, **kw):
        raise MemoryError("Unable to allocate 66.0 GiB")
    monkeypatch.setattr(launch_resources, "SegmentedMemory", no_host_memory)
    with pytest.raises(launch_resources.LaunchOutOfResources) as e:
        launch_grid(gpu, k, (1, 1, 1), (32, 1, 1), 0, params, 1)
    assert str(e.value) == ("out of memory: the simulator cannot back the local memory of kernel big: 32 "
                            "resident threads x 65536 bytes = 2097152 bytes (MemoryError: Unable to "
                            "allocate 66.0 GiB)")
    monkeypatch.undo()
    launch_grid(gpu, k, (1, 1, 1), (32, 1, 1), 0, params, 1)
    assert int(gpu.memory.read(buf.base, 4).view(np.uint32)[0]) == 7


def test_recursive_kernels_need_their_stack_limit():
    gpu = SimGPU()
    rec = load_module(gpu, parse(kernel_ptx("calls", OPTIMIZED))).functions["recursion"]
    flat = load_module(gpu, parse(local_ptx(64))).functions["big"]
    assert launch_limits.thread_local_bytes(rec, 4096) == 4096            # recursion: the stack limit
    assert launch_limits.thread_local_bytes(flat, 4096) == 64             # none: the frames alone
    m = gpu.model
    assert "recursion needs 524288 bytes" in launch_limits.local_memory_problem(m, rec, 512 * KIB, 1 << 30)
