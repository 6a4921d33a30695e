// A real nvcc 13 program (-cudart shared) for tests/native/test_native_host.py.
#include <cstdio>
__global__ void add(int *a, int n) { int i = threadIdx.x; if (i < n) a[i] += 1; }
int main() {
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    printf("count %d %d\n", (int)e, n);
    int *d = 0;
    printf("malloc %d\n", (int)cudaMalloc(&d, 64));
    add<<<dim3(2, 3, 4), 16, 32>>>(d, 16);
    printf("done\n");
    return 0;
}
