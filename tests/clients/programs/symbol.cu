// A __device__ variable and a __constant__ table set with cudaMemcpyToSymbol.
#include <cstdio>
#include <cuda_runtime.h>

__device__ int counter;
__constant__ float coeffs[4];

__global__ void poly(const float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i];
        y[i] = coeffs[0] + v * (coeffs[1] + v * (coeffs[2] + v * coeffs[3]));
        atomicAdd(&counter, 1);
    }
}

int main() {
    const int n = 1000;
    float hx[n], hy[n], c[4] = {1, 2, 3, 4};
    for (int i = 0; i < n; ++i) hx[i] = i * 0.001f;
    int zero = 0, seen = 0;
    cudaMemcpyToSymbol(coeffs, c, sizeof c);
    cudaMemcpyToSymbol(counter, &zero, sizeof zero);
    float *dx, *dy;
    cudaMalloc(&dx, sizeof hx); cudaMalloc(&dy, sizeof hy);
    cudaMemcpy(dx, hx, sizeof hx, cudaMemcpyHostToDevice);
    poly<<<(n + 127) / 128, 128>>>(dx, dy, n);
    cudaMemcpy(hy, dy, sizeof hy, cudaMemcpyDeviceToHost);
    cudaMemcpyFromSymbol(&seen, counter, sizeof seen);
    bool ok = seen == n;
    for (int i = 0; i < n; ++i) {
        float v = hx[i], e = 1 + v * (2 + v * (3 + v * 4));
        ok &= hy[i] > e - 1e-4f && hy[i] < e + 1e-4f;
    }
    printf("counter %d: %s\n", seen, ok ? "PASSED" : "FAILED");
    return ok ? 0 : 1;
}
