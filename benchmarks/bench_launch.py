"""Launch rate of an empty kernel: the fixed cost of one launch through the
`mc*` runtime (mcLaunchKernel) and through the Pythonic layer
(`mod.k[1, 32]()`), for one block of 32 threads and one of 1 thread, in two
patterns:

- queued: N launches, then one mcStreamSynchronize / gpudbg.synchronize();
- synchronous: launch + synchronize each time;

and the host thread's share of a queued mc launch alone, measured with the
device held idle behind a stream wait, and the device's share alone: the
same launches released at once while the host waits.

On a shared machine wall-clock rates of identical runs differ by +-50%;
two steadier figures come beside them: each pattern's CPU per launch split
between the host thread and the device threads (from the kernel's
per-thread counters), and with --calls the Python function calls per
launch on each side (deterministic: what a change removed, independent of
the machine's load), with --opcodes the Python bytecodes executed per
launch on each side (the interpreter's work itself).

Every check stays on (argument validation, the sanitizer's event interface,
the debugger's hooks). Beside each figure the same run measures a reference,
so that a slower or busier machine can be told apart from a slower gpudbg:
the rate of a Python-level no-op call chain of the same depth as a launch's
layers (api -> runtime -> engine -> stream -> device, five plain calls) and
the rate of numpy doing one launch's trivial work (writing 32 int32 thread
ids into an array). Targets (issue 13 item 5): 20,000 launches/s through
mc*, 10,000 through the Pythonic layer.

Run: python benchmarks/bench_launch.py [--launches N] [--repeat R] [--profile PATTERN] [--calls] [--opcodes]
"""
from __future__ import annotations

import argparse
import collections
import contextlib
import cProfile
import os
import pstats
import sys
import threading
import time

import numpy as np

import gpudbg
from gpudbg.runtime import mc

EMPTY = ".version 7.0\n.target sm_80\n.address_size 64\n.visible .entry empty()\n{\n ret;\n}\n"
TARGET_MC, TARGET_API = 20_000, 10_000


def rate(fn, n: int, repeat: int) -> tuple[float, float]:
    """Launches per second (wall clock) and process CPU microseconds per
    launch (all threads: the host's and the GPU's), each the best of
    `repeat` runs of fn(n). On a shared, loaded machine the CPU figure is
    the steadier one: wall time also counts the other processes' turns."""
    best, best_cpu = float("inf"), float("inf")
    for _ in range(repeat):
        t, c = time.perf_counter(), time.process_time()
        fn(n)
        best = min(best, time.perf_counter() - t)
        best_cpu = min(best_cpu, time.process_time() - c)
    return n / best, best_cpu / n * 1e6


def _mc_kernel():
    err, mod = mc.mcModuleLoadData(EMPTY)
    assert err == 0, err
    err, f = mc.mcModuleGetFunction(mod, "empty")
    assert err == 0, err
    return f


def mc_queued(f, block: int):
    def run(n: int) -> None:
        for _ in range(n):
            if mc.mcLaunchKernel(f, 1, block, [], 0, None)[0] != 0:
                raise RuntimeError("launch failed")
        assert mc.mcStreamSynchronize(None)[0] == 0
    return run


def mc_sync(f, block: int):
    def run(n: int) -> None:
        for _ in range(n):
            if mc.mcLaunchKernel(f, 1, block, [], 0, None)[0] != 0:
                raise RuntimeError("launch failed")
            assert mc.mcStreamSynchronize(None)[0] == 0
    return run


def api_queued(k, block: int):
    def run(n: int) -> None:
        launch = k[1, block]
        for _ in range(n):
            launch()
        gpudbg.synchronize()
    return run


def api_sync(k, block: int):
    def run(n: int) -> None:
        launch = k[1, block]
        for _ in range(n):
            launch()
            gpudbg.synchronize()
    return run


@contextlib.contextmanager
def _held_launches():
    """(word, releaser): launches queued on the legacy stream after
    mcStreamWaitValue32(None, word, gen) wait until the non-blocking stream
    `releaser` writes gen, so that one side of a launch can be measured
    with the other idle. The word's memset runs on the legacy stream and is
    waited for: the releaser's first write must not land before it."""
    err, word = mc.mcMalloc(4)
    assert err == 0 and mc.mcMemset(word, 0, 4)[0] == 0 and mc.mcDeviceSynchronize()[0] == 0
    err, releaser = mc.mcStreamCreateWithFlags(1)        # mcStreamNonBlocking
    assert err == 0
    try:
        yield word, releaser
    finally:
        mc.mcStreamDestroy(releaser)
        mc.mcFree(word)


def _queue(f, block: int, n: int) -> None:
    for _ in range(n):
        if mc.mcLaunchKernel(f, 1, block, [], 0, None)[0] != 0:
            raise RuntimeError("launch failed")


def mc_host_only(f, block: int, n: int, repeat: int) -> float:
    """Host-thread CPU microseconds per mcLaunchKernel with the device idle:
    the n launches wait behind a held stream (_held_launches) while they
    are queued, so the host's share is measured without the device thread
    running beside it. The best of `repeat` batches; n must fit in the
    stream's ring (about 120 launches)."""
    best = float("inf")
    with _held_launches() as (word, releaser):
        for gen in range(1, repeat + 1):
            assert mc.mcStreamWaitValue32(None, word, gen, 0)[0] == 0
            t = time.thread_time()
            _queue(f, block, n)
            best = min(best, time.thread_time() - t)
            assert mc.mcStreamWriteValue32(releaser, word, gen, 0)[0] == 0
            assert mc.mcDeviceSynchronize()[0] == 0
    return best / n * 1e6


def mc_device_only(f, block: int, n: int, repeat: int) -> float:
    """Wall microseconds per launch for the GPU's threads to run n queued
    launches with the host idle (blocked in mcDeviceSynchronize): the
    launches wait behind a held stream (_held_launches), and the clock
    starts when they are released. The median of `repeat` batches; n must
    fit in the stream's ring."""
    times = []
    with _held_launches() as (word, releaser):
        for gen in range(1, repeat + 1):
            assert mc.mcStreamWaitValue32(None, word, gen, 0)[0] == 0
            _queue(f, block, n)
            t = time.perf_counter()
            assert mc.mcStreamWriteValue32(releaser, word, gen, 0)[0] == 0
            assert mc.mcDeviceSynchronize()[0] == 0
            times.append((time.perf_counter() - t) / n * 1e6)
    return sorted(times)[len(times) // 2]


# ------------------------------------------------------------------ references

def _l5(x):
    return x


def _l4(x):
    return _l5(x)


def _l3(x):
    return _l4(x)


def _l2(x):
    return _l3(x)


def _l1(x):
    return _l2(x)


def ref_calls(n: int) -> None:
    for i in range(n):
        _l1(i)


_IDS = np.empty(32, np.int32)


def ref_numpy(n: int) -> None:
    for _ in range(n):
        np.copyto(_IDS, np.arange(32, dtype=np.int32))


_DEVICE_PROFILES: list[cProfile.Profile] = []


def profile_device_threads() -> None:
    """Run every GPU thread started from now on (the front end and the
    engines, sim/engines.py) under its own cProfile, so that a profile
    shows where the device side of a launch goes too."""
    from gpudbg.sim import engines
    original = engines.DeviceThreads._main

    def profiled_main(self) -> None:
        prof = cProfile.Profile()
        _DEVICE_PROFILES.append(prof)
        prof.runcall(original, self)
    engines.DeviceThreads._main = profiled_main


def profile(run, n: int) -> None:
    """cProfile the host thread and the device threads, merged; the device
    threads' counts include the warm-up launches."""
    host = cProfile.Profile()
    host.runcall(run, n)
    stats = pstats.Stats(host)
    for p in _DEVICE_PROFILES:
        p.create_stats()
        stats.add(p)
    print(f"host thread + {len(_DEVICE_PROFILES)} device threads")
    stats.sort_stats("cumulative").print_stats(70)
    stats.sort_stats("tottime").print_stats(40)


def _thread_cpu() -> dict[int, float]:
    """CPU seconds of each thread of this process (Linux /proc; {} elsewhere)."""
    out: dict[int, float] = {}
    tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    try:
        tids = os.listdir("/proc/self/task")
    except OSError:
        return out
    for tid in tids:
        try:
            with open(f"/proc/self/task/{tid}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except OSError:
            continue          # the thread ended meanwhile
        out[int(tid)] = (int(fields[11]) + int(fields[12])) / tick    # utime + stime
    return out


def cpu_split(fn, n: int) -> tuple[float, float] | None:
    """(host thread, device threads) CPU microseconds per launch of fn(n),
    None where /proc is missing. Coarse (clock ticks): use n >= 1000."""
    main = threading.get_native_id()
    before = _thread_cpu()
    if not before:
        return None
    fn(n)
    after = _thread_cpu()
    host = after.get(main, 0.0) - before.get(main, 0.0)
    device = sum(t - before.get(tid, 0.0) for tid, t in after.items() if tid != main)
    return host / n * 1e6, device / n * 1e6


_counts: collections.Counter = collections.Counter()
_counting = [False]


def _count_call(frame, event, arg) -> None:
    if _counting[0] and event in ("call", "c_call"):
        _counts["host" if threading.current_thread() is threading.main_thread() else "device"] += 1


def count_device_calls() -> None:
    """Count the calls of every GPU thread started from now on (as
    profile_device_threads, with a counter instead of cProfile)."""
    from gpudbg.sim import engines
    original = engines.DeviceThreads._main

    def counted_main(self) -> None:
        sys.setprofile(_count_call)
        original(self)
    engines.DeviceThreads._main = counted_main


def _count_opcodes(frame, event, arg):
    """A trace function counting the bytecodes each side executes: the
    interpreter's work, which is 90% of a launch's machine instructions
    (callgrind), steadier than any clock on a shared machine."""
    if not _counting[0]:
        return None
    frame.f_trace_opcodes = True
    side = "host" if threading.current_thread() is threading.main_thread() else "device"

    def local(frame, event, arg):
        if event == "opcode":
            _counts[side] += 1
        return local
    return local


def count_device_opcodes() -> None:
    """Trace the bytecodes of every GPU thread started from now on."""
    from gpudbg.sim import engines
    original = engines.DeviceThreads._main

    def traced_main(self) -> None:
        sys.settrace(_count_opcodes)
        original(self)
    engines.DeviceThreads._main = traced_main


def opcodes_per_launch(fn, n: int) -> tuple[float, float]:
    """(host, device) Python bytecodes executed per launch of fn(n)."""
    _counts.clear()
    sys.settrace(_count_opcodes)
    _counting[0] = True
    try:
        fn(n)
    finally:
        _counting[0] = False
        sys.settrace(None)
    return _counts["host"] / n, _counts["device"] / n


def calls_per_launch(fn, n: int) -> tuple[float, float]:
    """(host, device) Python and C function calls per launch of fn(n)."""
    _counts.clear()
    sys.setprofile(_count_call)
    _counting[0] = True
    try:
        fn(n)
    finally:
        _counting[0] = False
        sys.setprofile(None)
    return _counts["host"] / n, _counts["device"] / n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--launches", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--profile", choices=["mc_queued", "mc_sync", "api_queued", "api_sync"],
                    help="cProfile one pattern (block of 32) instead of timing all")
    ap.add_argument("--calls", action="store_true",
                    help="count Python function calls per launch (host, device) instead of timing")
    ap.add_argument("--opcodes", action="store_true",
                    help="count Python bytecodes executed per launch (host, device) instead of timing")
    a = ap.parse_args()
    if a.profile:
        profile_device_threads()
    if a.calls:
        count_device_calls()
    if a.opcodes:
        count_device_opcodes()
    f = _mc_kernel()
    k = gpudbg.Module.from_ptx(EMPTY, "bench_launch.ptx").empty
    patterns = {"mc_queued": lambda b: mc_queued(f, b), "mc_sync": lambda b: mc_sync(f, b),
                "api_queued": lambda b: api_queued(k, b), "api_sync": lambda b: api_sync(k, b)}
    for p in patterns.values():                       # warm every cache once, untimed
        p(32)(10)
        p(1)(10)
    if a.profile:
        profile(patterns[a.profile](32), a.launches)
        return
    if a.opcodes:
        for name, make in patterns.items():
            make(32)(300)          # launch buffers for every launch in flight, made before counting
            host_ops, device_ops = opcodes_per_launch(make(32), min(a.launches, 300))
            print(f"{name:10s} block 32: {host_ops:6.0f} bytecodes/launch on the host thread, "
                  f"{device_ops:6.0f} on the device threads ({host_ops + device_ops:,.0f} in all)")
        return
    if a.calls:
        for name, make in patterns.items():
            host_calls, device_calls = calls_per_launch(make(32), min(a.launches, 500))
            print(f"{name:10s} block 32: {host_calls:6.0f} calls/launch on the host thread, "
                  f"{device_calls:6.0f} on the device threads")
        return
    n = a.launches
    (calls, calls_cpu), (npy, npy_cpu) = rate(ref_calls, n * 10, a.repeat), rate(ref_numpy, n * 10, a.repeat)
    print(f"reference: 5-deep Python no-op call chain {calls:,.0f}/s ({calls_cpu:.2f} us CPU each); "
          f"numpy arange(32)+copyto {npy:,.0f}/s ({npy_cpu:.2f} us CPU each)")
    host = mc_host_only(f, 32, 100, max(a.repeat, 5))
    print(f"mc host share, device idle, block 32: {host:7.1f} us host CPU/launch")
    device = mc_device_only(f, 32, 100, max(5 * a.repeat, 15))
    print(f"mc device share, host idle, block 32: {device:7.1f} us wall/launch (median)")
    for name, make in patterns.items():
        target = TARGET_MC if name.startswith("mc") else TARGET_API
        for block in (32, 1):
            r, cpu = rate(make(block), n, a.repeat)
            print(f"{name:10s} block {block:2d}: {r:9,.0f} launches/s, {cpu:7.1f} us CPU/launch "
                  f"(= {1e6 / cpu:7,.0f}/s if CPU-bound; target {target:,}; "
                  f"{npy / r:6.1f}x slower than the numpy reference)")
        split = cpu_split(make(32), max(n, 1000))
        if split is not None:
            print(f"{name:10s} block 32 CPU split: host thread {split[0]:6.1f} us, "
                  f"device threads {split[1]:6.1f} us per launch")


if __name__ == "__main__":
    main()
