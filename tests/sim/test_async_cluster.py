"""Asynchronous copies and mbarriers across the blocks of a cluster
(sm_90): a block hands a tile to its peer with a bulk copy into the
peer's shared memory that completes on the peer's mbarrier, announced by
a remote arrive.expect_tx; the peer waits with try_wait."""
from __future__ import annotations

import numpy as np
import pytest

import gpudbg

pytest.importorskip("cuda.bindings.nvrtc", reason="NVRTC (cuda-bindings) is not installed")

HANDOFF = r'''
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__device__ unsigned smem(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }
__device__ unsigned peer_addr(const void* p, unsigned rank) {
  unsigned r;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(smem(p)), "r"(rank));
  return r;
}
extern "C" __global__ void __cluster_dims__(2, 1, 1) handoff(int* out) {
  __shared__ alignas(16) int src[64];
  __shared__ alignas(16) int dst[64];
  __shared__ alignas(8) unsigned long long bar;
  cg::cluster_group cl = cg::this_cluster();
  unsigned rank = cl.block_rank();
  int t = threadIdx.x;
  src[t] = (int)(blockIdx.x * 1000 + t);
  dst[t] = -1;
  if (t == 0) asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(smem(&bar)));
  cl.sync();
  if (rank == 0 && t == 0) {
    unsigned rbar = peer_addr(&bar, 1), rdst = peer_addr(dst, 1);
    asm volatile("fence.proxy.async.shared::cta;");
    asm volatile("mbarrier.arrive.expect_tx.release.cluster.shared::cluster.b64 _, [%0], 256;" :: "r"(rbar));
    asm volatile("cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [%0], [%1], 256, [%2];"
                 :: "r"(rdst), "r"(smem(src)), "r"(rbar) : "memory");
  }
  if (rank == 1) {
    unsigned done = 0;
    while (!done)
      asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], 0;"
                   " selp.u32 %0, 1, 0, p; }" : "=r"(done) : "r"(smem(&bar)));
  }
  out[blockIdx.x * 64 + t] = dst[t];
  cl.sync();
}
'''


def test_bulk_copy_into_a_peer_block_completes_on_its_mbarrier():
    mod = gpudbg.compile(HANDOFF, options=["-arch=compute_90"])
    out = gpudbg.to_device(np.zeros(4 * 64, np.int32))
    mod.handoff[4, 64](out)
    gpudbg.synchronize()
    got = out.to_host().reshape(4, 64)
    t = np.arange(64)
    for cluster0 in (0, 2):
        assert (got[cluster0] == -1).all()                           # the sender's own dst is untouched
        np.testing.assert_array_equal(got[cluster0 + 1], cluster0 * 1000 + t)   # the peer got the sender's tile


MULTICAST = r'''
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__device__ unsigned smem(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }
extern "C" __global__ void __cluster_dims__(4, 1, 1) broadcast(const int* in, int* out, unsigned short mask) {
  __shared__ alignas(16) int tile[64];
  __shared__ alignas(8) unsigned long long bar;
  cg::cluster_group cl = cg::this_cluster();
  unsigned rank = cl.block_rank();
  int t = threadIdx.x;
  tile[t] = -1;
  bool mine = (mask >> rank) & 1;
  if (t == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(smem(&bar)));
    if (mine) asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], 256;" :: "r"(smem(&bar)));
  }
  cl.sync();
  if (rank == 0 && t == 0)
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
                 " [%0], [%1], 256, [%2], %3;"
                 :: "r"(smem(tile)), "l"(in + blockIdx.x / 4 * 64), "r"(smem(&bar)), "h"(mask) : "memory");
  if (mine) {
    unsigned done = 0;
    while (!done)
      asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0; selp.u32 %0, 1, 0, p; }"
                   : "=r"(done) : "r"(smem(&bar)));
  }
  out[blockIdx.x * 64 + t] = tile[t];
  cl.sync();
}
'''


@pytest.mark.parametrize("mask", [0b1111, 0b1010])
def test_multicast_bulk_copy_lands_in_every_named_block(mask):
    mod = gpudbg.compile(MULTICAST, options=["-arch=compute_90"])
    x = np.arange(2 * 64, dtype=np.int32) * 3 + 1
    out = gpudbg.to_device(np.zeros(8 * 64, np.int32))
    mod.broadcast[8, 64](gpudbg.to_device(x), out, np.uint16(mask))
    gpudbg.synchronize()
    got = out.to_host().reshape(8, 64)
    for b in range(8):
        if mask >> (b % 4) & 1:
            np.testing.assert_array_equal(got[b], x[b // 4 * 64:(b // 4 + 1) * 64])
        else:
            assert (got[b] == -1).all()
