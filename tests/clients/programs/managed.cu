// __managed__ variables written by the host before and read after a kernel.
#include <cstdio>
#include <cuda_runtime.h>
__managed__ int total;
__managed__ float scale[4];
__global__ void add(int n) { int i = threadIdx.x; if (i < n) atomicAdd(&total, i); if (i < 4) scale[i] *= 2; }
int main() {
    total = 5;
    for (int k = 0; k < 4; ++k) scale[k] = k;
    add<<<1, 64>>>(64);
    cudaDeviceSynchronize();
    bool ok = total == 5 + 64 * 63 / 2 && scale[3] == 6.0f;
    printf("managed total %d scale[3] %g: %s\n", total, scale[3], ok ? "PASSED" : "FAILED");
    return ok ? 0 : 1;
}
