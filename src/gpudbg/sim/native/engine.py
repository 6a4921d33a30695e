"""The native engine: which launches run compiled code, compiling a
program once, and calling one compiled segment or loop region for a
selection of threads.

Choice: GPUDBG_ENGINE=interp forces the interpreter, =native compiles
every program at its first launch, and the default (auto) is a tiered JIT:
a program runs interpreted until one launch has AUTO_THREADS threads or
its launches have interpreted AUTO_WORK thread-instructions, then it is
compiled (unless it is larger than AUTO_MAX_INSTRUCTIONS), so the many
tiny kernels of a test suite never pay LLVM's compile time. Under an
analysis tool (sanitizer, tracer) the executor runs a segment or region
only when it emits no event class the tool consumes (its plan's `events`,
sim/instrument.py); an attached debugger, and a non-default schedule, get
the FULL variant, which stores every register and runs no loop regions. A program is
compiled once per variant: every segment (segments.py) and loop region
(regions.py) becomes one function of one LLVM module, compiled or fetched
from the on-disk cache (code_cache.py), and hangs off the Compiled entry
of its first pc (a region: of each block it may be entered at), so the
executor's step loop finds it with one attribute read.

What it deliberately does not do: compile the scheduler. The executor's
Python loop still picks each step's threads and runs barriers, warp
operations, calls and the branches outside loop regions.
"""
from __future__ import annotations

import dataclasses
import hashlib
import os
import threading
from contextlib import contextmanager

import warnings

import numpy as np

from gpudbg.sim.native import parallel, shutdown
from gpudbg.sim.native.environment import ENV, WaveEnvironment
from gpudbg.sim.native.if_bodies import TAKEN_BITS

TAKEN_MASK = (1 << TAKEN_BITS) - 1

ENV_ENGINE = "GPUDBG_ENGINE"
ENGINES = ("auto", "interp", "native")
AUTO_THREADS = 1 << 16      # a launch this large compiles its program at once (auto)
AUTO_WORK = 1 << 22         # thread-instructions interpreted before a program is compiled (auto)
# auto never compiles a program larger than this: compile time grows with
# the code (about 1 s of CPU for 1,200 PTX instructions, with jit.py's quick
# pipeline for large modules; minutes at -O2 for a 1.9 MB -G libcu++ module,
# not measured since), and a compile inside a launch counts against the
# host's hang timeout. GPUDBG_ENGINE=native still compiles them.
AUTO_MAX_INSTRUCTIONS = 3000
PRECHECK = "_check"      # the symbol suffix of a segment's checks-only twin


class EngineError(ValueError):
    """GPUDBG_ENGINE names no engine."""


_forced = threading.local()    # engine and variant a differential launch imposes on its thread


@contextmanager
def force(choice: str, full: bool = False):
    """Within: this thread's launches use `choice` (and the FULL variant
    when `full`), whatever GPUDBG_ENGINE says (sim/native/differential.py)."""
    old = getattr(_forced, "value", None)
    _forced.value = (choice, full)
    try:
        yield
    finally:
        _forced.value = old


def chosen() -> str:
    """The engine this thread runs under: a differential launch's, else
    the one GPUDBG_ENGINE asks for (default auto)."""
    forced = getattr(_forced, "value", None)
    if forced is not None:
        return forced[0]
    return from_environment()


def for_launch(settings=None) -> str:
    """chosen(), with GPUDBG_ENGINE read from the launch settings (parsed
    once per change of the environment, sim/launch_settings.py) instead of
    os.environ on every launch; `settings`: the caller's current ones,
    None to read them."""
    forced = getattr(_forced, "value", None)
    if forced is not None:
        return forced[0]
    if settings is None:
        from gpudbg.sim import launch_settings       # (it imports this module)
        settings = launch_settings.current()
    return settings.engine if settings is not None else from_environment()


def from_environment() -> str:
    """GPUDBG_ENGINE's engine (default auto); EngineError naming the
    variable for anything else."""
    raw = os.environ.get(ENV_ENGINE, "").strip().lower()
    if not raw:
        return "auto"
    if raw not in ENGINES:
        raise EngineError(f"{ENV_ENGINE}={raw!r} is not an engine (choose auto, interp or native)")
    return raw


def wave_environment(X) -> WaveEnvironment:
    """The wave's environment table, made on its first native call (or
    taken over from the run before a restart, WaveEnvironment.rebind) and
    refreshed when device memory changed since."""
    env = X.native_env
    if env is None:
        symbols, used = X.program.native_symbols, getattr(X.program, "native_env_used", None)
        kept = X.native_env_kept       # (made for this wave, before a restart: WaveExecution.restart)
        if kept is not None and kept.rebind(X, symbols, used):
            env = X.native_env = kept
        else:
            env = X.native_env = WaveEnvironment(X, symbols, used)
            fresh = X.__dict__.get("_fresh")
            if fresh is not None:       # a wave kept for restart: its next run takes the table over
                fresh["native_env_kept"] = env
    else:
        env.refresh_globals()
    return env


class NativeSegment:
    """One compiled segment: call it for a selection of threads."""

    __slots__ = ("fn", "start", "end", "length", "rows", "two_pass", "events", "atomic", "bodies",
                 "precheck")

    def __init__(self, fn, plan):
        self.fn = fn
        self.start = plan.start
        self.end = plan.end
        # its if bodies (if_bodies.py): (the body's length, whether code follows its L)
        self.bodies = tuple((int(t) - int(p) - 1, int(t) < plan.end)
                            for p, t in getattr(plan, "if_branches", ()))
        self.length = plan.end - plan.start - sum(b for b, _ in self.bodies)   # what every selected thread runs
        self.rows = plan.nslots
        self.two_pass = plan.two_pass
        self.atomic = None        # has an atomic (sim/subwaves.py keeps its gate for those): on first use
        self.precheck = None      # the FULL variant's checks-only twin, run first (prepare)
        self.events = plan.events    # instrument.Event bits: runs under a tool consuming none of them

    def crosses(self, leader, program_leader) -> bool:
        """Whether a leader array with extra leaders (a debugger's
        breakpoints and watched instructions) has one inside this
        segment, which must then stay interpreted. (The program's own
        leaders inside are those of an if body, if_bodies.py.)"""
        s, e = self.start + 1, self.end
        return bool((leader[s:e] != program_leader[s:e]).any())

    def run(self, X, idx) -> bool:
        """Run the segment for `idx` (None: the wave); False when a check
        failed (or the process is exiting, see shutdown.py) and the
        interpreter must run these instructions instead."""
        if not shutdown.enter():
            return False
        try:
            return self._run(X, idx)
        finally:
            shutdown.leave()

    def _run(self, X, idx) -> bool:
        env = wave_environment(X)
        if idx is None:
            n = X.n
            iptr = None
        else:
            if idx.dtype != np.int64 or not idx.flags.c_contiguous:
                idx = np.ascontiguousarray(idx, dtype=np.int64)
            n = idx.shape[0]
            iptr = idx.ctypes.data
        if self.precheck is not None and self.precheck(X.reg_ptrs.ctypes.data, iptr, n, env.env_address) >= 0:
            return False          # a check fails: nothing was written, the interpreter reports
        if X.native_threads > 1 and n >= parallel.PARALLEL_MIN:
            parts = parallel.run_parts(self, X, idx, X.native_threads)
            if parts is None:
                return False
            X.native_taken = sum(-1 - p.result for p in parts)
            return True
        if self.rows:
            env.ensure_scratch(self.rows, n)
        fn, regs, address = self.fn, X.reg_ptrs.ctypes.data, env.env_address
        gate = X.native_gate
        if gate is not None and not self._atomic(X.program):
            r = gate.native(lambda: fn(regs, iptr, n, address))
        else:
            r = fn(regs, iptr, n, address)
        X.native_taken = -1 - r     # threads that ran the if bodies (-1 - r: see emit.SegmentEmitter._success)
        return r < 0

    def may_run(self, X, idx) -> bool:
        """A segment with an if body runs only for the whole wave
        (if_bodies.py): then the interpreter's steps it folds are the
        branch's, the body's and L's with nothing between them, each
        step at L holds the same threads, and the warp scheduler's spin
        detection (sim/spin.py), which counts consecutive partial steps
        and is reset by a whole-wave one, ends in the same state. Not
        under a random schedule (X.folds_steps), which draws its choice
        for every step: folded steps would shift the draws of the rest."""
        return not self.bodies or (idx is None and X.folds_steps)

    def account_body(self, X, nsel: int) -> None:
        """Add what the interpreter's separate steps would count, for each
        if body: the body's step (for the threads that ran it) and the
        step at its L. X.native_taken holds each body's count of threads
        in a field of if_bodies.TAKEN_BITS bits."""
        taken = X.native_taken
        for k, (body, after) in enumerate(self.bodies):
            ran = taken >> (TAKEN_BITS * k) & TAKEN_MASK
            if ran:
                X.thread_instructions += ran * body
                X.steps += 1
                X.cycles += body
            if after:
                X.steps += 1

    def _atomic(self, program) -> bool:
        """Whether the code has an atomic: a sub-wave runs those holding
        its gate, so that they stay atomic against the interpreter's."""
        if self.atomic is None:
            self.atomic = any(program.code[pc].inst.opcode in ("atom", "red")
                              for pc in range(self.start, self.end))
        return self.atomic


class NativeRegion(NativeSegment):
    """One compiled loop region (regions.py): called at any of its block
    starts, it runs each selected thread until the thread leaves."""

    __slots__ = ()

    def crosses(self, leader, program_leader) -> bool:
        """Whether a debugger's leader array adds one inside the loop."""
        s, e = self.start, self.end
        return bool((leader[s:e] != program_leader[s:e]).any())

    CALL_WORK = 1 << 24    # thread-instructions one call may run (about 0.1 s) before threads pause

    def enter(self, X, idx, pc: int) -> bool:
        """Run from `pc`; on success the threads' exit pcs are set and the
        work counted; False: nothing happened that the interpreter's run
        of the step would not redo."""
        env = wave_environment(X)
        X.native_writes_sched()     # the region stores each thread's exit pc itself
        n = X.n if idx is None else len(idx)
        cap = max(64, self.CALL_WORK // max(1, n))
        if X.native_threads > 1 and n >= parallel.PARALLEL_MIN:
            def setup(e, count):
                e[ENV["region_pc"]] = pc
                e[ENV["region_cap"]] = cap
            if idx is not None and (idx.dtype != np.int64 or not idx.flags.c_contiguous):
                idx = np.ascontiguousarray(idx, dtype=np.int64)
            if not shutdown.enter():
                return False
            try:
                parts = parallel.run_parts(self, X, idx, X.native_threads, setup)
            finally:
                shutdown.leave()
            if parts is None:
                return False
            work = sum(int(p.env[ENV["region_work"]]) for p in parts)
            cycles = max(int(p.env[ENV["region_cycles"]]) for p in parts)
        else:
            e = env.env
            e[ENV["region_pc"]] = pc
            e[ENV["region_cap"]] = cap
            if not self.run(X, idx):
                return False
            work, cycles = int(e[ENV["region_work"]]), int(e[ENV["region_cycles"]])
        X.thread_instructions += work
        X.steps += 1
        X.cycles += cycles
        return True


_lock = threading.Lock()


# The two compiled forms of a program: PLAIN stores only registers read
# later (liveness.py); FULL stores every register it writes, for a debugger,
# which may show any register at a breakpoint.
PLAIN, FULL = 1, 2
_ATTRS = {PLAIN: ("native", "region", "native_ready"), FULL: ("native_full", "region_full", "native_full_ready")}
_COUNTS = {v: names[2] + "_count" for v, names in _ATTRS.items()}    # segments compiled, per variant


def mode_for(program, threads: int, debugger: bool, settings=None) -> int:
    """0 (interpreted), PLAIN or FULL for a launch of `threads` threads of
    `program`, compiling the program now if the choice says so (a
    compiler failure is reported once as a warning and the program stays
    interpreted); `settings`: the launch's (sim/launch_settings.py)."""
    forced = getattr(_forced, "value", None)     # a differential launch's (engine, FULL); read once
    if forced is not None:
        choice = forced[0]
    else:
        choice = settings.engine if settings is not None else for_launch(None)
    if choice == "interp" or shutdown.closed():
        return 0
    variant = FULL if debugger or forced is not None and forced[1] else PLAIN
    ready = _ATTRS[variant][2]
    if not getattr(program, ready, False):
        if choice == "auto" and (len(program.code) > AUTO_MAX_INSTRUCTIONS or threads < AUTO_THREADS and
                                 getattr(program, "interpreted_work", 0) < AUTO_WORK):
            return 0
        try:
            prepare(program, variant)
        except Exception as e:   # an internal compiler error must not fail the user's launch
            setattr(program, ready, True)
            setattr(program, _COUNTS[variant], 0)
            warnings.warn(f"gpudbg: native compilation failed, kernel runs interpreted: "
                          f"{type(e).__name__}: {e}", RuntimeWarning, stacklevel=2)
    return variant if getattr(program, _COUNTS[variant], 0) else 0


def account(program, thread_instructions: int) -> None:
    """Count work a launch of `program` ran interpreted (the auto tier)."""
    program.interpreted_work = getattr(program, "interpreted_work", 0) + thread_instructions


def program_key(program) -> str:
    """What a program's native code and plans depend on: its translated
    code (instruction text, pcs, what each translated to), register
    layout, labels and declarations (frames' local offsets, parameters,
    which names are shared, global or function symbols: their values are
    resolved per wave, environment.py), and the compiler (jit.host_key)."""
    from gpudbg.sim.native import jit
    h = hashlib.sha256()
    h.update(jit.host_key().encode())
    for c in program.code:
        h.update(f"{c.pc}\0{c.function}\0{c.inst.text}\0{c.built.kind}\0{c.built.run is None}\n".encode())
    for (fn, name), dt in zip(program.reg_names, program.reg_dtypes):
        h.update(f"{fn}\0{name}\0{dt.str}\n".encode())
    for (fn, label), pc in sorted(program.labels().items()):
        h.update(f"{fn}\0{label}\0{pc}\n".encode())
    for name in sorted(program.functions):
        f = program.functions[name]
        h.update(f"{name}\0{f.ir.kind}\0{f.entry_pc}\0{f.end_pc}\0{f.builtin}\0"
                 f"{sorted(f.local_offsets.items())}\0{f.param_names}\0{f.return_names}\n".encode())
    h.update(repr((sorted(program.param_vars.items()), sorted(program.shared_vars),
                   sorted(program.symbols))).encode())
    return h.hexdigest()


def prepare(program, variant: int = PLAIN) -> None:
    """Compile the program's segments and regions once (per variant) and
    attach them to its code: from this process's loaded code, else from
    the on-disk cache (plans and object code, plan_store.py: no planning,
    no IR, no LLVM), else planned, emitted and compiled now."""
    from gpudbg.sim.native import jit
    from gpudbg.sim.native.regions import RegionPlan
    seg_attr, region_attr, ready = _ATTRS[variant]
    if getattr(program, ready, False):
        return
    with _lock:
        if getattr(program, ready, False):
            return
        if not hasattr(program, "native_symbols"):
            program.native_symbols = []      # one symbol table for both variants (environment.py)
        symbols = program.native_symbols
        # the code indexes the symbol table as emission left it, which
        # depends on the table it started from (the other variant's, if
        # that was compiled first): so does the key
        key = "/".join((program_key(program), str(variant), *("\0".join(s) for s in symbols)))
        key = hashlib.sha256(key.encode()).hexdigest()
        got = _loaded.get(key) or _nothing.get(key)
        if got is None:
            got = _load_or_compile(program, variant, key)
            (_loaded if got[0].names else _nothing)[key] = got
        stored, addresses = got
        if stored.symbols[:len(symbols)] != symbols:
            raise RuntimeError("native code: a stored symbol table does not extend the program's")
        symbols.extend(stored.symbols[len(symbols):])
        program.__dict__.setdefault("native_env_used", set()).update(stored.env_used)
        nregions = 0
        for plan, name in zip(stored.plans, stored.names):
            fn = jit.segment_function(addresses[name])
            if isinstance(plan, RegionPlan):
                runner = NativeRegion(fn, plan)
                for pc in plan.leaders:
                    setattr(program.code[pc], region_attr, runner)
                nregions += 1
            else:
                seg = NativeSegment(fn, plan)
                if getattr(plan, "precheck", False):
                    seg.precheck = jit.segment_function(addresses[name + PRECHECK])
                setattr(program.code[plan.start], seg_attr, seg)
        setattr(program, _COUNTS[variant], len(stored.plans))
        if variant == PLAIN:
            program.native_segments = len(stored.plans)
            program.native_regions = nregions
        setattr(program, ready, True)


# key -> (plan_store.Stored, {function name: address}): code loaded in this
# process; _nothing: the programs of which nothing compiles
_loaded: dict[str, tuple] = {}
_nothing: dict[str, tuple] = {}


def _load_or_compile(program, variant: int, key: str) -> tuple:
    """(what attaches the code, function addresses) from the disk cache,
    else planned, emitted, compiled and stored there."""
    from gpudbg.sim.native import jit, plan_store
    disk = plan_store.disk_key(key)
    hit = plan_store.load(disk)
    if hit is None:
        stored, ir_text = _emit(program, variant, f"g{key[:16]}_{variant}_")
        obj = jit.compile_object(ir_text) if stored.names else b""
        plan_store.store(disk, stored, obj)
    else:
        stored, obj = hit
    names = stored.names + [n + PRECHECK for p, n in zip(stored.plans, stored.names)
                            if getattr(p, "precheck", False)]
    return stored, jit.load_object(obj, names) if names else {}


def _emit(program, variant: int, prefix: str) -> tuple:
    """Plan and emit the variant: (plan_store.Stored, LLVM IR text)."""
    from llvmlite import ir as L

    from gpudbg.sim.native.emit import SegmentEmitter
    from gpudbg.sim.native.plan_store import Stored
    from gpudbg.sim.native.region_emit import RegionEmitter
    from gpudbg.sim.native.regions import find_regions
    from gpudbg.sim.native.remat import Recomputable
    from gpudbg.sim.native.segments import plan_segments
    plans, lowered, live = plan_segments(program, if_convert=True)
    if variant == FULL:
        everything = (1 << len(program.reg_dtypes)) - 1
        live = [everything] * len(live)
        for plan in plans:
            plan.live_out = None
            # a fault stops at its instruction: no thread may keep a later
            # value, so a segment that can fail runs its checks-only twin
            # over the selection first and writes only when all passed
            # (committing every register through scratch rows instead made
            # an attached debugger's matmul 512 ten times slower)
            plan.precheck = plan.can_fail
    # a debugger steps block by block: a region would run a whole loop in one step
    regions = find_regions(program, lowered, live) if variant == PLAIN else []
    symbols = program.native_symbols
    module = L.Module(name=prefix)
    # (a debugger's write of a recomputed register stops native code for
    # its wave: debug_views.write_register)
    recomputable = Recomputable(program, lowered)
    program.native_recomputed = frozenset(recomputable.defs)
    for plan in plans:
        code = [program.code[pc] for pc in range(plan.start, plan.end)]
        em = SegmentEmitter(module, prefix + plan.name, program, plan, symbols)
        em.remat = recomputable.at(plan.start)
        em.build(code)
        if plan.precheck:      # (a copy: emission counts its scratch rows in the plan)
            twin = dataclasses.replace(plan, scratch_regs=dict(plan.scratch_regs))
            em = SegmentEmitter(module, prefix + plan.name + PRECHECK, program, twin, symbols)
            em.checks_only = True
            em.remat = recomputable.at(plan.start)
            em.build(code)
    for region in regions:
        RegionEmitter(module, prefix + region.name, program, region, symbols).build_region()
    stored = Stored(plans + regions, [prefix + p.name for p in plans + regions], list(symbols),
                    set(program.__dict__.get("native_env_used", ())))
    return stored, str(module)
