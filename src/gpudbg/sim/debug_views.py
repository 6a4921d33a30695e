"""Read and write the state of a stopped wave in the debugger's terms:
warps and lanes by (SM, warp slot, lane), registers by PTX name, memory by
space. This is the state half of the simulator's debug backend.

The one idea: a lane's *debugger* pc is not always its scheduling pc. A
thread parked at a barrier shows the barrier instruction (stepping it is
stepping over the barrier); the threads of the step that faulted have not
had their pcs written back, so they show the faulting instruction, as the
coredump snapshot does. Everything else is read straight from the wave's
arrays, and writes go through the same checked memories the executor
uses, so the debugger cannot write where a kernel could not.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from gpudbg.debug.backend import BackendError, LaneCoords, LaneView, MemorySpace, RegisterValue, WarpView
from gpudbg.sim.faults import CUDBGException
from gpudbg.sim.state import EXITED, PARKED


def lane_coords(X: Any, slots: np.ndarray) -> LaneCoords:
    L = X.layout
    return LaneCoords(L.sm[slots].astype(np.int64), L.warp[slots].astype(np.int64),
                      L.lane[slots].astype(np.int64), tuple(np.asarray(L.ctaid[a])[slots] for a in range(3)),
                      tuple(L.tid[a][slots] for a in range(3)))


def slot_pcs(port: Any, X: Any) -> np.ndarray:
    """Per slot: the pc index the debugger shows (see module docstring)."""
    sched = X.sched
    pcs = np.where(sched == PARKED, X.park_pc[:len(sched)] - 1, sched).astype(np.int64)
    kf = port.fault
    if kf is not None and kf.report.hang is None and getattr(port, "fault_group", None) is not None:
        fpc = X.program.pc_of_address(kf.report.pc)
        if fpc is not None:
            grp = port.fault_group
            pcs[grp[sched[grp] == X.step_pc]] = fpc
    return pcs


def slot_of(X: Any, sm: int, wp: int, ln: int) -> int:
    """The wave slot of a live lane; BackendError naming the bad part."""
    L = X.layout
    key = getattr(X, "_debug_slot_index", None)
    if key is None:
        valid = np.flatnonzero(L.valid)
        key = X._debug_slot_index = {(int(L.sm[s]), int(L.warp[s]), int(L.lane[s])): int(s) for s in valid}
    s = key.get((sm, wp, ln))
    if s is None:
        if not any(k[0] == sm for k in key):
            raise BackendError("INVALID_SM", f"SM {sm} has no resident warps")
        if not any(k[:2] == (sm, wp) for k in key):
            raise BackendError("INVALID_WARP", f"warp {wp} on SM {sm} is not valid")
        raise BackendError("INVALID_LANE", f"lane {ln} of warp {wp} on SM {sm} is not valid")
    if X.sched[s] >= EXITED:
        raise BackendError("INVALID_LANE", f"lane {ln} of warp {wp} on SM {sm} has exited")
    return s


def warp_views(port: Any, X: Any, only: tuple[int, int] | None = None) -> list[WarpView]:
    """Views of every warp with live lanes, or of the one warp `only`
    names as (sm, wp), which costs one warp, not the wave."""
    L, prog = X.layout, X.program
    sel = L.valid & (X.sched < EXITED)
    if only is not None:
        sel = sel & (L.sm == only[0]) & (L.warp == only[1])
    live = np.flatnonzero(sel)
    if not len(live):
        return []
    pcs = slot_pcs(port, X)
    ncode = max(len(prog.code) - 1, 0)
    key = L.sm[live].astype(np.int64) * 4096 + L.warp[live].astype(np.int64) * 64 + L.lane[live]
    live = live[np.argsort(key, kind="stable")]
    lp = pcs[live]
    fidx = prog.function_of_pc[np.clip(lp, 0, ncode)]
    wkey = L.sm[live].astype(np.int64) * 4096 + L.warp[live].astype(np.int64)
    starts = np.concatenate(([0], np.flatnonzero(np.diff(wkey)) + 1))
    ends = np.append(starts[1:], len(live))
    low = np.minimum.reduceat(lp, starts)
    active = lp == np.repeat(low, ends - starts)
    bit = np.left_shift(np.uint64(1), L.lane[live].astype(np.uint64))
    valid_m = np.bitwise_or.reduceat(bit, starts).tolist()
    active_m = np.bitwise_or.reduceat(np.where(active, bit, np.uint64(0)), starts).tolist()
    # per-lane columns as Python lists, so the LaneView loop does no numpy indexing
    n = X.n
    names = [f.name for f in prog.function_list]
    lanes_l = L.lane[live].tolist()
    tids = list(zip(*(L.tid[a][live].tolist() for a in range(3))))
    addrs = (np.int64(prog.code_base) + np.int64(16) * lp).tolist()
    fnames = [names[f] for f in fidx.tolist()]
    act_l = active.tolist()
    depth = X.depth[live].tolist() if len(X.depth) >= n else [0] * len(live)
    parked = (X.sched[live] == PARKED).tolist()
    held_l = port.held[live].tolist() if port.held is not None else [False] * len(live)
    sp = X.sp[live].tolist() if len(X.sp) >= n else [0] * len(live)
    live_l = live.tolist()
    kf = port.fault
    rep = kf.report if kf is not None and kf.report.hang is None else None
    none = CUDBGException.CUDBG_EXCEPTION_NONE
    out = []
    for w, (a, b) in enumerate(zip(starts.tolist(), ends.tolist())):
        s0 = live_l[a]
        sm, wp = int(L.sm[s0]), int(L.warp[s0])
        exc_here = rep is not None and rep.sm == sm and rep.warp == wp
        lanes = []
        for i in range(a, b):
            d = depth[i]
            rets = () if not d else tuple(prog.code_address(int(X.ret_stack[d - 1 - k, live_l[i]]))
                                          for k in range(d))
            exc = rep.kind if exc_here and rep.lane == lanes_l[i] else none
            lanes.append(LaneView(lanes_l[i], tids[i], addrs[i], act_l[i], fnames[i], exc, d, rets,
                                  parked[i], held_l[i], sp[i]))
        first = next(i for i in range(a, b) if act_l[i])
        block = tuple(L.block_ids[int(L.block_of[s0])])
        out.append(WarpView(port.dev, sm, wp, X.grid_id, block,
                            int(valid_m[w]), int(active_m[w]), (sm, wp) in port.broken, addrs[first],
                            fnames[first], tuple(lanes), rep.pc if exc_here else None,
                            cluster_idx=tuple(int(v) // c for v, c in zip(block, X.cluster_dim)),
                            at_barrier=all(parked[i] for i in range(a, b) if act_l[i])))
    return out


def _function_registers(X: Any, s: int, pcs: np.ndarray | None = None,
                        function: str | None = None) -> tuple[str, list[int]]:
    prog = X.program
    if function is not None:
        f = prog.functions.get(function)
        if f is None:
            raise BackendError("INVALID_ARGS", f"{function} is not a function of the running program")
        return f.name, [k for k in prog.registers_of(f.name) if len(X.regs[k])]
    pc = int(pcs[s]) if pcs is not None else int(X.sched[s])
    f = prog.function_list[int(prog.function_of_pc[min(max(pc, 0), max(len(prog.code) - 1, 0))])]
    return f.name, [k for k in prog.registers_of(f.name) if len(X.regs[k])]


def registers(port: Any, X: Any, sm: int, wp: int, ln: int, function: str | None = None) -> list[RegisterValue]:
    """The lane's registers of the function it is in, or of `function`
    (a caller's frame: PTX registers are per function, so a caller's
    stay in place while its callee runs)."""
    s = slot_of(X, sm, wp, ln)
    pcs = slot_pcs(port, X)
    _f, ks = _function_registers(X, s, pcs, function)
    prog = X.program
    live = _live_registers(X, s, pcs, function)
    return [RegisterValue(prog.reg_names[k][1], X.regs[k].dtype.name, X.regs[k][s], live is None or bool(live >> k & 1))
            for k in ks]


def _live_registers(X: Any, s: int, pcs: np.ndarray, function: str | None) -> int | None:
    """The registers whose values are exact for slot s (a bitset), None
    for all of them: in a wave that ran optimized native code
    (X.drops_dead_registers), those live before the pc the lane resumes
    its function at (its own pc; a caller's frame: the return pc of that
    function's innermost activation), which is what compiled code stored."""
    if not getattr(X, "drops_dead_registers", False):
        return None
    from gpudbg.sim.native.liveness import live_before
    prog = X.program

    def in_function(p: int) -> bool:
        return 0 <= p < len(prog.code) and prog.function_list[int(prog.function_of_pc[p])].name == function

    pc = int(pcs[s])
    if function is not None and not in_function(pc):
        depth = int(X.depth[s]) if len(X.depth) > s else 0
        pc = next((r for r in (int(X.ret_stack[depth - 1 - k, s]) for k in range(depth)) if in_function(r)), -1)
    if not 0 <= pc < len(prog.code):
        return 0
    return live_before(prog)[pc]


def write_register(port: Any, X: Any, sm: int, wp: int, ln: int, name: str, value: Any,
                   function: str | None = None) -> None:
    s = slot_of(X, sm, wp, ln)
    fname, ks = _function_registers(X, s, slot_pcs(port, X), function)
    want = name if name.startswith("%") else "%" + name
    prog = X.program
    for k in ks:
        if prog.reg_names[k][1] == want:
            arr = X.regs[k]
            v = np.asarray(value)
            if v.dtype != arr.dtype and v.dtype.itemsize == arr.dtype.itemsize and v.dtype.kind in "uif" \
                    and arr.dtype.kind in "uif" and v.dtype.kind != arr.dtype.kind and isinstance(value, np.generic):
                v = v.view(arr.dtype)      # raw bits of the same width
            arr[s] = v.astype(arr.dtype)
            port.generation += 1
            if X.native_on:
                from gpudbg.sim.native.remat import recomputed_registers
                if k in recomputed_registers(prog):
                    # compiled code would recompute it from its definition
                    # instead of reading it: the wave goes on interpreted
                    X.native_on = 0
            return
    raise BackendError("INVALID_REGISTER", f"{fname} has no register {want}")


def read_memory(port: Any, X: Any, gpu: Any, space: MemorySpace, address: int, size: int,
                sm: int | None, wp: int | None, ln: int | None) -> bytes:
    return bytes(_access(port, X, gpu, space, address, size, sm, wp, ln, None))


def write_memory(port: Any, X: Any, gpu: Any, space: MemorySpace, address: int, data: bytes,
                 sm: int | None, wp: int | None, ln: int | None) -> None:
    _access(port, X, gpu, space, address, len(data), sm, wp, ln, bytes(data))
    port.generation += 1


def _need_lane(X: Any, space: MemorySpace, sm, wp, ln) -> int:
    if X is None:
        raise BackendError("INVALID_CONTEXT", f"no kernel is running: {space.value} memory has no owner")
    if sm is None or wp is None:
        raise BackendError("INVALID_WARP", f"{space.value} memory needs a warp (sm, wp)")
    if ln is None:
        for lane in range(32):
            try:
                return slot_of(X, sm, wp, lane)
            except BackendError:
                continue
        raise BackendError("INVALID_WARP", f"warp {wp} on SM {sm} has no live lane")
    return slot_of(X, sm, wp, ln)


def _access(port, X, gpu, space: MemorySpace, address: int, size: int, sm, wp, ln, data: bytes | None):
    from gpudbg.sim.memory import LOCAL_WINDOW_BASE, SHARED_WINDOW_BASE, WINDOW_SIZE
    if size < 0 or address < 0:
        raise BackendError("INVALID_ARGS", f"bad address 0x{address:x} or size {size}")
    try:
        if space is MemorySpace.GENERIC and X is not None and sm is not None:
            if SHARED_WINDOW_BASE <= address < SHARED_WINDOW_BASE + WINDOW_SIZE:
                space, address = MemorySpace.SHARED, address - SHARED_WINDOW_BASE
            elif LOCAL_WINDOW_BASE <= address < LOCAL_WINDOW_BASE + WINDOW_SIZE:
                space, address = MemorySpace.LOCAL, address - LOCAL_WINDOW_BASE
            else:
                space = MemorySpace.GLOBAL
        if space in (MemorySpace.GLOBAL, MemorySpace.CONST, MemorySpace.CODE, MemorySpace.GENERIC):
            if data is None:
                return gpu.memory.read(address, size)
            gpu.memory.write(address, np.frombuffer(data, np.uint8))
            return b""
        if space is MemorySpace.PARAM:
            if X is None:
                raise BackendError("INVALID_CONTEXT", "no kernel is running: no parameter memory")
            if address + size > len(X.kparams):
                raise BackendError("MEMORY_MAPPING_FAILED",
                                   f"param offset 0x{address:x}+{size} is past the {len(X.kparams)}-byte "
                                   f"parameter buffer of {X.function.name}")
            if data is None:
                return X.kparams[address:address + size]
            raise BackendError("NOT_SUPPORTED", "kernel parameters are read-only while the kernel runs")
        s = _need_lane(X, space, sm, wp, ln)
        if space is MemorySpace.SHARED:
            seg = int(X.layout.block_of[s])
            mem = X.smem
        else:
            seg, mem = s, X.lmem
        if data is None:
            return mem.read(seg, address, size)
        mem.write(seg, address, np.frombuffer(data, np.uint8))
        return b""
    except BackendError:
        raise
    except Exception as e:     # AccessFault and friends: the simulator's own message
        msg = getattr(e, "message", None) or str(e)
        raise BackendError("MEMORY_MAPPING_FAILED",
                           f"Cannot access {space.value} memory at address 0x{address:x}: {msg}") from None
