"""Launch overheads that do not depend on the kernel's work:

- waves per second of an empty kernel (2^20 one-thread blocks by default:
  249 waves on the H100-class model), i.e. the fixed cost of placing and
  retiring one wave of resident blocks;
- device malloc: 8,192 in-kernel mallocs from 8,192 threads (one batch) and
  from one thread in a loop (8,192 calls), then the DeviceHeap alone for
  1,024 and 8,192 blocks with frees in between (the ratio should be ~8,
  not the 64 of a quadratic allocator).

Run: python benchmarks/bench_grid.py [--blocks N] [--repeat R]
"""
from __future__ import annotations

import argparse

import numpy as np

import gpudbg
from gpudbg.ptx.parser import parse
from gpudbg.sim.executor import launch_grid
from gpudbg.sim.gpu import SimGPU
from gpudbg.sim.loader import load_module
from gpudbg.sim.memory import DeviceHeap, GlobalMemory
from timing import best_of

EMPTY = ".version 7.0\n.target sm_80\n.address_size 64\n.visible .entry empty()\n{\n ret;\n}\n"

MALLOC = r"""
extern "C" __global__ void one_thread(unsigned long long *out, int n) {
    for (int i = 0; i < n; i++) {
        char *p = (char *)malloc(16);
        if (!p) { out[0] = i; return; }
        p[0] = (char)i;
        free(p);
    }
    out[0] = n;
}
extern "C" __global__ void many_threads(unsigned long long *out) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int *p = (int *)malloc(16);
    p[0] = t;
    out[t] = p[0] == t;
    free(p);
}
"""


def waves_per_second(blocks: int, repeat: int) -> None:
    gpu = SimGPU()
    k = load_module(gpu, parse(EMPTY)).functions["empty"]
    launch_grid(gpu, k, (1, 1, 1), (1, 1, 1), 0, b"", 1)
    stats = []

    def run():
        stats.append(launch_grid(gpu, k, (blocks, 1, 1), (1, 1, 1), 0, b"", 1))
    t = best_of(run, repeat)
    waves = stats[-1].waves
    print(f"empty kernel, {blocks} blocks of 1 thread: {waves} waves in {t:.3f} s = {waves / t:,.0f} waves/s, "
          f"{blocks / t:,.0f} blocks/s")


def device_malloc(repeat: int) -> None:
    m = gpudbg.compile(MALLOC, name="bench_malloc.cu")
    out = gpudbg.zeros(8192, np.uint64)

    def many():
        m.many_threads[32, 256](out)
        gpudbg.synchronize()

    def one():
        m.one_thread[1, 1](out, 8192)
        gpudbg.synchronize()
    many()
    print(f"8192 mallocs+frees from 8192 threads: {best_of(many, repeat):.3f} s; "
          f"from one thread in a loop: {best_of(one, 1):.3f} s (mostly the loop's own steps)")

    def heap_churn(n: int) -> None:
        heap = DeviceHeap(GlobalMemory(), 64 << 20)
        rng = np.random.default_rng(0)
        live = []
        for i, s in enumerate(rng.integers(1, 200, size=n)):
            live.append(int(heap.malloc(np.array([s]))[0]))
            if i % 3 == 2:
                heap.free(np.array([live.pop(int(rng.integers(len(live))))], dtype=np.uint64))
        heap.free(np.array(live[::2], dtype=np.uint64))
        heap.malloc(rng.integers(1, 64, size=n // 2))
    small = best_of(lambda: heap_churn(1024), repeat)
    large = best_of(lambda: heap_churn(8192), repeat)
    print(f"DeviceHeap churn: 1024 blocks {small * 1e3:.1f} ms, 8192 blocks {large * 1e3:.1f} ms "
          f"(ratio {large / small:.1f}; quadratic would be ~64)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--blocks", type=int, default=1 << 20)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    waves_per_second(a.blocks, a.repeat)
    device_malloc(a.repeat)


if __name__ == "__main__":
    main()
