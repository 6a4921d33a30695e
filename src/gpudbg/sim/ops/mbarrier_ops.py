"""mbarrier.*: translation of the PTX ISA's mbarrier instructions onto the
object model of sim/mbarrier.py.

  mbarrier.init{.shared{::cta}}.b64 [a], count
  mbarrier.inval{.shared{::cta}}.b64 [a]
  mbarrier.expect_tx / complete_tx{.sem}{.scope}{.space}.b64 [a], txCount
  mbarrier.arrive{.expect_tx | .noComplete}{.sem}{.scope}{.space}.b64 state, [a]{, count | txCount}
  mbarrier.arrive_drop{...}.b64 state, [a]{, count | txCount}
  mbarrier.test_wait{.parity}{.sem}{.scope}{.space}.b64 p, [a], state | parity
  mbarrier.try_wait{.parity}{.sem}{.scope}{.space}.b64 p, [a], state | parity{, suspendTimeHint}
  mbarrier.pending_count.b64 count, state

`.space` is .shared, .shared::cta or .shared::cluster (an address of any
block of the cluster, resolved by sim/ops/cluster_ops.py); without one the
address is generic and must fall in the shared window (a peer block's
window too). The memory-ordering
qualifiers (.release, .acquire, .relaxed, .cta, .cluster) need nothing: the
simulator's memory is sequentially consistent. Before a test or a wait the
copies and deferred arrivals the object tracks complete (sim/async_copy.py);
an incomplete try_wait parks its threads until the phase completes.
"""
from __future__ import annotations

import numpy as np

from gpudbg.ptx.types import PTX_TYPES
from gpudbg.sim import async_copy, mbarrier
from gpudbg.sim.faults import CUDBGException
from gpudbg.sim.memory import SHARED_WINDOW_BASE, WINDOW_SIZE
from gpudbg.sim.memory.spaces import AccessFault, AccessType, Space
from gpudbg.sim.ops.base import Built, Mods, UnsupportedInstruction, op
from gpudbg.sim.ops import cluster_ops
from gpudbg.sim.ops.memory_ops import _Space

U64 = np.dtype(np.uint64)
U32 = PTX_TYPES["u32"]
B64 = PTX_TYPES["b64"]
_OPS = ("init", "inval", "arrive", "arrive_drop", "expect_tx", "complete_tx", "test_wait", "try_wait",
        "pending_count")


def shared_offsets(X, idx, mem: _Space, cluster: bool = False, size: int = 8) -> tuple[np.ndarray, np.ndarray]:
    """(block, shared offset) per thread of a shared-memory operand: with
    `cluster` (a .shared::cluster address) or a generic address, in the
    cluster block it names (sim/ops/cluster_ops.py); a generic address
    outside the shared window is an illegal-address fault."""
    blocks = np.asarray(X.block_segments(idx), dtype=np.int64)
    a = np.broadcast_to(np.asarray(mem.addresses(X, idx), dtype=U64), blocks.shape)
    if mem.space != "generic":
        if cluster:
            seg, off = cluster_ops.resolve(X, idx, a, size)
            return np.asarray(seg, dtype=np.int64), np.asarray(off, dtype=U64).astype(np.int64)
        return blocks, a.astype(np.int64)
    a, blocks = cluster_ops.resolve_generic(X, idx, a, blocks)
    blocks = np.asarray(blocks, dtype=np.int64)
    lo = np.uint64(SHARED_WINDOW_BASE)
    inside = (a >= lo) & (a < lo + np.uint64(WINDOW_SIZE))
    if not inside.all():
        bad = np.flatnonzero(~inside)
        i = int(bad[0])
        raise AccessFault(CUDBGException.CUDBG_EXCEPTION_LANE_ILLEGAL_ADDRESS, Space.GLOBAL, i, int(a[i]), 8,
                          f"mbarrier object at generic address {int(a[i]):#x} is not in shared memory",
                          lanes=bad)
    return blocks, (a - lo).astype(np.int64)


def _space_of(m: Mods) -> tuple[str, bool]:
    """(the operand's space, whether it is a .shared::cluster address)."""
    s = m.take("shared", "shared::cta", "shared::cluster")
    return ("shared" if s else "generic"), s == "shared::cluster"


def _count_lanes(reader, X, idx, n: int) -> list[int]:
    return np.broadcast_to(np.asarray(reader(X, idx)).astype(np.int64), (n,)).tolist()


@op("mbarrier")
def build_mbarrier(inst, tc) -> Built:
    m = Mods(inst)
    name = m.take(*_OPS)
    if name is None:
        raise UnsupportedInstruction("mbarrier needs an operation (" + ", ".join("." + o for o in _OPS) + ")")
    expect = m.flag("expect_tx")
    no_complete = m.flag("noComplete")
    parity = m.flag("parity")
    space, cluster = _space_of(m)
    if not m.flag("b64"):
        raise UnsupportedInstruction("mbarrier instructions take .b64")
    m.finish()
    if expect and name not in ("arrive", "arrive_drop"):
        raise UnsupportedInstruction(f".expect_tx does not combine with mbarrier.{name}")
    if no_complete and (name not in ("arrive", "arrive_drop") or expect):
        raise UnsupportedInstruction(".noComplete applies to mbarrier.arrive/arrive_drop with a count")
    if parity and name not in ("test_wait", "try_wait"):
        raise UnsupportedInstruction(f".parity does not apply to mbarrier.{name}")
    ops = inst.operands
    if name == "pending_count":
        d = tc.writer(ops[0])
        s = tc.reader(ops[1], B64)
        return Built(lambda X, idx: d(X, idx, mbarrier.pending_count(s(X, idx))))
    if name in ("init", "inval", "expect_tx", "complete_tx"):
        mem = _Space(tc, space, ops[0])
        arg = tc.reader(ops[1], U32) if len(ops) > 1 else None
        if (arg is None) != (name == "inval"):
            raise UnsupportedInstruction(f"mbarrier.{name} takes " + ("[addr]" if name == "inval" else "[addr], a count"))
        run = {"init": _init, "inval": _inval, "expect_tx": _tx(1), "complete_tx": _tx(-1)}[name](mem, arg, cluster)
        kind = AccessType.WRITE if name in ("init", "inval") else AccessType.ATOMIC
        return Built(run, info={"memory": ((mem, kind, 8),)})
    mem = _Space(tc, space, ops[1])
    if name in ("arrive", "arrive_drop"):
        d = tc.writer(ops[0])
        arg = tc.reader(ops[2], U32) if len(ops) > 2 else None
        if (expect or no_complete) and arg is None:
            raise UnsupportedInstruction(f"mbarrier.{name} with .expect_tx/.noComplete needs its count operand")
        return Built(_arrive(mem, d, arg, name == "arrive_drop", expect, no_complete, cluster),
                     info={"memory": ((mem, AccessType.ATOMIC, 8),)})
    # test_wait / try_wait
    p = tc.writer(ops[0])
    token = tc.reader(ops[2], U32 if parity else B64)
    if len(ops) > 4 or (len(ops) == 4 and name != "try_wait"):
        raise UnsupportedInstruction(f"too many operands for mbarrier.{name}")
    if name == "test_wait":
        return Built(_test(mem, p, token, parity, cluster), info={"memory": ((mem, AccessType.ATOMIC, 8),)})
    return Built(control=_try(mem, p, token, parity, cluster), kind="wait",
                 info={"wait_dest": p, "memory": ((mem, AccessType.ATOMIC, 8),)})


def _init(mem, arg, cluster):
    def run(X, idx):
        blocks, offs = shared_offsets(X, idx, mem, cluster)
        mbarrier.init(X, blocks, offs, np.broadcast_to(np.asarray(arg(X, idx)).astype(np.int64), blocks.shape))
    return run


def _inval(mem, _arg, cluster):
    def run(X, idx):
        blocks, offs = shared_offsets(X, idx, mem, cluster)
        mbarrier.inval(X, blocks, offs)
    return run


def _tx(sign: int):
    def make(mem, arg, cluster):
        def run(X, idx):
            blocks, offs = shared_offsets(X, idx, mem, cluster)
            upd = mbarrier.Update(X, blocks, offs)
            for i, c in enumerate(_count_lanes(arg, X, idx, len(blocks))):
                upd.add_tx(i, sign * c)
            upd.finish()
        return run
    return make


def _arrive(mem, d, arg, drop: bool, expect: bool, no_complete: bool, cluster: bool):
    def run(X, idx):
        blocks, offs = shared_offsets(X, idx, mem, cluster)
        n = len(blocks)
        vals = _count_lanes(arg, X, idx, n) if arg is not None else [1] * n
        upd = mbarrier.Update(X, blocks, offs)
        tokens = np.empty(n, dtype=U64)
        for i, v in enumerate(vals):
            if expect:
                tokens[i] = upd.arrive(i, 1, drop, tx=v)
            else:
                tokens[i] = upd.arrive(i, v, drop, may_complete=not no_complete)
        upd.finish()
        d(X, idx, tokens)
    return run


def _parities(X, idx, token, parity: bool, n: int) -> np.ndarray:
    v = np.broadcast_to(np.asarray(token(X, idx)), (n,))
    return (v.astype(np.int64) & 1) if parity else mbarrier.phase_of(v.astype(U64))


def _test(mem, p, token, parity: bool, cluster: bool):
    def run(X, idx):
        blocks, offs = shared_offsets(X, idx, mem, cluster)
        unit = X.async_unit
        if unit is not None:
            unit.before_wait(X, blocks, offs)
        par = _parities(X, idx, token, parity, len(blocks))
        p(X, idx, mbarrier.phase_complete(X, blocks, offs, par))
    return run


def _try(mem, p, token, parity: bool, cluster: bool):
    def control(X, idx, pc):
        blocks, offs = shared_offsets(X, idx, mem, cluster)
        unit = X.async_unit
        if unit is not None:
            unit.before_wait(X, blocks, offs)
        par = _parities(X, idx, token, parity, len(blocks))
        done = mbarrier.phase_complete(X, blocks, offs, par)
        slots = X.all_slots if idx is None else idx
        p(X, idx, done)
        if done.all():
            X.set_pc(idx, pc + 1)
            return
        X.sched[slots[done]] = pc + 1
        X.uniform_pc = None
        wait = ~done
        async_copy.unit(X).waiters.park(X, slots[wait], offs[wait], par[wait], pc)
    return control
