"""Dynamic parallelism (CDP2) on the simulated GPU: kernels launching
kernels through the device runtime, compiled by NVRTC with -rdc=true, with
CUDA's stream semantics, nesting limit and per-thread errors."""
from __future__ import annotations

import numpy as np
import pytest

import gpudbg
from gpudbg.sim import device_runtime

pytest.importorskip("cuda.bindings.nvrtc", reason="NVRTC (cuda-bindings) is not installed")

RDC = ["-rdc=true"]

QUICKSORT = r'''
#define MAX_DEPTH 16
#define INSERTION_SORT 32

__device__ void selection_sort(unsigned int *data, int left, int right) {
    for (int i = left; i <= right; ++i) {
        unsigned min_val = data[i];
        int min_idx = i;
        for (int j = i + 1; j <= right; ++j) {
            if (data[j] < min_val) { min_idx = j; min_val = data[j]; }
        }
        if (i != min_idx) { data[min_idx] = data[i]; data[i] = min_val; }
    }
}

// NVIDIA's cdpSimpleQuicksort, as CUDA's samples write it for CDP2
extern "C" __global__ void quicksort(unsigned int *data, int left, int right, int depth) {
    if (depth >= MAX_DEPTH || right - left <= INSERTION_SORT) {
        selection_sort(data, left, right);
        return;
    }
    unsigned int *lptr = data + left, *rptr = data + right;
    unsigned int pivot = data[(left + right) / 2];
    while (lptr <= rptr) {
        unsigned int lval = *lptr, rval = *rptr;
        while (lval < pivot) { lptr++; lval = *lptr; }
        while (rval > pivot) { rptr--; rval = *rptr; }
        if (lptr <= rptr) { *lptr++ = rval; *rptr-- = lval; }
    }
    int nright = rptr - data, nleft = lptr - data;
    if (left < (rptr - data)) {
        cudaStream_t s;
        cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
        quicksort<<<1, 1, 0, s>>>(data, left, nright, depth + 1);
        cudaStreamDestroy(s);
    }
    if ((lptr - data) < right) {
        cudaStream_t s1;
        cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking);
        quicksort<<<1, 1, 0, s1>>>(data, nleft, right, depth + 1);
        cudaStreamDestroy(s1);
    }
}
'''


def test_cdp2_quicksort_sorts():
    mod = gpudbg.compile(QUICKSORT, options=RDC)
    a = np.random.default_rng(5).integers(0, 2**32, size=700, dtype=np.uint32)
    d = gpudbg.to_device(a)
    mod.quicksort[1, 1](d, np.int32(0), np.int32(a.size - 1), np.int32(0))
    gpudbg.synchronize()
    np.testing.assert_array_equal(d.to_host(), np.sort(a))


ORDER = r'''
extern "C" __global__ void mark(int *log, int *next, int tag) {
    log[atomicAdd(next, 1)] = tag;
}
extern "C" __global__ void parent(int *log, int *next) {
    if (threadIdx.x == 0) {
        mark<<<1, 1, 0, cudaStreamTailLaunch>>>(log, next, 9);
        mark<<<1, 1>>>(log, next, 1);
        mark<<<1, 1, 0, cudaStreamFireAndForget>>>(log, next, 2);
        mark<<<1, 1>>>(log, next, 3);
    }
    log[atomicAdd(next, 1)] = 100 + threadIdx.x;   // the parent's own work comes first
}
'''


def test_children_run_after_the_parent_and_tail_launches_last():
    mod = gpudbg.compile(ORDER, options=RDC)
    log = gpudbg.to_device(np.full(8, -1, np.int32))
    nxt = gpudbg.to_device(np.zeros(1, np.int32))
    mod.parent[1, 2](log, nxt)
    gpudbg.synchronize()
    assert log.to_host().tolist() == [100, 101, 1, 2, 3, 9, -1, -1]


ERRORS = r'''
extern "C" __global__ void leaf(int *out) { out[0] += 1; }
extern "C" __global__ void nest(int *out, int *err, int depth) {
    out[1] = depth;
    nest<<<1, 1>>>(out, err, depth + 1);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) err[0] = e;
}
extern "C" __global__ void bad(int *out, int *err) {
    leaf<<<1, 2048>>>(out);                      // more threads than a block holds
    err[0] = cudaPeekAtLastError();
    err[1] = cudaGetLastError();
    err[2] = cudaGetLastError();                 // cleared by the first Get
    leaf<<<1, 1, 0, (cudaStream_t)0x777>>>(out); // not a stream of this grid
    err[3] = cudaGetLastError();
}
'''


def test_nesting_depth_and_errors_are_cudas():
    mod = gpudbg.compile(ERRORS, options=RDC)
    out = gpudbg.to_device(np.zeros(2, np.int32))
    err = gpudbg.to_device(np.zeros(4, np.int32))
    mod.nest[1, 1](out, err, np.int32(0))
    gpudbg.synchronize()
    # the grid at depth 23 is the deepest; its launch fails
    assert out.to_host()[1] == device_runtime.MAX_NESTING_DEPTH - 1
    assert err.to_host()[0] == device_runtime.DeviceRuntimeStatus.cudaErrorLaunchMaxDepthExceeded
    err = gpudbg.to_device(np.zeros(4, np.int32))
    mod.bad[1, 1](out, err)
    gpudbg.synchronize()
    S = device_runtime.DeviceRuntimeStatus
    assert err.to_host().tolist() == [S.cudaErrorInvalidConfiguration, S.cudaErrorInvalidConfiguration,
                                      S.cudaSuccess, S.cudaErrorInvalidResourceHandle]


def test_a_fault_in_a_child_is_the_launch_fault():
    mod = gpudbg.compile(r'''
extern "C" __global__ void child(int *p) { p[threadIdx.x] = 1; }
extern "C" __global__ void parent(int *p) { child<<<1, 64>>>(p); }
''', options=RDC)
    small = gpudbg.to_device(np.zeros(16, np.int32))
    try:
        mod.parent[1, 1](small)
        with pytest.raises(gpudbg.KernelFaultError, match="in kernel child"):
            gpudbg.synchronize()
    finally:
        gpudbg.Device(0).reset()


def test_pending_launch_count_limit_is_the_devices():
    from gpudbg.runtime import mc
    mod = gpudbg.compile(r'''
extern "C" __global__ void leaf(int *out) { atomicAdd(out, 1); }
extern "C" __global__ void fan(int *out, int *err) {
    for (int i = 0; i < 3; ++i) {
        leaf<<<1, 1>>>(out);
        err[i] = cudaGetLastError();
    }
}''', options=RDC)
    out = gpudbg.to_device(np.zeros(1, np.int32))
    err = gpudbg.to_device(np.zeros(3, np.int32))
    limit = mc.mcLimit_t.mcLimitDevRuntimePendingLaunchCount
    assert mc.mcDeviceSetLimit(limit, 2) == (0,)
    try:
        mod.fan[1, 1](out, err)
        gpudbg.synchronize()
    finally:
        assert mc.mcDeviceSetLimit(limit, 2048) == (0,)
    S = device_runtime.DeviceRuntimeStatus
    assert err.to_host().tolist() == [S.cudaSuccess, S.cudaSuccess, S.cudaErrorLaunchPendingCountExceeded]
    assert out.to_host()[0] == 2
