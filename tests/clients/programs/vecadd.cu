// A CUDA sample-style vector add (nvcc -cudart shared): prints PASSED.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

__global__ void vectorAdd(const float *A, const float *B, float *C, int n) {
    int i = blockDim.x * blockIdx.x + threadIdx.x;
    if (i < n) C[i] = A[i] + B[i];
}

#define CHECK(call) do { cudaError_t e = (call); if (e != cudaSuccess) { \
    fprintf(stderr, "%s failed: %s (%s)\n", #call, cudaGetErrorString(e), cudaGetErrorName(e)); return 1; } } while (0)

int main() {
    const int n = 50000;
    size_t size = n * sizeof(float);
    float *hA = (float *)malloc(size), *hB = (float *)malloc(size), *hC = (float *)malloc(size);
    for (int i = 0; i < n; ++i) { hA[i] = rand() / (float)RAND_MAX; hB[i] = rand() / (float)RAND_MAX; }
    int count = 0;
    CHECK(cudaGetDeviceCount(&count));
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    printf("%d device(s), device 0: %s, compute capability %d.%d\n", count, prop.name, prop.major, prop.minor);
    float *dA, *dB, *dC;
    CHECK(cudaMalloc(&dA, size)); CHECK(cudaMalloc(&dB, size)); CHECK(cudaMalloc(&dC, size));
    CHECK(cudaMemcpy(dA, hA, size, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dB, hB, size, cudaMemcpyHostToDevice));
    int threads = 256, blocks = (n + threads - 1) / threads;
    vectorAdd<<<blocks, threads>>>(dA, dB, dC, n);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(hC, dC, size, cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; ++i)
        if (hA[i] + hB[i] != hC[i]) { fprintf(stderr, "mismatch at %d\n", i); return 1; }
    CHECK(cudaFree(dA)); CHECK(cudaFree(dB)); CHECK(cudaFree(dC));
    free(hA); free(hB); free(hC);
    printf("Test PASSED\n");
    return 0;
}
