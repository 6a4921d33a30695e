"""One wave of resident blocks: placement on SMs and warp slots, and the
execution state every instruction closure receives (the `X` of ops/).

Placement follows the occupancy rules of the device model: blocks per SM
from threads, registers and shared memory; a wave is `sm_count *
blocks_per_sm` blocks, dealt to SMs round-robin, each block taking the next
free warp slots of its SM. Waves are ranges of linear block ids computed on
demand (sim/wave_plan.py), so host memory does not grow with the grid; what
every wave of a launch shares (arrays, memories, the kernel's constants) is
made once per launch in LaunchResources (sim/launch_resources.py), so a wave of tiny blocks costs
little more than its steps. The state methods here are the executor's
mechanisms that instructions invoke: pc updates, calls and returns with
their stack frames, exits, barrier arrival and release, and fault reports
with exact coordinates.
"""
from __future__ import annotations

import numpy as np

from gpudbg.sim import launch_limits, reserved_smem, warp_barrier
from gpudbg.sim.faults import CUDBGException, LaneFault
from gpudbg.sim.memory import GenericAddressing
from gpudbg.sim.fault_reporting import FaultReporting
from gpudbg.sim.launch_resources import NBARRIERS, LaunchResources, device_heap
from gpudbg.sim.scheduling_pcs import SchedulingPcs
from gpudbg.sim.state import EXITED, PARKED
from gpudbg.sim.wave_plan import (  # noqa: F401  (re-exported: the executor's names)
    BlockAxes, WavePlan, WaveRanges, block_array, build_waves, wave_layout)


WARP = 32


class WaveExecution(SchedulingPcs, FaultReporting):
    """Architectural state of one wave plus the mechanisms ops invoke."""

    def __init__(self, gpu, function, grid, block, shared_bytes, params, grid_id,
                 wave_blocks, plan: WavePlan, budget: int, res: LaunchResources, template=None):
        # what the wave's shape decides (kept by a reused wave, restart())
        self.gpu = gpu
        self.function = function
        self.program = function.program
        self.model = gpu.model
        self.grid_dim = grid
        self.block_dim = block
        const = res.constants(gpu, function, None if template is None else template.stack_limit)
        self.kparam_offsets = const.param_offsets
        self.dynamic_shared = int(shared_bytes)
        # the block's shared segment: its shared memory, and the reserved
        # region (sim/reserved_smem.py) when the kernel names it
        if template is None:
            self.shared_per_block = reserved_smem.segment_bytes(function, gpu.model, shared_bytes)
            self.reserved_smem = reserved_smem.region(function, gpu.model, shared_bytes)
        else:     # the launch's (sim/launch_template.py), the same values computed once per shape
            self.shared_per_block = template.segment_bytes
            self.reserved_smem = template.region
        self.shared_symbols = function.shared_layout
        self.wave_blocks = wave_blocks      # linear block ids (a range from the plan)
        self._block_array: np.ndarray | None = None
        L = self.layout = wave_layout(self.model, plan, grid, block, wave_blocks)
        self.plan = plan
        self.cluster_dim = plan.cluster
        n = self.n = L.nthreads
        self.all_slots = res.all_slots(n)
        arrays = self.arrays = res.wave_arrays(const, self.program, n)
        self._entry_pc = int(const.entry)
        self.all_valid = plan.threads_per_block == plan.slots_per_block
        self._start_pcs = None if self.all_valid else res.start_pcs(L, const.entry)
        # the slots uniform_pc speaks for: None every slot; a padded block
        # shape's real threads (its padding slots stay EXITED)
        self.uniform_slots = None if self.all_valid else res.valid_slots(L)
        self._sched = arrays.sched
        self.park_pc = arrays.park_pc
        self.max_depth = const.max_depth
        self.depth = arrays.depth
        self.sp = arrays.sp
        self.ret_stack = arrays.ret_stack
        # CC.CF is only defined after a .cc instruction writes it
        self.carry = arrays.carry
        self.block_live = np.empty(len(wave_blocks), dtype=np.int64)
        # only meaningful for parked threads, which set it as they park
        self.bar_wait = arrays.bar_wait
        self._no_barriers = res.no_barriers(len(wave_blocks))
        self.gmem = gpu.memory
        self.smem = res.smem
        self.local_size = const.local_size
        self.lmem = res.lmem
        self.generic = GenericAddressing(self.gmem, self.smem, self.lmem)
        self._start(params, grid_id, budget)

    def _start(self, params, grid_id: int, budget: int) -> None:
        """The state a launch starts from, on top of the shape's: the values
        every launch starts with (restart() gets them back from the
        attributes keep_for_restart took), then _launch_state's."""
        self.on_brkpt = None
        self.observer = None
        self.tap = None      # the analysis tools' event sink (sim/instrument.py), if any
        self.thread_instructions = 0
        self.steps = 0
        self.cycles = 0
        self.step_pc = 0  # first pc of the step being executed (see clock)
        self.cluster_barrier = None   # barrier.cluster state (sim/cluster.py), on first use
        self.warp_sync_mask = None    # bar.warp.sync masks of parked lanes (sim/warp_barrier.py)
        self.warp_sync_parked = 0
        self.reg_ptrs = None      # register addresses for native segments (sim/native), on first use
        self.native_env = None
        # the table of a run before a restart, to take over: engine.wave_environment
        # puts it in the state a restart puts back (_fresh)
        self.native_env_kept = None
        self.native_on = False    # the executor turns it on when compiled segments may run
        self.native_threads = 1   # host threads for one native call (GPUDBG_THREADS)
        self.native_gate = None   # a sub-wave's launch-wide lock, dropped around native calls (sim/subwaves.py)
        self.folds_steps = True   # native code may fold scheduler steps (False: a random order draws each)
        self.drops_dead_registers = False   # the PLAIN variant runs: dead registers may keep older values
        # per (block, barrier) counters: a shared read-only zero table until
        # the wave's first barrier arrival makes them its own
        self.bar_arrivals = self.bar_expected = self.bar_redsum = self._no_barriers
        self._bars_own = False
        self.async_unit = None   # copies in flight and mbarrier waiters (sim/async_copy.py), on first use
        self.param_copy = None   # the parameter window's copy in global memory (sim/param_window.py), on first use
        # %envreg0..31: zero but for a cooperative grid's workspace address,
        # which the executor writes into a wave it never restarts
        self.envregs = [0] * 32
        self._launch_state(params, grid_id, budget)

    def _launch_state(self, params, grid_id: int, budget: int) -> None:
        """What differs between two launches of one shape, and the
        containers and arrays a run changes in place."""
        self.grid_id = grid_id
        self.kparams = bytes(params)
        self.budget = budget
        self.cycle_base = getattr(self.gpu, "clock_cycles", 0)     # (an int: sim/timing.py)
        self.printf_out: list[str] = []
        arrays = self.arrays
        self.regs = list(arrays.regs)
        self.reg_ids = set(arrays.reg_ids)  # identity of current register arrays
        self.params = dict(arrays.params)
        if self.all_valid:
            self.uniform_pc = self._pending_pc = self._entry_pc
        else:
            np.copyto(self._sched, self._start_pcs)
            self.uniform_pc = self._entry_pc
        # Without calls nothing moves a thread's depth or stack pointer, so
        # the arrays kept from an earlier wave are still all zero.
        if self.max_depth > 1:
            self.depth.fill(0)
            self.sp.fill(0)
        self.block_live.fill(self.plan.threads_per_block)     # np.full, without its Python frame

    def keep_for_restart(self) -> None:
        """Remember the attributes as a launch starts (a shallow copy),
        for restart(). Before any instruction ran, every attribute is the
        shape's or _start's, so putting them back and running _start again
        is what a new WaveExecution of the same shape would hold."""
        # (not holding itself: a dict in a reference cycle lives until the
        # cyclic collector runs, and with it the arrays of every wave of a
        # long grid: the interpreter's saxpy 2^22 ran 2-5x slower so)
        self._fresh = dict(self.__dict__)

    def restart(self, params, grid_id: int, budget: int) -> "WaveExecution":
        """This wave, as a new launch of the same shape starts it: the
        attributes the last launch added or replaced are dropped, the
        containers it changed in place are made anew (_launch_state)."""
        d = self.__dict__
        fresh = d["_fresh"]
        d.clear()
        d.update(fresh)
        d["_fresh"] = fresh
        self._launch_state(params, grid_id, budget)
        return self

    def restart_at(self, wave_blocks, params, grid_id: int, budget: int) -> "WaveExecution":
        """restart() for other blocks of the same count: the next wave of
        a long grid, or the first wave of the next launch. Only the layout
        knows which blocks a wave holds (its block coordinates, made from
        `wave_blocks` on first use); every array beside it is sized by
        the count, so the next wave needs no new WaveExecution (30-90 us
        each in saxpy 2^22's launches, right after a native pass has
        flushed the caches, against 3 us for this)."""
        fresh = self._fresh
        if len(wave_blocks) != len(fresh["wave_blocks"]):
            raise ValueError(f"a wave of {len(fresh['wave_blocks'])} blocks restarted for {len(wave_blocks)}")
        fresh["wave_blocks"] = wave_blocks
        fresh["_block_array"] = None
        fresh["layout"] = wave_layout(self.model, self.plan, self.grid_dim, self.block_dim, wave_blocks)
        return self.restart(params, grid_id, budget)

    @property
    def _wave_blocks(self) -> np.ndarray:
        """The wave's linear block ids as an int64 array (made on first use)."""
        a = self._block_array
        if a is None:
            a = self._block_array = block_array(self.wave_blocks)
        return a

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
        if self.async_unit is not None:     # the exiting threads' copies land first
            self.async_unit.threads_exit(self, self.all_slots if idx is None else idx)
        if idx is None:
            self.uniform_pc = self._pending_pc = int(EXITED)
            self.block_live[:] = 0
            return
        self.sched[idx] = EXITED
        # every real thread of a padded wave: all slots are EXITED now
        self.uniform_pc = int(EXITED) if idx is self.uniform_slots else None
        owners = self.layout.block_of[idx]
        if len(self.block_live) == 1:   # one block: they are all its own (np.bincount releases the GIL: a hand-off)
            self.block_live[0] -= len(owners)
        else:
            self.block_live -= np.bincount(owners, minlength=len(self.block_live))
        if self._bars_own and (self.bar_arrivals > 0).any():
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
        self.uniform_pc = None
        self.depth[slots] = d

    # ------------------------------------------------------------ barriers
    def barrier_arrive(self, idx, pc, ids, counts, wait: bool, preds) -> None:
        """Count arrivals per (block, barrier). If this group is everything
        the barrier waits for in each of its blocks (converged code), the
        threads pass straight through; otherwise they park until
        release_barriers finds their barrier complete."""
        nb = len(self.block_live)
        if idx is None and wait and counts is None and preds is None and self._whole_wave_passes(ids):
            # the whole wave, every thread of every block, at one plain
            # bar.sync with nothing pending on that barrier: all blocks
            # complete it now (the general path's bincount over the wave
            # cost a matmul 512 launch about 50 ms for 64 barriers)
            self.set_pc(None, pc + 1)
            if self.tap is not None:
                self.tap.barrier_complete(self, np.arange(nb), int(ids))
            return
        if not self._bars_own:
            self.bar_arrivals = np.zeros((nb, NBARRIERS), dtype=np.int64)
            self.bar_expected = np.zeros((nb, NBARRIERS), dtype=np.int64)
            self.bar_redsum = np.zeros((nb, NBARRIERS), dtype=np.int64)
            self._bars_own = True
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
        self.uniform_pc = None
        if wait:
            self.sched[where] = PARKED
            self.park_pc[where] = pc + 1
            self.bar_wait[where] = ids
        else:
            self.sched[where] = pc + 1
        self.release_barriers()

    def _whole_wave_passes(self, ids) -> bool:
        """Whether barrier `ids` (one id) has no arrivals pending in any
        block, so that a whole-wave arrival completes it everywhere."""
        if np.ndim(ids) != 0:
            return False
        bid = int(ids)
        if not 0 <= bid < NBARRIERS:
            return False                 # the general path reports it
        return not self._bars_own or not self.bar_arrivals[:, bid].any()

    def release_barriers(self, final: bool = False) -> bool:
        released_any = False
        if self.cluster_barrier is not None and self.cluster_barrier.release(self):
            return True     # barrier.cluster (sim/ops/cluster_ops.py): a phase completed
        if self.warp_sync_parked and warp_barrier.release(self):
            return True     # bar.warp.sync: lanes whose mask's other lanes exited
        if final and self.async_unit is not None and self.async_unit.flush_stalled(self):
            return True     # copies in flight landed: they may have completed an mbarrier phase
        if not self._bars_own:      # no arrival yet in this wave
            return False
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
                self.uniform_pc = None
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
        # a wave's blocks are consecutive in linear order, so the resident
        # index orders them (and stays small for the largest grids)
        return self.layout.block_of[slots].astype(np.int64) * (1 << 20) + self.layout.linear_tid[slots]

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
