// A small nvcc -G test program for `gpudbg debug`: one kernel with a
// local variable; prints PASSED when every element is right. Exits 3 when
// a runtime call fails (the message names the call and the error).
#include <cstdio>
#include <cuda_runtime.h>

__global__ void scale(int *out, int factor, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int scaled = i * factor + 1;  // LOCAL
    if (i < n) out[i] = scaled;  // STORE
}

#define CHECK(call) do { cudaError_t e = (call); if (e != cudaSuccess) { \
    fprintf(stderr, "%s failed: %s\n", #call, cudaGetErrorName(e)); return 3; } } while (0)

int main() {
    const int n = 64;
    int host[n];
    int *dev = nullptr;
    CHECK(cudaMalloc(&dev, n * sizeof(int)));
    scale<<<2, 32>>>(dev, 3, n);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(host, dev, n * sizeof(int), cudaMemcpyDeviceToHost));
    CHECK(cudaFree(dev));
    for (int i = 0; i < n; ++i)
        if (host[i] != i * 3 + 1) { printf("FAILED at %d: %d\n", i, host[i]); return 1; }
    printf("PASSED\n");
    return 0;
}
