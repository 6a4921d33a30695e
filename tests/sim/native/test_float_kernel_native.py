"""End to end: a CUDA kernel full of float intrinsics (directed roundings,
fast-math approximations, f64, half and bf16 conversions), built with
NVRTC as users build theirs, runs bit-identically under both engines with
every float instruction of it compiled natively."""
from __future__ import annotations

import numpy as np
import pytest

from engines_pair import Out, run_both
from native_cover import native_texts

SOURCE = r"""
#include <cuda_fp16.h>
#include <cuda_bf16.h>
extern "C" __global__ void mix(const float* x, const float* y, float* out, double* dout,
                               unsigned short* hout, int* iout, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float a = x[i], b = y[i];
    float s = __fadd_rz(a, b) + __fmul_rd(a, b) + __fdiv_ru(a, b) + __fsqrt_rd(fabsf(a));
    s += __fmaf_rz(a, b, s) + __frcp_rn(b) + __expf(a) + __sinf(b) + __logf(fabsf(b) + 1.0f);
    s += fminf(a, b) - fmaxf(a, s) + copysignf(a, b);
    double d = __dadd_rz((double)a, (double)b) + __dmul_ru((double)a, 3.0) + sqrt((double)fabsf(b));
    d += __ddiv_rd((double)a, (double)b) + __drcp_rz((double)b);
    float back = __double2float_rd(d) + __int2float_rz(__float2int_rn(a * 100.0f));
    __half h = __float2half_rz(s * 0.001f);
    __nv_bfloat16 bf = __float2bfloat16_rn(back);
    out[i] = s + __half2float(h) + __bfloat162float(bf) + (isnan(a) ? 1.0f : 0.0f);
    dout[i] = d + (double)__float2ll_rd(b * 1e10f);
    hout[i] = __half_as_ushort(__hadd(h, __float2half(a)));
    iout[i] = __float2uint_ru(fabsf(a) * 7.0f) + (a < b) + (isinf(b) ? 2 : 0);
}
"""


@pytest.fixture(scope="module")
def ptx():
    from kernels import CompileError, compile_cuda
    try:
        return compile_cuda(SOURCE, ("-arch=compute_80",), "mix.cu")
    except CompileError as e:       # NVRTC is a dependency; a failure is a real failure
        raise AssertionError(str(e)) from None


def _inputs(n: int):
    rng = np.random.default_rng(7)
    x = rng.uniform(-50, 50, n).astype(np.float32)
    y = rng.uniform(-3, 3, n).astype(np.float32)
    specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40, -1e-40, 3.4e38, 1e-8, 0.5],
                        np.float32)
    x[:len(specials)] = specials
    y[5:5 + len(specials)] = specials[::-1]
    x[20] = np.array(0x7FC12345, np.uint32).view(np.float32)       # a NaN with a payload
    y[21] = np.array(0xFFA00001, np.uint32).view(np.float32)       # a signalling NaN
    return x, y


def test_float_intrinsics_kernel_matches_and_runs_native(ptx):
    n = 96
    x, y = _inputs(n)
    ref, got = run_both(ptx, "mix", (2,), (64,),
                        [x, y, Out(n), Out(n, np.float64), Out(n, np.uint16), Out(n, np.int32), n])
    texts = native_texts(got)
    program = got.module.program
    float_types = {"f16", "bf16", "f32", "f64", "f16x2", "bf16x2"}
    skip = {"ld", "st", "mov", "selp", "bra", "ret", "cvta"}
    arithmetic = [c.inst.text for c in program.code
                  if c.inst.opcode not in skip and any(m in float_types for m in c.inst.modifiers)]
    assert len(arithmetic) > 30
    missing = [t for t in arithmetic if t not in texts]
    assert not missing, f"float instructions left to the interpreter: {missing}"
