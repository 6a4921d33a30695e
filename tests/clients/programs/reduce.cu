// Shared-memory tree reduction with __syncthreads; pinned host memory.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void blockSum(const int *in, int *out, int n) {
    __shared__ int tile[256];
    int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    tile[t] = i < n ? in[i] : 0;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (t < s) tile[t] += tile[t + s];
        __syncthreads();
    }
    if (t == 0) out[blockIdx.x] = tile[0];
}

int main() {
    const int n = 1 << 14, blocks = n / 256;
    int *h, *partial, *d, *dout;
    if (cudaMallocHost(&h, n * sizeof(int)) != cudaSuccess) return 1;
    if (cudaMallocHost(&partial, blocks * sizeof(int)) != cudaSuccess) return 1;
    long expect = 0;
    for (int i = 0; i < n; ++i) { h[i] = i % 97; expect += h[i]; }
    cudaMalloc(&d, n * sizeof(int));
    cudaMalloc(&dout, blocks * sizeof(int));
    cudaMemcpy(d, h, n * sizeof(int), cudaMemcpyHostToDevice);
    blockSum<<<blocks, 256>>>(d, dout, n);
    cudaMemcpy(partial, dout, blocks * sizeof(int), cudaMemcpyDeviceToHost);
    long total = 0;
    for (int b = 0; b < blocks; ++b) total += partial[b];
    cudaFree(d); cudaFree(dout); cudaFreeHost(h); cudaFreeHost(partial);
    printf("sum %ld expected %ld: %s\n", total, expect, total == expect ? "PASSED" : "FAILED");
    return total == expect ? 0 : 1;
}
