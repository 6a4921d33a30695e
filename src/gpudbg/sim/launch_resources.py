"""What every wave of a launch shares, made once per launch shape and
kept on the GPU for the next launch of it: the launch constants (entry
pc, call depth, local size, the registers the kernel reaches), the
shared and local memories sized for the largest wave, and the per-thread
arrays a wave starts from (registers, scheduling pcs, call stacks,
parameters), plus the last launch's wave for a repeat launch to restart.

The one idea: like real hardware, a new block finds registers, shared and
local memory as the previous occupant left them, so nothing here is
cleared per launch except what a wave's start must define (sim/wave.py
WaveExecution._start); a stream of small launches pays for no allocation.
What it deliberately does not do: decide which launches may share a set
(sim/executor.py checks one out per launch) or hold any per-launch state.
"""
from __future__ import annotations

import numpy as np

from gpudbg.sim import launch_limits, reserved_smem
from gpudbg.sim.debug_port import LaunchAborted
from gpudbg.sim.memory import SegmentedMemory, Space
from gpudbg.sim.state import EXITED
from gpudbg.sim.wave_plan import WavePlan

NBARRIERS = 16
WAVE_SIZES_KEPT = 8     # wave sizes whose arrays a launch's resources keep looked up
KEPT_COUNTS = 2         # block counts of the waves kept for restart (LaunchResources.keep_wave)
_EMPTY = np.zeros(0, dtype=np.uint32)


class LaunchOutOfResources(LaunchAborted):
    """A launch whose local memory cannot be backed: the driver's error for
    it is CUDA_ERROR_OUT_OF_MEMORY (`result`), with a message naming the
    kernel and the sizes."""

    result = "CUDA_ERROR_OUT_OF_MEMORY"


class LaunchConstants:
    """What every wave of a launch derives from the kernel and the stack
    limit alone (reachability, entry pc, call depth, local size), computed
    once instead of per wave."""

    def __init__(self, gpu, function):
        prog = function.program
        self.stack_limit = stack_limit_of(gpu)
        self.reach = prog.reachable(function.name)
        self.entry = prog.functions[function.name].entry_pc
        self.max_depth = prog.max_call_depth(function.name, self.stack_limit)
        self.local_size = launch_limits.thread_local_bytes(function, self.stack_limit)
        self.live_regs = [prog.reg_names[k][0] in self.reach for k in range(len(prog.reg_dtypes))]
        self.param_offsets = {p.name: p.offset for p in function.params}


class LaunchResources:
    """Arrays and memories sized for the largest wave of a launch, reused by
    every wave so that later waves do not pay for fresh pages (and kept on
    the GPU for the next launch of the same shape). Like real hardware, a
    new block finds registers, shared and local memory as the previous
    occupant left them (deterministically)."""

    @classmethod
    def for_launch(cls, gpu, plan: WavePlan, function, shared_bytes: int, local_size: int,
                   segment_bytes: int | None = None, key: tuple | None = None) -> "LaunchResources":
        """`segment_bytes`: the block's shared segment when the caller has it
        (sim/launch_template.py), else computed here; `key`: what the
        arrays are kept by, when the caller has it (the template's
        resources_key, the same tuple as below)."""
        if key is None:
            if segment_bytes is None:
                segment_bytes = reserved_smem.segment_bytes(function, gpu.model, shared_bytes)
            key = (id(function.program), function.name, plan.largest_wave, plan.slots_per_block,
                   segment_bytes, local_size)
        cached = getattr(gpu, "_launch_resources", None)
        if cached is not None and cached[0] == key and cached[2] is function.program:
            return cached[1]
        gpu._launch_resources = None      # the previous launch's buffers go before new ones are made
        problem = launch_limits.local_memory_problem(gpu.model, function, stack_limit_of(gpu),
                                                     launch_limits.free_device_bytes(gpu))
        if problem is not None:
            raise LaunchOutOfResources(f"out of memory: {problem}")
        try:
            res = cls(plan, function, shared_bytes, local_size, gpu.model)
        except (MemoryError, ValueError) as e:
            nslots = plan.largest_wave * plan.slots_per_block
            raise LaunchOutOfResources(
                f"out of memory: the simulator cannot back the local memory of kernel {function.name}: "
                f"{nslots} resident threads x {local_size} bytes = {nslots * local_size} bytes "
                f"({type(e).__name__}: {e})") from None
        gpu._launch_resources = (key, res, function.program)
        return res

    def __init__(self, plan: WavePlan, function, shared_bytes: int, local_size: int, model=None):
        nb = plan.largest_wave
        nmax = nb * plan.slots_per_block
        shared = reserved_smem.segment_bytes(function, model, shared_bytes) if model is not None \
            else function.static_shared + int(shared_bytes)
        self.smem = SegmentedMemory(Space.SHARED, max(nb, 1), max(shared, 1))
        self.smem.set_uniform_limit(shared)
        self.lmem = SegmentedMemory(Space.LOCAL, max(nmax, 1), max(local_size, 1))
        self.lmem.set_uniform_limit(local_size)
        self._arrays: dict = {}
        self._waves: dict[int, WaveArrays] = {}     # slots -> the arrays of a wave that size
        self._constants: tuple | None = None
        # held by a running grid (sim/executor.py _checkout_resources): a
        # concurrent grid makes its own instead
        self.checked_out = False
        # block count -> (template, blocks, wave): the last waves that ran to
        # the end, which a later wave of as many blocks of the same template
        # may restart (sim/executor.py _wave_for); one per count, for the
        # KEPT_COUNTS counts seen last (a long grid's full waves and its
        # shorter last one: then no launch of it builds a wave)
        self.kept_waves: dict[int, tuple] = {}
        self.slots = np.arange(max(nmax, 1), dtype=np.int64)
        self.slots.flags.writeable = False

    def keep_wave(self, template, blocks, wave) -> None:
        """Remember a wave that ran to the end, for _wave_for (which took
        the entry of its count out: a new one goes last, and the oldest
        count goes when KEPT_COUNTS are kept)."""
        kept = self.kept_waves
        count = len(blocks)
        if len(kept) >= KEPT_COUNTS and count not in kept:
            del kept[next(iter(kept))]
        kept[count] = (template, blocks, wave)

    def constants(self, gpu, function, stack_limit: int | None = None) -> LaunchConstants:
        """The launch constants for `function` under the GPU's current stack
        limit (recomputed when either changes); `stack_limit`: that limit,
        when the caller has already read it (sim/launch_template.py)."""
        c = self._constants
        if stack_limit is None:
            stack_limit = stack_limit_of(gpu)
        if c is None or c[0] is not function or c[1].stack_limit != stack_limit:
            c = self._constants = (function, LaunchConstants(gpu, function))
        return c[1]

    def wave_arrays(self, const: LaunchConstants, prog, n: int) -> "WaveArrays":
        """The reused arrays of a wave of n slots under `const`."""
        w = self._waves.get(n)
        if w is None or w.const is not const:
            if len(self._waves) >= WAVE_SIZES_KEPT:   # waves cut short beside other grids vary in size
                self._waves.clear()
            w = self._waves[n] = WaveArrays(self, const, prog, n)
        return w

    def valid_slots(self, layout) -> np.ndarray:
        """The slots of real threads of a padded layout, ascending (what
        the lowest-pc scan finds at the start pc; cached per layout)."""
        key = ("valid", layout.nthreads)
        a = self._arrays.get(key)
        if a is None or a.shape[0] != int(np.count_nonzero(layout.valid)):
            a = self._arrays[key] = np.flatnonzero(layout.valid)
            a.flags.writeable = False
        return a

    def start_pcs(self, layout, entry: int) -> np.ndarray:
        """Initial scheduling pcs: `entry` for real threads, EXITED for the
        padding lanes (cached per layout)."""
        key = ("start", layout.nthreads, entry)
        a = self._arrays.get(key)
        if a is None or a.shape[0] != layout.nthreads:
            a = self._arrays[key] = np.where(layout.valid, np.int64(entry), EXITED).astype(np.int64)
        return a

    def no_barriers(self, nb: int) -> np.ndarray:
        """A read-only all-zero (nb, NBARRIERS) table."""
        a = self._arrays.get("nobar")
        if a is None or a.shape[0] < nb:
            a = self._arrays["nobar"] = np.zeros((nb, NBARRIERS), dtype=np.int64)
            a.flags.writeable = False
        return a[:nb]

    def all_slots(self, n: int) -> np.ndarray:
        """0..n-1 (read-only, shared by the waves)."""
        return self.slots[:n] if n <= self.slots.shape[0] else np.arange(n, dtype=np.int64)

    def zeros(self, key, shape, dtype) -> np.ndarray:
        dtype = np.dtype(dtype)
        a = self._arrays.get(key)
        if a is None or a.shape != shape or a.dtype != dtype:
            a = np.zeros(shape, dtype=dtype)
            self._arrays[key] = a
        else:
            a.fill(0)
        return a

    def reuse(self, key, shape, dtype, stagger: int = 0) -> np.ndarray:
        """Like zeros, but keeps the previous wave's contents. `stagger`
        (bytes, a multiple of 64) shifts where the array starts within a
        page: register arrays that all start page aligned make a thread's
        accesses to different registers collide in the CPU's store buffer
        (4K aliasing), which costs the thread-by-thread native segments
        several times their speed."""
        dtype = np.dtype(dtype)
        a = self._arrays.get(key)
        if a is None or a.shape[1:] != shape[1:] or a.shape[0] < shape[0] or a.dtype != dtype:
            pad = stagger // dtype.itemsize
            whole = np.zeros((shape[0] + pad,) + tuple(shape[1:]), dtype=dtype)
            a = whole[pad:]
            self._arrays[key] = a
        return a[:shape[0]]


class WaveArrays:
    """The per-thread arrays a wave of n slots starts from: views of its
    LaunchResources' arrays, looked up once per (launch constants, n)
    rather than once per wave (a kernel of a hundred registers paid a
    hundred lookups per wave, a stream of small launches one set per
    launch). Each wave takes its own copies of the containers (an
    instruction may swap a register's array, sim/ops/base.py), so only the
    memory is shared, as it already was. A new LaunchConstants (another
    stack limit, hence another call depth) makes a new set."""

    __slots__ = ("const", "regs", "reg_ids", "sched", "park_pc", "depth", "ret_stack", "sp", "params",
                 "carry", "bar_wait", "_reg_ptrs")

    def __init__(self, res: LaunchResources, const: LaunchConstants, prog, n: int):
        self.const = const
        live = const.live_regs
        self.regs = tuple(res.reuse(("r", k), (n,), dt, stagger=64 * (1 + k % 63)) if live[k] else _EMPTY
                          for k, dt in enumerate(prog.reg_dtypes))
        self.reg_ids = frozenset(id(a) for a in self.regs)
        self.sched = res.reuse("sched", (n,), np.int64)
        self.park_pc = res.reuse("park", (n,), np.int64)
        calls = const.max_depth > 1
        # zeroed per wave when the kernel calls (sp and depth move); without
        # calls nothing moves them, so they stay all zero from the start
        self.depth = res.reuse("depth", (n,), np.int64)
        self.ret_stack = res.reuse("ret", (const.max_depth if calls else 1, n), np.int64)
        self.sp = res.reuse("sp", (n,), np.uint64)
        self.params = {name: res.reuse(("p", name), (n, max(size, 1)), np.uint8)
                       for name, size in prog.param_vars.items()}
        self.carry = res.reuse("carry", (n,), np.uint32)
        self.bar_wait = res.reuse("barwait", (n,), np.int64)
        self._reg_ptrs = None

    def reg_ptrs(self) -> np.ndarray:
        """The registers' addresses, the table native segments index
        (made once: with native code on no write swaps a register's
        array, ops/base.py make_writer; a hundred ctypes lookups per
        wave were 2% of a reduction's time)."""
        p = self._reg_ptrs
        if p is None:
            p = self._reg_ptrs = np.array([a.ctypes.data for a in self.regs], dtype=np.int64)
            p.flags.writeable = False
        return p


def device_heap(gpu):
    """The GPU's device-malloc heap, carved on first use as CUDA does."""
    heap = getattr(gpu, "heap", None)
    if heap is None:
        from gpudbg.sim.memory import DeviceHeap
        size = int(getattr(gpu, "malloc_heap_size", None) or gpu.model.malloc_heap_size)
        heap = gpu.heap = DeviceHeap(gpu.memory, size=size)
    return heap


def stack_limit_of(gpu) -> int:
    return int(getattr(gpu, "stack_size", None) or getattr(gpu.model, "default_stack_size", 1024))


def local_size_for(gpu, function) -> int:
    return launch_limits.thread_local_bytes(function, stack_limit_of(gpu))
