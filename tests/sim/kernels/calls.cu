// Device function calls, recursion, function pointers, printf, malloc.
extern "C" __device__ int printf(const char*, ...);
extern "C" __device__ void* malloc(unsigned long);
extern "C" __device__ void free(void*);

struct Stats { int sum; int diff; long long prod; float ratio; };

__device__ __noinline__ Stats combine(int a, int b, long long c, float d, char e) {
  Stats s;
  s.sum = a + b + e;
  s.diff = a - b;
  s.prod = (long long)a * b * c;
  s.ratio = d / (float)(b == 0 ? 1 : b);
  return s;
}

extern "C" __global__ void struct_call(const int* in, int* out) {
  int t = threadIdx.x;
  Stats s = combine(in[t], t - 3, 1000000007ll, 1.5f * t, (char)(t & 7));
  out[5 * t] = s.sum; out[5 * t + 1] = s.diff;
  ((long long*)out)[0] += 0;  // keep alignment assumptions honest
  out[5 * t + 2] = (int)(s.prod & 0xffffffff); out[5 * t + 3] = (int)(s.prod >> 32);
  out[5 * t + 4] = __float_as_int(s.ratio);
}

__device__ __noinline__ unsigned long long fact(unsigned n) {
  if (n <= 1) return 1;
  return n * fact(n - 1);
}

__device__ __noinline__ int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

extern "C" __global__ void recursion(unsigned long long* out, int* fout) {
  int t = threadIdx.x;
  out[t] = fact(t % 21);
  fout[t] = fib(t % 12);
}

__device__ __noinline__ int op_add(int a, int b) { return a + b; }
__device__ __noinline__ int op_mul(int a, int b) { return a * b; }
__device__ __noinline__ int op_sub(int a, int b) { return a - b; }
typedef int (*binop)(int, int);
__device__ binop table[3] = {op_add, op_mul, op_sub};

extern "C" __global__ void fnptr(const int* sel, int* out) {
  int t = threadIdx.x;
  binop f = table[sel[t] % 3];
  out[t] = f(t, 7);
}

extern "C" __global__ void printer(int n) {
  int t = threadIdx.x, b = blockIdx.x;
  if (t < n) printf("b%d t%d u=%u x=%x f=%.3f s=%s c=%c ll=%lld\n", b, t, 4000000000u, 255 + t, 0.5 * t,
                    t & 1 ? "odd" : "even", 'a' + t, -(1ll << 40) - t);
}

extern "C" __global__ void print_ptr(int* p) {
  printf("%p|%5d|%-4d|%05.1f|%%\n", p, threadIdx.x, 7, 2.25);
}

extern "C" __global__ void heap(int* out) {
  int t = threadIdx.x;
  out += blockIdx.x * blockDim.x;
  int* p = (int*)malloc(16 * sizeof(int));
  if (p == 0) { out[t] = -1; return; }
  for (int i = 0; i < 16; ++i) p[i] = t * 100 + i;
  int s = 0;
  for (int i = 0; i < 16; ++i) s += p[i];
  out[t] = s;
  free(p);
}

__shared__ int* shared_ptr;
extern "C" __global__ void heap_shared(int* out) {
  if (threadIdx.x == 0) shared_ptr = (int*)malloc(blockDim.x * sizeof(int));
  __syncthreads();
  shared_ptr[threadIdx.x] = threadIdx.x * 2;
  __syncthreads();
  out[threadIdx.x] = shared_ptr[blockDim.x - 1 - threadIdx.x];
  __syncthreads();
  if (threadIdx.x == 0) free(shared_ptr);
}
