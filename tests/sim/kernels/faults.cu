// Kernels that fault, one per fault kind.
extern "C" __device__ void __assertfail(const char*, const char*, unsigned, const char*, unsigned long);
#define check(e) ((e) ? (void)0 : __assertfail(#e, "faults.cu", __LINE__, __func__, 1))

extern "C" __global__ void oob_read(const int* a, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = a[i + n];
}

extern "C" __global__ void oob_write(int* a, int bad_thread, int index) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  a[i == bad_thread ? index : i] = i;
}

extern "C" __global__ void oob_shared(int* out, int k) {
  __shared__ int s[64];
  s[threadIdx.x * k] = threadIdx.x;
  __syncthreads();
  out[threadIdx.x] = s[threadIdx.x];
}

extern "C" __global__ void misaligned(int* a, int bad_thread) {
  int i = threadIdx.x;
  char* c = (char*)a;
  int* p = (int*)(c + 4 * i + (i == bad_thread ? 1 : 0));
  *p = i;
}

extern "C" __global__ void bad_generic(unsigned long long addr, int* out) {
  int i = threadIdx.x;
  int* p = i == 2 ? (int*)addr : out + i;
  out[i] = *p;
}

extern "C" __global__ void trapper(int* out) {
  out[threadIdx.x] = 1;
  if (threadIdx.x == 37) __trap();
}

extern "C" __global__ void asserter(const int* v) {
  int x = v[threadIdx.x];
  check(x < 10);
}

__device__ __noinline__ int deep(int n, volatile int* sink) {
  int local[8];
  for (int i = 0; i < 8; ++i) local[i] = n + i;
  sink[0] = local[n & 7];
  if (n == 0) return 0;
  return deep(n - 1, sink) + local[(n + 3) & 7];
}

extern "C" __global__ void overflow(int* out, int n) {
  out[threadIdx.x] = deep(n, out + 64);
}

extern "C" __global__ void deadlock(int* out) {
  if (threadIdx.x < 32) {
    __syncthreads();  // waits for all 64 threads at barrier 0
  } else {
    asm volatile("bar.sync 1;");
  }
  out[threadIdx.x] = 1;
}

extern "C" __global__ void runaway(volatile int* flag, int* out) {
  int n = 0;
  while (flag[0]) { n++; }
  out[threadIdx.x] = n;
}
