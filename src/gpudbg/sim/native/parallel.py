"""Several host threads for one native call (GPUDBG_THREADS=N).

A large selection is cut into N parts at block boundaries and each part
runs the same compiled segment or region on its own host thread; ctypes
releases the GIL for the call, so the parts really run at once. Each part
has its own copy of the wave's environment table (its own scratch rows and
region results). A segment that writes memory or commits registers runs
its two passes as two rounds: every part checks and computes (phase 1),
and only when all succeeded does any part write (phase 2), so a failed
check still leaves nothing for the interpreter's re-run to trip over.
Blocks of different parts interleave their memory accesses in whatever
order the threads take, which is one legal order of a real GPU's blocks;
atomics are LLVM atomic instructions.

N defaults to 1, which keeps runs deterministic and never touches this
module's threads. What it deliberately does not do: run the interpreter's
instructions or the executor's scheduling in parallel (only native code
drops the GIL).
"""
from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from gpudbg.sim.native.environment import ENV

ENV_THREADS = "GPUDBG_THREADS"
PARALLEL_MIN = 4096        # selections smaller than this run on one thread
MAX_THREADS = 256


class ThreadsError(ValueError):
    """GPUDBG_THREADS is not a usable thread count."""


def host_threads() -> int:
    """N from GPUDBG_THREADS (default 1)."""
    raw = os.environ.get(ENV_THREADS, "").strip()
    if not raw:
        return 1
    try:
        n = int(raw, 10)
    except ValueError:
        raise ThreadsError(f"{ENV_THREADS}={raw!r} is not a number of host threads") from None
    if not 1 <= n <= MAX_THREADS:
        raise ThreadsError(f"{ENV_THREADS}={raw!r} must be between 1 and {MAX_THREADS}")
    return n


_pool_lock = threading.Lock()
_pool: tuple[int, ThreadPoolExecutor] | None = None


def workers(n: int) -> ThreadPoolExecutor:
    """The process's pool of at least n host threads (also sim/subwaves.py's)."""
    global _pool
    with _pool_lock:
        if _pool is None or _pool[0] < n:
            if _pool is not None:
                _pool[1].shutdown(wait=False)
            _pool = (n, ThreadPoolExecutor(max_workers=n, thread_name_prefix="gpudbg-native"))
        return _pool[1]


class Part:
    """One part's environment: a copy of the wave's table, its own scratch."""

    def __init__(self):
        self.env = None
        self.result = -1
        self.scratch = np.zeros(0, dtype=np.uint64)

    def prepare(self, parent: np.ndarray, rows: int, n: int) -> None:
        if self.env is None or self.env.shape != parent.shape:
            self.env = np.empty_like(parent)
        self.env[:] = parent
        need = rows * n
        if self.scratch.shape[0] < need:
            self.scratch = np.zeros(max(need, 2 * self.scratch.shape[0]), dtype=np.uint64)
        self.env[ENV["scratch"]] = self.scratch.ctypes.data


_parts = threading.local()


def split(X, idx, parts: int) -> list[np.ndarray]:
    """The selection as index arrays, cut into about `parts` pieces at
    block boundaries (a block's threads stay on one host thread)."""
    if idx is None:
        per = X.layout.slots_per_block
        blocks = X.n // per
        cuts = [per * (blocks * j // parts) for j in range(parts + 1)]
        cuts[-1] = X.n
        slots = X.all_slots
        return [slots[a:b] for a, b in zip(cuts, cuts[1:]) if b > a]
    bo = X.layout.block_of[idx]
    n = len(idx)
    cuts = [0]
    for j in range(1, parts):
        p = n * j // parts
        p = int(np.searchsorted(bo, bo[p], side="left")) if p < n else n
        if p > cuts[-1]:
            cuts.append(p)
    cuts.append(n)
    return [idx[a:b] for a, b in zip(cuts, cuts[1:]) if b > a]


def run_parts(seg, X, idx, threads: int, setup=None) -> list[Part] | None:
    """Run `seg` (a NativeSegment or NativeRegion) for the selection on up
    to `threads` host threads; the parts (for their results) on success,
    None when a check failed (nothing was written)."""
    pieces = split(X, idx, threads)
    partsets = getattr(_parts, "sets", None)
    if partsets is None or len(partsets) < len(pieces):
        # kept by the calling host thread across waves: each wave's fresh
        # scratch cost page faults inside the native calls (environment.py)
        partsets = _parts.sets = [Part() for _ in range(max(len(pieces), threads))]
    parent = X.native_env.env
    parts = partsets[:len(pieces)]
    regs = X.reg_ptrs.ctypes.data
    fn = seg.fn
    for part, piece in zip(parts, pieces):
        part.prepare(parent, seg.rows, len(piece))
        if setup is not None:
            setup(part.env, len(piece))

    def call(j: int, phase: int) -> int:
        part, piece = parts[j], pieces[j]
        part.env[ENV["phase"]] = phase
        return fn(regs, piece.ctypes.data, len(piece), part.env.ctypes.data)

    pool = workers(threads)
    first = 1 if seg.two_pass else 0
    for phase in ((first, 2) if seg.two_pass else (first,)):
        futures = [pool.submit(call, j, phase) for j in range(1, len(pieces))]
        results = [call(0, phase)] + [f.result() for f in futures]
        if phase != 2:
            for part, r in zip(parts, results):
                part.result = r      # a segment's success value carries its if body's count
        if phase != 2 and any(r >= 0 for r in results):
            return None
    return parts
