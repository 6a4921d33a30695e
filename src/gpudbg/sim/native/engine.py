"""The native engine: which kernels run compiled segments, compiling a
program's segments once, and running one segment for a selection.

Choice: GPUDBG_ENGINE=interp forces the interpreter, =native compiles
every program at its first launch, and the default (auto) is a tiered
JIT: a program runs interpreted until one launch has AUTO_THREADS threads
or its launches have interpreted AUTO_WORK thread-instructions, then it is
compiled, so the many tiny kernels of a test suite never pay LLVM's
compile time. An analysis tool observing execution (sanitizer, tracer)
and an attached debugger always get the interpreter, whose
per-instruction events they consume. A program is compiled on its
first native launch: every segment (sim/native/segments.py) becomes one
function of one LLVM module, compiled or fetched from the on-disk cache
(sim/native/code_cache.py), and each segment hangs off the Compiled entry
of its first pc, so the executor's step loop finds it with one attribute
read.

What it deliberately does not do: compile control flow. The executor's
Python loop still picks each step's threads and runs branches, barriers
and warp operations; a segment covers the straight-line work between them.
"""
from __future__ import annotations

import hashlib
import os
import threading

import warnings

import numpy as np

from gpudbg.sim.native.environment import ENV, WaveEnvironment

ENV_ENGINE = "GPUDBG_ENGINE"
ENGINES = ("auto", "interp", "native")
AUTO_THREADS = 1 << 16      # a launch this large compiles its program at once (auto)
AUTO_WORK = 1 << 22         # thread-instructions interpreted before a program is compiled (auto)


class EngineError(ValueError):
    """GPUDBG_ENGINE names no engine."""


def chosen() -> str:
    """The engine GPUDBG_ENGINE asks for (default auto)."""
    raw = os.environ.get(ENV_ENGINE, "").strip().lower()
    if not raw:
        return "auto"
    if raw not in ENGINES:
        raise EngineError(f"{ENV_ENGINE}={raw!r} is not an engine (choose auto, interp or native)")
    return raw


class NativeSegment:
    """One compiled segment: call it for a selection of threads."""

    __slots__ = ("fn", "start", "end", "length", "rows")

    def __init__(self, fn, plan):
        self.fn = fn
        self.start = plan.start
        self.end = plan.end
        self.length = plan.end - plan.start
        self.rows = plan.nslots

    def run(self, X, idx) -> bool:
        """Run the segment for `idx` (None: the wave); False when a check
        failed and the interpreter must run these instructions instead."""
        env = X.native_env
        if env is None:
            env = X.native_env = WaveEnvironment(X, X.program.native_symbols)
        else:
            env.refresh_globals()
        if idx is None:
            n = X.n
            iptr = None
        else:
            if idx.dtype != np.int64 or not idx.flags.c_contiguous:
                idx = np.ascontiguousarray(idx, dtype=np.int64)
            n = idx.shape[0]
            iptr = idx.ctypes.data
        if self.rows:
            env.ensure_scratch(self.rows, n)
        return self.fn(X.reg_ptrs.ctypes.data, iptr, n, env.env_address) < 0


class NativeRegion(NativeSegment):
    """One compiled loop region (regions.py): called at any of its block
    starts, it runs each selected thread until the thread leaves."""

    __slots__ = ()
    CAP = 1 << 20      # instructions per thread per call; past it the interpreter (and watchdog) takes over

    def enter(self, X, idx, pc: int) -> bool:
        """Run from `pc`; on success the threads' exit pcs are set and the
        work counted; False: nothing happened that the interpreter's run
        of the step would not redo."""
        env = X.native_env
        if env is None:
            env = X.native_env = WaveEnvironment(X, X.program.native_symbols)
        e = env.env
        e[ENV["region_pc"]] = pc
        e[ENV["region_cap"]] = self.CAP
        if not self.run(X, idx):
            return False
        X.thread_instructions += int(e[ENV["region_work"]])
        X.steps += 1
        X.cycles += int(e[ENV["region_cycles"]])
        return True


_lock = threading.Lock()


def wanted(program, threads: int) -> bool:
    """Whether a launch of `threads` threads of `program` runs compiled
    segments (compiling the program now if the choice says so; a compiler
    failure is reported once as a warning and the program stays
    interpreted)."""
    choice = chosen()
    if choice == "interp":
        return False
    if not getattr(program, "native_ready", False):
        if choice == "auto" and threads < AUTO_THREADS and \
                getattr(program, "interpreted_work", 0) < AUTO_WORK:
            return False
        try:
            prepare(program)
        except Exception as e:   # an internal compiler error must not fail the user's launch
            program.native_ready = True
            program.native_segments = 0
            warnings.warn(f"gpudbg: native compilation failed, kernel runs interpreted: "
                          f"{type(e).__name__}: {e}", RuntimeWarning, stacklevel=2)
    return bool(program.native_segments)


def account(program, thread_instructions: int) -> None:
    """Count work a launch of `program` ran interpreted (the auto tier)."""
    program.interpreted_work = getattr(program, "interpreted_work", 0) + thread_instructions


def program_key(program) -> str:
    """What a program's native code depends on: its translated code
    (instruction text, pcs, register layout) and the compiler."""
    from gpudbg.sim.native import jit
    h = hashlib.sha256()
    h.update(jit.host_key().encode())
    for c in program.code:
        h.update(f"{c.pc}\0{c.function}\0{c.inst.text}\n".encode())
    for (fn, name), dt in zip(program.reg_names, program.reg_dtypes):
        h.update(f"{fn}\0{name}\0{dt.str}\n".encode())
    return h.hexdigest()


def prepare(program) -> None:
    """Compile the program's segments once and attach them to its code."""
    from llvmlite import ir as L

    from gpudbg.sim.native import jit
    from gpudbg.sim.native.emit import SegmentEmitter
    from gpudbg.sim.native.region_emit import RegionEmitter
    from gpudbg.sim.native.regions import find_regions
    from gpudbg.sim.native.segments import plan_segments
    if getattr(program, "native_ready", False):
        return
    with _lock:
        if getattr(program, "native_ready", False):
            return
        plans, lowered, live = plan_segments(program)
        regions = find_regions(program, lowered, live)
        symbols: list = []
        key = program_key(program)
        prefix = f"g{key[:16]}_"
        module = L.Module(name=prefix)
        for plan in plans:
            em = SegmentEmitter(module, prefix + plan.name, program, plan, symbols)
            em.build([program.code[pc] for pc in range(plan.start, plan.end)])
        for region in regions:
            RegionEmitter(module, prefix + region.name, program, region, symbols).build_region()
        names = [prefix + p.name for p in plans + regions]
        addresses = _compile(str(module), names, key) if names else {}
        for plan in plans:
            program.code[plan.start].native = NativeSegment(
                jit.segment_function(addresses[prefix + plan.name]), plan)
        for region in regions:
            runner = NativeRegion(jit.segment_function(addresses[prefix + region.name]), region)
            for pc in region.leaders:
                program.code[pc].region = runner
        program.native_symbols = symbols
        program.native_segments = len(plans) + len(regions)
        program.native_regions = len(regions)
        program.native_ready = True


_loaded: dict[str, dict[str, int]] = {}


def _compile(ir_text: str, names: list[str], key: str) -> dict[str, int]:
    """Addresses of the module's functions: loaded once per process."""
    from gpudbg.sim.native import jit
    from gpudbg.sim.native import code_cache
    got = _loaded.get(key)
    if got is None:
        disk = code_cache.entry_key(key, ir_text)
        obj = code_cache.load(disk)
        if obj is None:
            obj = jit.compile_object(ir_text)
            code_cache.store(disk, obj)
        got = _loaded[key] = jit.load_object(obj, names)
    return got
