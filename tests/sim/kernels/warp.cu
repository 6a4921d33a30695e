// Warp-level primitives under full and partial masks.
extern "C" __global__ void shuffles(const int* in, int* out) {
  int t = threadIdx.x, lane = t & 31;
  int v = in[t];
  int* o = out + 8 * t;
  o[0] = __shfl_sync(0xffffffff, v, (lane * 7) & 31);
  o[1] = __shfl_up_sync(0xffffffff, v, 3);
  o[2] = __shfl_down_sync(0xffffffff, v, 5);
  o[3] = __shfl_xor_sync(0xffffffff, v, 6);
  o[4] = __shfl_sync(0xffffffff, v, 3, 8);        // width 8: lane 3 of each octet
  o[5] = __shfl_up_sync(0xffffffff, v, 2, 16);
  o[6] = __shfl_down_sync(0xffffffff, v, 3, 8);
  o[7] = __shfl_xor_sync(0xffffffff, v, 1, 4);
}

extern "C" __global__ void shfl_partial(const int* in, int* out) {
  int t = threadIdx.x, lane = t & 31;
  int v = in[t];
  int r = -1;
  if (lane < 16) r = __shfl_down_sync(0x0000ffff, v, 1, 16);
  else r = __shfl_xor_sync(0xffff0000, v, 2);
  out[t] = r;
}

extern "C" __global__ void votes(const int* in, unsigned* out) {
  int t = threadIdx.x, lane = t & 31;
  int p = in[t];
  unsigned* o = out + 10 * t;
  o[0] = __ballot_sync(0xffffffff, p);
  o[1] = __all_sync(0xffffffff, p);
  o[2] = __any_sync(0xffffffff, p);
  o[3] = __activemask();
  if (lane < 16) {
    o[4] = __ballot_sync(0x0000ffff, p);
    o[5] = __all_sync(0x0000ffff, p);
    o[6] = __any_sync(0x0000ffff, p);
    o[7] = __activemask();
  } else if (lane & 1) {
    o[4] = __ballot_sync(0xaaaa0000, p);
    o[5] = __all_sync(0xaaaa0000, p);
    o[6] = __any_sync(0xaaaa0000, p);
    o[7] = __activemask();
  } else {
    o[4] = o[5] = o[6] = o[7] = 0xdead;
  }
  o[8] = __match_any_sync(0xffffffff, p * 3 + (lane & 3));
  int pred;
  o[9] = __match_all_sync(0xffffffff, t >= 32 ? 5 : lane, &pred) | (pred ? 0x1 : 0);
}

extern "C" __global__ void reductions(const unsigned* in, unsigned* out) {
  int t = threadIdx.x;
  unsigned v = in[t];
  unsigned* o = out + 5 * t;
  o[0] = __reduce_add_sync(0xffffffff, v);
  o[1] = __reduce_min_sync(0xffffffff, v);
  o[2] = __reduce_max_sync(0xffffffff, v);
  o[3] = __reduce_xor_sync(0xffffffff, v);
  if ((t & 31) >= 8) o[4] = __reduce_add_sync(0xffffff00, v); else o[4] = 0;
}

extern "C" __global__ void warp_sum(const float* in, float* out) {
  // classic shuffle-down reduction, per warp
  int t = threadIdx.x;
  float v = in[blockIdx.x * blockDim.x + t];
  for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffff, v, off);
  if ((t & 31) == 0) out[(blockIdx.x * blockDim.x + t) / 32] = v;
}

extern "C" __global__ void lanemasks(unsigned* out) {
  int t = threadIdx.x;
  unsigned a, b, c, d, e;
  asm("mov.u32 %0, %%lanemask_eq;" : "=r"(a));
  asm("mov.u32 %0, %%lanemask_lt;" : "=r"(b));
  asm("mov.u32 %0, %%lanemask_le;" : "=r"(c));
  asm("mov.u32 %0, %%lanemask_gt;" : "=r"(d));
  asm("mov.u32 %0, %%lanemask_ge;" : "=r"(e));
  out[5 * t] = a; out[5 * t + 1] = b; out[5 * t + 2] = c; out[5 * t + 3] = d; out[5 * t + 4] = e;
}

extern "C" __global__ void tail_warp(const int* in, int* out, int n) {
  // threads past n leave early; the survivors of the last warp shuffle
  // among themselves with the mask they really have
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned m = __activemask();
  int v = in[i];
  int up = __shfl_up_sync(m, v, 1);
  out[2 * i] = (threadIdx.x & 31) ? up : -v;
  out[2 * i + 1] = __popc(m);
}
