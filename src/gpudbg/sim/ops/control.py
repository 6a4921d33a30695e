"""Control flow: branches, calls and returns, exit, barriers, trap, and
instructions whose only effect is time (nanosleep; membar, fence and the
other ordering and cache hints are in hints.py).

A control instruction decides the next pc of every thread it runs for; the
executor's scheduler then picks the lowest pending pc, which is what
reconverges divergent threads. Calls keep a per-thread return stack and move
the thread's local-memory stack pointer by the caller's frame; `.func`
parameters are copied into the callee's per-thread parameter storage.
Barriers park threads; the executor releases a block's barrier when enough
of its threads have arrived.
"""
from __future__ import annotations

import numpy as np

from gpudbg.ptx import ir
from gpudbg.ptx.types import PTX_TYPES
from gpudbg.sim import warp_barrier
from gpudbg.sim.faults import CUDBGException, LaneFault
from gpudbg.sim.ops.base import Built, Mods, UnsupportedInstruction, op

U32 = PTX_TYPES["u32"]


@op("bra")
def build_bra(inst, tc) -> Built:
    m = Mods(inst)
    m.finish()
    target = inst.operands[0]
    if not isinstance(target, (ir.LabelRef, ir.Symbol)):
        raise UnsupportedInstruction("bra needs a label")
    tpc = tc.label_pc(target.name)

    def control(X, idx, pc):
        X.set_pc(idx, tpc)
    return Built(control=control, kind="branch", info={"target": tpc})


@op("brx")
def build_brx(inst, tc) -> Built:
    m = Mods(inst)
    if not m.flag("idx"):
        raise UnsupportedInstruction("only brx.idx is supported")
    m.finish()
    index = tc.reader(inst.operands[0], U32)
    table_name = inst.operands[1].name
    names = tc.function.branchtargets.get(table_name) or tc.program.module.branchtargets.get(table_name)
    if names is None:
        raise UnsupportedInstruction(f"unknown .branchtargets {table_name}")
    pcs = np.array([tc.label_pc(n) for n in names], dtype=np.int64)

    def control(X, idx, pc):
        i = np.asarray(index(X, idx)).astype(np.int64)
        i = np.broadcast_to(i, (X.count(idx),))
        if ((i < 0) | (i >= len(pcs))).any():
            bad = int(np.flatnonzero((i < 0) | (i >= len(pcs)))[0])
            raise LaneFault(CUDBGException.CUDBG_EXCEPTION_WARP_INVALID_PC,
                            f"brx.idx index {int(i[bad])} is outside its {len(pcs)}-entry target list", bad)
        X.set_pc(idx, pcs[i])
    return Built(control=control, kind="branch", info={"targets": pcs.tolist()})


@op("exit")
def build_exit(inst, tc) -> Built:
    Mods(inst).finish()
    return Built(control=lambda X, idx, pc: X.exit_threads(idx), kind="exit")


@op("ret")
def build_ret(inst, tc) -> Built:
    Mods(inst).finish()
    return Built(control=lambda X, idx, pc: X.return_threads(idx), kind="ret")


@op("trap")
def build_trap(inst, tc) -> Built:
    Mods(inst).finish()

    def control(X, idx, pc):
        raise LaneFault(CUDBGException.CUDBG_EXCEPTION_WARP_ILLEGAL_INSTRUCTION,
                        "trap instruction executed", 0)
    return Built(control=control, kind="exit")


@op("brkpt")
def build_brkpt(inst, tc) -> Built:
    Mods(inst).finish()

    def control(X, idx, pc):
        if X.on_brkpt is not None:
            X.on_brkpt(idx, pc)
            X.set_pc(idx, pc + 1)
            return
        raise LaneFault(CUDBGException.CUDBG_EXCEPTION_WARP_ILLEGAL_INSTRUCTION,
                        "brkpt executed with no debugger attached", 0)
    return Built(control=control, kind="branch")


@op("pmevent")
def build_ordering(inst, tc) -> Built:
    # performance-monitor events have no counters to trigger here (membar,
    # fence, griddepcontrol and setmaxnreg are in hints.py)
    return Built(lambda X, idx: None)


@op("nanosleep")
def build_nanosleep(inst, tc) -> Built:
    m = Mods(inst)
    m.types()
    m.finish()
    t = tc.reader(inst.operands[0], U32)

    def run(X, idx):
        X.advance_clock_ns(int(np.max(t(X, idx))) if X.count(idx) else 0)
    return Built(run)


# ------------------------------------------------------------------ calls


@op("call")
def build_call(inst, tc) -> Built:
    m = Mods(inst)
    m.finish()
    ct = inst.operands[0]
    if not isinstance(ct, ir.CallTarget):
        raise UnsupportedInstruction("malformed call")
    program = tc.program
    ret_names = [_param_name(r) for r in ct.returns]
    arg_src = [_arg_source(tc, a) for a in ct.args]
    if isinstance(ct.target, ir.Symbol):
        name = ct.target.name
        if name not in program.functions:
            raise UnsupportedInstruction(f"call to undeclared function {name}")
        info = program.functions[name]
        if info.ir.body is None and info.builtin is None:
            raise UnsupportedInstruction(
                f"call to external function {name}, which has no body in this module and is not a device runtime function")
        if info.builtin is not None:
            from gpudbg.sim.ops.builtins import builtin_call
            run = builtin_call(tc, info.builtin, arg_src, ret_names)

            def control_builtin(X, idx, pc):
                run(X, idx)
                X.set_pc(idx, pc + 1)
            return Built(control=control_builtin, kind="call", info={"callee": name, "returns": ret_names})
        _check_arity(info, ct, name)

        def control(X, idx, pc):
            X.call_threads(idx, pc, info, arg_src)
        return Built(control=control, kind="call", info={"callee": name, "returns": ret_names})
    # indirect call through a register holding a function address
    target = tc.reader_dtype(ct.target, np.uint64)

    def control_indirect(X, idx, pc):
        addrs = np.broadcast_to(np.asarray(target(X, idx)), (X.count(idx),))
        for a in np.unique(addrs):
            sel = addrs == a
            sub = idx[sel] if idx is not None else np.flatnonzero(sel)
            info = X.program.function_at_address(int(a))
            if info is None:
                bad = int(np.flatnonzero(sel)[0])
                raise LaneFault(CUDBGException.CUDBG_EXCEPTION_WARP_INVALID_PC,
                                f"indirect call to 0x{int(a):x}, which is not a function", bad, int(a))
            if info.builtin is not None:
                from gpudbg.sim.ops.builtins import builtin_call
                builtin_call(tc, info.builtin, arg_src, ret_names)(X, sub)
                X.set_pc(sub, pc + 1)
            else:
                X.call_threads(sub, pc, info, arg_src)
    return Built(control=control_indirect, kind="call", info={"returns": ret_names})


def _check_arity(info, ct, name):
    if len(ct.args) != len(info.param_names) or len(ct.returns) != len(info.return_names):
        raise UnsupportedInstruction(
            f"call to {name} passes {len(ct.args)} arguments and {len(ct.returns)} results; "
            f"it takes {len(info.param_names)} and returns {len(info.return_names)}")


def _param_name(operand) -> str | None:
    if isinstance(operand, ir.Symbol):
        return operand.name
    if isinstance(operand, ir.Register):
        return None
    raise UnsupportedInstruction(f"unsupported call result operand {operand!r}")


def _arg_source(tc, operand):
    """-> ('param', name) for a .param variable, ('value', reader, dtype)
    for a register or immediate argument."""
    if isinstance(operand, ir.Symbol) and operand.name in tc.program.param_vars:
        return ("param", operand.name)
    if isinstance(operand, ir.Register):
        k, dt = tc.reg(operand)
        return ("value", tc.reader_dtype(operand, dt), dt)
    if isinstance(operand, ir.Immediate):
        return ("value", tc.reader_dtype(operand, np.uint32), np.dtype(np.uint32))
    raise UnsupportedInstruction(f"unsupported call argument {operand!r}")


# ------------------------------------------------------------------ barriers


@op("bar", "barrier")
def build_bar(inst, tc) -> Built:
    if "cluster" in inst.modifiers:     # barrier.cluster.arrive/wait ("cluster" is otherwise a scope)
        from gpudbg.sim.ops.cluster_ops import build_cluster_barrier
        return build_cluster_barrier(inst, tc)
    m = Mods(inst)
    m.take("cta")
    if m.flag("warp"):
        m.flag("sync")
        m.finish()
        mask = tc.reader(inst.operands[0], U32) if inst.operands else None

        def warp_sync(X, idx, pc):
            warp_barrier.arrive(X, idx, pc, 0xFFFFFFFF if mask is None else mask(X, idx))
        # a barrier of the mask's lanes (sim/warp_barrier.py); tools see its mask (sim/instrument.py)
        return Built(control=warp_sync, kind="warp_sync", info={"sync_op": "bar.warp.sync", "sync_mask": mask})
    mode = m.take("sync", "arrive", "red")
    if mode is None:
        mode = "sync"  # bar 0 is bar.sync 0
    redop = m.take("popc", "and", "or") if mode == "red" else None
    rtype = m.types() if mode == "red" else []
    m.finish()
    ops = list(inst.operands)
    dest = None
    if mode == "red":
        dest = tc.writer(ops.pop(0))
    bar_id = tc.reader(ops[0], U32)
    count = tc.reader(ops[1], U32) if len(ops) >= 2 and not (mode == "red" and len(ops) == 2) else None
    pred = tc.reader(ops[-1], PTX_TYPES["pred"]) if mode == "red" else None
    if mode == "arrive" and count is None:
        raise UnsupportedInstruction("bar.arrive needs a thread count")
    wait = mode != "arrive"

    def control(X, idx, pc):
        ids = np.asarray(bar_id(X, idx))
        cnt = None if count is None else np.asarray(count(X, idx))
        pv = None if pred is None else np.asarray(pred(X, idx))
        X.barrier_arrive(idx, pc, ids, cnt, wait, pv)
    info = {"mode": mode, "redop": redop, "dest": dest, "rtype": rtype,
            "bar_id": bar_id, "bar_count": count}
    return Built(control=control, kind="barrier", info=info)
