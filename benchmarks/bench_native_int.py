"""Integer throughput of the native engine beside the interpreter, in one
run: the integer-intrinsics kernel of tests/sim/native/test_native_int_kernel.py
(popc, clz, brev, byte_perm, funnel shifts, 32/64-bit division, mulhi,
sad, dp4a, a carry chain, bfe/bfi/lop3: about 140 instructions per
thread, with branches), launched on a loaded module so the figures are
execution, not compilation.

    python benchmarks/bench_native_int.py [--log2n 18] [--repeats 3]

Prints the best of `repeats` launches per engine, in thread-instructions
per second (LaunchStats.thread_instructions / wall time), the ratio, and
whether both engines wrote the same output bit for bit.
"""
from __future__ import annotations

import argparse
import os
import struct
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests" / "sim"), str(ROOT / "tests" / "sim" / "native")]


def measure(engine: str, ptx: str, n: int, repeats: int, a: np.ndarray, b: np.ndarray):
    from gpudbg.ptx import parse
    from gpudbg.sim.executor import launch_grid
    from gpudbg.sim.gpu import SimGPU
    from gpudbg.sim.loader import load_module
    os.environ["GPUDBG_ENGINE"] = engine
    gpu = SimGPU()
    kernel = load_module(gpu, parse(ptx, "intmix.ptx")).functions["intmix"]
    bases = []
    for arr in (a, b, np.zeros(n, np.uint64)):
        m = gpu.memory.alloc(arr.nbytes)
        gpu.memory.write(m.base, arr.view(np.uint8))
        bases.append(m.base)
    params = struct.pack("<QQQi", *bases, n).ljust(kernel.param_size, b"\0")
    best, work = None, 0
    for _ in range(repeats):
        t = time.perf_counter()
        stats = launch_grid(gpu, kernel, (n // 256, 1, 1), (256, 1, 1), 0, params, 1)
        dt = time.perf_counter() - t
        best = dt if best is None else min(best, dt)
        work = stats.thread_instructions
    out = gpu.memory.read(bases[2], n * 8).view(np.uint64).copy()
    return best, work, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--log2n", type=int, default=18)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    from kernels import compile_cuda
    from test_native_int_kernel import SOURCE
    ptx = compile_cuda(SOURCE, ("-arch=compute_80",), "intmix.cu")
    n = 1 << args.log2n
    rng = np.random.default_rng(1)
    a = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    b = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    rates, outs = {}, {}
    for engine in ("interp", "native"):
        best, work, outs[engine] = measure(engine, ptx, n, args.repeats, a, b)
        rates[engine] = work / best
        print(f"{engine:7s} best {best:.3f} s  {work:.3g} thread-instructions  {rates[engine]:.3g}/s")
    print(f"native / interp: {rates['native'] / rates['interp']:.1f}x; same output: "
          f"{np.array_equal(outs['interp'], outs['native'])}")


if __name__ == "__main__":
    main()
