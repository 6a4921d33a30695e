"""Float throughput of the native engine beside the interpreter, in one
run: a straight-line kernel of 28 float instructions per thread (fma,
directed-rounding mul/sub/add with .sat, div, f32 and f64 sqrt, min/max
with .NaN, cvt to and from integers and f64, ex2.approx, setp/selp),
launched on a loaded module so the figures are execution, not
compilation.

    python benchmarks/bench_native_float.py [--log2n 18] [--repeats 3]

Prints the best of `repeats` launches per engine in thread-instructions
per second, the ratio, and whether both engines wrote the same output bit
for bit.
"""
from __future__ import annotations

import argparse
import struct
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests" / "sim"), str(ROOT / "tests" / "sim" / "native")]

INSTRUCTIONS = 28
PTX = """.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 px, .param .u64 py)
{
 .reg .pred %p<3>; .reg .b32 %r<8>; .reg .f32 %f<24>; .reg .f64 %fd<6>; .reg .b64 %rd<6>;
 ld.param.u64 %rd1, [px]; ld.param.u64 %rd2, [py];
 mov.u32 %r1, %tid.x; mov.u32 %r2, %ctaid.x; mov.u32 %r3, %ntid.x; mad.lo.u32 %r4, %r2, %r3, %r1;
 mul.wide.u32 %rd3, %r4, 4; add.s64 %rd4, %rd1, %rd3; add.s64 %rd5, %rd2, %rd3;
 ld.global.f32 %f1, [%rd4];
 fma.rn.f32 %f2, %f1, 0f3FC00000, 0f3F800000;
 mul.rz.f32 %f3, %f2, %f1;
 div.rn.f32 %f4, %f3, %f2;
 sqrt.rn.f32 %f5, %f4;
 abs.f32 %f6, %f1;
 min.f32 %f7, %f5, %f6;
 max.NaN.f32 %f8, %f7, %f2;
 cvt.rni.s32.f32 %r5, %f8;
 cvt.rn.f32.s32 %f9, %r5;
 sub.rm.f32 %f10, %f9, %f8;
 mul.f32 %f11, %f10, 0fBFB8AA3B;
 ex2.approx.ftz.f32 %f12, %f11;
 cvt.f64.f32 %fd1, %f12;
 fma.rn.f64 %fd2, %fd1, %fd1, 0d3FF0000000000000;
 sqrt.rn.f64 %fd3, %fd2;
 cvt.rn.f32.f64 %f13, %fd3;
 setp.gtu.f32 %p1, %f13, %f1;
 selp.f32 %f14, %f13, %f1, %p1;
 add.rp.sat.f32 %f15, %f14, %f5;
 st.global.f32 [%rd5], %f15;
 ret;
}
"""



def measure(engine: str, n: int, repeats: int, x: np.ndarray):
    from engines_pair import Out, engine_choice, native_segments, run
    from gpudbg.sim.executor import launch_grid
    with engine_choice(engine):
        r = run(PTX, "k", (n // 256,), (256,), [x, Out(n)])      # warm-up (native: compile)
        k = r.module.functions["k"]
        params = struct.pack("<QQ", r.bases[0], r.bases[1])
        best = float("inf")
        for _ in range(repeats):
            t = time.perf_counter()
            launch_grid(r.gpu, k, (n // 256, 1, 1), (256, 1, 1), 0, params, 1)
            best = min(best, time.perf_counter() - t)
        out = r.gpu.memory.read(r.bases[1], 4 * n).view(np.uint32).copy()
        return best, out, native_segments(r)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--log2n", type=int, default=18)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    n = 1 << args.log2n
    x = np.random.default_rng(1).uniform(-10, 10, n).astype(np.float32)
    res = {engine: measure(engine, n, args.repeats, x) for engine in ("interp", "native")}
    for engine, (t, _, segs) in res.items():
        rate = INSTRUCTIONS * n / t
        print(f"{engine:7s} {t * 1e3:8.1f} ms  {rate:.3g} thread-instructions/s  ({segs} compiled segments)")
    same = np.array_equal(res["interp"][1], res["native"][1])
    print(f"native/interp {res['interp'][0] / res['native'][0]:.2f}x, outputs identical: {same}")


if __name__ == "__main__":
    main()
