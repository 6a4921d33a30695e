"""The region emitter (regions.py): one LLVM function that runs a loop
region thread by thread until each thread leaves it.

Same ABI as a segment (emit.py) with three more environment entries: the
pc the selection starts at (`region_pc`), the per-thread instruction cap
(`region_cap`) and two results written on success, the thread-instructions
executed and the longest thread's path (`region_work`, `region_cycles`).
Each thread's exit pc is written to the wave's scheduling pcs.

The one idea: registers live in allocas while a thread runs, so LLVM's
mem2reg turns the loop's registers into SSA values with phis across the
loop's blocks, and a thread's values stay in machine registers for the
whole loop; they are stored back (to scratch rows for those the
interpreter would need again after a failure, see regions.py) only when
the thread leaves.
"""
from __future__ import annotations

from llvmlite import ir as L

from gpudbg.sim.native.emit import I8, I64, SegmentEmitter, lowering_of, storage_type
from gpudbg.sim.native.environment import ENV
from gpudbg.sim.native.regions import _plain_branch


class RegionEmitter(SegmentEmitter):
    """Registers in allocas; blocks per leader; branches native."""

    TRACKS_RAW_FLOATS = False     # a raw value of one block would not dominate another's reads

    def __init__(self, module: L.Module, name: str, program, plan, symbols: list | None = None):
        super().__init__(module, name, program, plan, symbols)
        self.slots: dict[int, L.Value] = {}
        self.thread_start = None

    def _slot(self, k: int) -> L.Value:
        a = self.slots.get(k)
        if a is None:
            ty = storage_type(self.program.reg_dtypes[k])
            array = self._reg_array(k)
            with self.b.goto_block(self.entry):
                a = self.b.alloca(ty)
            with self.b.goto_block(self.thread_start):
                self.b.store(self.b.load(self.b.gep(array, [self.t], inbounds=True)), a)
            self.slots[k] = a
        return a

    def _load_register(self, k: int) -> L.Value:
        return self.b.load(self._slot(k))

    def _store_register(self, k: int, v: L.Value) -> None:
        self.b.store(v, self._slot(k))

    def _emit_guarded(self, c) -> None:
        inst = c.inst
        low = lowering_of(inst)
        if inst.guard is None:
            low.fn(self, inst)
            return
        with self.b.if_then(self.guard_value(inst)):        # mem2reg merges the register slots
            low.fn(self, inst)

    def build_region(self) -> None:
        b = self.b
        plan = self.plan
        code = self.program.code
        self._fail_sources = []
        self.active = None
        self.function_ir = self.program.functions[code[plan.start].function].ir
        work = b.alloca(I64)
        longest = b.alloca(I64)
        steps = b.alloca(I64)
        b.store(I64(0), work)
        b.store(I64(0), longest)
        loop = self.fn.append_basic_block("loop")
        after = self.fn.append_basic_block("after")
        self.fail_block = self.fn.append_basic_block("fail")
        b.cbranch(self._first_pass_runs(), loop, after)
        self.i, self.t, _ = self._thread_loop_head(loop, self.entry)
        self.thread_start = b.block
        b.store(I64(0), steps)
        start_pc = self.env(ENV["region_pc"])
        cap = self.env(ENV["region_cap"])
        blocks = {pc: self.fn.append_basic_block(f"pc{pc}") for pc in plan.leaders}
        latch = self.fn.append_basic_block("leave")
        exit_pc = None
        # dispatch on the entry pc (emitted last into thread_start, see below)
        exits: list[tuple[L.Block, int]] = []

        def goto(pc: int) -> None:
            if pc in blocks:
                b.branch(blocks[pc])
            else:
                exits.append((b.block, pc))
                b.branch(latch)

        for pc in plan.leaders:
            b.position_at_end(blocks[pc])
            q = pc
            while True:
                if q != pc and q in blocks:
                    goto(q)
                    break
                if q >= plan.end:
                    goto(q)
                    break
                c = code[q]
                self.current = c
                # count the instruction and enforce the cap at each block start
                if q == pc:
                    length = 0
                    r = q
                    while r < plan.end and (r == pc or r not in blocks):
                        length += 1
                        if _plain_branch(code[r]) is not None:
                            break
                        r += 1
                    before = b.load(steps)
                    go_on = self.fn.append_basic_block(f"run{pc}")
                    pause = self.fn.append_basic_block(f"pause{pc}")
                    b.cbranch(b.icmp_unsigned("<", before, cap), go_on, pause)
                    b.position_at_end(pause)        # past the cap: leave here, resume at the next call
                    exits.append((pause, pc))
                    b.branch(latch)
                    b.position_at_end(go_on)
                    b.store(b.add(before, I64(length)), steps)
                target = _plain_branch(c)
                if target is not None:
                    if c.inst.guard is None:
                        goto(target)
                    else:
                        p = self.guard_value(c.inst)
                        taken = self.fn.append_basic_block(f"taken{q}")
                        fall = self.fn.append_basic_block(f"fall{q}")
                        b.cbranch(p, taken, fall)
                        b.position_at_end(taken)
                        goto(target)
                        b.position_at_end(fall)
                        goto(q + 1)
                    break
                self._emit_guarded(c)
                q += 1
        # leaving: the exit pc, the thread's registers, the counts
        b.position_at_end(latch)
        exit_pc = b.phi(I64)
        for blk, pc in exits:
            exit_pc.add_incoming(I64(pc), blk)
        sched = self.env_pointer(ENV["sched"], I64)
        b.store(exit_pc, b.gep(sched, [self.t], inbounds=True))
        for k in sorted(plan.flushed):
            v = b.load(self._slot(k))
            if k in plan.scratch_regs:
                row = self.scratch_row(plan.scratch_regs[k], v.type)
                b.store(v, b.gep(row, [self.i], inbounds=True))
            else:
                b.store(v, b.gep(self._reg_array(k), [self.t], inbounds=True))
                self.dirty.add(k)
        n = b.load(steps)
        b.store(b.add(b.load(work), n), work)
        old = b.load(longest)
        b.store(b.select(b.icmp_unsigned(">", n, old), n, old), longest)
        i = self.i
        nxt = b.add(i, I64(1))
        i.add_incoming(nxt, b.block)
        b.cbranch(b.icmp_signed("<", nxt, self.n_arg), loop, after)
        # the dispatch, now that every register slot is known
        b.position_at_end(self.thread_start)
        sw = b.switch(start_pc, self.fail_block)
        self._fail_sources.append((self.thread_start, self.i))
        for pc, blk in blocks.items():
            sw.add_case(I64(pc), blk)
        b.position_at_end(self.fail_block)
        at = b.phi(I64)
        for blk, pos in self._fail_sources:
            at.add_incoming(pos, blk)
        b.ret(at)
        b.position_at_end(after)
        with b.if_then(b.icmp_unsigned("!=", self.env(ENV["phase"]), I64(2))):
            b.store(b.load(work), b.gep(self.env_arg, [I64(ENV["region_work"])]))
            b.store(b.load(longest), b.gep(self.env_arg, [I64(ENV["region_cycles"])]))
        self.dirty = {k for k in plan.scratch_regs if k in plan.flushed}
        self.deferred = []
        self._second_pass()
        b.ret(I64(-1))


__all__ = ["RegionEmitter", "I8"]
