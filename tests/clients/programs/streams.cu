// Two streams and events: each stream scales its half, an event orders them.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void scale(float *x, float f, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= f;
}

int main() {
    const int n = 1 << 12, half = n / 2;
    float h[n];
    for (int i = 0; i < n; ++i) h[i] = 1.0f;
    float *d;
    cudaMalloc(&d, sizeof h);
    cudaStream_t s1, s2;
    cudaStreamCreate(&s1);
    cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking);
    cudaEvent_t start, done1, stop;
    cudaEventCreate(&start); cudaEventCreate(&done1); cudaEventCreate(&stop);
    cudaMemcpyAsync(d, h, sizeof h, cudaMemcpyHostToDevice, s1);
    cudaEventRecord(start, s1);
    scale<<<half / 256, 256, 0, s1>>>(d, 2.0f, half);
    cudaEventRecord(done1, s1);
    cudaStreamWaitEvent(s2, done1, 0);
    scale<<<half / 256, 256, 0, s2>>>(d + half, 3.0f, half);
    scale<<<n / 256, 256, 0, s2>>>(d, 0.5f, n);
    cudaEventRecord(stop, s2);
    cudaEventSynchronize(stop);
    float ms = -1;
    cudaEventElapsedTime(&ms, start, stop);
    cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    bool ok = ms >= 0;
    for (int i = 0; i < n; ++i) ok &= h[i] == (i < half ? 1.0f : 1.5f);
    cudaStreamDestroy(s1); cudaStreamDestroy(s2);
    cudaEventDestroy(start); cudaEventDestroy(done1); cudaEventDestroy(stop);
    cudaFree(d);
    printf("two streams: %s\n", ok ? "PASSED" : "FAILED");
    return ok ? 0 : 1;
}
