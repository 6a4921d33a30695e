"""The environment table a segment reads: what a wave's native code needs
besides registers, as one int64 array (`env`), built once per wave.

The one idea: the table's layout is data (ENTRIES: name -> how to get it
from the wave), so emitters name entries (`ENV["smem"]`) and the builder is
one loop; pointers are addresses of numpy arrays that the table object
keeps alive. Device allocations come as a sorted table (bases, ends, host
addresses, access flags) rebuilt only when the device memory's version
changes; allocations a kernel may not touch freely (driver memory,
sub-allocated heaps, inaccessible mappings) are simply absent, so a native
access there fails its check and the interpreter reports it.
Symbols (shared variables, kernel parameters, module globals) are per
program lists resolved here per wave, never baked into machine code, so
compiled code is valid in any process (sim/native/code_cache.py).
"""
from __future__ import annotations

import threading

import numpy as np

from gpudbg.sim.arith.fbasic import CANONICAL_NAN_BITS

READABLE, WRITABLE = 1, 2


def _ptr(a: np.ndarray) -> int:
    return a.ctypes.data


def _u32(a) -> np.ndarray:
    return np.ascontiguousarray(np.asarray(a), dtype=np.uint32)


def _per_block_ctaid(X, axis: int) -> np.ndarray:
    """blockIdx[axis] of each resident block: native code indexes it by
    block_of[slot], so no per-slot copy is made for each wave."""
    axes = X.layout.ctaid
    if hasattr(axes, "per_block"):
        return _u32(axes.per_block(axis))
    return _u32(axes[axis][::X.layout.slots_per_block])


def _log2_or_none(v: int) -> int:
    """log2(v) for a power of two, else -1."""
    v = int(v)
    return v.bit_length() - 1 if v > 0 and v & (v - 1) == 0 else -1


def _tid_masks(X) -> tuple[int, int, int]:
    """(mask of tid.x, shift and mask of tid.y) that give a slot's thread
    index from its slot number (the layout puts thread (x, y, z) of a block
    at slot x + bx*(y + by*z) of the block's slots_per_block, sim/wave_plan.py):
    tid.x = slot & (bx-1) when bx is a power of two dividing slots_per_block,
    tid.y = (slot >> log2 bx) & (by-1) when by is too and bx*by divides it;
    -1 masks where not."""
    spb = int(X.layout.slots_per_block)
    bx, by = int(X.block_dim[0]), int(X.block_dim[1])
    sx, sy = _log2_or_none(bx), _log2_or_none(by)
    xmask = bx - 1 if sx >= 0 and spb % bx == 0 else -1
    if xmask >= 0 and sy >= 0 and spb % (bx * by) == 0:
        return xmask, sx, by - 1
    return xmask, 0, -1


# name -> (kind, getter(X) -> value or array); arrays are kept alive and passed by address
ENTRIES: list[tuple[str, str, object]] = [
    ("scratch", "special", None),
    ("gcount", "special", None),
    ("gbases", "special", None),
    ("gends", "special", None),
    ("gptrs", "special", None),
    ("gflags", "special", None),
    ("smem", "value", lambda X: _ptr(X.smem.buffer)),
    ("sstride", "value", lambda X: X.smem.stride),
    ("slimits", "array", lambda X: np.ascontiguousarray(X.smem._limits, dtype=np.int64)),
    ("block_of", "array", lambda X: np.ascontiguousarray(X.layout.block_of, dtype=np.int64)),
    ("lmem", "value", lambda X: _ptr(X.lmem.buffer)),
    ("lstride", "value", lambda X: X.lmem.stride),
    ("llimits", "array", lambda X: np.ascontiguousarray(X.lmem._limits, dtype=np.int64)),
    ("sp", "value", lambda X: _ptr(X.sp)),          # per-thread stack pointers (local symbols)
    ("carry", "value", lambda X: _ptr(X.carry)),    # CC.CF per thread slot (lower_integer_carry.py)
    ("clustered", "value", lambda X: int(tuple(X.cluster_dim) != (1, 1, 1))),
    ("kparams", "array", lambda X: np.frombuffer(X.kparams, dtype=np.uint8) if len(X.kparams)
        else np.zeros(1, np.uint8)),
    ("kparams_len", "value", lambda X: len(X.kparams)),
    ("tid.x", "array", lambda X: _u32(X.layout.tid[0])),
    ("tid.y", "array", lambda X: _u32(X.layout.tid[1])),
    ("tid.z", "array", lambda X: _u32(X.layout.tid[2])),
    ("ctaid.x", "array", lambda X: _per_block_ctaid(X, 0)),     # per resident block (special.py)
    ("ctaid.y", "array", lambda X: _per_block_ctaid(X, 1)),
    ("ctaid.z", "array", lambda X: _per_block_ctaid(X, 2)),
    ("laneid", "array", lambda X: _u32(X.layout.lane)),
    ("warpid", "array", lambda X: _u32(X.layout.warp)),
    ("smid", "array", lambda X: _u32(X.layout.sm)),
    ("ntid.x", "value", lambda X: X.block_dim[0]),
    ("ntid.y", "value", lambda X: X.block_dim[1]),
    ("ntid.z", "value", lambda X: X.block_dim[2]),
    ("nctaid.x", "value", lambda X: X.grid_dim[0]),
    ("nctaid.y", "value", lambda X: X.grid_dim[1]),
    ("nctaid.z", "value", lambda X: X.grid_dim[2]),
    ("nwarpid", "value", lambda X: X.model.warp_slots_per_sm),
    ("nsmid", "value", lambda X: X.model.sm_count),
    ("symbols", "special", None),
    ("sched", "special", None),          # the wave's scheduling pcs (regions write exit pcs)
    ("region_pc", "special", None),      # set per call: the pc a region starts at
    ("region_cap", "special", None),     # instructions a thread may run in one region call
    ("region_work", "special", None),    # results of a region call
    ("region_cycles", "special", None),
    ("phase", "special", None),          # 0 both passes, 1 checks and first pass only, 2 second pass only
    # the layout's regular shapes, so that native code computes a slot's block
    # and thread index instead of streaming block_of / tid arrays (special.py);
    # -1: not a power of two, use the array
    ("slot_shift", "value", lambda X: _log2_or_none(X.layout.slots_per_block)),
    ("tidx_mask", "value", lambda X: _tid_masks(X)[0]),
    ("tidy_shift", "value", lambda X: _tid_masks(X)[1]),
    ("tidy_mask", "value", lambda X: _tid_masks(X)[2]),
    # the canonical NaNs' bits, read at run time so that LLVM cannot tell
    # the selected value is a NaN (fpbits.FP.canonical)
    ("nan_f32", "value", lambda X: CANONICAL_NAN_BITS[np.dtype(np.float32)]),
    ("nan_f64", "value", lambda X: CANONICAL_NAN_BITS[np.dtype(np.float64)]),
]
ENV = {name: i for i, (name, _, _) in enumerate(ENTRIES)}
# the entries that differ between two launches or two waves of one shape
# (a wave restarted for the next launch or for the next blocks of a grid,
# WaveExecution.restart / restart_at): every other one is the shape's
PER_WAVE = frozenset(ENV[name] for name in ("kparams", "kparams_len", "ctaid.x", "ctaid.y", "ctaid.z"))


def global_table(gm) -> tuple:
    """(count, bases, ends, ptrs, flags) of the device memory, cached per version."""
    version = gm._version
    cached = getattr(gm, "_native_table", None)
    if cached is not None and cached[0] == version:
        return cached[1]
    bases, sizes, readonly, driver_only, allocs = gm.sorted_arrays()
    n = len(allocs)
    b = np.ascontiguousarray(bases, dtype=np.uint64)
    e = b + np.ascontiguousarray(sizes, dtype=np.uint64)
    ptrs = np.zeros(max(n, 1), dtype=np.uint64)
    flags = np.zeros(max(n, 1), dtype=np.uint8)
    for j, a in enumerate(allocs):
        if a.driver_only or a.suballocator is not None or a.freed or a.data is None or a.size == 0:
            continue
        ptrs[j] = a.data.ctypes.data
        flags[j] = READABLE | (0 if a.readonly else WRITABLE)
    table = (n, b if n else np.zeros(1, np.uint64), e if n else np.zeros(1, np.uint64), ptrs, flags)
    gm._native_table = (version, table)
    return table


class WaveEnvironment:
    """One wave's env array and everything it points into. It holds no
    reference to the wave (a WaveExecution keeps its table across restarts,
    and a cycle between the two would keep a wave's arrays alive until the
    cyclic collector ran: test_wave_restart)."""

    def __init__(self, X, symbols: list[tuple[str, str]], used: set | None = None):
        self.gmem = X.gmem
        self.keep: dict[int, np.ndarray] = {}
        self.env = np.zeros(len(ENTRIES), dtype=np.int64)
        self._fill(X, range(len(ENTRIES)), used)
        self._symbols = symbols
        self._used = None if used is None else len(used)   # (entries are only ever added to it)
        self._set_symbols(X)
        self.scratch = _EMPTY
        self._gversion = None
        self.refresh_globals()
        self.env_address = _ptr(self.env)

    def _fill(self, X, entries, used) -> None:
        env = self.env
        for i in entries:
            if used is not None and i not in used:
                continue        # (e.g. %ctaid.z: materializing unused layout arrays costs every wave)
            name, kind, get = ENTRIES[i]
            if kind == "value":
                env[i] = int(get(X))
            elif kind == "array":
                a = self.keep[i] = get(X)
                env[i] = _ptr(a)

    def _set_symbols(self, X) -> None:
        self.symbols = np.array([_symbol_value(X, kind, name) for kind, name in self._symbols] or [0],
                                dtype=np.uint64)
        self.env[ENV["symbols"]] = _ptr(self.symbols)
        # the array's address only: a whole-wave pc still pending is written
        # into it before a region stores there (WaveExecution.native_writes_sched)
        self.env[ENV["sched"]] = _ptr(X.sched_storage)

    def rebind(self, X, symbols: list[tuple[str, str]], used: set | None) -> bool:
        """Take the table over for the wave X now holds, restarted for
        another launch or other blocks of the same shape as the wave it
        was made for: only the launch's parameters, the blocks' indices and
        the symbols are made again (a table per wave of saxpy 2^22 cost
        50-115 us, with the native pass having flushed the caches). False,
        with nothing changed, when the program's code reads entries this
        table never filled (code compiled since), or another symbol list:
        then build a new one."""
        if symbols is not self._symbols or (None if used is None else len(used)) != self._used:
            return False
        self._fill(X, PER_WAVE, used)
        self._set_symbols(X)
        self.refresh_globals()
        return True

    def refresh_globals(self) -> None:
        gm = self.gmem
        if self._gversion == gm._version:
            return
        n, bases, ends, ptrs, flags = global_table(gm)
        self.gkeep = (bases, ends, ptrs, flags)
        env = self.env
        env[ENV["gcount"]] = n
        env[ENV["gbases"]] = _ptr(bases)
        env[ENV["gends"]] = _ptr(ends)
        env[ENV["gptrs"]] = _ptr(ptrs)
        env[ENV["gflags"]] = _ptr(flags)
        self._gversion = gm._version

    def ensure_scratch(self, rows: int, n: int) -> None:
        need = rows * n
        if self.scratch.shape[0] < need:
            self.scratch = scratch_rows(need)
            self.env[ENV["scratch"]] = _ptr(self.scratch)


_EMPTY = np.zeros(0, dtype=np.uint64)
_scratch = threading.local()


def scratch_rows(need: int) -> np.ndarray:
    """At least `need` scratch words, shared by the waves this host thread
    runs: a native call fills the rows it reads back within the same
    call, so one wave's leftovers are never another's input, and a fresh
    array per wave (a large wave's rows are megabytes) cost about a
    millisecond of page faults every wave."""
    got = getattr(_scratch, "rows", _EMPTY)
    if got.shape[0] < need:
        got = _scratch.rows = np.zeros(max(need, 2 * got.shape[0]), dtype=np.uint64)
    return got


# The value of a symbol this wave's kernel does not have (another kernel's
# parameter or shared variable): far past every limit, so an access through
# it fails its check and the interpreter handles it.
ABSENT = 1 << 62


def _symbol_value(X, kind: str, name: str) -> int:
    if kind == "kparam":
        return int(X.kparam_offsets.get(name, ABSENT))
    if kind == "shared":
        return int(X.shared_symbols.get(name, ABSENT))
    if kind == "global":
        return int(X.program.symbols[name])
    if kind == "param":          # a .func parameter: its per-thread rows (X.params)
        return _ptr(X.params[name])
    if kind == "function":
        return int(X.program.function_address(name))
    raise ValueError(f"native code: symbol kind {kind} of {name}")
