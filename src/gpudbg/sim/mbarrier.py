"""mbarrier objects: the 64-bit shared-memory barriers of the PTX ISA
(`mbarrier.*`, cuda::barrier, cuda::pipeline's shared state, TMA
completion), with phases, pending arrival counts and transaction counts.

The one idea: the object's whole state lives in its 8 bytes of shared
memory, so the debugger and memory dumps see it, a stray store corrupts it
as on hardware, and nothing about it is kept aside. The ISA leaves the
layout opaque; this simulator packs it as

    bits  0..19  pending arrivals of the current phase
    bits 20..39  expected arrivals of each phase (the init count, less drops)
    bits 40..60  tx-count, 21-bit two's complement (+-(2**20-1) per the ISA)
    bit  62      initialized (mbarrier.init sets it, mbarrier.inval clears it)
    bit  63      current phase parity

A phase completes when its pending arrivals and its tx-count are both zero:
the parity flips, pending is reloaded from expected, tx-count is reset.
Operations of one instruction on one object apply in thread-slot order
(the ISA leaves the order unspecified). The token an arrive returns is the
object's state before the arrive; test/try_wait compare its parity bit.

Threads that `try_wait` on an incomplete phase park like threads at
bar.sync (scheduling pc PARKED, `bar_wait` = MBAR_WAIT) and are released
with their predicate set true when the phase completes; if nothing can
complete it, the wave's deadlock report names the mbarrier. A completed
phase is reported to analysis tools as a barrier of its block (id
MBARRIER_EDGE, which no bar.sync uses): racecheck then orders accesses on
both sides of it, exact for the usual whole-block producer/consumer
pattern and conservative (fewer reports) when only some threads take part.

What it deliberately does not do: the try_wait time limit (a suspended
thread here waits until the phase completes, never returning false, which
the ISA allows). Objects are addressed by (resident block, offset), so an
object in a peer block of a cluster is updated, and its waiters released,
in that block.
"""
from __future__ import annotations

import numpy as np

from gpudbg.sim.faults import CUDBGException, LaneFault
from gpudbg.sim.state import PARKED

MAX_COUNT = (1 << 20) - 1
TX_LIMIT = (1 << 20) - 1
_M20 = (1 << 20) - 1
_M21 = (1 << 21) - 1
VALID = 1 << 62
PHASE = 1 << 63
MBAR_WAIT = -2          # bar_wait of a thread parked in mbarrier.try_wait
MBARRIER_EDGE = 16      # barrier id of mbarrier phase completions for tools (bar ids are 0..15)
U64 = np.dtype(np.uint64)


def pack(phase: int, pending: int, expected: int, tx: int) -> int:
    return (phase << 63) | VALID | ((tx & _M21) << 40) | (expected << 20) | pending


def unpack(s: int) -> tuple[int, int, int, int, bool]:
    """-> (phase, pending, expected, tx, initialized)."""
    txr = (s >> 40) & _M21
    tx = txr - (1 << 21) if txr >> 20 else txr
    return s >> 63, s & _M20, (s >> 20) & _M20, tx, bool(s & VALID)


def pending_count(state: np.ndarray) -> np.ndarray:
    """mbarrier.pending_count: the pending arrivals recorded in a token."""
    return (np.asarray(state, dtype=U64) & np.uint64(_M20)).astype(np.uint32)


def phase_of(state) -> np.ndarray:
    return (np.asarray(state, dtype=U64) >> np.uint64(63)).astype(np.int64)


class Waiters:
    """Threads of a wave parked in mbarrier.try_wait: which object (shared
    offset in their block) and which phase parity they wait to complete."""

    def __init__(self, n: int):
        self.offset = np.full(n, -1, dtype=np.int64)
        self.parity = np.zeros(n, dtype=np.int64)
        self.any = False

    def park(self, X, slots: np.ndarray, offsets: np.ndarray, parities: np.ndarray, pc: int) -> None:
        X.sched[slots] = PARKED
        X.uniform_pc = None
        X.park_pc[slots] = pc + 1
        X.bar_wait[slots] = MBAR_WAIT
        self.offset[slots] = offsets
        self.parity[slots] = parities
        self.any = True

    def release(self, X, block: int, offset: int, parity: int) -> None:
        """The phase of parity `parity` of the object at (block, offset)
        completed: its waiters resume after their try_wait with true."""
        if not self.any:
            return
        hit = np.flatnonzero((self.offset == offset) & (self.parity == parity)
                             & (X.bar_wait == MBAR_WAIT) & (X.sched == PARKED)
                             & (X.layout.block_of == block))
        if not len(hit):
            return
        pcs = X.park_pc[hit] - 1
        for p in np.unique(pcs):
            sub = hit[pcs == p]
            dest = X.program.code[int(p)].built.info.get("wait_dest")
            if dest is not None:
                dest(X, sub, np.ones(len(sub), dtype=bool))
        X.sched[hit] = X.park_pc[hit]
        X.uniform_pc = None
        X.bar_wait[hit] = -1
        self.offset[hit] = -1
        self.any = bool((self.offset >= 0).any())

    def parked(self, X) -> np.ndarray:
        return np.flatnonzero((X.sched == PARKED) & (X.bar_wait == MBAR_WAIT))


# ------------------------------------------------------------------ state access

def _where(X, block: int, offset: int) -> str:
    return f"the mbarrier at __shared__ offset {offset:#x} of block {X.block_idx_of(_slot_of_block(X, block))}"


def _slot_of_block(X, block: int) -> int:
    return int(block) * X.layout.slots_per_block


def load_states(X, blocks: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """The 64-bit states (faults precise to the lane: out of the block's
    shared memory, misaligned)."""
    return np.asarray(X.smem.load(blocks, offsets, U64), dtype=U64)


def _fault(X, lane: int, block: int, offset: int, why: str) -> LaneFault:
    return LaneFault(CUDBGException.CUDBG_EXCEPTION_WARP_ILLEGAL_INSTRUCTION,
                     f"{why}: {_where(X, block, offset)}", lane)


class Update:
    """One instruction's sequential updates of the objects it names: states
    are read once per object, changed thread by thread in slot order, and
    written back once; completed phases are collected for release."""

    def __init__(self, X, blocks: np.ndarray, offsets: np.ndarray):
        self.X = X
        self.blocks = np.asarray(blocks, dtype=np.int64)
        self.offsets = np.asarray(offsets, dtype=np.int64)
        states = load_states(X, self.blocks, self.offsets.astype(U64))
        self.state: dict[tuple[int, int], int] = {}
        for b, o, s in zip(self.blocks.tolist(), self.offsets.tolist(), states.tolist()):
            self.state.setdefault((b, o), int(s))
        self.completed: list[tuple[int, int, int]] = []

    def live(self, lane: int) -> tuple[tuple[int, int], tuple[int, int, int, int]]:
        key = (int(self.blocks[lane]), int(self.offsets[lane]))
        phase, pending, expected, tx, ok = unpack(self.state[key])
        if not ok:
            raise _fault(self.X, lane, *key, "mbarrier used before mbarrier.init (or after mbarrier.inval)")
        return key, (phase, pending, expected, tx)

    def set(self, key, phase: int, pending: int, expected: int, tx: int, lane: int,
            may_complete: bool = True) -> None:
        if not -TX_LIMIT <= tx <= TX_LIMIT:
            raise _fault(self.X, lane, *key, f"mbarrier tx-count {tx} is out of the ISA's range +-{TX_LIMIT}")
        if pending == 0 and tx == 0:
            if not may_complete:
                raise _fault(self.X, lane, *key, "mbarrier.arrive.noComplete would complete the phase")
            self.completed.append((key[0], key[1], phase))
            phase, pending, tx = phase ^ 1, expected, 0
        self.state[key] = pack(phase, pending, expected, tx)

    def arrive(self, lane: int, count: int, drop: bool = False, tx: int = 0,
               may_complete: bool = True) -> int:
        """-> the token (state before the arrive)."""
        key, (phase, pending, expected, cur_tx) = self.live(lane)
        token = self.state[key]
        if count < 1 or count > MAX_COUNT:
            raise _fault(self.X, lane, *key, f"mbarrier arrive count {count} is outside 1..{MAX_COUNT}")
        if count > pending:
            raise _fault(self.X, lane, *key, f"{count} arrival(s) on an mbarrier phase with only "
                         f"{pending} pending (more arrivals than its expected count {expected})")
        if drop:
            expected -= count
        self.set(key, phase, pending - count, expected, cur_tx + tx, lane, may_complete)
        return token

    def add_tx(self, lane: int, tx: int) -> None:
        key, (phase, pending, expected, cur_tx) = self.live(lane)
        self.set(key, phase, pending, expected, cur_tx + tx, lane)

    def finish(self) -> None:
        """Write the states back; release the waiters of completed phases
        and tell the tools."""
        X = self.X
        keys = list(self.state)
        blocks = np.array([k[0] for k in keys], dtype=np.int64)
        offs = np.array([k[1] for k in keys], dtype=U64)
        X.smem.store(blocks, offs, np.array([self.state[k] for k in keys], dtype=U64), U64)
        if not self.completed:
            return
        unit = X.async_unit
        for block, offset, parity in self.completed:
            if unit is not None:
                unit.waiters.release(X, block, offset, parity)
            if X.tap is not None:
                X.tap.barrier_complete(X, np.array([block], dtype=np.int64), MBARRIER_EDGE)


def init(X, blocks: np.ndarray, offsets: np.ndarray, counts: np.ndarray) -> None:
    counts = np.asarray(counts, dtype=np.int64)
    bad = np.flatnonzero((counts < 1) | (counts > MAX_COUNT))
    if len(bad):
        i = int(bad[0])
        raise _fault(X, i, int(blocks[i]), int(offsets[i]),
                     f"mbarrier.init count {int(counts[i])} is outside 1..{MAX_COUNT}")
    values = np.array([pack(0, int(c), int(c), 0) for c in counts.tolist()], dtype=U64)
    X.smem.store(blocks, np.asarray(offsets, dtype=U64), values, U64)


def inval(X, blocks: np.ndarray, offsets: np.ndarray) -> None:
    X.smem.store(blocks, np.asarray(offsets, dtype=U64), np.zeros(len(blocks), dtype=U64), U64)


def phase_complete(X, blocks: np.ndarray, offsets: np.ndarray, parities: np.ndarray) -> np.ndarray:
    """Whether the phase of parity `parities` (per thread) has completed:
    the object's current parity differs from it."""
    states = load_states(X, blocks, np.asarray(offsets, dtype=U64))
    valid = (states & np.uint64(VALID)) != 0
    if not valid.all():
        i = int(np.flatnonzero(~valid)[0])
        raise _fault(X, i, int(blocks[i]), int(offsets[i]),
                     "mbarrier waited on before mbarrier.init (or after mbarrier.inval)")
    return phase_of(states) != np.asarray(parities, dtype=np.int64)


def describe(X, block: int, offset: int) -> str:
    """A sentence on an object's state, for deadlock reports."""
    s = int(X.smem.read(block, offset, 8).view(U64)[0])
    phase, pending, expected, tx, ok = unpack(s)
    if not ok:
        return f"{_where(X, block, offset)} is not initialized"
    return (f"{_where(X, block, offset)} is in phase parity {phase} with {pending} of {expected} "
            f"arrival(s) pending and tx-count {tx}")
