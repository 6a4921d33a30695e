"""What device watchpoints cost: example kernels run with a Session attached
and one watchpoint armed on bytes they never touch (so every memory
instruction is checked and none stops), over the same launches attached
with nothing armed, and with the watchpoint deleted again (the plain
debugged loop must be back).

    python benchmarks/bench_watchpoints.py [--repeat N]
"""
from __future__ import annotations

import argparse

import numpy as np

import gpudbg
from bench_debug import attached_time, matmul_case, reduction_case
from gpudbg.debug.watch import WatchKind
from gpudbg.driver.engine import reset_engine


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    reset_engine()
    untouched = {}

    def arm_nothing(s):
        pass

    def arm_watch(kind):
        def arm(s):
            untouched["a"] = gpudbg.zeros(4, np.int32)      # kept alive: its address stays mapped
            untouched["w"] = s.watch(untouched["a"].ptr, 4, kind)
        return arm

    def arm_and_delete(s):
        arm_watch(WatchKind.ACCESS)(s)
        s.delete_watchpoint(untouched["w"])

    print(f"{'case':40} {'seconds':>9} {'attached':>9} {'ratio':>7}")
    for name, case in (("matmul 96x96", matmul_case), ("reduction 256K", reduction_case)):
        base = attached_time(case, args.repeat, arm_nothing)
        for label, arm in (("write watch", arm_watch(WatchKind.WRITE)),
                           ("access watch", arm_watch(WatchKind.ACCESS)),
                           ("watch deleted", arm_and_delete)):
            t = attached_time(case, args.repeat, arm)
            print(f"{name + ', ' + label:40} {t:9.3f} {base:9.3f} {t / base:6.2f}x")


if __name__ == "__main__":
    main()
