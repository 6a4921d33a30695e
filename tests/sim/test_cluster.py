"""Thread-block clusters (sm_90) on the simulated GPU: cluster launches
(__cluster_dims__ and the launch attribute), the %cluster* special
registers, placement in one GPC, distributed shared memory and the
cluster barrier, with CUDA's errors."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import gpudbg
from gpudbg.runtime import mc
from gpudbg.sim import cluster

pytest.importorskip("cuda.bindings.nvrtc", reason="NVRTC (cuda-bindings) is not installed")

SM90 = ["-arch=compute_90"]
A = mc.mcLaunchAttributeID

EXCHANGE = r'''
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
extern "C" __global__ void __cluster_dims__(4, 1, 1) exchange(int* out) {
    __shared__ int buf[64];
    cg::cluster_group cl = cg::this_cluster();
    buf[threadIdx.x] = blockIdx.x * 1000 + threadIdx.x;
    cl.sync();                                      // every block's buf is written
    unsigned peer = (cl.block_rank() + 1) % cl.num_blocks();
    int v = cl.map_shared_rank(buf, peer)[threadIdx.x];
    cl.sync();                                      // no block leaves while a peer reads it
    out[blockIdx.x * 64 + threadIdx.x] = v;
}
'''


def test_blocks_exchange_through_distributed_shared_memory():
    mod = gpudbg.compile(EXCHANGE, options=SM90)
    out = gpudbg.to_device(np.zeros(8 * 64, np.int32))
    mod.exchange[8, 64](out)
    gpudbg.synchronize()
    b, t = np.meshgrid(np.arange(8), np.arange(64), indexing="ij")
    peer = (b // 4) * 4 + (b % 4 + 1) % 4
    np.testing.assert_array_equal(out.to_host().reshape(8, 64), peer * 1000 + t)


SPECIALS = r'''
extern "C" __global__ void where(unsigned* out) {
    unsigned v[9];
    asm("mov.u32 %0, %%cluster_ctarank;" : "=r"(v[0]));
    asm("mov.u32 %0, %%clusterid.x;" : "=r"(v[1]));
    asm("mov.u32 %0, %%clusterid.y;" : "=r"(v[2]));
    asm("mov.u32 %0, %%cluster_ctaid.x;" : "=r"(v[3]));
    asm("mov.u32 %0, %%cluster_ctaid.y;" : "=r"(v[4]));
    asm("mov.u32 %0, %%cluster_nctarank;" : "=r"(v[5]));
    asm("mov.u32 %0, %%nclusterid.y;" : "=r"(v[6]));
    asm("mov.u32 %0, %%smid;" : "=r"(v[7]));
    asm("mov.u32 %0, %%is_explicit_cluster;" : "=r"(v[8]));
    if (threadIdx.x == 0)
        for (int i = 0; i < 9; ++i) out[(blockIdx.y * gridDim.x + blockIdx.x) * 9 + i] = v[i];
}
'''


def test_cluster_specials_and_placement_in_one_gpc():
    mod = gpudbg.compile(SPECIALS, options=SM90)
    out = gpudbg.to_device(np.zeros(6 * 4 * 9, np.uint32))
    cfg = mc.mcLaunchConfig_t((6, 4), 64, 0, None,
                              [mc.mcLaunchAttribute_t(A.mcLaunchAttributeClusterDimension, (2, 2))])
    assert mc.mcLaunchKernelExC(cfg, mod.where.handle, [out.ptr]) == (0,)
    gpudbg.synchronize()
    v = out.to_host().reshape(4, 6, 9)          # [blockIdx.y, blockIdx.x, value]
    by, bx = np.meshgrid(np.arange(4), np.arange(6), indexing="ij")
    np.testing.assert_array_equal(v[..., 3], bx % 2)
    np.testing.assert_array_equal(v[..., 4], by % 2)
    np.testing.assert_array_equal(v[..., 0], (bx % 2) + 2 * (by % 2))
    np.testing.assert_array_equal(v[..., 1], bx // 2)
    np.testing.assert_array_equal(v[..., 2], by // 2)
    assert (v[..., 5] == 4).all() and (v[..., 6] == 2).all() and (v[..., 8] == 1).all()
    gpcs = {int(sm): g for g, sms in enumerate(cluster.gpc_sms(132)) for sm in sms}
    for cy in range(2):
        for cx in range(3):
            sms = v[2 * cy:2 * cy + 2, 2 * cx:2 * cx + 2, 7].ravel()
            assert len({gpcs[int(s)] for s in sms}) == 1, sms


def test_cluster_errors_are_cudas():
    mod = gpudbg.compile(SPECIALS, options=SM90)
    out = gpudbg.to_device(np.zeros(64 * 9, np.uint32))
    bad = [((6, 4), (4, 1)),                    # 4 does not divide 6
           ((16, 1), (16, 1))]                  # more than the portable 8 blocks
    for grid, dims in bad:
        cfg = mc.mcLaunchConfig_t(grid, 32, 0, None, [mc.mcLaunchAttribute_t(A.mcLaunchAttributeClusterDimension,
                                                                              dims)])
        assert mc.mcLaunchKernelExC(cfg, mod.where.handle, [out.ptr]) == (mc.mcError_t.mcErrorInvalidClusterSize,)
        assert "cluster" in mc.last_error_message()
    fixed = gpudbg.compile(EXCHANGE, options=SM90)
    cfg = mc.mcLaunchConfig_t(8, 64, 0, None, [mc.mcLaunchAttribute_t(A.mcLaunchAttributeClusterDimension, 2)])
    assert mc.mcLaunchKernelExC(cfg, fixed.exchange.handle, [out.ptr]) == (mc.mcError_t.mcErrorInvalidClusterSize,)
    assert "compiled for clusters of (4, 1, 1)" in mc.last_error_message()
    cfg = mc.mcLaunchConfig_t(8, 64, 0, None, [mc.mcLaunchAttribute_t(99, 0)])
    assert mc.mcLaunchKernelExC(cfg, fixed.exchange.handle, [out.ptr]) == (mc.mcError_t.mcErrorInvalidValue,)
    attrs = mc.mcFuncGetAttributes(fixed.exchange.handle)[1]
    assert (attrs.clusterDimMustBeSet, attrs.requiredClusterWidth, attrs.requiredClusterHeight) == (1, 4, 1)


def test_a_rank_outside_the_cluster_faults_precisely():
    mod = gpudbg.compile(r'''
#include <cooperative_groups.h>
extern "C" __global__ void __cluster_dims__(2, 1, 1) wild(int* out, unsigned rank) {
    __shared__ int buf[32];
    buf[threadIdx.x] = threadIdx.x;
    cooperative_groups::this_cluster().sync();
    out[threadIdx.x] = cooperative_groups::this_cluster().map_shared_rank(buf, rank)[threadIdx.x];
}''', options=SM90)
    out = gpudbg.to_device(np.zeros(32, np.int32))
    try:
        mod.wild[2, 32](out, np.uint32(5))
        with pytest.raises(gpudbg.KernelFaultError, match="Cluster Out Of Range Address|cluster of 2 blocks"):
            gpudbg.synchronize()
    finally:
        gpudbg.Device(0).reset()


def test_racecheck_sees_the_cluster_barrier(tmp_path: Path):
    prog = tmp_path / "clusters.py"
    prog.write_text("import numpy as np, gpudbg\n"
                    f"SRC = {EXCHANGE!r}\n"
                    "m = gpudbg.compile(SRC, options=['-arch=compute_90'], name='exchange.cu')\n"
                    "out = gpudbg.to_device(np.zeros(8 * 64, np.int32))\n"
                    "m.exchange[8, 64](out)\n"
                    "gpudbg.synchronize()\n")
    r = subprocess.run([sys.executable, "-m", "gpudbg", "check", "--tool", "racecheck", str(prog)],
                       capture_output=True, text=True, timeout=300, env=dict(os.environ))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "RACECHECK SUMMARY: 0 hazards displayed" in r.stdout
