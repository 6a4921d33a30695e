// Asynchronous copies and mbarriers through CUDA's own headers (libcu++,
// cooperative_groups, the pipeline primitives), for tests/sim/test_async_pipelines.py.
#include <cuda/barrier>
#include <cuda/pipeline>
#include <cuda_pipeline_primitives.h>
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;

// Double buffering with cuda::pipeline: tile i+1 is copied while tile i is used.
extern "C" __global__ void pipeline_double_buffer(const float* in, float* out, int tiles) {
  constexpr int T = 64;
  __shared__ float buf[2][T];
  auto block = cg::this_thread_block();
  cuda::pipeline<cuda::thread_scope_thread> pipe = cuda::make_pipeline();
  int t = threadIdx.x;
  pipe.producer_acquire();
  cuda::memcpy_async(&buf[0][t], &in[blockIdx.x * tiles * T + t], sizeof(float), pipe);
  pipe.producer_commit();
  for (int i = 0; i < tiles; ++i) {
    if (i + 1 < tiles) {
      pipe.producer_acquire();
      cuda::memcpy_async(&buf[(i + 1) & 1][t], &in[(blockIdx.x * tiles + i + 1) * T + t], sizeof(float), pipe);
      pipe.producer_commit();
    }
    pipe.consumer_wait();
    block.sync();
    out[(blockIdx.x * tiles + i) * T + t] = buf[i & 1][T - 1 - t] * 2.0f + 1.0f;
    pipe.consumer_release();
    block.sync();
  }
}

// Producer/consumer with cuda::barrier: warp 0 fills a two-slot ring, warps
// 1..3 consume it; `full` says a slot was written, `empty` that it was read.
extern "C" __global__ void barrier_producer_consumer(const int* in, int* out, int tiles) {
  constexpr int T = 96;
  using barrier = cuda::barrier<cuda::thread_scope_block>;
  __shared__ int ring[2][T];
  __shared__ barrier full[2], empty[2];
  int t = threadIdx.x;
  if (t == 0) {
    for (int s = 0; s < 2; ++s) { init(&full[s], 32 + T); init(&empty[s], 32 + T); }
  }
  __syncthreads();
  if (t < 32) {
    for (int i = 0; i < tiles; ++i) {
      int s = i & 1;
      if (i >= 2) empty[s].arrive_and_wait();
      for (int k = t; k < T; k += 32) ring[s][k] = in[i * T + k] + 1;
      (void)full[s].arrive();
    }
  } else {
    int c = t - 32;
    for (int i = 0; i < tiles; ++i) {
      int s = i & 1;
      full[s].arrive_and_wait();
      out[i * T + c] = ring[s][T - 1 - c] * 3;
      if (i + 2 < tiles) (void)empty[s].arrive();
    }
  }
}

// cuda::memcpy_async completing on a cuda::barrier (cp.async with
// cp.async.mbarrier.arrive.noinc on sm_80, the bulk copy on sm_90).
extern "C" __global__ void memcpy_async_barrier(const int4* in, int4* out) {
  using barrier = cuda::barrier<cuda::thread_scope_block>;
  __shared__ int4 tile[128];
  __shared__ barrier bar;
  auto block = cg::this_thread_block();
  if (block.thread_rank() == 0) init(&bar, block.size());
  block.sync();
  cuda::memcpy_async(block, tile, in + blockIdx.x * 128, sizeof(tile), bar);
  bar.arrive_and_wait();
  int4 v = tile[127 - threadIdx.x];
  out[blockIdx.x * 128 + threadIdx.x] = make_int4(v.w, v.z, v.y, v.x);
}

// The bug: the copy is started but never waited for (unless `wait`), so
// the reads after the barrier may see the old contents of `s`.
extern "C" __global__ void forgotten_wait(const int* in, int* out, int wait) {
  __shared__ int s[128];
  int t = threadIdx.x;
  s[t] = -1;
  __syncthreads();
  __pipeline_memcpy_async(&s[t], &in[t], sizeof(int));
  __pipeline_commit();
  if (wait) __pipeline_wait_prior(0);
  __syncthreads();
  out[t] = s[(t + 1) % 128];
}

// 64-thread tiles: cooperative_groups keeps their scratch in the reserved
// shared memory (%reserved_smem_offset_1); plus warpSize and the smem sizes.
extern "C" __global__ void tiles_and_specials(const int* in, int* out, unsigned* info) {
  extern __shared__ int dyn[];
  __shared__ int stat[32];
  auto block = cg::this_thread_block();
  auto tile = cg::tiled_partition<64>(block);
  int v = in[block.thread_rank()];
  if (threadIdx.x < 32) stat[threadIdx.x] = v;
  dyn[threadIdx.x] = v;
  tile.sync();
  out[block.thread_rank()] = cg::reduce(tile, v, cg::plus<int>());
  if (threadIdx.x == 0) {
    unsigned dsz, tsz;
    asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(dsz));
    asm("mov.u32 %0, %%total_smem_size;" : "=r"(tsz));
    info[0] = warpSize;
    info[1] = dsz;
    info[2] = tsz;
    info[3] = dyn[0] - v + stat[31] - in[31];
  }
}
