// Warp-level intrinsics: match, redux, activemask, vote, funnel shift, popc, brev, byte perm.
__global__ void warp_ops(const unsigned *in, unsigned *out) {
  unsigned v = in[blockIdx.x * blockDim.x + threadIdx.x];
  unsigned m = __match_any_sync(__activemask(), v & 7);
  unsigned s = __reduce_add_sync(0xffffffffu, v) ^ __reduce_max_sync(0xffffffffu, v);
  unsigned b = __ballot_sync(0xffffffffu, v & 1) + __popc(v) + __brev(v) + __clz(v) + __ffs(v);
  unsigned f = __funnelshift_l(v, s, 5) + __byte_perm(v, s, 0x3210) + __vabsdiffu4(v, m);
  out[blockIdx.x * blockDim.x + threadIdx.x] = m + s + b + f + __any_sync(0xffffffffu, v == 0);
}
