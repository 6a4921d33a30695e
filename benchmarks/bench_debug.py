"""What debugging costs: example kernels run with a debugger attached, and
how fast a debugger can step and stop.

Measured in one run, against references from the same run:
- attached: the matmul and reduction examples with a Session attached and
  a breakpoint armed on a line the kernel never reaches, over the same
  launches without a debugger (the debugged scheduler loop is used);
- conditional: a breakpoint in the matmul inner loop whose condition is
  never true (evaluated at every pass of the loop), over attached;
- stepping: warp single-steps per second, and source `next`s per second,
  over the rate at which the undebugged simulator runs steps of one warp.

    python benchmarks/bench_debug.py [--repeat N]
"""
from __future__ import annotations

import argparse
import threading
import time

import numpy as np

import gpudbg
from bench_sim import example_source
from timing import best_of
from gpudbg.debug import EventKind, Session
from gpudbg.driver.engine import reset_engine

NEVER = r"""
extern "C" __global__ void never(int *p) { if (p == 0) p[0] = 1; }
"""


def matmul_case(n: int = 96, options: tuple = ()):
    mod = gpudbg.compile(example_source("matmul"), name="matmul.cu", options=list(options))
    rng = np.random.default_rng(3)
    a = rng.random((n, n), dtype=np.float32)
    b = rng.random((n, n), dtype=np.float32)
    da, db, dc = gpudbg.to_device(a), gpudbg.to_device(b), gpudbg.zeros((n, n), np.float32)
    k = mod.get_function("matmul")

    def run():
        k[(n // 16, n // 16), (16, 16)](da, db, dc, n)
        gpudbg.Device().synchronize()
    return run, lambda: np.allclose(dc.to_host(), a @ b, rtol=1e-4)


def reduction_case(n: int = 1 << 18):
    mod = gpudbg.compile(example_source("reduction"), name="reduction.cu")
    x = np.random.default_rng(4).random(n, dtype=np.float32)
    dx, dout = gpudbg.to_device(x), gpudbg.zeros(n // 512, np.float32)
    k = mod.get_function("reduce_sum")

    def run():
        k[n // 512, 256](dx, dout, n)
        gpudbg.Device().synchronize()
    return run, lambda: np.isclose(dout.to_host().sum(), x.sum(), rtol=1e-3)


def timed(case, repeat: int) -> float:
    run, ok = case()
    run()
    t = best_of(run, repeat)
    assert ok(), "result differs from numpy"
    return t


def attached_time(case, repeat: int, arm) -> float:
    s = Session.attach()
    try:
        run, ok = case()
        run()
        arm(s)
        t = best_of(run, repeat)
        assert ok(), "result differs from numpy under the debugger"
        return t
    finally:
        s.detach()


def stepping_rates(steps: int = 200):
    """(warp steps/s, source nexts/s) on the matmul kernel's inner loop."""
    s = Session.attach()
    try:
        run, _ok = matmul_case(96)
        s.break_at_line("matmul.cu", 17)
        t = threading.Thread(target=run, daemon=True)
        t.start()
        ev = s.wait_for({EventKind.STOPPED}, timeout=60)
        for bp in s.breakpoints():
            s.delete_breakpoint(bp)
        sm, wp = ev.warps[0]
        nexts = 20
        lines = set()
        t0 = time.perf_counter()
        for _ in range(nexts):
            s.step_line(0, sm, wp, over_calls=True)
            lines.add(s.source_line(0, s.warp(0, sm, wp).pc))   # raises if the warp is gone
        next_rate = nexts / (time.perf_counter() - t0)
        assert len(lines) > 2, f"next did not move over lines: {lines}"
        t0 = time.perf_counter()
        for _ in range(steps):
            s.single_step_warp(0, sm, wp, 1)
        step_rate = steps / (time.perf_counter() - t0)
        s.warp(0, sm, wp)        # still there: every step was a real step
        s.resume(0)
        t.join(60)
        return step_rate, next_rate
    finally:
        s.detach()


def full_wave_views():
    """(warps, seconds for Session.warps, seconds for a FULL getDeviceInfo)
    with a 1M-thread saxpy stopped at its first line: 8448 resident warps."""
    from gpudbg.debug.cudbg.enums import CUDBGDeviceInfoQueryType_t as QT
    s = Session.attach()
    try:
        mod = gpudbg.compile(example_source("saxpy"), name="saxpy.cu")
        n = 1 << 20
        x, y = gpudbg.to_device(np.ones(n, np.float32)), gpudbg.to_device(np.ones(n, np.float32))
        s.break_at_kernel("saxpy")
        t = threading.Thread(target=lambda: (mod.saxpy[n // 256, 256](n, np.float32(2), x, y),
                                             gpudbg.Device().synchronize()), daemon=True)
        t.start()
        s.wait_for({EventKind.STOPPED}, timeout=60)
        t0 = time.perf_counter()
        warps = len(s.warps(0))
        t_views = time.perf_counter() - t0
        t0 = time.perf_counter()
        s.device_info(0, QT.CUDBG_RESPONSE_TYPE_FULL)
        t_full = time.perf_counter() - t0
        for bp in s.breakpoints():
            s.delete_breakpoint(bp)
        s.resume(0)
        t.join(120)
        return warps, t_views, t_full
    finally:
        s.detach()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    reset_engine()

    def arm_unreached(s):
        m = gpudbg.compile(NEVER, name="never.cu")
        s.break_at_kernel("never")
        return m

    def arm_conditional(s):
        s.break_at_line("matmul.cu", 17, condition=lambda lanes: lanes.thread_idx[0] > 10_000)

    print(f"{'case':34} {'seconds':>9} {'reference':>10} {'ratio':>7}")
    for name, case in (("matmul 96x96", matmul_case), ("reduction 256K", reduction_case)):
        base = timed(case, args.repeat)
        att = attached_time(case, args.repeat, arm_unreached)
        print(f"{name + ' attached / undebugged':34} {att:9.3f} {base:10.3f} {att / base:6.2f}x")
        if name.startswith("matmul"):
            cond = attached_time(case, args.repeat, arm_conditional)
            print(f"{'matmul conditional bp / attached':34} {cond:9.3f} {att:10.3f} {cond / att:6.2f}x")
    step_rate, next_rate = stepping_rates()
    # reference: undebugged steps per second of the same launch shape
    run, _ = matmul_case(96)
    run()
    t = best_of(run, args.repeat)
    steps = gpudbg.mc.last_launch_stats().steps
    warps, t_views, t_full = full_wave_views()
    print(f"{'views of all %d warps' % warps:34} {t_views:9.3f}")
    print(f"{'getDeviceInfo FULL, %d warps' % warps:34} {t_full:9.3f}")
    print(f"{'warp single-steps per second':34} {step_rate:9.0f}")
    print(f"{'source next per second':34} {next_rate:9.1f}")
    ref = steps / t
    print(f"{'scheduler steps/s undebugged':34} {ref:9.0f} {'':10} {step_rate / ref:6.3f}x "
          f"(single-step rate / free-running step rate)")


if __name__ == "__main__":
    main()
