// cuda_fp16.h / cuda_bf16.h arithmetic: half2 axpy, bf16 dot product, conversions.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

__global__ void haxpy(int n, __half a, const __half2 *x, __half2 *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = __hfma2(__half2half2(a), x[i], y[i]);
}

__global__ void bf16_dot(const __nv_bfloat16 *a, const __nv_bfloat16 *b, float *out, int n) {
  float s = 0;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    s += __bfloat162float(__hmul(a[i], b[i]));
  for (int o = 16; o; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
  if ((threadIdx.x & 31) == 0) atomicAdd(out, s);
}

__global__ void half_math(const __half *x, __half *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    __half v = x[i];
    y[i] = __hadd(hexp(v), __hmul(hsqrt(__habs(v)), hrcp(__float2half(1.5f))));
  }
}
