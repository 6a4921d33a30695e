// Control flow, barriers, thread coordinates and memory spaces.
extern "C" __global__ void diverge(int* out) {
  int t = threadIdx.x;
  int v;
  if (t & 1) v = t * 3; else v = -t;
  if (t % 3 == 0) {
    if (t % 2 == 0) v += 1000; else v += 2000;
  } else if (t % 3 == 1) {
    v += 3000;
  }
  out[t] = v;
}

extern "C" __global__ void loops(const int* lim, int* out) {
  int t = threadIdx.x;
  int acc = 0;
  for (int i = 0; i < 100; ++i) {
    if (i == lim[t]) break;
    if ((i + t) % 3 == 0) continue;
    acc += i;
  }
  int j = 0;
  while (true) { j++; if (j * j > t) break; }
  out[t] = acc * 100 + j;
}

extern "C" __global__ void early_return(int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  if (i % 5 == 0) { out[i] = -1; return; }
  out[i] = i * 2;
}

extern "C" __global__ void reduce_tree(const float* in, float* out) {
  __shared__ float s[256];
  int t = threadIdx.x;
  s[t] = in[blockIdx.x * blockDim.x + t];
  __syncthreads();
  for (int k = blockDim.x / 2; k > 0; k >>= 1) {
    if (t < k) s[t] += s[t + k];
    __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = s[0];
}

extern "C" __global__ void coords(unsigned* out) {
  unsigned bl = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  unsigned th = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  unsigned g = bl * (blockDim.x * blockDim.y * blockDim.z) + th;
  unsigned* o = out + 10 * g;
  o[0] = threadIdx.x; o[1] = threadIdx.y; o[2] = threadIdx.z;
  o[3] = blockIdx.x; o[4] = blockIdx.y; o[5] = blockIdx.z;
  o[6] = blockDim.x * 10000 + blockDim.y * 100 + blockDim.z;
  o[7] = gridDim.x * 10000 + gridDim.y * 100 + gridDim.z;
  unsigned lane; asm("mov.u32 %0, %%laneid;" : "=r"(lane));
  o[8] = lane;
  o[9] = th;
}

extern "C" __global__ void odd_block_sum(const int* in, int* out) {
  // 100 threads: the last warp is partial; barrier and shared reduction
  __shared__ int s[128];
  int t = threadIdx.x;
  s[t] = in[blockIdx.x * blockDim.x + t];
  if (t < 28) s[100 + t] = 0;
  __syncthreads();
  for (int k = 64; k > 0; k >>= 1) {
    if (t < k) s[t] += s[t + k];
    __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = s[0];
}

extern "C" __global__ void dyn_shared(const int* in, int* out) {
  extern __shared__ int buf[];
  int t = threadIdx.x, n = blockDim.x;
  buf[t] = in[blockIdx.x * n + t];
  __syncthreads();
  out[blockIdx.x * n + t] = buf[n - 1 - t];
}

__constant__ int ctab[8] = {3, 1, 4, 1, 5, 9, 2, 6};
__constant__ float cscale = 2.5f;
extern "C" __global__ void const_mem(float* out) {
  int t = threadIdx.x;
  out[t] = ctab[t % 8] * cscale;
}

extern "C" __global__ void saxpy(int n, float a, const float* x, float* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

#define TILE 8
extern "C" __global__ void matmul(const float* A, const float* B, float* C, int n) {
  __shared__ float As[TILE][TILE];
  __shared__ float Bs[TILE][TILE];
  int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
  float acc = 0.f;
  for (int k0 = 0; k0 < n; k0 += TILE) {
    As[threadIdx.y][threadIdx.x] = A[row * n + k0 + threadIdx.x];
    Bs[threadIdx.y][threadIdx.x] = B[(k0 + threadIdx.y) * n + col];
    __syncthreads();
    for (int k = 0; k < TILE; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
    __syncthreads();
  }
  C[row * n + col] = acc;
}

extern "C" __global__ void sync_count(const int* in, int* out) {
  int t = threadIdx.x;
  int p = in[t];
  int c = __syncthreads_count(p);
  int a = __syncthreads_and(p);
  int o = __syncthreads_or(p);
  out[t] = c * 100 + a * 10 + o;
}
