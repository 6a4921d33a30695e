// A shared-memory race (each thread reads its neighbour's slot with no
// __syncthreads after the writes) and a buffer never freed: what
// compute-sanitizer's racecheck and memcheck --leak-check full find.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void shift(const int *in, int *out) {
    __shared__ int s[128];
    int t = threadIdx.x;
    s[t] = in[blockIdx.x * 128 + t];
    int v = s[(t + 1) % 128];
    out[blockIdx.x * 128 + t] = v;
}

int main() {
    const int n = 256;
    int host[n];
    for (int i = 0; i < n; ++i) host[i] = i;
    int *in, *out, *forgotten;
    cudaMalloc(&in, n * sizeof(int));
    cudaMalloc(&out, n * sizeof(int));
    cudaMalloc(&forgotten, 4096);
    cudaMemcpy(in, host, n * sizeof(int), cudaMemcpyHostToDevice);
    shift<<<2, 128>>>(in, out);
    cudaMemcpy(host, out, n * sizeof(int), cudaMemcpyDeviceToHost);
    printf("out[0] %d: %s\n", host[0], host[0] == 1 ? "PASSED" : "FAILED");
    cudaFree(in);
    cudaFree(out);
    return 0;
}
