// Exits with live allocations, streams, events and a launch nobody waited for.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void busy(float *x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) for (int k = 0; k < 200; ++k) x[i] = x[i] * 0.5f + 1.0f;
}

int main() {
    const int n = 1 << 16;
    float *d;
    cudaStream_t s;
    cudaEvent_t e;
    cudaMalloc(&d, n * sizeof(float));
    cudaStreamCreate(&s);
    cudaEventCreate(&e);
    busy<<<n / 256, 256, 0, s>>>(d, n);
    cudaEventRecord(e, s);
    busy<<<n / 256, 256>>>(d, n);
    printf("leaving with work in flight\n");
    return 0;
}
