// CUB block-wide collectives written as plain kernels: load, radix sort, scan, reduce, store.
#include <cub/block/block_load.cuh>
#include <cub/block/block_radix_sort.cuh>
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/block/block_store.cuh>
#include <cub/warp/warp_reduce.cuh>
#include <cuda/functional>

__global__ void block_sort(int *data) {
  using Load = cub::BlockLoad<int, 128, 4, cub::BLOCK_LOAD_TRANSPOSE>;
  using Sort = cub::BlockRadixSort<int, 128, 4>;
  using Store = cub::BlockStore<int, 128, 4, cub::BLOCK_STORE_TRANSPOSE>;
  __shared__ union { typename Load::TempStorage l; typename Sort::TempStorage s; typename Store::TempStorage st; } tmp;
  int items[4];
  int off = blockIdx.x * 512;
  Load(tmp.l).Load(data + off, items);
  __syncthreads();
  Sort(tmp.s).Sort(items);
  __syncthreads();
  Store(tmp.st).Store(data + off, items);
}

__global__ void block_scan(const float *in, float *out, float *totals) {
  using Scan = cub::BlockScan<float, 256>;
  __shared__ typename Scan::TempStorage tmp;
  float v = in[blockIdx.x * 256 + threadIdx.x], total;
  Scan(tmp).ExclusiveSum(v, v, total);
  out[blockIdx.x * 256 + threadIdx.x] = v;
  if (threadIdx.x == 0) totals[blockIdx.x] = total;
}

__global__ void block_reduce(const double *in, double *out) {
  using Reduce = cub::BlockReduce<double, 256, cub::BLOCK_REDUCE_WARP_REDUCTIONS>;
  __shared__ typename Reduce::TempStorage tmp;
  double v = Reduce(tmp).Sum(in[blockIdx.x * 256 + threadIdx.x]);
  if (threadIdx.x == 0) out[blockIdx.x] = v;
}

__global__ void warp_max(const int *in, int *out) {
  using WR = cub::WarpReduce<int>;
  __shared__ typename WR::TempStorage tmp[4];
  int v = WR(tmp[threadIdx.x / 32]).Reduce(in[blockIdx.x * 128 + threadIdx.x], cuda::maximum<>{});
  if (threadIdx.x % 32 == 0) out[blockIdx.x * 4 + threadIdx.x / 32] = v;
}
