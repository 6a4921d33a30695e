"""DeviceArray operations on the simulator: what a numpy-style line costs.

For each operation, the first call (NVRTC compile of the generated kernel,
or a hit in the on-disk PTX cache, plus module load) and the median of
REPEAT later calls (launch and execution only: the module is cached in the
process) are printed, with the simulated device time of one call
(Event.elapsed_time, the work-counting clock) beside the host wall time
(Event.elapsed_time(clock="host")). Use an empty XDG_CACHE_HOME to see
cold compiles.

    python benchmarks/bench_array_ops.py [--n 1048576] [--repeat 5]
"""
from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import gpudbg


def _time(fn, repeat: int) -> tuple[float, float, float, float]:
    t0 = time.perf_counter()
    fn()
    gpudbg.synchronize()
    first = time.perf_counter() - t0
    walls = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        gpudbg.synchronize()
        walls.append(time.perf_counter() - t0)
    start = gpudbg.Event().record()
    fn()
    end = gpudbg.Event().record()
    end.synchronize()
    return first, statistics.median(walls), start.elapsed_time(end), start.elapsed_time(end, clock="host")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1 << 20)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    n = args.n
    x = gpudbg.to_device(np.random.default_rng(0).random(n, dtype=np.float32))
    y = gpudbg.to_device(np.random.default_rng(1).random(n, dtype=np.float32))
    m = x.reshape(1024, -1) if n % 1024 == 0 else x.reshape(1, -1)
    cases = {
        "x + y": lambda: x + y,
        "x * 2.5": lambda: x * 2.5,
        "x // y": lambda: x // y,
        "x[::-2] + 1 (strided)": lambda: x[::-2] + 1,
        "x < y": lambda: x < y,
        "x.sum()": lambda: x.sum(),
        "x.max()": lambda: x.max(),
        "m.sum(axis=1)": lambda: m.sum(axis=1),
        "m.T.copy() (transpose)": lambda: m.T.copy(),
        "to_host()": lambda: x.to_host(),
    }
    print(f"n = {n} float32 elements; times in ms")
    print(f"{'operation':<24} {'first':>9} {'median':>9} {'device':>9} {'host':>9}")
    for name, fn in cases.items():
        first, median, device, host = _time(fn, args.repeat)
        print(f"{name:<24} {first * 1e3:9.1f} {median * 1e3:9.1f} {device:9.3f} {host:9.1f}")


if __name__ == "__main__":
    main()
