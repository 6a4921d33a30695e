"""Micro-benchmark of the memory system's two hottest paths, each against the
plain numpy operation it wraps, measured in the same run:

- a checked 32-bit load of 2^20 lanes from one allocation (the fast path)
  vs. an unchecked numpy gather;
- a checked atomic add returning old values, 2^20 lanes onto 256 distinct
  addresses, vs. np.add.at (which returns nothing and checks nothing);
  the `red` form is reported against np.add.at too.

Run: python benchmarks/bench_memory.py
"""
from __future__ import annotations


import numpy as np

from gpudbg.sim.memory import GlobalMemory
from timing import best_of

LANES = 1 << 20


def main() -> None:
    rng = np.random.default_rng(0)
    gm = GlobalMemory()
    buf = gm.alloc(LANES * 4, label="bench")
    words = buf.data.view(np.uint32)
    idx = rng.permutation(LANES)
    addrs = np.uint64(buf.base) + idx.astype(np.uint64) * np.uint64(4)

    t_load = best_of(lambda: gm.load(addrs, np.uint32))
    t_gather = best_of(lambda: words[idx])
    print(f"load  (1 allocation, {LANES} lanes): {LANES / t_load / 1e6:8.1f} M lanes/s  "
          f"numpy gather {LANES / t_gather / 1e6:8.1f} M lanes/s  ratio {t_load / t_gather:5.2f}x")

    hot = rng.integers(0, 256, LANES)
    hot_addrs = np.uint64(buf.base) + hot.astype(np.uint64) * np.uint64(4)
    ones = np.ones(LANES, dtype=np.uint32)
    t_atom = best_of(lambda: gm.atomic("add", hot_addrs, ones, np.uint32), 5)
    t_red = best_of(lambda: gm.reduce("add", hot_addrs, ones, np.uint32), 5)
    t_at = best_of(lambda: np.add.at(words, hot, ones), 5)
    print(f"atom.add (256 addresses, {LANES} lanes): {LANES / t_atom / 1e6:8.1f} M lanes/s  "
          f"np.add.at {LANES / t_at / 1e6:8.1f} M lanes/s  ratio {t_atom / t_at:5.2f}x")
    print(f"red.add  (256 addresses, {LANES} lanes): {LANES / t_red / 1e6:8.1f} M lanes/s  "
          f"ratio vs np.add.at {t_red / t_at:5.2f}x")
    fones = np.ones(LANES, dtype=np.float32)
    t_fatom = best_of(lambda: gm.atomic("add", hot_addrs, fones, np.float32), 3)
    print(f"atom.add.f32 (256 addresses, {LANES} lanes): {LANES / t_fatom / 1e6:8.1f} M lanes/s  "
          f"ratio vs np.add.at {t_fatom / t_at:5.2f}x")


if __name__ == "__main__":
    main()
