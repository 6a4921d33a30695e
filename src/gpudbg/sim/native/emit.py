"""The segment emitter: one run of straight-line PTX instructions becomes
one LLVM function that executes it for a selection of thread slots.

ABI of every segment: `i64 seg(i64* regs, i64* idx, i64 n, i64* env)`:
`regs[k]` is the address of register k's array (sim/state.py: one element
per thread slot), `idx` the selected slots (null: slots 0..n-1), `env` the
wave's environment table (sim/native/environment.py). It returns -1 when
every selected thread ran the segment, else the position in the selection
of the first thread whose check failed; then nothing observable has
happened (see below) and the interpreter runs the same instructions, which
raises the exact fault report.

The one idea: registers are per thread, so a segment may run thread by
thread (all of thread 0's instructions, then thread 1's) and give the same
registers as the interpreter's instruction-by-instruction order, provided
memory cannot tell the orders apart. Segments are cut so that it cannot
(sim/native/segments.py): any number of loads, or at most one store or
atomic and it comes last. A segment with a store runs in two passes: the
first computes and checks every thread's address and value and records
them; the second, only if no check failed, performs the writes in slot
order (the interpreter's last-writer-wins). A failed check must leave
nothing behind that the interpreter's re-run would see: registers that the
segment both reads on entry and writes (`add r, r, 1`) are written to
scratch and committed only after the whole selection succeeded; the others
are recomputed identically by the re-run.

Lowerings (sim/native/lower_*.py) register per opcode with `@lower`; each
validates the instruction's form first and raises NotNative, before
emitting anything, for forms it does not handle: those stay interpreted.
What it deliberately does not do: keep values in machine registers across
instructions of one thread (every read is a load from the register array;
LLVM's optimizer removes what it can prove redundant), or run control
instructions, warp-level operations and barriers (segments end there).
"""
from __future__ import annotations

import dataclasses

from dataclasses import dataclass
from typing import Callable

import numpy as np
from llvmlite import ir as L

from gpudbg.ptx import ir
from gpudbg.ptx.types import PTX_TYPES
from gpudbg.sim.native.environment import ENV
from gpudbg.sim.native import window_checks
from gpudbg.sim.native.if_bodies import TAKEN_BITS
from gpudbg.sim.native.raw_floats import RawFloats
from gpudbg.sim.native.recompute import Recompute
from gpudbg.sim.native.second_pass import SecondPass, next_flagged_group
from gpudbg.sim.ops.base import Mods, UnsupportedInstruction, immediate_value

I1, I8, I16, I32, I64 = L.IntType(1), L.IntType(8), L.IntType(16), L.IntType(32), L.IntType(64)
F16, F32, F64 = L.HalfType(), L.FloatType(), L.DoubleType()
_INTS = {1: I8, 2: I16, 4: I32, 8: I64}
_UINT = {1: np.dtype(np.uint8), 2: np.dtype(np.uint16), 4: np.dtype(np.uint32), 8: np.dtype(np.uint64)}
BOOL = np.dtype(np.bool_)
ENV_SYMBOLS = ENV["symbols"]
OWN_SITE_CACHES = 8    # global access sites of a function with a cache of their own (site_cache)


class NotNative(Exception):
    """An instruction form with no native lowering: it stays interpreted."""


@dataclass
class Lowering:
    fn: Callable          # (SegmentEmitter, ir.Instruction) -> None
    effect: str           # "none", "read" (loads: may fault), "write" (store/atomic: ends a segment)


_LOWERINGS: dict[tuple[str, str], Lowering] = {}


def lower(*opcodes: str, effect: str = "none", types: str = "*"):
    """Register a lowering for base opcodes, for the instructions whose
    first type modifier is of a kind in `types` ("f" float, "i" signed,
    "u" unsigned, "b" bits, "p" predicate; "*" any): integer and float
    forms of one opcode live in different modules."""
    def deco(fn):
        for name in opcodes:
            for kind in ("*",) if types == "*" else tuple(types):
                _LOWERINGS[(name, kind)] = Lowering(fn, effect)
        return fn
    return deco


def type_kind(inst: ir.Instruction) -> str:
    """The kind of the instruction's first type modifier (see lower)."""
    for m in inst.modifiers:
        t = PTX_TYPES.get(m)
        if t is not None:
            return {"s": "i", "pred": "p"}.get(t.kind, t.kind)
    return "*"


def lowering_of(inst: ir.Instruction) -> Lowering | None:
    _load_lowerings()
    if any(PTX_TYPES[m].kind == "f" for m in inst.modifiers if m in PTX_TYPES):
        # a float operand anywhere (cvt.s32.f32, set.u32.f32): the float
        # module's lowering decides, if it has one for the opcode
        low = _LOWERINGS.get((inst.opcode, "f"))
        if low is not None:
            return low
    low = _LOWERINGS.get((inst.opcode, type_kind(inst)))
    return low if low is not None else _LOWERINGS.get((inst.opcode, "*"))


def _load_lowerings() -> None:
    """Import every lower_* module once (they register themselves)."""
    if _LOWERINGS:
        return
    import importlib
    import pkgutil
    import gpudbg.sim.native as pkg
    for info in pkgutil.iter_modules(pkg.__path__):
        if info.name.startswith("lower_"):
            importlib.import_module(f"gpudbg.sim.native.{info.name}")


def storage_type(dtype: np.dtype) -> L.Type:
    """How a register of `dtype` is stored: its bytes (bool: one byte)."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return {2: F16, 4: F32, 8: F64}[dtype.itemsize]
    return _INTS[dtype.itemsize]


def value_type(dtype: np.dtype) -> L.Type:
    """How a value of `dtype` travels in a lowering (bool: i1)."""
    return I1 if np.dtype(dtype).kind == "b" else storage_type(dtype)


class SegmentEmitter(SecondPass, RawFloats, Recompute):
    """Builds one segment function; lowerings call its read/write/env/check
    helpers while it walks the threads."""

    def __init__(self, module: L.Module, name: str, program, plan, symbols: list | None = None):
        # checks_only: a precheck function (engine.py, FULL variant): every
        # check of the segment and nothing stored, so LLVM keeps only what
        # addresses and checks need; set by the caller before build()
        self.checks_only = False
        self.module = module
        self.symbols = symbols if symbols is not None else []   # (kind, name) of the env's symbol table
        self.program = program
        self.plan = plan          # segments.SegmentPlan: scratch registers and slots
        fnty = L.FunctionType(I64, [I64.as_pointer(), I64.as_pointer(), I64, I64.as_pointer()])
        self.fn = L.Function(module, fnty, name=name)
        self.fn.attributes.add("nounwind")
        self.regs_arg, self.idx_arg, self.n_arg, self.env_arg = self.fn.args
        for a in (self.regs_arg, self.idx_arg, self.env_arg):
            a.add_attribute("noalias")
        self.entry = self.fn.append_basic_block("entry")
        self.b = L.IRBuilder(self.entry)
        self._reg_base: dict[int, L.Value] = {}
        self._env: dict[int, L.Value] = {}
        self.values: dict[int, L.Value] = {}   # register -> its current value in this thread's iteration
        self.dirty: set[int] = set()           # registers written in the iteration
        self._stored_at: dict[int, L.Value] = {}   # register -> the merged value already stored (_emit_guarded)
        # register -> (its value before the NaN was made canonical, dtype): write_float
        self.raw_floats: dict[int, tuple[L.Value, np.dtype]] = {}
        self._block_writes: set[int] = set()   # registers written in the current guarded block
        self.function_ir = None
        self.deferred: list[Callable] = []   # second-pass actions of a store segment
        self.i = None    # position in the selection (i64), inside the thread loop
        self.t = None    # thread slot (i64)
        self.fail_block = None
        self.current = None   # the Compiled being lowered
        self.reads: set[int] = set()     # registers read / written (the planner's liveness)
        self.writes: set[int] = set()
        self._sites = 0                  # global access sites so far (site_cache)
        self._shared_sites: dict[tuple[int, int], tuple] = {}
        self._runs_slot = None           # the prescan's row of body-runs bytes (_prescan)
        self.remat: dict[int, int] = {}  # register -> pc of the definition recomputed for it (remat.py)

    # ----------------------------------------------------------- environment
    def load_invariant(self, ptr: L.Value, align: int | None = None) -> L.Value:
        """A load of memory no segment writes during the call (the
        environment, symbol and allocation tables, layout arrays, kernel
        parameters): marked so LLVM may hoist it out of the thread loop."""
        v = self.b.load(ptr, align=align)
        md = self._env.get("invariant")
        if md is None:
            md = self._env["invariant"] = self.module.add_metadata([])
        v.set_metadata("invariant.load", md)
        return v

    def env(self, index: int) -> L.Value:
        """env[index] as i64, loaded once in the entry block."""
        v = self._env.get(index)
        if v is None:
            used = self.program.__dict__.setdefault("native_env_used", set())
            used.add(index)                  # the wave fills only the entries some code reads
            with self.b.goto_block(self.entry):
                p = self.b.gep(self.env_arg, [I64(index)], inbounds=True)
                v = self.load_invariant(p)
            self._env[index] = v
        return v

    def env_pointer(self, index: int, elem: L.Type) -> L.Value:
        """env[index] as a pointer to `elem` (entry block)."""
        key = (index, str(elem))
        v = self._env.get(key)
        if v is None:
            raw = self.env(index)
            with self.b.goto_block(self.entry):
                v = self.b.inttoptr(raw, elem.as_pointer())
            self._env[key] = v
        return v

    def symbol(self, kind: str, name: str) -> L.Value:
        """A symbol's value for this wave (environment.py resolves the table)."""
        key = (kind, name)
        if key not in self.symbols:
            self.symbols.append(key)
        cached = self._env.get(("symbol", key))
        if cached is None:
            # loaded once, in the entry block: the table holds every symbol
            # the program names, so the load is safe before any check, and
            # what depends on it alone (a kernel parameter's address and
            # bounds check) leaves the thread loop
            table = self.env_pointer(ENV_SYMBOLS, I64)
            with self.b.goto_block(self.entry):
                cached = self.load_invariant(self.b.gep(table, [I64(self.symbols.index(key))], inbounds=True))
            self._env[("symbol", key)] = cached
        return cached

    def site_cache(self, need: int, size: int) -> tuple[L.Value, L.Value, L.Value]:
        """Per access site: allocas (lo, hlim, delta) of the last allocation
        hit, for accesses of `size` bytes: an access at addr hits when
        lo <= addr < hlim (hlim = the allocation's end - (size - 1), so
        the test needs no addr + size), empty at segment entry (lo = 2^64 - 1,
        hlim = 0: nothing hits). The function's first OWN_SITE_CACHES
        sites have their own; later sites share one per (`need`, `size`)
        (a cache holds an allocation that passed the `need` check).
        Each cache is three values carried around the thread loop: the
        hundred loads of an unrolled loop made a thousand phis that cost
        LLVM seconds (register allocation, value propagation), and such
        loads mostly read one array, which a shared cache keeps hitting.
        Which cache a site uses decides only hit or search, never the
        outcome of a check."""
        self._sites += 1
        if self._sites <= OWN_SITE_CACHES:
            return self._new_site_cache()
        shared = self._shared_sites.get((need, size))
        if shared is None:
            shared = self._shared_sites[(need, size)] = self._new_site_cache()
        return shared

    def _new_site_cache(self) -> tuple[L.Value, L.Value, L.Value]:
        with self.b.goto_block(self.entry):
            lo, hi, delta = (self.b.alloca(I64) for _ in range(3))
            self.b.store(I64(-1), lo)
            self.b.store(I64(0), hi)
            self.b.store(I64(0), delta)
        return lo, hi, delta

    def _reg_array(self, k: int) -> L.Value:
        dtype = self.program.reg_dtypes[k]
        v = self._reg_base.get(k)
        if v is None:
            with self.b.goto_block(self.entry):
                raw = self.load_invariant(self.b.gep(self.regs_arg, [I64(k)], inbounds=True))
                v = self.b.inttoptr(raw, storage_type(dtype).as_pointer())
            self._reg_base[k] = v
        return v

    def scratch_row(self, slot: int, elem: L.Type) -> L.Value:
        """Scratch row `slot` (8 bytes per selected thread) as elem*."""
        base = self.env_pointer(ENV["scratch"], I8)
        with self.b.goto_block(self.entry):
            off = self.b.mul(self.n_arg, I64(8 * slot))
            p = self.b.gep(base, [off], inbounds=True)
            return self.b.bitcast(p, elem.as_pointer())

    # ----------------------------------------------------------- registers
    def mods(self, inst: ir.Instruction) -> Mods:
        """The instruction's modifiers (sim/ops/base.Mods): a lowering takes
        what it understands and calls finish(), which refuses the rest."""
        return Mods(inst)

    def register(self, operand: ir.Register) -> tuple[int, np.dtype]:
        return self.program.register_index(self.function_ir, operand.name)

    def read(self, operand, dtype) -> L.Value:
        """The operand as `dtype` (the interpreter's reader semantics)."""
        dtype = np.dtype(dtype)
        if isinstance(operand, ir.Register):
            k, rd = self.register(operand)
            self.reads.add(k)
            raw = self._load_register(k)
            if rd.kind == "b":
                raw = self.b.icmp_unsigned("!=", raw, I8(0))
            return self.convert(raw, rd, dtype)
        if isinstance(operand, ir.Immediate):
            return self.constant(immediate_value(operand, dtype), dtype)
        if isinstance(operand, ir.Negated):
            return self.b.not_(self.read(operand.operand, BOOL))
        if isinstance(operand, ir.Symbol):       # a variable's address (sim/native/addressing.py)
            from gpudbg.sim.native.addressing import read_symbol
            return self.convert(read_symbol(self, operand), np.dtype(np.uint64), dtype)
        if isinstance(operand, ir.SpecialRegister):
            from gpudbg.sim.native.special import read_special
            raw = read_special(self, operand)
            return self.convert(raw, np.dtype(np.uint32), dtype)
        raise NotNative(f"operand {operand!r}")

    def write(self, operand, value: L.Value, dtype) -> None:
        """Store a `dtype` value into the operand's register (the
        interpreter's writer semantics: as_dtype to the register's type)."""
        if isinstance(operand, ir.Sink):
            return
        if not isinstance(operand, ir.Register):
            raise NotNative(f"cannot write {operand!r}")
        k, rd = self.register(operand)
        v = self.convert(value, np.dtype(dtype), rd)
        if rd.kind == "b":
            v = self.b.zext(v, I8)
        self.writes.add(k)
        self.raw_floats.pop(k, None)
        self._store_register(k, v)
        self.dirty.add(k)
        self._block_writes.add(k)

    def _load_register(self, k: int) -> L.Value:
        """Register k's current value in this thread's iteration (its
        storage type): cached, loaded from its array on first use."""
        raw = self.values.get(k)
        if raw is None:
            pc = self.remat.get(k)
            if pc is not None:
                raw = self._recompute(k, pc)
            else:
                raw = self.b.load(self.b.gep(self._reg_array(k), [self.t], inbounds=True))
            self.values[k] = raw
        return raw

    def _store_register(self, k: int, v: L.Value) -> None:
        self.values[k] = v           # stored at the end of the thread's iteration, if live after

    def constant(self, value, dtype) -> L.Value:
        dtype = np.dtype(dtype)
        if dtype.kind == "b":
            return I1(int(bool(value)))
        if dtype.kind == "f":
            bits = int(np.asarray(value, dtype=dtype).view(_UINT[dtype.itemsize]))
            return self.b.bitcast(_INTS[dtype.itemsize](bits), storage_type(dtype))
        return _INTS[dtype.itemsize](int(np.asarray(value, dtype=dtype).view(_UINT[dtype.itemsize])))

    def convert(self, v: L.Value, src: np.dtype, dst: np.dtype) -> L.Value:
        """sim/ops/base.as_dtype in LLVM: same width reinterprets, other
        widths keep bits (floats) or extend by the source's signedness."""
        src, dst = np.dtype(src), np.dtype(dst)
        b = self.b
        if src == dst:
            return v
        if dst.kind == "b":
            if src.kind == "f":
                return b.fcmp_unordered("!=", v, L.Constant(v.type, 0.0))
            return b.icmp_unsigned("!=", v, L.Constant(v.type, 0))
        if src.kind == "b":
            if dst.kind == "f":
                return b.uitofp(v, storage_type(dst))
            return b.zext(v, storage_type(dst))
        if src.itemsize == dst.itemsize:
            st = storage_type(dst)
            return v if v.type == st else b.bitcast(v, st)
        if src.kind == "f":                      # keep the float's bits, then resize as unsigned
            v = b.bitcast(v, _INTS[src.itemsize])
            src = _UINT[src.itemsize]
        target = _INTS[dst.itemsize]
        if dst.itemsize < src.itemsize:
            r = b.trunc(v, target)
        elif src.kind == "i":
            r = b.sext(v, target)
        else:
            r = b.zext(v, target)
        return r if dst.kind != "f" else b.bitcast(r, storage_type(dst))

    # ----------------------------------------------------------- the body
    def build(self, compiled: list) -> None:
        """Emit the thread loop over `compiled` (Compiled entries)."""
        b = self.b
        self._fail_sources: list = []
        self.active = None
        loop = self.fn.append_basic_block("loop")
        after = self.fn.append_basic_block("after")
        self.fail_block = self.fn.append_basic_block("fail")
        self._taken = []
        branches = [(int(p), int(t)) for p, t in getattr(self.plan, "if_branches", ())]
        prescan = getattr(self.plan, "prescan", None)
        if prescan is None or self.checks_only:
            b.cbranch(self._first_pass_runs(), loop, after)
            self.i, self.t, body_start = self._thread_loop_head(loop, self.entry)
        else:     # (a selection by index, GPUDBG_THREADS's parts, gets no prescan and skips nothing)
            choose = self.fn.append_basic_block("choose")
            head = self.fn.append_basic_block("prescan")
            b.cbranch(self._first_pass_runs(), choose, after)
            b.position_at_end(choose)
            b.cbranch(self._has_idx(), loop, head)
            before = self._prescan(choose, head, loop, [c for c in compiled if c.pc < prescan],
                                   next(c for c in compiled if c.pc == prescan))
            self.i, self.t, body_start = self._thread_loop_head(loop, before, skip=(self._runs_slot, after))
            self.i.add_incoming(I64(0), choose)
        self.windows = window_checks.plan(self.program, compiled, getattr(self.plan, "last_write", None), branches)
        self.window_verified: set = set()
        targets = dict(branches)
        body_of = {}      # pc of an if body's instruction -> makes it guarded by its branch's not-p
        for c in compiled:
            self.current = c
            self.function_ir = self.program.functions[c.function].ir
            if c.pc in targets:
                implied = self._emit_if_branch(c)
                body_of.update((q, implied) for q in range(c.pc + 1, targets[c.pc]))
            elif c.pc in body_of:
                self._emit_guarded(c, body_of[c.pc])
            else:
                self._emit_guarded(c)
        if not self.checks_only:
            self._flush()
        i = self.i
        nxt = b.add(i, I64(1))
        i.add_incoming(nxt, b.block)
        b.cbranch(b.icmp_signed("<", nxt, self.n_arg), loop, after)
        b.position_at_end(self.fail_block)
        if self._fail_sources:
            at = b.phi(I64)
            for blk, pos in self._fail_sources:
                at.add_incoming(pos, blk)
            b.ret(at)
        else:
            b.unreachable()
        b.position_at_end(after)
        if not self.checks_only:
            self._second_pass()
        b.ret(self._success())

    def _success(self) -> L.Value:
        """A successful call's return: -1, minus the threads that ran each
        if-converted body (segments.py), the k-th body's count in bits
        TAKEN_BITS*k and up (engine.NativeSegment.account_body), which the
        executor counts as the interpreter's separate steps would have."""
        taken = getattr(self, "_taken", None)      # (a region has no if body)
        if not taken:
            return I64(-1)
        b = self.b
        total = b.load(taken[0])
        for k, counter in enumerate(taken[1:], start=1):
            total = b.or_(total, b.shl(b.load(counter), I64(TAKEN_BITS * k)))
        return b.sub(I64(-1), total)

    def _emit_if_branch(self, c) -> Callable:
        """`@p bra L` over an if body of the segment: count the threads
        that run it; the body's instructions are emitted guarded by not-p
        (build), as the returned function makes them."""
        inst = c.inst
        with self.b.goto_block(self.entry):
            taken = self.b.alloca(I64)
            self.b.store(I64(0), taken)
        self._taken.append(taken)
        runs = self.b.not_(self.guard_value(inst))
        self.b.store(self.b.add(self.b.load(taken), self.b.zext(runs, I64)), taken)
        return lambda body: dataclasses.replace(body, guard=inst.guard, guard_negated=not inst.guard_negated)

    def _first_pass_runs(self) -> L.Value:
        """n > 0 and the call is not for the second pass only (env
        `phase`: 0 both passes, 1 the first only, 2 the second only; the
        engine splits the passes when several host threads share a
        selection, so that no thread writes before every thread checked)."""
        b = self.b
        return b.and_(b.icmp_signed(">", self.n_arg, I64(0)),
                      b.icmp_unsigned("!=", self.env(ENV["phase"]), I64(2)))

    def _prescan(self, before, head, main_loop, prefix: list, branch) -> L.Block:
        """The first loop of a segment with a prescan (segments.py
        prescan_branch): for every thread, the instructions before the
        branch (their live registers stored, as the main loop would) and
        one byte in a scratch row saying whether the thread runs the body.
        That row is also the body's write flags for the second pass
        (_emit_guarded), so a group of eight threads the main loop skips
        leaves exactly what its threads, skipping the body, would have
        left. It runs for the whole wave only (`before` branches to it when
        the call has no index array). Returns the loop's last block, whence
        the main loop starts."""
        b = self.b
        saved = (self.values, self.dirty, self.raw_floats, self._block_writes, self._stored_at)
        self.values, self.dirty, self.raw_floats, self._block_writes, self._stored_at = {}, set(), {}, set(), {}
        b.position_at_end(head)         # (slots 0..n-1: the whole wave, no index array)
        self.i = self.t = b.phi(I64, name="i")
        self.i.add_incoming(I64(0), before)
        for c in prefix:
            self.current = c
            self.function_ir = self.program.functions[c.function].ir
            self._emit_guarded(c)
        self.current = branch
        self.function_ir = self.program.functions[branch.function].ir
        self._runs_slot = self.new_slot()
        self.record(self._runs_slot, b.zext(b.not_(self.guard_value(branch.inst)), I8))
        self._flush()
        i = self.i
        nxt = b.add(i, I64(1))
        i.add_incoming(nxt, b.block)
        last = b.block
        b.cbranch(b.icmp_signed("<", nxt, self.n_arg), head, main_loop)
        self.values, self.dirty, self.raw_floats, self._block_writes, self._stored_at = saved
        return last

    def _thread_loop_head(self, loop, before, first: L.Value = I64(0), skip: tuple | None = None):
        """In `loop`: i = phi (`first` coming from `before`), t = idx ?
        idx[i] : i (idx only read when not null). Leaves the builder in
        the body block. `skip` (row, exit): at each whole group of eight
        positions whose bytes in scratch row `row` are all zero, go on
        with the next group that has one set (second_pass.next_flagged_group),
        or to `exit` after the last."""
        b = self.b
        b.position_at_end(loop)
        i = b.phi(I64, name="i")
        i.add_incoming(first, before)
        if skip is not None:
            row, leave = skip
            look = self.fn.append_basic_block("group_look")
            skipped = self.fn.append_basic_block("group_skipped")
            thread = self.fn.append_basic_block("thread")
            nxt = b.add(i, I64(8))
            whole = b.and_(b.icmp_unsigned("==", b.and_(i, I64(7)), I64(0)), b.icmp_signed("<=", nxt, self.n_arg))
            whole = b.and_(whole, b.not_(self._has_idx()))
            b.cbranch(whole, look, thread)
            b.position_at_end(look)
            eight = b.load(b.bitcast(b.gep(self.scratch_row(row, I8), [i], inbounds=True), I64.as_pointer()),
                           align=1)
            b.cbranch(b.icmp_unsigned("==", eight, I64(0)), skipped, thread)
            b.position_at_end(skipped)
            after_run = b.call(next_flagged_group(self.module), [self.scratch_row(row, I8), nxt, self.n_arg])
            i.add_incoming(after_run, skipped)
            b.cbranch(b.icmp_signed("<", after_run, self.n_arg), loop, leave)
            b.position_at_end(thread)
        pick = self.fn.append_basic_block("pick")
        body = self.fn.append_basic_block("body")
        head = b.block
        b.cbranch(self._has_idx(), pick, body)
        b.position_at_end(pick)
        picked = b.load(b.gep(self.idx_arg, [i], inbounds=True))
        b.branch(body)
        b.position_at_end(body)
        t = b.phi(I64, name="t")
        t.add_incoming(i, head)
        t.add_incoming(picked, pick)
        return i, t, body

    def _has_idx(self) -> L.Value:
        v = self._env.get("has_idx")
        if v is None:
            with self.b.goto_block(self.entry):
                v = self.b.icmp_unsigned("!=", self.b.ptrtoint(self.idx_arg, I64), I64(0))
            self._env["has_idx"] = v
        return v

    def check(self, ok: L.Value) -> None:
        """Continue only if `ok` (i1); else the segment returns this
        thread's selection position and the interpreter takes over."""
        cont = self.fn.append_basic_block("ok")
        self.b.cbranch(ok, cont, self.fail_block)
        self._fail_sources.append((self.b.block, self.i))
        self.b.position_at_end(cont)

    def new_slot(self) -> int:
        """A fresh scratch row for this segment (record/recorded)."""
        s = self.plan.nslots
        self.plan.nslots += 1
        return s

    def predicate_combiner(self, inst: ir.Instruction, bool_op: str | None):
        """setp/set's .and/.or/.xor with the predicate in the last operand,
        as a function of the comparison's result (identity without one)."""
        if bool_op is None:
            return lambda v: v
        c = self.read(inst.operands[3], BOOL)
        op = {"and": self.b.and_, "or": self.b.or_, "xor": self.b.xor}[bool_op]
        return lambda v: op(v, c)

    def guard_value(self, inst: ir.Instruction) -> L.Value:
        """The instruction's guard (@p / @!p) as i1."""
        p = self.read(inst.guard, BOOL)
        return self.b.not_(p) if inst.guard_negated else p

    def _emit_guarded(self, c, implied=None) -> None:
        """`implied`: makes the instruction as emitted (an if body's
        instruction gets the branch's negated guard)."""
        inst = c.inst if implied is None else implied(c.inst)
        low = lowering_of(inst)
        if inst.guard is None:
            low.fn(self, inst)
            return
        b = self.b
        p = self.guard_value(inst)
        if low.effect == "write":
            # the second pass writes only for threads whose guard held
            # (an if body's store after a prescan: the prescan's row)
            runs = self._runs_slot
            self._active_slot = runs if implied is not None and runs is not None else self.new_slot()
            self.record(self._active_slot, b.zext(p, I8))
        before = dict(self.values)
        raw_before = dict(self.raw_floats)
        outer_writes, self._block_writes = self._block_writes, set()
        pre = b.block
        then = self.fn.append_basic_block("guarded")
        merge = self.fn.append_basic_block("merged")
        b.cbranch(p, then, merge)
        b.position_at_end(then)
        self.active = p
        low.fn(self, inst)
        self.active = None
        then_end = b.block
        b.branch(merge)
        b.position_at_end(merge)
        written = self._block_writes
        self._block_writes = outer_writes | written
        after = self.values
        self.values = {k: v for k, v in before.items()}
        # a raw value made in the block does not dominate what follows
        self.raw_floats = {k: v for k, v in raw_before.items() if k not in written}
        live = self.plan.live_out
        for k in written:
            old = before.get(k)
            in_place = False
            if old is None:              # the value on entry, loaded where both paths can see it
                array = self._reg_array(k)   # (before goto_block: nested goto_blocks end at a block's end)
                with b.goto_block(pre):
                    old = b.load(b.gep(array, [self.t], inbounds=True))
                # stored where it is written: threads whose guard fails keep
                # the array's value without a load and a store each (the
                # debugger's variant stores every register; a sparse tree
                # level's body registers cost it two accesses per thread)
                in_place = not self.checks_only and k not in self.plan.scratch_regs and \
                    (live is None or k in live)
                if in_place:
                    with b.goto_block(then_end):
                        b.store(after[k], b.gep(array, [self.t], inbounds=True))
            phi = b.phi(old.type)
            phi.add_incoming(after[k], then_end)
            phi.add_incoming(old, pre)
            self.values[k] = phi
            if in_place:
                self._stored_at[k] = phi
        # values only loaded inside the guarded block do not dominate what follows: dropped

    def _flush(self) -> None:
        """End of a thread's iteration: store the registers it wrote that
        are read after the segment (scratch rows for those committed in
        the second pass)."""
        b = self.b
        live = self.plan.live_out
        for k in sorted(self.dirty):
            if live is not None and k not in live:
                continue
            v = self.values[k]
            if self._stored_at.get(k) is v:
                continue                 # stored in its guarded block, not written since
            if k in self.plan.scratch_regs:
                row = self.scratch_row(self.plan.scratch_regs[k], v.type)
                b.store(v, b.gep(row, [self.i], inbounds=True))
            else:
                b.store(v, b.gep(self._reg_array(k), [self.t], inbounds=True))


def probe(program, compiled, plan) -> tuple[Lowering, set[int], set[int]] | None:
    """(lowering, registers read, registers written) if the instruction's
    form has a native lowering (found by a trial emission into a throwaway
    function), else None. `plan` is an empty SegmentPlan."""
    low = lowering_of(compiled.inst)
    if low is None:
        return None
    em = SegmentEmitter(L.Module(name="probe"), "probe", program, plan)
    try:
        em.build([compiled])
    except (NotNative, UnsupportedInstruction):
        return None
    return low, em.reads, em.writes
