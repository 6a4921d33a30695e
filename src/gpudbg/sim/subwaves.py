"""GPUDBG_THREADS=N for a whole wave: its blocks split into N sub-waves,
each with its own step loop on its own host thread.

Splitting one native call over N threads (native/parallel.py) leaves
everything between the calls (the step loop's scheduling, barriers,
branches, interpreted instructions) on one thread, and that is a third to
four fifths of a barrier-heavy kernel's time. Blocks do not share
registers, shared memory or barriers, so a wave is N independent waves of
fewer blocks as far as everything but global memory goes; running them at
once gives one legal order of the blocks' global accesses, which is all
CUDA promises between blocks.

The one idea: a launch-wide gate (a lock) is held by a sub-wave's loop
while it runs Python, and dropped only around compiled code (a native
segment or loop region without atomics) and every CHECK_STEPS steps. So
interpreted instructions, among them the interpreter's read-modify-write
atomics, device malloc and printf, never interleave with each other or
with native atomics, while one sub-wave's compiled code runs beside
another's scheduling.

Used only where it cannot change more than the blocks' interleaving: more
than one host thread asked for, the native engine on, no debugger, no
analysis tool, the default scheduling order, no cooperative grid or
cluster, the default placement, and at least two blocks per thread. What
it deliberately does not do: split a block, or share one instruction
budget between the parts (each part has the wave's remaining budget).
"""
from __future__ import annotations

import copy
import dataclasses
import threading

from gpudbg.sim.native import parallel

MIN_BLOCKS_PER_PART = 2
MIN_THREADS_PER_PART = 4096       # smaller waves are not worth a host thread


class _Stopped(Exception):
    """A sibling sub-wave failed: this one stops where it is."""


class Gate:
    """The launch-wide lock of the module docstring."""

    def __init__(self):
        self.lock = threading.Lock()
        self.failed = threading.Event()

    def native(self, call):
        """Run a compiled call with the gate dropped."""
        self.lock.release()
        try:
            return call()
        finally:
            self.lock.acquire()


class _PartWatch:
    """A part's view of the launch's KernelWatch: the same limits and
    cancellation, its own step counters, and a stop when a sibling failed;
    each check also lets the other parts' Python run (a block spinning on
    another part's flag must not starve it)."""

    def __init__(self, watch, gate: Gate):
        self.watch = watch
        self.gate = gate
        self.check_steps = watch.check_steps

    def check(self, X) -> None:
        if self.gate.failed.is_set():
            raise _Stopped()
        self.gate.lock.release()
        self.gate.lock.acquire()
        self.watch.check(X)


def applies(X, threads: int, order, tap, cooperative: bool, cluster_size: int, default_placement: bool) -> bool:
    """Whether the wave X, run without a debugger, runs as sub-waves (see
    the module docstring)."""
    if threads < 2 or not X.native_on or tap is not None or order is not None:
        return False
    if cooperative or cluster_size != 1 or not default_placement:
        return False
    nb = len(X.wave_blocks)
    return nb >= MIN_BLOCKS_PER_PART * 2 and X.n >= MIN_THREADS_PER_PART * 2


def _part_resources(X, index: int):
    """Part `index`'s own reusable arrays (part 0 has the launch's):
    kept on the GPU per part, rebuilt when the launch's shape changes."""
    from gpudbg.sim.launch_resources import LaunchResources, local_size_for
    gpu, fn = X.gpu, X.function
    key = (id(fn.program), fn.name, X.plan.largest_wave, X.plan.slots_per_block, X.dynamic_shared,
           local_size_for(gpu, fn))
    store = getattr(gpu, "_subwave_resources", None)
    if store is None:
        store = gpu._subwave_resources = {}
    got = store.get(index)
    if got is None or got[0] != key or got[2] is not fn.program:
        store[index] = None
        got = store[index] = (key, LaunchResources(X.plan, fn, X.dynamic_shared, key[-1], gpu.model), fn.program)
    return got[1]


def _parts_of(X, res, threads: int) -> list:
    """The wave's blocks cut into contiguous sub-waves, each a fresh
    WaveExecution configured like X."""
    from gpudbg.sim.wave import WaveExecution
    blocks = X.wave_blocks
    nb = len(blocks)
    nparts = max(1, min(threads, nb // MIN_BLOCKS_PER_PART, X.n // MIN_THREADS_PER_PART))
    cuts = [nb * j // nparts for j in range(nparts + 1)]
    parts = []
    for j in range(nparts):
        part_res = res if j == 0 else _part_resources(X, j)
        P = WaveExecution(X.gpu, X.function, X.grid_dim, X.block_dim, X.dynamic_shared, X.kparams,
                          X.grid_id, blocks[cuts[j]:cuts[j + 1]], X.plan, X.budget, part_res)
        # the SMs and warp slots the whole wave's layout gave these blocks
        # (a part's own layout would number its blocks from SM 0)
        spb = X.layout.slots_per_block
        a, b = cuts[j] * spb, cuts[j + 1] * spb
        P.layout = dataclasses.replace(P.layout, sm=X.layout.sm[a:b], warp=X.layout.warp[a:b],
                                       block_sm=X.layout.block_sm[cuts[j]:cuts[j + 1]])
        P.observer = X.observer
        P.device_launches = X.device_launches
        P.native_on = X.native_on
        P.native_threads = 1               # the parts are the parallelism
        P.reg_ptrs = P.arrays.reg_ptrs()
        parts.append(P)
    return parts


def run(X, res, watch, wave_index: int, nwaves: int, threads: int, run_wave) -> None:
    """Run wave X as sub-waves; afterwards X carries their work, steps,
    cycles (the longest part's) and printf output, and a fault of a part
    is raised (the first part's, in block order, when several fail)."""
    from gpudbg.sim import param_window
    parts = _parts_of(X, res, threads)
    gate = Gate()
    for P in parts:
        P.native_gate = gate
    errors: list[BaseException | None] = [None] * len(parts)

    def one(j: int) -> None:
        P = parts[j]
        pw = copy.copy(watch)
        with gate.lock:
            try:
                visits = pw.start_wave(P, wave_index, nwaves)
                run_wave(P, _PartWatch(pw, gate), visits, None)
            except _Stopped:
                pass
            except BaseException as e:     # noqa: BLE001 - re-raised by the launching thread
                errors[j] = e
                gate.failed.set()

    try:
        pool = parallel.workers(len(parts) - 1)
        futures = [pool.submit(one, j) for j in range(1, len(parts))]
        one(0)
        for f in futures:
            f.result()
    finally:
        for P in parts:
            X.thread_instructions += P.thread_instructions
            X.steps += P.steps
            X.cycles = max(X.cycles, P.cycles)
            X.printf_out.extend(P.printf_out)
            P.printf_out = []
            param_window.release(P)
    for e in errors:
        if e is not None:
            raise e
