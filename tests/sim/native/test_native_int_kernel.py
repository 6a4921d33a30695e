"""A CUDA kernel full of integer intrinsics (popc, clz, ffs, brev,
__byte_perm, funnel shifts, 32/64-bit division and remainder, mulhi,
sad, dp4a, min/max/abs, and inline-PTX carry chains, bfe/bfi/lop3),
compiled by NVRTC, run under both engines: identical memory, and every
instruction but the branches and the return ran in compiled segments."""
from __future__ import annotations

import numpy as np

from engines_pair import Out, run_both
from int_forms import native_pcs

SOURCE = r"""
extern "C" __global__ void intmix(const unsigned *a, const unsigned *b, unsigned long long *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned x = a[i], y = b[i];
    int sx = (int)x, sy = (int)y;
    unsigned long long r = 0;
    r ^= __popc(x) + __clz(y) + __ffs(x) + __popcll(((unsigned long long)x << 17) ^ y);
    r ^= (unsigned long long)__brev(x) << 7;
    r += __byte_perm(x, y, 0x5140);
    r += __funnelshift_l(x, y, y) ^ __funnelshift_rc(x, y, x);
    r += (unsigned long long)x * y;
    r ^= __umulhi(x, y) + (unsigned)__mulhi(sx, sy) + __umul64hi(r, x);
    r += sy != 0 ? sx / sy : 0;
    r += y ? x % y : 7u;
    r ^= __sad(sx, sy, 3u);
    r += min(sx, sy) + max(x, y) + abs(sx);
    r ^= (unsigned long long)((long long)sx * sy);
    unsigned long long big = ((unsigned long long)x << 32) | y;
    r += big / (y | 1u) + big % (x | 1u);
    long long sbig = (long long)big;
    r ^= (unsigned long long)(sbig / (long long)(sy | 1));
    r ^= __dp4a(x, y, 5u);
    unsigned lo, hi;
    asm("add.cc.u32 %0, %2, %3;\n\taddc.u32 %1, %2, %3;" : "=r"(lo), "=r"(hi) : "r"(x), "r"(y));
    r += lo + ((unsigned long long)hi << 32);
    unsigned f, g, h;
    asm("bfe.s32 %0, %1, %2, %3;" : "=r"(f) : "r"(x), "r"(y & 31u), "r"(y >> 27));
    asm("bfi.b32 %0, %1, %2, %3, %4;" : "=r"(g) : "r"(x), "r"(y), "r"(x & 31u), "r"(9u));
    asm("lop3.b32 %0, %1, %2, %3, 0x96;" : "=r"(h) : "r"(x), "r"(y), "r"(f));
    r += f ^ ((unsigned long long)g << 11) ^ h;
    out[i] = r;
}
"""
WANTED = ("popc", "clz", "brev", "prmt", "shf", "mul", "div", "rem", "sad", "dp4a", "addc", "bfe",
          "bfi", "lop3")


def test_an_integer_heavy_kernel_matches_and_runs_compiled():
    from kernels import compile_cuda
    ptx = compile_cuda(SOURCE, ("-arch=compute_80",), "intmix.cu")
    rng = np.random.default_rng(5)
    n = 200
    a = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    b = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    a[:8] = [0, 1, 0xFFFFFFFF, 0x80000000, 0x7FFFFFFF, 5, 0x80000000, 0]
    b[:8] = [0, 0, 0xFFFFFFFF, 0xFFFFFFFF, 1, 0, 0x80000000, 0xFFFFFFFF]
    ref, got = run_both(ptx, "intmix", (4,), (64,), [a, b, Out(n, np.uint64), n])
    code = got.module.program.code
    covered = native_pcs(got)
    seen = {c.inst.opcode for c in code}
    missing = [op for op in WANTED if op not in seen]
    assert not missing, f"NVRTC emitted none of {missing}"
    interpreted = [c.inst.text for pc, c in enumerate(code) if c.built.run is not None and pc not in covered]
    assert not interpreted, f"straight-line instructions left interpreted: {interpreted}"
