"""What a differential launch (differential.py) saves before its first
run, puts back before its second, and compares between them: device
memory, the launch's reused arrays, the device heap's bookkeeping, the
clock, the grid-id counter and the printf FIFO; and what each run leaves:
memory, the registers of every wave at its exit, the fault report, printf
output and the work count.

The one idea: a launch is replayable when everything it can change is
restored bit for bit, so the second engine starts where the first did and
any difference is the engines'. Memory is saved as one copy per live
allocation the kernel may write (driver-only and unbacked ranges are
skipped); after the first run only the allocations it changed are kept
and restored.

Registers are compared where both engines must agree: every register for
the FULL variant (it stores each value it writes); for PLAIN, every
register except those some compiled segment or loop region writes and
leaves unstored because nothing reads it afterwards (liveness.py), which
are dead and legitimately keep an older value. The carry flag is not
compared (it is only defined right after a .cc instruction).
"""
from __future__ import annotations

import copy
import itertools
import re
from dataclasses import dataclass, field

import numpy as np

from gpudbg.sim.memory.spaces import DRIVER_KINDS, AllocationKind

_SKIP_KINDS = DRIVER_KINDS | {AllocationKind.RESERVED}
REGISTER_BYTES_KEPT = 1 << 28    # register copies kept per run; beyond, digests only (values not shown)


class DifferentialMismatch(AssertionError):
    """The interpreter and the native engine disagree on a launch."""


# ------------------------------------------------------------------ saving
def _writable(a) -> bool:
    return a.kind not in _SKIP_KINDS and a.data is not None and a.size > 0 and not a.freed


@dataclass
class MemoryImage:
    """Every writable live allocation's bytes, by (base, size)."""

    saved: dict = field(default_factory=dict)     # (base, size) -> (allocation, bytes copy)

    @classmethod
    def take(cls, memory) -> "MemoryImage":
        return cls({(a.base, a.size): (a, a.data.copy()) for a in memory.allocations() if _writable(a)})

    def changed(self, memory) -> dict:
        """(base, size) -> (allocation, bytes now) of the imaged allocations
        that differ from the image: what a run left. Allocations made since
        are not the kernel's to compare (the heap is carved before the
        first run; a child launch's parameters are freed with it; another
        host thread may allocate meanwhile)."""
        out = {}
        for a in memory.allocations():
            key = (a.base, a.size)
            old = self.saved.get(key)
            if old is not None and old[0] is a and not np.array_equal(old[1], a.data):
                out[key] = (a, a.data.copy())
        return out

    def restore(self, changed: dict) -> None:
        for key in changed:
            old = self.saved.get(key)
            if old is not None:
                np.copyto(old[0].data, old[1])


class ResourceImage:
    """The contents of the GPU's cached launch arrays (registers, shared and
    local memory a new block finds as the previous occupant left them):
    restored in place so every view of them stays valid."""

    def __init__(self, gpu):
        self.gpu = gpu
        self.cached = getattr(gpu, "_launch_resources", None)
        self.arrays = []
        if self.cached is not None:
            res = self.cached[1]
            for a in list(res._arrays.values()) + [res.smem.buffer, res.lmem.buffer]:
                if isinstance(a, np.ndarray) and a.flags.writeable:
                    self.arrays.append((a, a.copy()))

    def restore(self) -> None:
        for a, saved in self.arrays:
            np.copyto(a, saved)
        self.gpu._launch_resources = self.cached   # a run that made new arrays: the next makes them afresh


class GpuImage:
    """The launch-visible state beside memory: heap bookkeeping, device
    clock, grid ids, the printf FIFO's drop count."""

    def __init__(self, gpu, program):
        self.gpu = gpu
        if getattr(gpu, "heap", None) is None and uses_heap(program):
            from gpudbg.sim.launch_resources import device_heap
            device_heap(gpu)      # carved now (as on first use), so both runs find the same heap
        self.heap = getattr(gpu, "heap", None)
        self.heap_state = None if self.heap is None else {
            k: copy.deepcopy(v) for k, v in vars(self.heap).items() if k not in ("gm", "allocation")}
        self.clock = getattr(gpu, "clock_cycles", None)
        self.grid_id = _next_grid_id(gpu)
        self.dropped = getattr(gpu, "printf_fifo_dropped", None)

    def restore(self) -> None:
        gpu = self.gpu
        if self.heap is not None:
            vars(self.heap).update({k: copy.deepcopy(v) for k, v in self.heap_state.items()})
        if self.clock is not None:
            gpu.clock_cycles = self.clock
        if self.grid_id is not None and _next_grid_id(gpu) != self.grid_id:
            gpu._grid_ids = itertools.count(self.grid_id)
        if self.dropped is not None:
            gpu.printf_fifo_dropped = self.dropped


_HEAP_CALL = re.compile(r"\b(malloc|free)\b")


def uses_heap(program) -> bool:
    """Whether the program calls device malloc or free."""
    got = getattr(program, "differential_heap", None)
    if got is None:
        got = program.differential_heap = any(
            c.inst.opcode == "call" and _HEAP_CALL.search(c.inst.text) for c in program.code)
    return got


def _next_grid_id(gpu) -> int | None:
    ids = getattr(gpu, "_grid_ids", None)
    m = re.fullmatch(r"count\((\d+)\)", repr(ids)) if ids is not None else None
    return int(m.group(1)) if m else None


# ---------------------------------------------------------------- one run
@dataclass
class WaveRecord:
    """One wave's registers at its exit, with what names its threads."""

    wave: object                     # the WaveExecution (its layout names slots)
    regs: list                       # per register: bytes copy, a digest (kept too much), or None (not compared)


@dataclass
class RunRecord:
    """What one engine's run of a launch left."""

    engine: str
    compare: frozenset | None = None   # register indices compared (None: all)
    waves: list = field(default_factory=list)
    kept: int = 0
    memory: dict = field(default_factory=dict)
    fault: str | None = None
    error: BaseException | None = None
    printf: list = field(default_factory=list)
    work: int | None = None

    def wave_end(self, X) -> None:
        regs = []
        for k, a in enumerate(X.regs):
            if self.compare is not None and k not in self.compare:
                regs.append(None)
                continue
            b = np.ascontiguousarray(a).view(np.uint8)
            if self.kept + b.nbytes > REGISTER_BYTES_KEPT:
                import hashlib
                regs.append(hashlib.blake2b(b.tobytes(), digest_size=16).hexdigest())
            else:
                self.kept += b.nbytes
                regs.append(b.copy())
        self.waves.append(WaveRecord(X, regs))


def unstored_registers(program) -> frozenset:
    """Registers the PLAIN native code attached to the program may write
    without storing (dead after the segment or loop region that writes
    them); computed once per program, after its compilation. Each compiled
    segment or region is matched with its plan by pc range; one whose plan
    is not found excludes every register it names (the safe side)."""
    got = getattr(program, "differential_unstored", None)
    if got is not None:
        return got
    import inspect

    from gpudbg.sim.native.regions import find_regions
    from gpudbg.sim.native.segments import plan_segments
    if "if_convert" in inspect.signature(plan_segments).parameters:
        plans, lowered, live = plan_segments(program, if_convert=True)   # as the PLAIN variant plans
    else:
        plans, lowered, live = plan_segments(program)
    found = {(p.start, p.end): p for p in plans}
    found.update({(r.start, r.end): r for r in find_regions(program, lowered, live)})
    out: set = set()
    seen: set = set()
    for c in program.code:
        for runner in (getattr(c, "native", None), getattr(c, "region", None)):
            if runner is None or id(runner) in seen:
                continue
            seen.add(id(runner))
            pcs = [pc for pc in range(runner.start, runner.end) if pc in lowered]
            writes = set().union(*(lowered[pc][2] for pc in pcs))
            plan = found.get((runner.start, runner.end))
            if plan is None:
                out |= writes.union(*(lowered[pc][1] for pc in pcs))
            elif hasattr(plan, "flushed"):
                out |= writes - plan.flushed
            else:
                out |= writes - (plan.live_out if plan.live_out is not None else writes)
    program.differential_unstored = got = frozenset(out)
    return got


# ------------------------------------------------------------ comparison
def _hexbytes(b: np.ndarray) -> str:
    return " ".join(f"{int(x):02x}" for x in b)


def _memory_difference(kernel: str, ref: dict, got: dict, image: MemoryImage) -> str | None:
    for key in sorted(set(ref) | set(got)):
        a = (ref.get(key) or got.get(key))[0]
        x = ref[key][1] if key in ref else image.saved.get(key, (None, None))[1]
        y = got[key][1] if key in got else image.saved.get(key, (None, None))[1]
        if x is None or y is None:
            missing = "interpreter" if x is None else "native"
            return (f"kernel {kernel}: the {a.describe_short()} exists after the native run only"
                    if missing == "interpreter" else
                    f"kernel {kernel}: the {a.describe_short()} exists after the interpreter's run only")
        if np.array_equal(x, y):
            continue
        off = int(np.flatnonzero(x != y)[0])
        lo = off - off % 4
        return (f"kernel {kernel}: device memory differs in the {a.describe_short()} at offset {off} "
                f"(address 0x{a.base + off:x}): interpreter bytes [{_hexbytes(x[lo:lo + 8])}], "
                f"native [{_hexbytes(y[lo:lo + 8])}] from offset {lo}")
    return None


def _thread_of(X, slot: int) -> str:
    tid = tuple(int(t[slot]) for t in X.layout.tid)
    return f"block {X.block_idx_of(slot)} thread {tid}"


def _register_difference(kernel: str, program, ref: RunRecord, got: RunRecord) -> str | None:
    if len(ref.waves) != len(got.waves):
        return f"kernel {kernel}: the interpreter ran {len(ref.waves)} wave(s), native {len(got.waves)}"
    for w, (rw, gw) in enumerate(zip(ref.waves, got.waves)):
        for k, (x, y) in enumerate(zip(rw.regs, gw.regs)):
            if x is None or y is None:
                continue
            fn, name = program.reg_names[k]
            where = f"kernel {kernel}: register {name} (function {fn}) at exit of wave {w}"
            if isinstance(x, str) or isinstance(y, str):
                if not isinstance(x, str) or not isinstance(y, str) or x != y:
                    return f"{where} differs (values not kept: over {REGISTER_BYTES_KEPT} bytes of registers)"
                continue
            if x.shape != y.shape:
                return f"{where}: interpreter holds {x.shape[0]} bytes, native {y.shape[0]}"
            if np.array_equal(x, y):
                continue
            dt = np.dtype(program.reg_dtypes[k])
            size = max(1, dt.itemsize)
            xs, ys = x.view(dt) if x.shape[0] % size == 0 else x, y.view(dt) if y.shape[0] % size == 0 else y
            slot = int(np.flatnonzero(xs != ys)[0])
            return f"{where}, {_thread_of(rw.wave, slot)}: interpreter {xs[slot]!r}, native {ys[slot]!r}"
    return None


def first_difference(kernel: str, program, ref: RunRecord, got: RunRecord, image: MemoryImage) -> str | None:
    """The first difference between two runs, as one sentence; None: same."""
    if ref.fault != got.fault:
        return (f"kernel {kernel}: the fault reports differ:\n  interpreter: {ref.fault}\n  "
                f"native ({got.engine}): {got.fault}")
    if ref.printf != got.printf:
        n = next((i for i, (a, b) in enumerate(zip(ref.printf, got.printf)) if a != b),
                 min(len(ref.printf), len(got.printf)))
        a = ref.printf[n] if n < len(ref.printf) else "(nothing)"
        b = got.printf[n] if n < len(got.printf) else "(nothing)"
        return f"kernel {kernel}: printf record {n} differs: interpreter {a!r}, native {b!r}"
    found = _memory_difference(kernel, ref.memory, got.memory, image)
    if found is not None:
        return found
    # PLAIN code hands a failed check back to the interpreter without undoing
    # registers the threads it already ran wrote directly (only a debugger,
    # with FULL, observes registers at a fault): at a fault, FULL only
    found = None if ref.fault is not None and got.engine == "plain" else \
        _register_difference(kernel, program, ref, got)
    if found is not None:
        return found
    if ref.work is not None and got.work is not None and ref.work != got.work:
        return f"kernel {kernel}: thread-instructions counted: interpreter {ref.work}, native {got.work}"
    return None
