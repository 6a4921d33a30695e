"""Simulator throughput on the four example kernels.

For each kernel: compile the example's CUDA C++ with NVRTC, run it on the
simulated GPU through the public API, check the result against numpy, and
print thread-instructions per second (dynamic PTX instructions x threads, as
counted by the simulator) and the ratio of the simulator's time to a plain
numpy implementation of the same computation measured in the same run.
If numba-cuda is installed, Numba's CUDA simulator runs the same kernels at
a reduced size and the speed ratio per element processed is printed too.

    python benchmarks/bench_sim.py [--repeat N]
"""
from __future__ import annotations

import argparse
import ast
import pathlib
from typing import Callable

import numpy as np

import gpudbg
from timing import best_of

EXAMPLES = pathlib.Path(__file__).resolve().parent.parent / "examples"
TARGETS = {"saxpy": 1.5e8, "reduction": 1.5e8, "matmul": 1.5e8, "histogram": 5e7}


def example_source(name: str) -> str:
    """The CUDA C++ source embedded in examples/NAME.py (the module-level
    string that defines a __global__ function), so the benchmark runs
    exactly the example kernels."""
    tree = ast.parse((EXAMPLES / f"{name}.py").read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and "__global__" in node.value:
            return node.value
    raise SystemExit(f"examples/{name}.py has no CUDA source string")


def kernel_of(module, name):
    return module.get_function(name)


ELEMENTS = {"saxpy": 1 << 20, "reduction": 1 << 20, "matmul": 256 ** 3, "histogram": 1 << 20}


def restore(device_array, host) -> Callable[[], None]:
    """A timed launch's setup: copy `host` back into `device_array` and
    wait for the copy. A copy from pageable memory returns once the bytes
    are staged (as cudaMemcpy does) and its device side, about 2 ms for
    16 MB, would otherwise run inside the timed launch that follows."""
    def setup() -> None:
        device_array.copy_from_host(host)
        gpudbg.Device().synchronize()
    return setup


def case_saxpy(repeat, n=1 << 20):
    mod = gpudbg.compile(example_source("saxpy"))
    k = kernel_of(mod, "saxpy")
    x = np.random.default_rng(1).random(n, dtype=np.float32)
    y = np.random.default_rng(2).random(n, dtype=np.float32)
    dx, dy = gpudbg.to_device(x), gpudbg.to_device(y)
    a = np.float32(2.5)

    def sim():
        k[(n + 255) // 256, 256](n, a, dx, dy)
        gpudbg.Device().synchronize()
    t_sim = best_of(sim, repeat, setup=restore(dy, y))
    assert np.allclose(dy.to_host(), a * x + y, rtol=1e-6), "saxpy result differs from numpy"
    t_np = best_of(lambda: a * x + y, repeat)
    return t_sim, t_np


def case_reduction(repeat, n=1 << 20):
    mod = gpudbg.compile(example_source("reduction"))
    k = kernel_of(mod, "reduce_sum")
    x = np.random.default_rng(3).random(n, dtype=np.float32)
    dx = gpudbg.to_device(x)
    per_block = 2 * 256  # each thread of the example adds two elements as it loads
    out = gpudbg.to_device(np.zeros(n // per_block, dtype=np.float32))

    def sim():
        k[n // per_block, 256](dx, out, n)
        gpudbg.Device().synchronize()
    t_sim = best_of(sim, repeat)
    ref = x.reshape(-1, per_block).sum(axis=1, dtype=np.float64)
    assert np.allclose(out.to_host(), ref, rtol=1e-4), "reduction result differs from numpy"
    t_np = best_of(lambda: x.reshape(-1, per_block).sum(axis=1), repeat)
    return t_sim, t_np


def case_matmul(repeat, N=256):
    mod = gpudbg.compile(example_source("matmul"))
    k = kernel_of(mod, "matmul")
    rng = np.random.default_rng(4)
    A = rng.random((N, N), dtype=np.float32)
    B = rng.random((N, N), dtype=np.float32)
    dA, dB = gpudbg.to_device(A), gpudbg.to_device(B)
    dC = gpudbg.to_device(np.zeros((N, N), dtype=np.float32))

    def sim():
        k[(N // 16, N // 16), (16, 16)](dA, dB, dC, N)
        gpudbg.Device().synchronize()
    t_sim = best_of(sim, repeat)
    assert np.allclose(dC.to_host(), A @ B, rtol=1e-4), "matmul result differs from numpy"
    t_np = best_of(lambda: A @ B, repeat)
    return t_sim, t_np


def case_histogram(repeat, n=1 << 20):
    mod = gpudbg.compile(example_source("histogram"))
    k = kernel_of(mod, "histogram")
    # the example's skewed byte distribution: many lanes of a warp collide
    rng = np.random.default_rng(5)
    data = np.minimum(rng.exponential(40.0, n), 255).astype(np.uint8)
    dd = gpudbg.to_device(data)
    bins = gpudbg.zeros(256, np.uint32)
    zero = np.zeros(256, dtype=np.uint32)

    def sim():
        k[(n + 255) // 256, 256](dd, bins, n)
        gpudbg.Device().synchronize()
    t_sim = best_of(sim, repeat, setup=restore(bins, zero))
    assert np.array_equal(bins.to_host(), np.bincount(data, minlength=256).astype(np.uint32)), \
        "histogram result differs from numpy"
    t_np = best_of(lambda: np.bincount(data, minlength=256), repeat)
    return t_sim, t_np


def last_thread_instructions() -> int:
    from gpudbg.runtime.mc import last_launch_stats
    return last_launch_stats().thread_instructions


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-numba", action="store_true", help="skip Numba's CUDA simulator even if installed")
    args = ap.parse_args()
    numba_times = None
    if not args.no_numba:
        try:
            import numba_cuda  # noqa: F401
        except ImportError:
            print("numba-cuda is not installed: the comparison with Numba's CUDA simulator is not run")
        else:
            from numba_reference import time_numba_kernels
            numba_times = time_numba_kernels()
    print(f"{'kernel':10} {'sim s':>8} {'thread-instr':>13} {'thr-instr/s':>12} {'target':>8} "
          f"{'numpy s':>9} {'sim/numpy':>10}" + (f" {'vs numba':>10}" if numba_times else ""))
    ok = True
    for name, case in (("saxpy", case_saxpy), ("reduction", case_reduction),
                       ("matmul", case_matmul), ("histogram", case_histogram)):
        t_sim, t_np = case(args.repeat)
        ti = last_thread_instructions()
        rate = ti / t_sim
        met = rate >= TARGETS[name]
        line = (f"{name:10} {t_sim:8.3f} {ti:13d} {rate:12.3e} {'met' if met else 'MISSED':>8} "
                f"{t_np:9.5f} {t_sim / t_np:10.1f}x")
        if numba_times:
            t_nb, n_nb = numba_times[name]
            speedup = (t_nb / n_nb) / (t_sim / ELEMENTS[name])
            ok &= speedup >= 1000
            line += f" {speedup:9.0f}x"
        ok &= met
        print(line)
    if numba_times:
        print("vs numba: Numba's CUDA simulator time per element over ours, measured at "
              + ", ".join(f"{k} {v[1]} elements ({v[0]:.2f} s)" for k, v in numba_times.items()))
    print("all targets met" if ok else "some targets missed")


if __name__ == "__main__":
    main()
