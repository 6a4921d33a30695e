"""DeviceSnapshot: the frozen state of one simulated GPU that a coredump
holds, in the shape of the coredump's own tree (device -> context ->
module; grid; SM -> CTA -> warp -> lane), so the writer is a plain walk and
the reader fills the same classes from any core, ours or the driver's.

The one idea: take it synchronously in the device thread's fault path, from
the faulting wave (`KernelFault.wave`), copying only what the generation
flags keep; the wave's arrays are reused by the next launch on that GPU.

Register mapping (cuda-gdb shows R0..Rn as uint32 per lane): the PTX
registers of the function a lane is executing, in declaration order, take
consecutive R numbers; a 64-bit register takes two (low word first), 8/16/
32-bit ones one (zero-extended bits, floats bit-cast); predicates take
consecutive predicate rows P0, P1, ... Registers past R254 get no R number.
The map is stored in our note section so our reader names registers again;
the note also carries each module's PTX text (embedded.py), the kernel
name, and which lanes wait at a barrier (their pc is the bar instruction).
Exceptions are written with the warp-level code cuda-gdb 11.8 accepts
(`WARP_EXCEPTION_CODE`); the simulator's lane-level original goes to the
note. Not captured: other grids than the faulting one, other GPUs.
"""
from __future__ import annotations

import enum
import os
import time
from dataclasses import dataclass, field

import numpy as np

from gpudbg.sim.faults import CUDBGException, FaultReport
from gpudbg.sim.state import EXITED, PARKED

E = CUDBGException
MAX_R = 255          # R0..R254; R255 is RZ on the hardware
MIN_REGS = 32
PARAMS_OFFSET = 0x210


class CUDBGCoredumpGenerationFlags(enum.IntFlag):
    """Seed 000's coredump generation flags, values exactly as there."""

    CUDBG_COREDUMP_DEFAULT_FLAGS = 0
    CUDBG_COREDUMP_SKIP_NONRELOCATED_ELF_IMAGES = 1 << 0
    CUDBG_COREDUMP_SKIP_GLOBAL_MEMORY = 1 << 1
    CUDBG_COREDUMP_SKIP_SHARED_MEMORY = 1 << 2
    CUDBG_COREDUMP_SKIP_LOCAL_MEMORY = 1 << 3
    CUDBG_COREDUMP_SKIP_CONSTBANK_MEMORY = 1 << 5
    CUDBG_COREDUMP_LIGHTWEIGHT_FLAGS = 0x2F  # all five skip bits


F = CUDBGCoredumpGenerationFlags
CUDBG_COREDUMP_DEFAULT_FLAGS = F.CUDBG_COREDUMP_DEFAULT_FLAGS
CUDBG_COREDUMP_SKIP_NONRELOCATED_ELF_IMAGES = F.CUDBG_COREDUMP_SKIP_NONRELOCATED_ELF_IMAGES
CUDBG_COREDUMP_SKIP_GLOBAL_MEMORY = F.CUDBG_COREDUMP_SKIP_GLOBAL_MEMORY
CUDBG_COREDUMP_SKIP_SHARED_MEMORY = F.CUDBG_COREDUMP_SKIP_SHARED_MEMORY
CUDBG_COREDUMP_SKIP_LOCAL_MEMORY = F.CUDBG_COREDUMP_SKIP_LOCAL_MEMORY
CUDBG_COREDUMP_SKIP_CONSTBANK_MEMORY = F.CUDBG_COREDUMP_SKIP_CONSTBANK_MEMORY
CUDBG_COREDUMP_LIGHTWEIGHT_FLAGS = F.CUDBG_COREDUMP_LIGHTWEIGHT_FLAGS
KNOWN_FLAGS = int(CUDBG_COREDUMP_LIGHTWEIGHT_FLAGS)

# Lane-level and newer codes -> the warp-level code cuda-gdb 11.8 loads
# (a lane-level code makes it ask for an error address the core cannot give).
WARP_EXCEPTION_CODE: dict[E, E] = {
    E.CUDBG_EXCEPTION_LANE_ILLEGAL_ADDRESS: E.CUDBG_EXCEPTION_WARP_ILLEGAL_ADDRESS,
    E.CUDBG_EXCEPTION_LANE_MISALIGNED_ADDRESS: E.CUDBG_EXCEPTION_WARP_MISALIGNED_ADDRESS,
    E.CUDBG_EXCEPTION_LANE_USER_STACK_OVERFLOW: E.CUDBG_EXCEPTION_WARP_HARDWARE_STACK_OVERFLOW,
    E.CUDBG_EXCEPTION_DEVICE_HARDWARE_STACK_OVERFLOW: E.CUDBG_EXCEPTION_WARP_HARDWARE_STACK_OVERFLOW,
    E.CUDBG_EXCEPTION_DEVICE_ILLEGAL_ADDRESS: E.CUDBG_EXCEPTION_WARP_ILLEGAL_ADDRESS,
    E.CUDBG_EXCEPTION_LANE_SYSCALL_ERROR: E.CUDBG_EXCEPTION_WARP_ASSERT,
    E.CUDBG_EXCEPTION_LANE_NONMIGRATABLE_ATOMSYS: E.CUDBG_EXCEPTION_WARP_ILLEGAL_ADDRESS,
    E.CUDBG_EXCEPTION_LANE_INVALID_ATOMSYS: E.CUDBG_EXCEPTION_WARP_ILLEGAL_ADDRESS,
    E.CUDBG_EXCEPTION_CLUSTER_OUT_OF_RANGE_ADDRESS: E.CUDBG_EXCEPTION_WARP_OUT_OF_RANGE_ADDRESS,
    E.CUDBG_EXCEPTION_CLUSTER_BLOCK_NOT_PRESENT: E.CUDBG_EXCEPTION_WARP_ILLEGAL_ADDRESS,
    E.CUDBG_EXCEPTION_WARP_STACK_CANARY: E.CUDBG_EXCEPTION_WARP_HARDWARE_STACK_OVERFLOW,
    E.CUDBG_EXCEPTION_WARP_TMEM_ACCESS_CHECK: E.CUDBG_EXCEPTION_WARP_ILLEGAL_INSTRUCTION,
    E.CUDBG_EXCEPTION_WARP_TMEM_LEAK: E.CUDBG_EXCEPTION_WARP_ILLEGAL_INSTRUCTION,
    E.CUDBG_EXCEPTION_WARP_CALL_REQUIRES_NEWER_DRIVER: E.CUDBG_EXCEPTION_WARP_ILLEGAL_INSTRUCTION,
}


def warp_level(kind: E) -> E:
    return WARP_EXCEPTION_CODE.get(kind, kind)


@dataclass
class Frame:
    level: int
    return_address: int          # offset in the caller's function
    virtual_return_address: int


@dataclass
class LaneState:
    ln: int
    thread_idx: tuple[int, int, int]
    virtual_pc: int
    phys_pc: int = 0             # offset from the function start
    exception: int = 0           # CUDBGException_t as written
    call_depth: int = 0
    syscall_call_depth: int = 0
    cc_register: int = 0
    regs: np.ndarray = field(default_factory=lambda: np.zeros(0, np.uint32))
    preds: np.ndarray | None = None
    local: bytes | None = None
    local_base: int = 0
    backtrace: list[Frame] = field(default_factory=list)


@dataclass
class WarpState:
    warp_id: int
    valid_mask: int
    active_mask: int
    broken: int = 0
    error_pc: int = 0
    error_pc_valid: int = 0
    num_regs: int | None = None
    lanes: list[LaneState] = field(default_factory=list)
    uregs: np.ndarray | None = None
    upreds: np.ndarray | None = None


@dataclass
class CtaState:
    grid_id: int
    block_idx: tuple[int, int, int]
    shared: bytes | None = None
    warps: list[WarpState] = field(default_factory=list)


@dataclass
class SmState:
    sm_id: int
    ctas: list[CtaState] = field(default_factory=list)
    exception: int = 0
    error_pc: int = 0
    error_pc_valid: int = 0


@dataclass
class ModuleImage:
    handle: int
    name: str
    relocated: bytes | None = None       # cubin bytes
    nonrelocated: bytes | None = None


@dataclass
class ContextInfo:
    context_id: int
    tid: int
    shared_window: int
    local_window: int
    global_window: int = 0
    modules: list[ModuleImage] = field(default_factory=list)


@dataclass
class GridInfo:
    grid_id: int
    context_id: int
    function: int
    function_entry: int
    module_handle: int
    grid_dim: tuple[int, int, int]
    block_dim: tuple[int, int, int]
    num_regs: int
    params: bytes | None = None
    params_offset: int = PARAMS_OFFSET
    parent_grid_id: int = 0
    kernel_type: int = 2          # CUDBG_KNL_TYPE_APPLICATION
    origin: int = 0               # CUDBG_KNL_ORIGIN_CPU
    status: int = 2               # CUDBG_GRID_STATUS_ACTIVE
    launch_blocking: int = 0
    host_tid: int = 0
    const_banks: list[tuple[int, int, int]] = field(default_factory=list)  # (addr, size, bank)


@dataclass
class MemorySegment:
    address: int
    data: bytes
    managed: bool = False


@dataclass
class DeviceSnapshot:
    """One device's state plus the global memory of the dump."""

    dev_id: int
    name: str
    dev_type: str
    sm_type: str
    sm_major: int
    sm_minor: int
    num_sms: int
    warps_per_sm: int
    lanes_per_warp: int
    regs_per_lane: int
    preds_per_lane: int
    pci_bus: int = 0
    pci_dev: int = 0
    instruction_size: int = 16
    status: int = 0
    uregs_per_warp: int = 0
    upreds_per_warp: int = 0
    contexts: list[ContextInfo] = field(default_factory=list)
    grids: list[GridInfo] = field(default_factory=list)
    sms: list[SmState] = field(default_factory=list)
    memory: list[MemorySegment] = field(default_factory=list)
    note: dict = field(default_factory=dict)   # ours: register maps, fault, sources
    flags: int = 0
    timestamp: int = 0

    def lanes(self):
        """(sm, cta, warp, lane) for every lane of the snapshot."""
        for sm in self.sms:
            for cta in sm.ctas:
                for w in cta.warps:
                    for ln in w.lanes:
                        yield sm, cta, w, ln


# ---------------------------------------------------------------- registers
def register_map(program, fname: str) -> list[tuple[str, str, str, int, int]]:
    """[(ptx name, numpy dtype, 'R' or 'P', first index, words)] for one
    function; index -1 means the register did not fit below R255."""
    out = []
    r = p = 0
    for k in program.registers_of(fname):
        name = program.reg_names[k][1]
        dt = np.dtype(program.reg_dtypes[k])
        if dt == np.bool_:
            out.append((name, dt.name, "P", p, 1))
            p += 1
            continue
        words = 2 if dt.itemsize == 8 else 1
        if r + words > MAX_R:
            out.append((name, dt.name, "R", -1, words))
            continue
        out.append((name, dt.name, "R", r, words))
        r += words
    return out


def _words(values: np.ndarray) -> np.ndarray:
    """(n,) register values -> (n, words) uint32, raw bits."""
    v = np.ascontiguousarray(values)
    if v.dtype.itemsize == 8:
        return v.view(np.uint32).reshape(-1, 2)
    if v.dtype.itemsize == 4:
        return v.view(np.uint32).reshape(-1, 1)
    return v.view(np.uint8 if v.dtype.itemsize == 1 else np.uint16).astype(np.uint32).reshape(-1, 1)


# ---------------------------------------------------------------- capture
def _current_pcs(X, report: FaultReport | None) -> np.ndarray:
    sched = X.sched
    # a thread parked at a barrier resumes at park_pc; it *is* at the bar
    # instruction (cuda-gdb shows a waiting warp's pc there)
    pcs = np.where(sched == PARKED, X.park_pc[:len(sched)] - 1, sched).astype(np.int64)
    if report is not None and report.hang is None:
        fault_pc = X.program.pc_of_address(report.pc)
        if fault_pc is not None:
            # the faulting step had not yet written its threads' pcs back
            pcs[sched == X.step_pc] = fault_pc
    return pcs


def _modules(gpu) -> list:
    seen, out = set(), []
    for fn in list(getattr(gpu, "functions", {}).values()):
        m = fn.module
        if id(m) not in seen and getattr(m, "loaded", True):
            seen.add(id(m))
            out.append(m)
    return out


def _module_image(gpu, loaded, sm: int, flags: int):
    from gpudbg.dump.coredump.cubin import build_cubin, program_functions
    prog = loaded.program
    code = bytes(gpu.memory.read(prog.code_base, 16 * len(prog.code))) if prog.code else b""
    funcs = program_functions(prog, code, relocated=True)
    if not funcs:
        return None
    files = dict(prog.module.files) or None
    name = prog.module.filename or "module"
    img = ModuleImage(prog.code_base, name, build_cubin(funcs, sm, files, name))
    if not flags & CUDBG_COREDUMP_SKIP_NONRELOCATED_ELF_IMAGES:
        img.nonrelocated = build_cubin(program_functions(prog, code, relocated=False), sm, files, name)
    return img


_USER_KINDS = ("device", "pitched", "managed", "module global", "device heap")


def _memory(gpu, flags: int) -> tuple[list[MemorySegment], list[tuple[int, int, int]]]:
    segs, banks = [], []
    for a in gpu.memory.allocations():
        kind = a.kind.value
        if kind == "module constant":
            if flags & CUDBG_COREDUMP_SKIP_CONSTBANK_MEMORY:
                continue
            banks.append((a.base, a.size, 3))
        elif kind not in _USER_KINDS or flags & CUDBG_COREDUMP_SKIP_GLOBAL_MEMORY:
            continue
        if a.size:
            segs.append(MemorySegment(a.base, bytes(a.data[:a.size]), kind == "managed"))
    return segs, banks


def snapshot_from_wave(X, report: FaultReport | None = None,
                       flags: int = CUDBG_COREDUMP_DEFAULT_FLAGS) -> DeviceSnapshot:
    """Capture the faulting wave `X` (a sim.wave.WaveExecution) and its GPU."""
    if flags & ~KNOWN_FLAGS:
        raise ValueError(f"unknown CUDBGCoredumpGenerationFlags bits 0x{flags & ~KNOWN_FLAGS:x}")
    from gpudbg.sim.memory import LOCAL_WINDOW_BASE, SHARED_WINDOW_BASE
    gpu, model, prog, L = X.gpu, X.model, X.program, X.layout
    major, minor = model.compute_capability
    sm_num = major * 10 + minor
    pcs = _current_pcs(X, report)
    live = np.flatnonzero(L.valid[:X.n] & (X.sched[:X.n] < EXITED))
    fidx = prog.function_of_pc[np.clip(pcs[live], 0, max(len(prog.code) - 1, 0))] if len(live) else live
    maps = {f.name: register_map(prog, f.name) for f in prog.function_list if f.builtin is None}
    nregs = max([1] + [m[3] + m[4] for mp in maps.values() for m in mp if m[2] == "R"])
    # cuda-gdb 11.8 reads registers in batches of 32 (tested: a lane with 26
    # register words fails to load), so every lane carries at least 32
    nregs = min(max(nregs, int(X.function.num_regs or 0), MIN_REGS), MAX_R)
    npreds = max([0] + [m[3] + 1 for mp in maps.values() for m in mp if m[2] == "P"])
    # registers and predicates of every live slot, grouped by running function
    regs = np.zeros((len(live), nregs), np.uint32)
    preds = np.zeros((len(live), max(npreds, 1)), np.uint8)
    for fi in np.unique(fidx):
        info = prog.function_list[int(fi)]
        rows = np.flatnonzero(fidx == fi)
        slots = live[rows]
        for (name, _dt, cls, first, words), k in zip(maps[info.name], prog.registers_of(info.name)):
            arr = X.regs[k]
            if first < 0 or len(arr) == 0:
                continue
            if cls == "P":
                preds[rows, first] = arr[slots].astype(np.uint8)
            else:
                regs[rows, first:first + words] = _words(arr[slots])
    fault_slot = None
    if report is not None and report.sm is not None:
        hit = live[(L.sm[live] == report.sm) & (L.warp[live] == report.warp) & (L.lane[live] == report.lane)]
        fault_slot = int(hit[0]) if len(hit) else None
    code_written = warp_level(report.kind) if report is not None and report.hang is None else E.CUDBG_EXCEPTION_NONE
    keep_shared = not flags & CUDBG_COREDUMP_SKIP_SHARED_MEMORY and X.shared_per_block > 0
    keep_local = not flags & CUDBG_COREDUMP_SKIP_LOCAL_MEMORY and X.local_size > 0
    sms: dict[int, SmState] = {}
    ctas: dict[int, CtaState] = {}
    warps: dict[tuple[int, int], WarpState] = {}
    for i, s in enumerate(live.tolist()):
        b = int(L.block_of[s])
        sm_id = int(L.sm[s])
        sm = sms.get(sm_id)
        if sm is None:
            sm = sms[sm_id] = SmState(sm_id)
        cta = ctas.get(b)
        if cta is None:
            shared = None
            if keep_shared:
                st = X.smem.stride
                shared = bytes(X.smem.buffer[b * st:b * st + X.shared_per_block])
            cta = ctas[b] = CtaState(X.grid_id, tuple(L.block_ids[b]), shared)
            sm.ctas.append(cta)
        wkey = (sm_id, int(L.warp[s]))
        w = warps.get(wkey)
        if w is None:
            w = warps[wkey] = WarpState(int(L.warp[s]), 0, 0, num_regs=nregs)
            cta.warps.append(w)
        ln = int(L.lane[s])
        pc = int(pcs[s])
        info = prog.function_list[int(fidx[i])]
        depth = int(X.depth[s]) if len(X.depth) > s else 0
        frames = []
        for lvl in range(depth):
            ret = int(X.ret_stack[depth - 1 - lvl, s])
            caller = prog.function_list[prog.function_of_pc[max(ret - 1, 0)]]
            frames.append(Frame(lvl + 1, 16 * (ret - caller.entry_pc), prog.code_address(ret)))
        lane = LaneState(ln, X.thread_idx_of(s), prog.code_address(pc), 16 * (pc - info.entry_pc),
                         call_depth=depth, regs=regs[i].copy(), preds=preds[i, :npreds].copy(),
                         backtrace=frames)
        if keep_local:
            st = X.lmem.stride
            lane.local = bytes(X.lmem.buffer[s * st:s * st + X.local_size])
            lane.local_base = LOCAL_WINDOW_BASE
        if s == fault_slot:
            lane.exception = int(code_written)
            w.error_pc, w.error_pc_valid = report.pc, 1
        w.valid_mask |= 1 << ln
        w.lanes.append(lane)
    for w in warps.values():
        lowest = min(ln.virtual_pc for ln in w.lanes)
        w.active_mask = sum(1 << ln.ln for ln in w.lanes if ln.virtual_pc == lowest)
        w.lanes.sort(key=lambda ln: ln.ln)
    segs, banks = _memory(gpu, flags)
    tid = os.getpid()
    ctx_id = 0xC7000000 + int(getattr(gpu, "ordinal", 0))
    ctx = ContextInfo(ctx_id, tid, SHARED_WINDOW_BASE, LOCAL_WINDOW_BASE, 0)
    for m in _modules(gpu):
        img = _module_image(gpu, m, sm_num, flags)
        if img is not None:
            ctx.modules.append(img)
    if not any(img.handle == prog.code_base for img in ctx.modules):
        img = _module_image(gpu, X.function.module, sm_num, flags)
        if img is not None:
            ctx.modules.append(img)
    entry = prog.code_address(prog.functions[X.function.name].entry_pc)
    grid = GridInfo(X.grid_id, ctx_id, entry, entry, prog.code_base, tuple(X.grid_dim),
                    tuple(X.block_dim), nregs, X.kparams,
                    host_tid=tid, const_banks=banks)
    parked = {}
    for s in live[X.sched[live] == PARKED].tolist():
        key = f"{int(L.sm[s])}/{int(L.warp[s])}"
        parked[key] = parked.get(key, 0) | (1 << int(L.lane[s]))
    from gpudbg.dump.coredump.embedded import module_note
    handles = {i.handle for i in ctx.modules}
    loaded_modules = [m for m in _modules(gpu) if m.program.code_base in handles]
    if not any(m is X.function.module for m in loaded_modules):
        loaded_modules.append(X.function.module)
    note = {
        "generator": "gpudbg",
        "registers": {str(prog.code_base): {f: [list(m) for m in mp] for f, mp in maps.items()}},
        "fault": _fault_note(report, code_written),
        "flags": int(flags),
        "grids": {str(X.grid_id): {"kernel": X.function.name, "dynamic_shared": int(X.dynamic_shared)}},
        "at_barrier": parked,
        "device": {"global_memory": int(model.global_memory)},
        "modules": {str(m.program.code_base): module_note(m) for m in loaded_modules},
    }
    snap = DeviceSnapshot(
        dev_id=int(getattr(gpu, "ordinal", 0)), name=model.name, dev_type="gpudbg-sim",
        sm_type=f"sm_{sm_num}", sm_major=major, sm_minor=minor, num_sms=model.sm_count,
        warps_per_sm=model.warp_slots_per_sm, lanes_per_warp=model.lanes, regs_per_lane=nregs,
        preds_per_lane=npreds, pci_bus=model.pci_bus, pci_dev=model.pci_device,
        contexts=[ctx], grids=[grid], sms=[sms[k] for k in sorted(sms)], memory=segs, note=note,
        flags=int(flags), timestamp=int(time.time()))
    return snap


def _fault_note(report: FaultReport | None, written: E) -> dict | None:
    if report is None:
        return None
    return {
        "kind": report.kind.name, "code": int(report.kind), "written": int(written),
        "hang": report.hang.value if report.hang is not None else None,
        "title": report.title, "message": report.message, "kernel": report.kernel,
        "function": report.function, "pc": report.pc, "instruction": report.instruction,
        "ptx_file": report.ptx_file, "ptx_line": report.ptx_line,
        "source_file": report.source_file, "source_line": report.source_line,
        "block": list(report.block) if report.block else None,
        "thread": list(report.thread) if report.thread else None,
        "sm": report.sm, "warp": report.warp, "lane": report.lane, "address": report.address,
        "access_size": report.access_size, "space": report.space, "grid_id": report.grid_id,
    }
