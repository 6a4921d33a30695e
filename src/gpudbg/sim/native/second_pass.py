"""A store segment's second pass (the emitter's part that writes): the
first pass computes and checks every selected thread's address and value
and records them in scratch rows; the second, only when no check failed,
performs the writes in slot order (the interpreter's last-writer-wins) and
commits the registers a failed selection must find unchanged
(segments.py's scratch registers).

The one idea: a write is a deferred action, emitted once and run in the
second pass's thread loop over values recorded by the first, so no load of
the segment can observe another thread's store and a failed check leaves
memory untouched. A write under a guard (`@p st`, an if body's store) runs
only for threads whose flag the first pass set, and the pass skips groups
of eight threads where none writes (a run of them in one call of
next_flagged_group, which the first pass's prescan loop uses too).

What it deliberately does not do: run without the first pass (the engine
splits the passes between host threads with env `phase`, never drops one).
"""
from __future__ import annotations

from typing import Callable

from llvmlite import ir as L

from gpudbg.sim.native.environment import ENV

I8, I64 = L.IntType(8), L.IntType(64)
ALL_EIGHT = 0x0101010101010101    # eight flag bytes of 1: every thread of the group writes
_NEXT_GROUP = "gpudbg_next_flagged_group"
WIDE = 64      # flag bytes next_flagged_group tests in one go


def next_flagged_group(module: L.Module) -> L.Function:
    """i64 next(i8* flags, i64 pos, i64 n), pos a multiple of 8: the first
    q >= pos, q = pos + 8k, whose group of eight flag bytes has one set,
    or the first q whose group is not whole (q + 8 > n: the caller's
    thread by thread path, or its end). Testing WIDE bytes at a time: a
    tree reduction's sparse levels have one flagged group in 4 to 32, and
    stepping eight at a time over the rest was a third of such a level's
    time. One copy per module, called only after an empty group."""
    fn = module.globals.get(_NEXT_GROUP)
    if fn is not None:
        return fn
    fn = L.Function(module, L.FunctionType(I64, [I8.as_pointer(), I64, I64]), name=_NEXT_GROUP)
    fn.linkage = "internal"
    fn.attributes.add("noinline")
    flags, pos, n = fn.args
    entry, wide, wide_test, narrow, narrow_test, found = (
        fn.append_basic_block(name) for name in ("entry", "wide", "wide_test", "narrow", "narrow_test", "found"))
    b = L.IRBuilder(entry)
    b.branch(wide)
    b.position_at_end(wide)
    at = b.phi(I64)
    at.add_incoming(pos, entry)
    b.cbranch(b.icmp_signed("<=", b.add(at, I64(WIDE)), n), wide_test, narrow)
    b.position_at_end(wide_test)
    words = b.bitcast(b.gep(flags, [at], inbounds=True), I64.as_pointer())
    any_on = b.load(words, align=1)
    for k in range(1, WIDE // 8):
        any_on = b.or_(any_on, b.load(b.gep(words, [I64(k)], inbounds=True), align=1))
    at.add_incoming(b.add(at, I64(WIDE)), wide_test)
    b.cbranch(b.icmp_unsigned("==", any_on, I64(0)), wide, narrow)
    b.position_at_end(narrow)
    q = b.phi(I64)
    q.add_incoming(at, wide)
    q.add_incoming(at, wide_test)
    b.cbranch(b.icmp_signed("<=", b.add(q, I64(8)), n), narrow_test, found)
    b.position_at_end(narrow_test)
    eight = b.load(b.bitcast(b.gep(flags, [q], inbounds=True), I64.as_pointer()), align=1)
    q.add_incoming(b.add(q, I64(8)), narrow_test)
    b.cbranch(b.icmp_unsigned("==", eight, I64(0)), narrow, found)
    b.position_at_end(found)
    b.ret(q)
    return fn


class SecondPass:
    """Mixed into emit.SegmentEmitter: needs its builder `b`, function
    `fn`, `plan`, `program`, `deferred`, `dirty`, `checks_only`, `n_arg`,
    `i`/`t`, scratch_row, env, _reg_array, _thread_loop_head, _success."""

    def defer(self, action: Callable) -> None:
        """A store segment's write: `action(emitter, i, t)` runs in the
        second pass, for each selected thread, after every check passed.
        Values it needs must have been recorded in scratch rows by the
        first pass (emitter.record / emitter.recorded)."""
        self.deferred.append(action)

    def record(self, slot: int, value: L.Value) -> None:
        """First pass: keep `value` (<= 8 bytes) for this thread in scratch row `slot`."""
        if self.checks_only:
            return          # nothing is written back: the values are not kept
        row = self.scratch_row(slot, value.type)
        self.b.store(value, self.b.gep(row, [self.i], inbounds=True))

    def recorded(self, slot: int, ty: L.Type) -> L.Value:
        """Second pass: the value recorded in row `slot` for this thread."""
        row = self.scratch_row(slot, ty)
        return self.b.load(self.b.gep(row, [self.i], inbounds=True))

    def _second_pass(self) -> None:
        b = self.b
        live = self.plan.live_out
        commits = [k for k in self.plan.scratch_regs if k in self.dirty and (live is None or k in live)]
        if not self.deferred and not commits:
            return
        self.plan.two_pass = True
        first_only = self.fn.append_basic_block("first_pass_only")
        go = self.fn.append_basic_block("second_pass")
        b.cbranch(b.icmp_unsigned("==", self.env(ENV["phase"]), I64(1)), first_only, go)
        b.position_at_end(first_only)
        b.ret(self._success())
        b.position_at_end(go)
        slot = getattr(self, "_active_slot", None) if self.deferred else None
        if slot is not None and not commits:
            self._guarded_second_pass(slot)
            return
        start = b.block
        loop = self.fn.append_basic_block("pass2")
        done = self.fn.append_basic_block("pass2_done")
        b.cbranch(b.icmp_signed(">", self.n_arg, I64(0)), loop, done)
        self.i, self.t, _ = self._thread_loop_head(loop, start)
        i, t = self.i, self.t
        if self.deferred:
            if slot is None:
                for action in self.deferred:
                    action(self)
            else:
                on = b.icmp_unsigned("!=", self.recorded(slot, I8), I8(0))
                with b.if_then(on):
                    for action in self.deferred:
                        action(self)
        from gpudbg.sim.native.emit import storage_type     # (emit imports this module)
        for k in commits:
            dtype = self.program.reg_dtypes[k]
            row = self.scratch_row(self.plan.scratch_regs[k], storage_type(dtype))
            v = b.load(b.gep(row, [i], inbounds=True))
            b.store(v, b.gep(self._reg_array(k), [t], inbounds=True))
        nxt = b.add(i, I64(1))
        i.add_incoming(nxt, b.block)
        b.cbranch(b.icmp_signed("<", nxt, self.n_arg), loop, done)
        b.position_at_end(done)

    def _group_threads(self, entry, loop, first, end, after, flags) -> None:
        """From `entry`: the writes of threads first..end-1 in slot order,
        each one's only where its byte in `flags` is set (None: all), then
        on to `after`."""
        b = self.b
        b.position_at_end(entry)
        b.branch(loop)
        self.i, self.t, _ = self._thread_loop_head(loop, entry, first=first)
        i = self.i
        if flags is None:
            for action in self.deferred:
                action(self)
        else:
            with b.if_then(b.icmp_unsigned("!=", b.load(b.gep(flags, [i], inbounds=True)), I8(0))):
                for action in self.deferred:
                    action(self)
        nxt = b.add(i, I64(1))
        i.add_incoming(nxt, b.block)
        b.cbranch(b.icmp_signed("<", nxt, end), loop, after)

    def _guarded_second_pass(self, slot: int) -> None:
        """The second pass of a write under a guard (`@p st`, an if body's
        store): the first pass left one byte per thread saying whether it
        writes, and the pass looks at eight at a time, skipping groups
        where none does (a tree reduction's later levels write from one
        thread in 2..256, yet read every thread's byte: a third of such a
        level's time), and writing all eight without a test where all do
        (saxpy's `if (i < n)` body: its flag tests were a sixth of the
        pass). Threads still write in slot order."""
        b = self.b
        flags = self.scratch_row(slot, I8)
        start = b.block
        outer = self.fn.append_basic_block("pass2_group")
        look = self.fn.append_basic_block("pass2_look")
        threads = self.fn.append_basic_block("pass2_threads")
        any_off = self.fn.append_basic_block("pass2_any_off")
        dense = self.fn.append_basic_block("pass2_dense")
        dense_loop = self.fn.append_basic_block("pass2_all")
        loop = self.fn.append_basic_block("pass2")
        nxt_group = self.fn.append_basic_block("pass2_next_group")
        done = self.fn.append_basic_block("pass2_done")
        b.cbranch(b.icmp_signed(">", self.n_arg, I64(0)), outer, done)
        b.position_at_end(outer)
        j = b.phi(I64, name="group")
        j.add_incoming(I64(0), start)
        j8 = b.add(j, I64(8))
        whole = b.icmp_signed("<=", j8, self.n_arg)
        end = b.select(whole, j8, self.n_arg)
        b.cbranch(whole, look, threads)
        b.position_at_end(look)
        eight = b.load(b.bitcast(b.gep(flags, [j], inbounds=True), I64.as_pointer()), align=1)
        skip = self.fn.append_basic_block("pass2_skip")
        b.cbranch(b.icmp_unsigned("==", eight, I64(0)), skip, any_off)
        b.position_at_end(skip)
        after_run = b.call(next_flagged_group(self.module), [flags, j8, self.n_arg])
        j.add_incoming(after_run, skip)
        b.cbranch(b.icmp_signed("<", after_run, self.n_arg), outer, done)
        b.position_at_end(any_off)
        b.cbranch(b.icmp_unsigned("==", eight, I64(ALL_EIGHT)), dense, threads)
        self._group_threads(dense, dense_loop, j, j8, nxt_group, None)
        self._group_threads(threads, loop, j, end, nxt_group, flags)
        b.position_at_end(nxt_group)
        j.add_incoming(j8, nxt_group)
        b.cbranch(b.icmp_signed("<", j8, self.n_arg), outer, done)
        b.position_at_end(done)
