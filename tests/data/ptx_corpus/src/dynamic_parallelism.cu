// CUDA dynamic parallelism (CDP2): a parent launching children; needs -rdc=true.
__global__ void child(int *data, int base) { data[base + threadIdx.x] += 1; }
__global__ void parent(int *data, int n) {
  if (threadIdx.x == 0) {
    for (int b = 0; b < n; b += 64) child<<<1, 64>>>(data, b);
  }
}
