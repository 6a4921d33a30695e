// Device printf and assert (ABI calls to vprintf and __assertfail), local arrays.
#include <cassert>
#include <cstdio>
__global__ void report(const int *v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && v[i] < 0) printf("negative value %d at %d (block %d)\n", v[i], i, blockIdx.x);
  assert(i >= 0);
}
__global__ void local_array(const int *idx, float *out) {
  float table[32];
  for (int k = 0; k < 32; ++k) table[k] = k * 0.5f + threadIdx.x;
  out[threadIdx.x] = table[idx[threadIdx.x] & 31];
}
