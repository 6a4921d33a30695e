// Colliding atomics on global and shared memory.
extern "C" __global__ void global_atomics(const int* v, int* cell, unsigned* ucell, int* olds) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int x = v[i];
  int k = i & 3;
  atomicAdd(&cell[0 + k], x);
  atomicMin(&cell[4 + k], x);
  atomicMax(&cell[8 + k], x);
  atomicAnd(&cell[12 + k], x | 0x0ff0);
  atomicOr(&cell[16 + k], 1 << (i & 31));
  atomicXor(&cell[20 + k], x);
  atomicInc(&ucell[0 + k], 9u);
  atomicDec(&ucell[4 + k], 5u);
  olds[i] = atomicAdd(&ucell[8], 1u);          // every old value distinct
  olds[blockDim.x * gridDim.x + i] = atomicExch(&cell[24], i);
  // a CAS chain in descending thread order: thread i spins until thread
  // i + 1 has swapped, so lanes leave the loop one at a time
  int old;
  while ((old = atomicCAS(&cell[25], i + 1, i)) != i + 1) {}
  olds[2 * blockDim.x * gridDim.x + i] = old;
}

extern "C" __global__ void shared_atomics(const int* v, int* out) {
  __shared__ int s[8];
  __shared__ unsigned u[4];
  int t = threadIdx.x;
  if (t < 8) s[t] = t < 4 ? 0 : (t < 6 ? 0x7fffffff : -0x7fffffff);
  if (t < 4) u[t] = 0;
  __syncthreads();
  int x = v[blockIdx.x * blockDim.x + t];
  atomicAdd(&s[t & 3], x);
  atomicMin(&s[4], x);
  atomicMax(&s[6], x);
  atomicXor(&s[5], x);
  atomicOr(&s[7], x & 0xff);
  atomicInc(&u[t & 1], 7u);
  unsigned old = atomicAdd(&u[2], 1u);
  __syncthreads();
  if (t < 8) out[blockIdx.x * 16 + t] = s[t];
  if (t < 4) out[blockIdx.x * 16 + 8 + t] = u[t];
  if (old == blockDim.x - 1) out[blockIdx.x * 16 + 12] = 1234;  // exactly one thread saw the last old
}

extern "C" __global__ void float_add(const float* v, float* out) {
  atomicAdd(&out[threadIdx.x & 1], v[blockIdx.x * blockDim.x + threadIdx.x]);
}

__device__ float atomic_mul(float* addr, float f) {
  int* a = (int*)addr;
  int old = *a, assumed;
  do {
    assumed = old;
    old = atomicCAS(a, assumed, __float_as_int(__int_as_float(assumed) * f));
  } while (assumed != old);
  return __int_as_float(old);
}

extern "C" __global__ void cas_loop(float* out, int* counter) {
  atomic_mul(&out[0], 2.0f);
  // a CAS-loop increment of a 64-bit counter via atomicCAS on unsigned long long
  unsigned long long* c = (unsigned long long*)counter;
  unsigned long long o = *c, a;
  do { a = o; o = atomicCAS(c, a, a + 3ull); } while (a != o);
}

extern "C" __global__ void atomic_unused(int* cell, unsigned long long* big) {
  atomicAdd(&cell[threadIdx.x % 3], 1);
  atomicAdd(&big[0], 1ull << 33);
  atomicMax((long long*)&big[1], -(long long)threadIdx.x);
}
