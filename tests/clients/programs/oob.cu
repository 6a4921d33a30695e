// Reads one element past the end of a cudaMalloc buffer.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void shiftLeft(const float *src, float *dst, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) dst[i] = src[i + 1];
}

int main() {
    const int n = 256;
    float *src, *dst;
    cudaMalloc(&dst, n * sizeof(float));   // src last: its end borders no other allocation
    cudaMalloc(&src, n * sizeof(float));
    shiftLeft<<<2, 128>>>(src, dst, n);
    cudaError_t e = cudaDeviceSynchronize();
    printf("cudaDeviceSynchronize: %s\n", cudaGetErrorName(e));
    return e == cudaSuccess ? 0 : 2;
}
