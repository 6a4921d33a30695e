// Stream capture into a CUDA graph, replayed three times.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void addOne(int *x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += 1;
}

int main() {
    const int n = 1024;
    int h[n] = {0};
    int *d;
    cudaMalloc(&d, sizeof h);
    cudaMemset(d, 0, sizeof h);
    cudaStream_t s;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
    addOne<<<n / 256, 256, 0, s>>>(d, n);
    addOne<<<n / 256, 256, 0, s>>>(d, n);
    cudaStreamCaptureStatus status;
    cudaStreamIsCapturing(s, &status);
    cudaStreamEndCapture(s, &graph);
    if (cudaGraphInstantiate(&exec, graph, 0) != cudaSuccess) { printf("instantiate failed\n"); return 1; }
    for (int k = 0; k < 3; ++k) cudaGraphLaunch(exec, s);
    cudaStreamSynchronize(s);
    cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    bool ok = status == cudaStreamCaptureStatusActive;
    for (int i = 0; i < n; ++i) ok &= h[i] == 6;
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
    printf("graph replayed: %s\n", ok ? "PASSED" : "FAILED");
    return ok ? 0 : 1;
}
