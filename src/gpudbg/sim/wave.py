"""One wave of resident blocks: placement on SMs and warp slots, and the
execution state every instruction closure receives (the `X` of ops/).

Placement follows the occupancy rules of the device model: blocks per SM
from threads, registers and shared memory; a wave is `sm_count *
blocks_per_sm` blocks, dealt to SMs round-robin, each block taking the next
free warp slots of its SM. The state methods here are the executor's
mechanisms that instructions invoke: pc updates, calls and returns with
their stack frames, exits, barrier arrival and release, and fault reports
with exact coordinates.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpudbg.sim.device_model import occupancy
from gpudbg.sim import launch_limits
from gpudbg.sim.faults import CUDBGException, LaneFault
from gpudbg.sim.memory import GenericAddressing, SegmentedMemory, Space
from gpudbg.sim.fault_reporting import FaultReporting
from gpudbg.sim.state import EXITED, PARKED, WaveLayout

WARP = 32
NBARRIERS = 16
_EMPTY = np.zeros(0, dtype=np.uint32)


@dataclass
class WavePlan:
    waves: list  # list of lists of linear block ids
    blocks_per_sm: int
    threads_per_block: int
    slots_per_block: int
    warps_per_block: int


def build_waves(model, function, grid, block, shared_bytes) -> WavePlan:
    threads = block[0] * block[1] * block[2]
    nblocks = grid[0] * grid[1] * grid[2]
    per_sm = occupancy(model, threads, function.num_regs, function.static_shared + shared_bytes)
    per_sm = max(1, per_sm)
    cap = model.sm_count * per_sm
    waves = [list(range(s, min(s + cap, nblocks))) for s in range(0, nblocks, cap)]
    wpb = (threads + WARP - 1) // WARP
    return WavePlan(waves, per_sm, threads, wpb * WARP, wpb)


class BlockAxes:
    """blockIdx per slot, expanded from per-block values only for the axes
    a kernel actually reads (most read x alone)."""

    def __init__(self, per_block, slots_per_block: int):
        self._per_block = per_block
        self._spb = slots_per_block
        self._slots: list = [None, None, None]

    def __getitem__(self, axis: int) -> np.ndarray:
        a = self._slots[axis]
        if a is None:
            a = self._slots[axis] = np.repeat(self._per_block[axis].astype(np.uint32), self._spb)
        return a

    def __len__(self) -> int:
        return 3

    def __iter__(self):
        return (self[i] for i in range(3))


def _layout(model, plan: WavePlan, grid, block, wave_blocks) -> WaveLayout:
    """Per-slot coordinates, built from one block's pattern tiled over the
    wave (memory copies rather than arithmetic over every slot); only the
    block indices differ between equally sized waves of a launch."""
    nb = len(wave_blocks)
    lin = np.asarray(wave_blocks, dtype=np.int64)
    gx, gy = grid[0], grid[1]
    bxs, bys, bzs = lin % gx, (lin // gx) % gy, lin // (gx * gy)
    bid = list(zip(bxs.tolist(), bys.tolist(), bzs.tolist()))
    spb = plan.slots_per_block
    ctaid = BlockAxes((bxs, bys, bzs), spb)
    key = (nb, tuple(block), model.sm_count, plan.slots_per_block)
    base = _STATIC_LAYOUTS.get(key)
    if base is None:
        base = _static_layout(model, plan, block, nb, ctaid, bid)
        if len(_STATIC_LAYOUTS) >= 8:
            _STATIC_LAYOUTS.pop(next(iter(_STATIC_LAYOUTS)))
        _STATIC_LAYOUTS[key] = base
    return WaveLayout(base.nthreads, base.block_of, base.tid, ctaid, base.sm, base.warp, base.lane,
                      base.valid, bid, base.block_sm, base.threads_per_block, spb, base.linear_tid)


# The block-independent parts of a layout (read-only arrays), shared by
# every launch with the same geometry.
_STATIC_LAYOUTS: dict = {}


def _static_layout(model, plan, block, nb, ctaid, bid) -> WaveLayout:
    spb = plan.slots_per_block
    n = nb * spb
    t = np.arange(spb, dtype=np.int64)
    bx, by = block[0], block[1]
    pattern_valid = t < plan.threads_per_block
    tid = tuple(np.tile(a.astype(np.uint32), nb) for a in (t % bx, (t // bx) % by, t // (bx * by)))
    lane = np.tile((t % WARP).astype(np.uint32), nb)
    valid = np.tile(pattern_valid, nb)
    local_block = np.arange(nb)
    block_sm = (local_block % model.sm_count).astype(np.uint32)
    warp_base = ((local_block // model.sm_count) * plan.warps_per_block).astype(np.uint32)
    block_of = np.repeat(local_block, spb)
    sm = np.repeat(block_sm, spb)
    warp = np.repeat(warp_base, spb) + np.tile((t // WARP).astype(np.uint32), nb)
    linear_tid = np.tile(t, nb)
    return WaveLayout(n, block_of, tid, ctaid, sm, warp, lane, valid, bid, block_sm,
                      plan.threads_per_block, spb, linear_tid)


class LaunchResources:
    """Arrays and memories sized for the largest wave of a launch, reused by
    every wave so that later waves do not pay for fresh pages (and kept on
    the GPU for the next launch of the same shape). Like real hardware, a
    new block finds registers, shared and local memory as the previous
    occupant left them (deterministically)."""

    @classmethod
    def for_launch(cls, gpu, plan: WavePlan, function, shared_bytes: int, local_size: int) -> "LaunchResources":
        key = (id(function.program), function.name, max((len(w) for w in plan.waves), default=0),
               plan.slots_per_block,
               function.static_shared + int(shared_bytes), local_size)
        cached = getattr(gpu, "_launch_resources", None)
        if cached is not None and cached[0] == key and cached[2] is function.program:
            return cached[1]
        res = cls(plan, function, shared_bytes, local_size)
        gpu._launch_resources = (key, res, function.program)
        return res

    def __init__(self, plan: WavePlan, function, shared_bytes: int, local_size: int):
        nmax = max(len(w) for w in plan.waves) * plan.slots_per_block if plan.waves else 0
        nb = max((len(w) for w in plan.waves), default=0)
        shared = function.static_shared + int(shared_bytes)
        self.smem = SegmentedMemory(Space.SHARED, max(nb, 1), max(shared, 1))
        self.smem.set_uniform_limit(shared)
        self.lmem = SegmentedMemory(Space.LOCAL, max(nmax, 1), max(local_size, 1))
        self.lmem.set_uniform_limit(local_size)
        self._arrays: dict = {}

    def zeros(self, key, shape, dtype) -> np.ndarray:
        dtype = np.dtype(dtype)
        a = self._arrays.get(key)
        if a is None or a.shape != shape or a.dtype != dtype:
            a = np.zeros(shape, dtype=dtype)
            self._arrays[key] = a
        else:
            a.fill(0)
        return a

    def reuse(self, key, shape, dtype) -> np.ndarray:
        """Like zeros, but keeps the previous wave's contents."""
        dtype = np.dtype(dtype)
        a = self._arrays.get(key)
        if a is None or a.shape[1:] != shape[1:] or a.shape[0] < shape[0] or a.dtype != dtype:
            a = np.zeros(shape, dtype=dtype)
            self._arrays[key] = a
        return a[:shape[0]]


def device_heap(gpu):
    """The GPU's device-malloc heap, carved on first use as CUDA does."""
    heap = getattr(gpu, "heap", None)
    if heap is None:
        from gpudbg.sim.memory import DeviceHeap
        size = int(getattr(gpu, "malloc_heap_size", None) or gpu.model.malloc_heap_size)
        heap = gpu.heap = DeviceHeap(gpu.memory, size=size)
    return heap


def local_size_for(gpu, function) -> int:
    prog = function.program
    limit = int(getattr(gpu, "stack_size", None) or getattr(gpu.model, "default_stack_size", 1024))
    return max(function.local_size, limit if prog.recursive & prog.reachable(function.name) else 0)


class WaveExecution(FaultReporting):
    """Architectural state of one wave plus the mechanisms ops invoke."""

    def __init__(self, gpu, function, grid, block, shared_bytes, params, grid_id,
                 wave_blocks, plan: WavePlan, budget: int, res: LaunchResources):
        self.gpu = gpu
        self.function = function
        self.program = function.program
        self.model = gpu.model
        self.grid_dim = grid
        self.block_dim = block
        self.grid_id = grid_id
        self.kparams = bytes(params)
        self.kparam_offsets = {p.name: p.offset for p in function.params}
        self.dynamic_shared = int(shared_bytes)
        self.shared_per_block = function.static_shared + int(shared_bytes)
        self.shared_symbols = function.shared_layout
        self.envregs = [0] * 32
        self.on_brkpt = None
        self.observer = None
        self.tap = None      # the analysis tools' event sink (sim/instrument.py), if any
        self.budget = budget
        self.thread_instructions = 0
        self.steps = 0
        self.cycles = 0
        self.cycle_base = int(getattr(gpu, "clock_cycles", 0))
        self.step_pc = 0  # first pc of the step being executed (see clock)
        self.printf_out: list[str] = []
        L = self.layout = _layout(self.model, plan, grid, block, wave_blocks)
        self.plan = plan
        n = self.n = L.nthreads
        self.all_slots = np.arange(n, dtype=np.int64)
        prog = self.program
        reach = prog.reachable(function.name)
        self.regs = [res.reuse(("r", k), (n,), dt) if prog.reg_names[k][0] in reach else _EMPTY
                     for k, dt in enumerate(prog.reg_dtypes)]
        self.reg_ids = {id(a) for a in self.regs}  # identity of current register arrays
        entry = prog.functions[function.name].entry_pc
        self.all_valid = plan.threads_per_block == plan.slots_per_block
        if self.all_valid:
            self.sched = res.reuse("sched", (n,), np.int64)
            self.sched.fill(entry)
        else:
            self.sched = np.where(L.valid, np.int64(entry), EXITED).astype(np.int64)
        self.park_pc = res.reuse("park", (n,), np.int64)
        self.max_depth = prog.max_call_depth(function.name, self.stack_limit())
        calls = self.max_depth > 1
        # Without calls nothing moves a thread's depth or stack pointer, so
        # the arrays kept from an earlier wave are still all zero.
        self.depth = res.zeros("depth", (n,), np.int64) if calls else res.reuse("depth", (n,), np.int64)
        self.ret_stack = res.reuse("ret", (self.max_depth, n), np.int64) if calls else \
            res.reuse("ret", (1, n), np.int64)
        self.sp = res.zeros("sp", (n,), np.uint64) if calls else res.reuse("sp", (n,), np.uint64)
        self.params = {name: res.reuse(("p", name), (n, max(size, 1)), np.uint8)
                       for name, size in prog.param_vars.items()}
        # CC.CF is only defined after a .cc instruction writes it
        self.carry = res.reuse("carry", (n,), np.uint32)
        nb = len(wave_blocks)
        self.block_live = np.full(nb, plan.threads_per_block, dtype=np.int64)
        # only meaningful for parked threads, which set it as they park
        self.bar_wait = res.reuse("barwait", (n,), np.int64)
        self.bar_arrivals = np.zeros((nb, NBARRIERS), dtype=np.int64)
        self.bar_expected = np.zeros((nb, NBARRIERS), dtype=np.int64)
        self.bar_redsum = np.zeros((nb, NBARRIERS), dtype=np.int64)
        self.gmem = gpu.memory
        self.smem = res.smem
        self.local_size = local_size_for(gpu, function)
        self.lmem = res.lmem
        self.generic = GenericAddressing(self.gmem, self.smem, self.lmem)
        self._wave_blocks = wave_blocks

    # ------------------------------------------------------------ basics
    @property
    def heap(self):
        return device_heap(self.gpu)

    def count(self, idx) -> int:
        return self.n if idx is None else len(idx)

    def stack_limit(self) -> int:
        return int(getattr(self.gpu, "stack_size", None) or getattr(self.model, "default_stack_size", 1024))

    def is_register(self, value) -> bool:
        return id(value) in self.reg_ids

    def block_segments(self, idx):
        b = self.layout.block_of
        return b if idx is None else b[idx]

    def thread_segments(self, idx):
        return self.all_slots if idx is None else idx

    def set_pc(self, idx, target) -> None:
        if idx is None:
            if np.ndim(target):
                self.sched[:] = target
            else:
                self.sched.fill(target)
        else:
            self.sched[idx] = target

    def split_guard(self, c, idx):
        """-> (threads whose guard holds, the others); None means every
        thread of the wave, an empty array none."""
        k, neg = c.guard_reg, c.guard_neg
        p = self.regs[k]
        sel = p if idx is None else p[idx]
        if neg:
            sel = ~sel
        base = self.all_slots if idx is None else idx
        if sel.all():
            return idx, base[:0]
        if not sel.any():
            return base[:0], idx
        return base[sel], base[~sel]

    def count_work(self, nsel: int, executed: int) -> None:
        self.thread_instructions += nsel * executed
        self.steps += 1
        self.cycles += executed

    # ------------------------------------------------------------ time
    def clock(self, at_pc: int | None = None) -> int:
        """Device cycles so far; `at_pc` (a clock read's own pc) adds the
        instructions of the current step before it, so two reads in one
        basic block still differ, as on hardware."""
        extra = at_pc - self.step_pc if at_pc is not None and at_pc >= self.step_pc else 0
        return self.cycle_base + self.cycles + extra

    def globaltimer(self) -> int:
        khz = getattr(self.model, "clock_rate_khz", 1_980_000)
        return int(self.clock() * 1_000_000 // khz)

    def advance_clock_ns(self, ns: int) -> None:
        khz = getattr(self.model, "clock_rate_khz", 1_980_000)
        self.cycles += int(ns) * khz // 1_000_000

    # ------------------------------------------------------------ exits
    def exit_threads(self, idx) -> None:
        if idx is None:
            self.sched.fill(EXITED)
            self.block_live[:] = 0
            return
        self.sched[idx] = EXITED
        self.block_live -= np.bincount(self.layout.block_of[idx], minlength=len(self.block_live))
        if (self.bar_arrivals > 0).any():
            self.release_barriers()

    # ------------------------------------------------------------ calls
    def call_threads(self, idx, pc: int, info, arg_src) -> None:
        slots = self.all_slots if idx is None else idx
        prog = self.program
        caller = prog.function_list[prog.function_of_pc[pc]]
        depth = self.depth[slots]
        new_sp = self.sp[slots] + np.uint64(caller.frame_size)
        over = (new_sp + np.uint64(info.frame_size) > np.uint64(self.local_size)) | (depth + 1 > self.max_depth)
        if over.any():
            bad = int(np.flatnonzero(over)[0])
            raise LaneFault(CUDBGException.CUDBG_EXCEPTION_LANE_USER_STACK_OVERFLOW,
                            f"call stack overflow calling {info.name}: the thread needs more than its "
                            f"{self.local_size}-byte stack (call depth {int(depth[bad]) + 1})", bad)
        if info.name in prog.recursive:
            self._save_frame(slots, info, new_sp)
        for i, pname in enumerate(info.param_names):
            src = arg_src[i]
            dst = self.params[pname]
            if src[0] == "param":
                s = self.params[src[1]]
                w = min(s.shape[1], dst.shape[1])
                dst[slots, :w] = s[slots, :w]
            else:
                v = np.broadcast_to(np.asarray(src[1](self, idx)).astype(src[2]), (len(slots),))
                raw = np.ascontiguousarray(v).view(np.uint8).reshape(len(slots), -1)
                w = min(raw.shape[1], dst.shape[1])
                dst[slots, :w] = raw[:, :w]
        self.ret_stack[depth, slots] = pc + 1
        self.depth[slots] = depth + 1
        self.sp[slots] = new_sp
        self.set_pc(slots if idx is not None else None, info.entry_pc)

    def _save_frame(self, slots, info, sp) -> None:
        """A recursive function's registers and parameters are saved in its
        own frame (the callee-saved area after its locals) so the nested
        activation cannot clobber the outer one."""
        off = sp + np.uint64(info.save_offset)
        for k in self.program.saved_registers[info.name]:
            a = self.regs[k]
            dt = a.dtype if a.dtype != np.bool_ else np.dtype(np.uint8)
            self.lmem.store(slots, off, a[slots].astype(dt), dt)
            off = off + np.uint64(8)
        for name in info.param_names + info.return_names:
            store = self.params[name]
            w = store.shape[1]
            words = (w + 7) // 8
            raw = np.zeros((len(slots), words * 8), dtype=np.uint8)
            raw[:, :w] = store[slots]
            raw = raw.view(np.uint64)
            # one word at a time: memory vector accesses are 1/2/4/8 wide only
            for i in range(words):
                self.lmem.store(slots, off + np.uint64(8 * i), np.ascontiguousarray(raw[:, i]), np.dtype(np.uint64))
            off = off + np.uint64(8 * words)

    def _restore_frame(self, slots, info, sp) -> None:
        off = sp + np.uint64(info.save_offset)
        for k in self.program.saved_registers[info.name]:
            a = self.regs[k]
            dt = a.dtype if a.dtype != np.bool_ else np.dtype(np.uint8)
            a[slots] = self.lmem.load(slots, off, dt).astype(a.dtype)
            off = off + np.uint64(8)
        for name in info.param_names:
            store = self.params[name]
            w = store.shape[1]
            words = (w + 7) // 8
            v = np.empty((len(slots), words), dtype=np.uint64)
            for i in range(words):
                v[:, i] = self.lmem.load(slots, off + np.uint64(8 * i), np.dtype(np.uint64))
            store[slots] = v.view(np.uint8)[:, :w]
            off = off + np.uint64(8 * words)

    def return_threads(self, idx) -> None:
        if self.max_depth <= 1:  # no calls: every ret is the kernel's
            self.exit_threads(idx)
            return
        slots = self.all_slots if idx is None else idx
        depth = self.depth[slots]
        top = depth == 0
        if top.all():
            self.exit_threads(idx)
            return
        if top.any():
            self.exit_threads(slots[top])
            slots, depth = slots[~top], depth[~top]
        prog = self.program
        d = depth - 1
        targets = self.ret_stack[d, slots]
        callee = prog.function_list[prog.function_of_pc[int(self.sched[slots[0]])]]
        for t in np.unique(targets):
            sub = slots[targets == t]
            call = prog.code[int(t) - 1]
            for mine, theirs in zip(callee.return_names, call.built.info.get("returns", [])):
                if theirs is None:
                    continue
                src, dst = self.params[mine], self.params[theirs]
                w = min(src.shape[1], dst.shape[1])
                dst[sub, :w] = src[sub, :w]
            if callee.name in prog.recursive:
                self._restore_frame(sub, callee, self.sp[sub])
            caller = prog.function_list[prog.function_of_pc[int(t) - 1]]
            self.sp[sub] = self.sp[sub] - np.uint64(caller.frame_size)
            self.sched[sub] = t
        self.depth[slots] = d

    # ------------------------------------------------------------ barriers
    def barrier_arrive(self, idx, pc, ids, counts, wait: bool, preds) -> None:
        """Count arrivals per (block, barrier). If this group is everything
        the barrier waits for in each of its blocks (converged code), the
        threads pass straight through; otherwise they park until
        release_barriers finds their barrier complete."""
        nb = len(self.block_live)
        blocks = self.layout.block_of if idx is None else self.layout.block_of[idx]
        ids = np.asarray(ids, dtype=np.int64)
        if ids.ndim == 0 or (ids.size and (ids == ids.flat[0]).all()):
            groups = [(int(ids.flat[0]) if ids.size else 0, slice(None))]
        else:
            groups = [(int(b), ids == b) for b in np.unique(ids)]
        for bid, _ in groups:
            if not 0 <= bid < NBARRIERS:
                bad = int(np.flatnonzero(np.broadcast_to(ids, blocks.shape) == bid)[0]) if ids.ndim else 0
                raise LaneFault(CUDBGException.CUDBG_EXCEPTION_WARP_ILLEGAL_INSTRUCTION,
                                f"barrier id {bid} is out of range 0..15", bad)
        add = None
        for bid, sel in groups:
            bl = blocks[sel]
            add = np.bincount(bl, minlength=nb)
            self.bar_arrivals[:, bid] += add
            if counts is not None:
                c = np.broadcast_to(np.asarray(counts, dtype=np.int64), blocks.shape)[sel]
                self.bar_expected[bl, bid] = c
            if preds is not None:
                pv = np.broadcast_to(np.asarray(preds), blocks.shape)[sel]
                self.bar_redsum[:, bid] += np.bincount(bl, weights=pv.astype(np.float64), minlength=nb).astype(np.int64)
        if wait and preds is None and len(groups) == 1:
            bid = groups[0][0]
            arr = self.bar_arrivals[:, bid]
            exp = np.where(self.bar_expected[:, bid] > 0, self.bar_expected[:, bid], self.block_live)
            touched = add > 0
            if (arr[touched] == add[touched]).all() and (arr[touched] >= exp[touched]).all():
                self.bar_arrivals[touched, bid] = 0
                self.bar_expected[touched, bid] = 0
                self.set_pc(idx, pc + 1)
                if self.tap is not None:
                    self.tap.barrier_complete(self, np.flatnonzero(touched), bid)
                return
        where = slice(None) if idx is None else idx
        if wait:
            self.sched[where] = PARKED
            self.park_pc[where] = pc + 1
            self.bar_wait[where] = ids
        else:
            self.sched[where] = pc + 1
        self.release_barriers()

    def release_barriers(self, final: bool = False) -> bool:
        released_any = False
        for bid in np.flatnonzero(self.bar_arrivals.any(axis=0)):
            arr = self.bar_arrivals[:, bid]
            exp = np.where(self.bar_expected[:, bid] > 0, self.bar_expected[:, bid], self.block_live)
            complete = (arr > 0) & (arr >= exp)
            if not complete.any():
                continue
            waiting = (self.sched == PARKED) & (self.bar_wait == bid) & complete[self.layout.block_of]
            rel = np.flatnonzero(waiting)
            if len(rel):
                self._bar_red_results(rel, bid, arr)
                self.sched[rel] = self.park_pc[rel]
                self.bar_wait[rel] = -1
                released_any = True
            self.bar_arrivals[complete, bid] = 0
            self.bar_expected[complete, bid] = 0
            self.bar_redsum[complete, bid] = 0
            if self.tap is not None:
                self.tap.barrier_complete(self, np.flatnonzero(complete), int(bid))
        return released_any

    def _bar_red_results(self, rel, bid, arrivals) -> None:
        if not self.program.has_bar_red:
            return
        pcs = self.park_pc[rel] - 1
        for p in np.unique(pcs):
            c = self.program.code[int(p)]
            info = c.built.info
            if info.get("mode") != "red":
                continue
            sub = rel[pcs == p]
            blocks = self.layout.block_of[sub]
            s = self.bar_redsum[blocks, bid]
            a = arrivals[blocks]
            if info["redop"] == "popc":
                v = s.astype(np.uint32)
            elif info["redop"] == "and":
                v = s == a
            else:
                v = s > 0
            info["dest"](self, sub, v)

    # ------------------------------------------------------------ printf & strings
    def thread_order_key(self, slots):
        """Sort key putting threads in (block, thread) order, as device
        printf output appears."""
        linear_block = np.asarray(self._wave_blocks, dtype=np.int64)[self.layout.block_of[slots]]
        return linear_block * (1 << 20) + self.layout.linear_tid[slots]

    def emit_printf(self, text: str) -> None:
        if launch_limits.admit_printf(self.gpu, text):   # the FIFO drops what does not fit
            self.printf_out.append(text)

    def flush_printf(self) -> None:
        if self.printf_out:
            sink = getattr(self.gpu, "printf_buffer", None)
            if sink is not None:
                sink.extend(self.printf_out)
            self.printf_out = []

    def read_generic(self, slot: int, addr: int, nbytes: int) -> bytes:
        from gpudbg.sim.memory import LOCAL_WINDOW_BASE, SHARED_WINDOW_BASE, WINDOW_SIZE
        if SHARED_WINDOW_BASE <= addr < SHARED_WINDOW_BASE + WINDOW_SIZE:
            return bytes(self.smem.read(int(self.layout.block_of[slot]), addr - SHARED_WINDOW_BASE, nbytes))
        if LOCAL_WINDOW_BASE <= addr < LOCAL_WINDOW_BASE + WINDOW_SIZE:
            return bytes(self.lmem.read(slot, addr - LOCAL_WINDOW_BASE, nbytes))
        return bytes(self.gmem.read(addr, nbytes))

    def read_cstring(self, slot: int, addr: int, limit: int = 4096) -> str:
        out = bytearray()
        while len(out) < limit:
            chunk = self.read_generic(slot, addr + len(out), 1)
            if chunk == b"\0":
                break
            out += chunk
        return out.decode("utf-8", errors="replace")

    def block_idx_of(self, slot: int):
        c = self.layout.ctaid
        return (int(c[0][slot]), int(c[1][slot]), int(c[2][slot]))

    def thread_idx_of(self, slot: int):
        t = self.layout.tid
        return (int(t[0][slot]), int(t[1][slot]), int(t[2][slot]))
