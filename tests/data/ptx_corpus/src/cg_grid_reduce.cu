// cooperative_groups: tiled partitions, cg::reduce, coalesced groups, grid.sync().
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;

__global__ void grid_sum(const float *in, float *partial, float *out, int n) {
  cg::grid_group grid = cg::this_grid();
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);
  float v = 0;
  for (int i = grid.thread_rank(); i < n; i += grid.size()) v += in[i];
  v = cg::reduce(tile, v, cg::plus<float>());
  __shared__ float warp[32];
  if (tile.thread_rank() == 0) warp[tile.meta_group_rank()] = v;
  block.sync();
  if (tile.meta_group_rank() == 0) {
    v = tile.thread_rank() < tile.meta_group_size() ? warp[tile.thread_rank()] : 0.0f;
    v = cg::reduce(tile, v, cg::plus<float>());
    if (tile.thread_rank() == 0) partial[blockIdx.x] = v;
  }
  grid.sync();
  if (grid.thread_rank() == 0) {
    float s = 0;
    for (int b = 0; b < gridDim.x; ++b) s += partial[b];
    *out = s;
  }
}

__global__ void coalesced_count(const int *in, int *counts) {
  int v = in[blockIdx.x * blockDim.x + threadIdx.x];
  if (v > 0) {
    cg::coalesced_group active = cg::coalesced_threads();
    int rank = active.thread_rank();
    int total = cg::reduce(active, v, cg::plus<int>());
    if (rank == 0) atomicAdd(counts, total);
  }
}

__global__ void tile16_scan(int *data) {
  auto tile = cg::tiled_partition<16>(cg::this_thread_block());
  int v = data[threadIdx.x];
  for (int d = 1; d < 16; d <<= 1) {
    int o = tile.shfl_up(v, d);
    if (tile.thread_rank() >= d) v += o;
  }
  data[threadIdx.x] = v + tile.any(v < 0) + tile.all(v > 0) + tile.ballot(v & 1);
}
