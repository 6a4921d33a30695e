// A kernel that never ends on its own (it waits for a flag nobody sets):
// for interrupting a native program under `gpudbg debug` with Ctrl-C. It
// says "spinning" once the kernel runs (the kernel sets a mapped host word
// the host polls), so a test interrupts it then and not a guessed time later.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void spin(volatile int *flag, volatile int *started) {
    *started = 1;
    while (*flag == 0) {  // SPIN
    }
}

int main() {
    int *flag = nullptr, *started = nullptr, *d_started = nullptr;
    if (cudaMalloc(&flag, sizeof(int)) != cudaSuccess || cudaMemset(flag, 0, sizeof(int)) != cudaSuccess) return 3;
    if (cudaHostAlloc(&started, sizeof(int), cudaHostAllocMapped) != cudaSuccess) return 4;
    *started = 0;
    if (cudaHostGetDevicePointer(&d_started, started, 0) != cudaSuccess) return 5;
    spin<<<1, 32>>>(flag, d_started);
    while (*(volatile int *)started == 0) {
    }
    printf("spinning\n");
    fflush(stdout);
    printf("synchronize: %d\n", (int)cudaDeviceSynchronize());
    return 0;
}
