"""The native engine against the interpreter (issue 13's benchmark).

Measured in one run, with every check on and one host thread:
- throughput: the four example kernels (bench_sim's cases: saxpy 2^22,
  shared-memory tree reduction 2^22, 16x16-tiled shared-memory matmul 512,
  atomics histogram 2^22) and the larger real kernel, an all-pairs n-body
  step of 4,096 bodies (nbody_case.py), under GPUDBG_ENGINE=interp and =native, in
  thread-instructions per second as the simulator counts them
  (LaunchStats.thread_instructions), with the ratio native/interp and the
  issue's targets beside: after one untimed launch under each engine (the
  native one compiles or loads from the cache), two rounds in which the
  engines alternate, each engine's best launch kept (best of --repeat per
  round);
- host threads: native throughput with GPUDBG_THREADS=2 over one thread
  (sub-waves, sim/subwaves.py), alternating in one run, target on matmul;
- compile time: for each anchor kernel and a ~1,200-instruction kernel, in
  fresh processes, the cold compile (cache off: planning, IR emission, LLVM
  -O3 or for a large module the quick pipeline (sim/native/jit.py), code
  generation, loading; wall-clock and the process's CPU time, the steadier
  figure on a shared machine, which the target is judged by) and the warm
  load from the on-disk cache (plans and object code: sim/native/plan_store.py);
- the debugger: the matmul and reduction examples with a debugger attached
  and a breakpoint armed in a kernel that never runs, over the same
  launches run natively without a debugger (they run the same optimized
  code: debug_port.DevicePort.keeps_every_register); and, without a
  target, matmul built with -G, whose launches under the debugger keep
  every register exact.

    python benchmarks/bench_native.py [--repeat N] [--small] [--skip PART ...]

--small runs the anchor kernels at bench_sim's sizes (2^20, matmul 256) for
a quick look; the targets are the issue's, stated for the full sizes.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import bench_sim
import nbody_case

ENV_ENGINE = "GPUDBG_ENGINE"
FULL = {"saxpy": 1 << 22, "reduction": 1 << 22, "matmul": 512, "histogram": 1 << 22, "nbody": 4096}
SMALL = {"saxpy": 1 << 20, "reduction": 1 << 20, "matmul": 256, "histogram": 1 << 20, "nbody": 2048}
CASES = {"saxpy": bench_sim.case_saxpy, "reduction": bench_sim.case_reduction,
         "matmul": bench_sim.case_matmul, "histogram": bench_sim.case_histogram,
         "nbody": nbody_case.case_nbody}   # the larger real kernel: reported, no target
KERNELS = {"saxpy": "saxpy", "reduction": "reduce_sum", "matmul": "matmul", "histogram": "histogram",
           "nbody": "nbody_step"}
RATE_TARGET = {"saxpy": 2e9, "reduction": 2e9, "matmul": 2e9, "histogram": 1e9}
RATIO_TARGET = {"saxpy": 10.0, "reduction": 10.0, "matmul": 10.0}   # the issue sets none for histogram
COLD_TARGET_S = 1.0          # a cold compile of a 1,000-instruction kernel
DEBUG_TARGET = 1.2           # attached, no breakpoint hit, over undebugged
THREADS_TARGET = 1.7         # GPUDBG_THREADS=2 over one host thread, matmul 512
ENV_THREADS = "GPUDBG_THREADS"

# ~1,200 PTX instructions of straight-line float, integer, load and
# select work (an unrolled loop), for the compile-time target
BIG = r"""
extern "C" __global__ void big(const float *x, float *y, unsigned *h, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float a = x[i], b = 1.0f;
    unsigned u = i;
#pragma unroll
    for (int k = 0; k < 100; ++k) {
        a = fmaf(a, 1.0001f, b);
        b = b * 0.999f + x[(i + k) & (n - 1)];
        u = u * 1664525u + 1013904223u;
        if (u & 1) a += 1.0f;
    }
    y[i] = a + b;
    h[i] = u;
}
"""


def with_env(variable: str, value: str, fn):
    """fn() with os.environ[variable] = value, restored after."""
    old = os.environ.get(variable)
    os.environ[variable] = value
    try:
        return fn()
    finally:
        if old is None:
            os.environ.pop(variable, None)
        else:
            os.environ[variable] = old


def with_engine(name: str, fn):
    return with_env(ENV_ENGINE, name, fn)


# ---------------------------------------------------------------- throughput
def throughput(sizes: dict, repeat: int) -> bool:
    print(f"{'kernel':10} {'size':>8} {'interp thr-i/s':>15} {'native thr-i/s':>15} {'target':>8} "
          f"{'native/interp':>14} {'target':>7}  thread-instr")
    ok = True
    for name, case in CASES.items():
        rates = {"interp": 0.0, "native": 0.0}
        ti = {}
        for engine in ("interp", "native"):
            # one launch each first, untimed: native compiles (or loads from
            # the cache) there, and both engines make their reusable arrays
            with_engine(engine, lambda: case(1, sizes[name]))
        # the engines alternate, each keeping its best launch: a shared
        # machine's slow spells then fall on both rather than on one
        for _ in range(2):
            for engine in ("interp", "native"):
                t, _ = with_engine(engine, lambda: case(repeat, sizes[name]))
                ti[engine] = bench_sim.last_thread_instructions()
                rates[engine] = max(rates[engine], ti[engine] / t)
        if ti["interp"] != ti["native"]:
            raise SystemExit(f"{name}: the engines counted different work: {ti}")
        ratio = rates["native"] / rates["interp"]
        rate_ok = rates["native"] >= RATE_TARGET.get(name, 0)
        ratio_ok = ratio >= RATIO_TARGET.get(name, 0)
        ok &= rate_ok and ratio_ok
        rt = f">={RATIO_TARGET[name]:.0f}x" if name in RATIO_TARGET else "-"
        print(f"{name:10} {sizes[name]:8d} {rates['interp']:15.3e} {rates['native']:15.3e} "
              f"{('met' if rate_ok else 'MISSED') if name in RATE_TARGET else '-':>8} {ratio:13.2f}x {rt if ratio_ok else 'MISSED':>7}  "
              f"{ti['native']}" + (f"  (target >= {RATE_TARGET[name]:.0e}/s)" if name in RATE_TARGET
                                   else "  (the larger real kernel: no target)"))
    return ok


# ---------------------------------------------------------------- compile time
def compile_probe(name: str) -> None:
    """In a fresh process: the program of one kernel, prepared natively
    once; prints the times (JSON)."""
    import gpudbg
    from gpudbg.ptx import parse
    from gpudbg.sim.gpu import SimGPU
    from gpudbg.sim.loader import load_module
    from gpudbg.sim.native import code_cache, engine, jit, segments

    source, kernel = (BIG, "big") if name == "big" else \
        (nbody_case.SOURCE, KERNELS[name]) if name == "nbody" else (bench_sim.example_source(name), KERNELS[name])
    ptx = gpudbg.compile(source, name=f"{name}.cu").ptx
    program = load_module(SimGPU(), parse(ptx, f"{name}.ptx")).functions[kernel].program
    spent = {"plan": 0.0, "llvm": 0.0, "load": 0.0, "cache": 0.0}

    def timed(part, fn):
        def wrapper(*a, **k):
            t = time.perf_counter()
            try:
                return fn(*a, **k)
            finally:
                spent[part] += time.perf_counter() - t
        return wrapper
    segments.plan_segments = timed("plan", segments.plan_segments)
    jit.compile_object = timed("llvm", jit.compile_object)
    jit.load_object = timed("load", jit.load_object)
    code_cache.load = timed("cache", code_cache.load)
    code_cache.store = timed("cache", code_cache.store)
    t, cpu = time.perf_counter(), time.process_time()
    engine.prepare(program)
    total, cpu = time.perf_counter() - t, time.process_time() - cpu
    print(json.dumps({"total": total, "cpu": cpu, "instructions": len(program.code),
                      "segments": program.native_segments, **spent}))


def _probe(name: str, env: dict) -> dict:
    out = subprocess.run([sys.executable, os.path.abspath(__file__), "--compile-probe", name],
                         env={**os.environ, **env}, capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        raise SystemExit(f"compile probe of {name} failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def compile_times() -> bool:
    print(f"\n{'kernel':10} {'instr':>6} {'segs':>5} {'cold s':>8} {'cpu s':>6} {'(plan':>7} {'emit':>6} {'llvm':>6} "
          f"{'load)':>6} {'warm s':>8} {'cpu s':>6} {'(llvm':>6} {'cache ms)':>9}  fresh processes; cold: cache off")
    ok = True
    with tempfile.TemporaryDirectory(prefix="gpudbg-native-bench-") as d:
        for name in ("big", *CASES):
            cold = _probe(name, {"GPUDBG_NATIVE_CACHE": "off"})
            _probe(name, {"GPUDBG_CACHE_DIR": d, "GPUDBG_NATIVE_CACHE": "on"})   # fills the cache
            warm = _probe(name, {"GPUDBG_CACHE_DIR": d, "GPUDBG_NATIVE_CACHE": "on"})
            emit = cold["total"] - cold["plan"] - cold["llvm"] - cold["load"] - cold["cache"]
            line = (f"{name:10} {cold['instructions']:6d} {cold['segments']:5d} {cold['total']:8.3f} "
                    f"{cold['cpu']:6.3f} "
                    f"{cold['plan']:7.3f} {emit:6.3f} {cold['llvm']:6.3f} {cold['load']:6.3f} "
                    f"{warm['total']:8.3f} {warm['cpu']:6.3f} {warm['llvm']:6.3f} {1e3 * warm['cache']:9.2f}")
            if name == "big":
                met = cold["cpu"] < COLD_TARGET_S * cold["instructions"] / 1000
                ok &= met
                line += f"  target < {COLD_TARGET_S:.0f} s (cpu) per 1,000 instructions: {'met' if met else 'MISSED'}"
            print(line)
    return ok


# ---------------------------------------------------------------- host threads
def with_threads(n: int, fn):
    return with_env(ENV_THREADS, str(n), fn)


def threads_speedup(sizes: dict, repeat: int) -> bool:
    """Native thread-instructions/s with GPUDBG_THREADS=2 over one host
    thread, the two measured alternately in one run (best of `repeat`
    rounds each); the target is the issue's, on matmul."""
    print(f"\n{'kernel':10} {'size':>8} {'1 thread':>12} {'2 threads':>12} {'speedup':>8}  target")
    ok = True
    for name in ("matmul", "reduction", "saxpy", "nbody"):
        best = {1: 0.0, 2: 0.0}
        for _ in range(max(1, repeat)):
            for n in (1, 2):
                t, _ = with_threads(n, lambda: with_engine("native", lambda: CASES[name](2, sizes[name])))
                best[n] = max(best[n], bench_sim.last_thread_instructions() / t)
        ratio = best[2] / best[1]
        target = ""
        if name == "matmul":
            met = ratio >= THREADS_TARGET
            ok &= met
            target = f">= {THREADS_TARGET}x: {'met' if met else 'MISSED'}"
        print(f"{name:10} {sizes[name]:8d} {best[1]:12.3e} {best[2]:12.3e} {ratio:7.2f}x  {target}")
    return ok


# ---------------------------------------------------------------- debugger
def debugger_slowdown(repeat: int, small: bool) -> bool:
    import gpudbg
    from bench_debug import NEVER, attached_time, matmul_case, reduction_case
    from timing import best_of

    def arm_unreached(s):
        m = gpudbg.compile(NEVER, name="never.cu")
        s.break_at_kernel("never")
        return m

    print(f"\n{'attached, no breakpoint hit':34} {'attached s':>10} {'native s':>9} {'ratio':>7} "
          f"{'interp s':>9} {'ratio':>7}")
    ok = True
    cases = (("matmul", lambda: matmul_case(256 if small else 512)),
             ("reduction", lambda: reduction_case(1 << 20 if small else 1 << 22)))
    def undebugged(case):
        run, good = case()
        run()
        t = best_of(run, repeat)
        assert good(), "result differs from numpy"
        return t

    for name, case in cases:
        native = with_engine("native", lambda: undebugged(case))
        interp = with_engine("interp", lambda: undebugged(case))
        att = with_engine("native", lambda: attached_time(case, repeat, arm_unreached))
        met = att / native <= DEBUG_TARGET
        ok &= met
        print(f"{name:34} {att:10.3f} {native:9.3f} {att / native:6.2f}x {interp:9.3f} {att / interp:6.2f}x"
              f"  target <= {DEBUG_TARGET}x: {'met' if met else 'MISSED'}")
    # built with -G, a kernel keeps every register exact under a debugger
    # (the FULL variant); without, registers dead at a stop's pc read
    # <optimized out>, as cuda-gdb shows them in optimized code
    n = 256 if small else 512

    def g_case():
        return matmul_case(n, options=("-G",))
    native = with_engine("native", lambda: undebugged(g_case))
    att = with_engine("native", lambda: attached_time(g_case, repeat, arm_unreached))
    print(f"{'matmul -G (every register exact)':34} {att:10.3f} {native:9.3f} {att / native:6.2f}x "
          f"{'':>9} {'':>7}  (no target)")
    return ok


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--small", action="store_true", help="bench_sim's smaller sizes (a quick look)")
    ap.add_argument("--skip", nargs="*", default=[], choices=["throughput", "threads", "compile", "debugger"])
    ap.add_argument("--compile-probe", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.compile_probe:
        compile_probe(args.compile_probe)
        return
    ok = True
    if "throughput" not in args.skip:
        ok &= throughput(SMALL if args.small else FULL, args.repeat)
    if "threads" not in args.skip:
        ok &= threads_speedup(SMALL if args.small else FULL, args.repeat)
    if "compile" not in args.skip:
        ok &= compile_times()
    if "debugger" not in args.skip:
        ok &= debugger_slowdown(args.repeat, args.small)
    print("\nall targets met" if ok else "\nsome targets missed")


if __name__ == "__main__":
    main()
