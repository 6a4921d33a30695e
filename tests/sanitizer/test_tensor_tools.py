"""The sanitizer's tools on tensor-core code. racecheck sees the matrix
instructions' shared-memory accesses (each thread's fragment elements,
declared per element): a wmma tile that one warp stores to shared memory and another warp loads without
__syncthreads is a read-after-write race on every element; with the
barrier it is silent. Under memcheck an out-of-bounds wmma store is the
simulator's precise fault, counting every faulting lane. synccheck reports
.sync.aligned matrix instructions that only part of a warp executes;
initcheck a wmma.load of shared memory nobody wrote."""
from __future__ import annotations

import numpy as np
import pytest
from sanitizer_harness import checked

import gpudbg
from test_racecheck import only, run

SRC = r"""
#include <mma.h>
using namespace nvcuda;
extern "C" __global__ void handoff(const half *a, float *out) {
    __shared__ __align__(32) float tile[256];
    int warp = threadIdx.x / 32;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    if (warp == 0) {
        wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
        wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;
        wmma::fill_fragment(acc, 0.0f);
        wmma::load_matrix_sync(fa, a, 16);
        wmma::load_matrix_sync(fb, a, 16);
        wmma::mma_sync(acc, fa, fb, acc);
        wmma::store_matrix_sync(tile, acc, 16, wmma::mem_row_major);    // W
    }
#ifdef SYNC
    __syncthreads();
#endif
    if (warp == 1) {
        wmma::load_matrix_sync(acc, tile, 16, wmma::mem_row_major);     // R
        wmma::store_matrix_sync(out, acc, 16, wmma::mem_row_major);
    }
}
"""


def test_wmma_tile_handed_between_warps_without_a_barrier_races():
    a = (np.arange(256) % 5).astype(np.float16)
    findings, _, (_, out) = run(SRC, "handoff", 1, 64, a, np.zeros(256, np.float32), name="wmma_race.cu")
    f = only(findings, "shared_race_raw")[0]
    # the instructions sit in mma.h's inlined wrappers, whose lines the sites carry
    assert f.site.instruction.startswith("wmma.store.d.sync.aligned.row.m16n16k16.shared.f32")
    assert f.other_site.instruction.startswith("wmma.load.c.sync.aligned.row.m16n16k16.shared.f32")
    assert f.site.source_file.endswith("mma.hpp")
    assert f.count == 256                 # every element of the tile
    A = a.astype(np.float64).reshape(16, 16)
    assert np.array_equal(out.reshape(16, 16), (A @ A.T).astype(np.float32))


def test_wmma_tile_handed_between_warps_after_syncthreads_is_silent():
    a = (np.arange(256) % 5).astype(np.float16)
    findings, _, _ = run("#define SYNC\n" + SRC, "handoff", 1, 64, a, np.zeros(256, np.float32),
                         name="wmma_race.cu")
    assert findings == []


OOB = r"""
#include <mma.h>
using namespace nvcuda;
extern "C" __global__ void spill(float *out, int ldm) {
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::fill_fragment(acc, 1.0f);
    wmma::store_matrix_sync(out, acc, ldm, wmma::mem_row_major);    // STORE
}
"""


def test_an_out_of_bounds_wmma_store_is_the_simulators_precise_fault_under_memcheck():
    with checked("memcheck") as rep:
        m = gpudbg.compile(OOB, name="wmma_oob.cu")
        d = gpudbg.zeros(256, np.float32)
        with pytest.raises(gpudbg.KernelFaultError) as e:
            m.spill[1, 32](d, 32)          # a 32-float stride: rows 8-15 run past the 256-float buffer
            gpudbg.Device().synchronize()
    assert rep.findings == []              # the fault is the simulator's own report
    r = e.value.report
    assert r.instruction.startswith("wmma.store.d.sync.aligned.row.m16n16k16")
    assert r.faulting_count == 32          # every lane holds elements of rows g + 8
    assert r.message.startswith("Invalid __global__ write of size 4 bytes")


HALF_WARP = r"""
#include <mma.h>
using namespace nvcuda;
extern "C" __global__ void half_warp(const half *a, float *out) {
    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::fill_fragment(acc, 0.0f);
    wmma::load_matrix_sync(fb, a, 16);
    if (threadIdx.x < LIMIT) {
        wmma::load_matrix_sync(fa, a, 16);
        wmma::mma_sync(acc, fa, fb, acc);
    }
    wmma::store_matrix_sync(out, acc, 16, wmma::mem_row_major);
}
"""


def _synccheck(limit: int):
    with checked("synccheck") as rep:
        m = gpudbg.compile(f"#define LIMIT {limit}\n" + HALF_WARP, name="half_warp.cu")
        a = gpudbg.to_device((np.arange(256) % 5).astype(np.float16))
        m.half_warp[1, 32](a, gpudbg.zeros(256, np.float32))
        gpudbg.Device().synchronize()
    return rep


def test_synccheck_reports_wmma_executed_by_half_a_warp():
    rep = _synccheck(16)
    ops = sorted(f.site.instruction.split()[0] for f in rep.findings)
    assert ops == ["wmma.load.a.sync.aligned.row.m16n16k16.global.f16",
                   "wmma.mma.sync.aligned.row.col.m16n16k16.f32.f32"]
    assert all(f.kind == "warp_sync_invalid_arguments" and f.count == 16 for f in rep.findings)
    assert "names live lane(s) that are not executing it" in rep.texts[0]


def test_synccheck_is_silent_when_the_whole_warp_executes_wmma():
    assert _synccheck(32).findings == []


UNINIT = r"""
#include <mma.h>
using namespace nvcuda;
extern "C" __global__ void uninit(float *out, int fill) {
    __shared__ __align__(32) half tile[256];
    if (fill) for (int i = threadIdx.x; i < 256; i += 32) tile[i] = __float2half(1.0f);
    __syncwarp();
    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::fill_fragment(acc, 0.0f);
    wmma::fill_fragment(fb, __float2half(1.0f));
    wmma::load_matrix_sync(fa, tile, 16);
    wmma::mma_sync(acc, fa, fb, acc);
    wmma::store_matrix_sync(out, acc, 16, wmma::mem_row_major);
}
"""


def _initcheck(fill: int):
    with checked("initcheck") as rep:
        m = gpudbg.compile(UNINIT, name="uninit_tile.cu")
        out = gpudbg.zeros(256, np.float32)
        m.uninit[1, 32](out, fill)
        gpudbg.Device().synchronize()
        result = out.to_host()
    return rep, result


def test_initcheck_reports_a_wmma_load_of_shared_memory_nobody_wrote():
    rep, _ = _initcheck(0)
    [f] = rep.findings
    assert f.kind == "uninitialized_shared_read" and f.count == 32
    assert f.site.instruction.startswith("wmma.load.a.sync.aligned.row.m16n16k16")
    assert "Uninitialized __shared__ memory read of size 2 bytes" in rep.texts[0]


def test_initcheck_is_silent_once_the_tile_is_written():
    rep, result = _initcheck(1)
    assert rep.findings == []
    assert np.array_equal(result, np.full(256, 16.0, np.float32))
