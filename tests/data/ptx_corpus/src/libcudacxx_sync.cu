// libcu++: cuda::atomic_ref, cuda::barrier, cuda::pipeline with memcpy_async (cp.async + mbarrier on sm_80).
#include <cuda/atomic>
#include <cuda/barrier>
#include <cuda/pipeline>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

__global__ void atomic_ref_hist(const int *in, int *bins, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    cuda::atomic_ref<int, cuda::thread_scope_device> b(bins[in[i] & 255]);
    b.fetch_add(1, cuda::memory_order_relaxed);
  }
}

__global__ void barrier_copy(const float *in, float *out) {
  __shared__ float buf[256];
#pragma nv_diag_suppress static_var_with_dynamic_init
  __shared__ cuda::barrier<cuda::thread_scope_block> bar;
  auto block = cg::this_thread_block();
  if (block.thread_rank() == 0) init(&bar, block.size());
  block.sync();
  cuda::memcpy_async(block, buf, in + blockIdx.x * 256, sizeof(buf), bar);
  bar.arrive_and_wait();
  out[blockIdx.x * 256 + threadIdx.x] = buf[255 - threadIdx.x] * 2.0f;
}

__global__ void pipeline_sum(const float *in, float *out, int tiles) {
  constexpr int stages = 2;
  __shared__ float buf[stages][128];
  auto block = cg::this_thread_block();
  __shared__ cuda::pipeline_shared_state<cuda::thread_scope_block, stages> state;
  auto pipe = cuda::make_pipeline(block, &state);
  float acc = 0;
  for (int fetch = 0, t = 0; t < tiles; ++t) {
    for (; fetch < tiles && fetch < t + stages; ++fetch) {
      pipe.producer_acquire();
      cuda::memcpy_async(block, buf[fetch % stages], in + fetch * 128, sizeof(float) * 128, pipe);
      pipe.producer_commit();
    }
    pipe.consumer_wait();
    acc += buf[t % stages][threadIdx.x];
    pipe.consumer_release();
  }
  out[threadIdx.x] = acc;
}
