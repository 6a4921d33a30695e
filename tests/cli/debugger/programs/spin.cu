// A kernel that never ends on its own (it waits for a flag nobody sets):
// for interrupting a native program under `gpudbg debug` with Ctrl-C.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void spin(volatile int *flag) {
    while (*flag == 0) {  // SPIN
    }
}

int main() {
    int *flag = nullptr;
    if (cudaMalloc(&flag, sizeof(int)) != cudaSuccess || cudaMemset(flag, 0, sizeof(int)) != cudaSuccess) return 3;
    spin<<<1, 32>>>(flag);
    printf("synchronize: %d\n", (int)cudaDeviceSynchronize());
    return 0;
}
