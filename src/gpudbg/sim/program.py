"""Translation of a parsed PTX module into the simulator's executable form.

All functions of a module share one code space: every instruction gets a
program counter (its index) and a virtual code address (`code_base + 16 *
pc`, the size of a real SASS instruction, which keeps addresses familiar to
debugger users). Each instruction becomes a `Built` closure from the op
registry; an instruction nothing in the registry accepts fails the load with
its text, PTX line and function name — never later, never silently.

Registers of all functions live in one flat register table, so a call does
not need to save the caller's registers; recursion is the one case that
does, so functions on a call-graph cycle get a callee-saved area in their
local-memory frame, spilled on entry and restored on return, as a real ABI
would.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from gpudbg.ptx import ir
from gpudbg.ptx.types import PTX_TYPES
from gpudbg.sim import device_runtime
from gpudbg.sim.ops import registry
from gpudbg.sim.ops.base import Built, TranslateContext, UnsupportedInstruction, guard_filter

INSTRUCTION_BYTES = 16


class LoadError(Exception):
    """A module cannot be loaded; the message names instruction and place."""


@dataclass
class Compiled:
    pc: int
    inst: ir.Instruction
    function: str
    built: Built
    guard: object = None  # narrow(X, idx) or None
    guard_reg: int = -1
    guard_neg: bool = False
    native: object = None  # sim/native/engine.NativeSegment starting at this pc, once compiled
    region: object = None  # sim/native/engine.NativeRegion this pc may enter (a loop run natively)
    native_full: object = None  # the same, compiled to keep every register (under a debugger)
    region_full: object = None


@dataclass
class FunctionInfo:
    name: str
    ir: ir.Function
    entry_pc: int
    end_pc: int
    frame_size: int = 0  # local-memory bytes of its frame
    local_offsets: dict[str, int] = field(default_factory=dict)
    param_names: list[str] = field(default_factory=list)  # formal params
    return_names: list[str] = field(default_factory=list)
    callees: set[str] = field(default_factory=set)
    builtin: str | None = None  # vprintf, malloc, free, __assertfail ...
    save_offset: int = 0  # recursive functions: where the callee-saved area starts


BUILTINS = {"vprintf", "malloc", "free", "__assertfail", "__assert_fail"} | set(device_runtime.FUNCTIONS)


class Program:
    """The executable form of one module."""

    def __init__(self, module: ir.Module, symbols: dict[str, int], code_base: int):
        self.module = module
        self.symbols = dict(symbols)  # global/const variable -> device address
        self.code_base = code_base
        self.code: list[Compiled] = []
        self.functions: dict[str, FunctionInfo] = {}
        self.reg_names: list[tuple[str, str]] = []
        self.reg_dtypes: list[np.dtype] = []
        self._reg_index: dict[tuple[str, str], int] = {}
        self._labels: dict[tuple[str, str], int] = {}
        self.param_vars: dict[str, int] = {}  # per-thread param storage -> size
        self.shared_vars: dict[str, ir.VariableDecl] = {}
        self._layout()
        self._read_regs = self._registers_read()
        self._translate()
        self.leader = self._leaders()
        self.has_bar_red = any(c.built.info.get("mode") == "red" for c in self.code if c.built.kind == "barrier")
        self.function_of_pc = np.zeros(len(self.code), dtype=np.int32)
        self.function_list = list(self.functions.values())
        for i, f in enumerate(self.function_list):
            self.function_of_pc[f.entry_pc:f.end_pc] = i
        self._indirect_callees()
        self.recursive = self._recursive_functions()
        self.saved_registers: dict[str, list[int]] = {}
        for name in self.recursive:
            info = self.functions[name]
            self.saved_registers[name] = self._live_across_recursion(info)
            nregs = len(self.saved_registers[name])
            pbytes = sum((self.param_vars[p] + 7) // 8 * 8 for p in info.param_names + info.return_names)
            info.save_offset = info.frame_size
            info.frame_size = (info.frame_size + 8 * nregs + pbytes + 15) // 16 * 16

    # ------------------------------------------------------------ layout
    def _layout(self) -> None:
        pc = 0
        for v in self.module.globals.values():
            if v.space == "shared":
                self.shared_vars[v.name] = v
        for f in self.module.functions.values():
            info = FunctionInfo(f.name, f, pc, pc)
            if f.body is None:
                if f.name in BUILTINS:
                    info.builtin = f.name
                self.functions[f.name] = info
                continue
            for d in f.registers.values():
                dt = PTX_TYPES[d.type].dtype if d.type in PTX_TYPES else None
                if dt is None or d.vector:
                    raise LoadError(f"{d.loc}: register {d.name} of type .{d.type}"
                                    f"{' vector' if d.vector else ''} is not supported (function {f.name})")
                key = (f.name, d.name)
                self._reg_index[key] = len(self.reg_names)
                self.reg_names.append(key)
                self.reg_dtypes.append(dt)
            off = 0
            for name, v in f.locals.items():
                if v.space == "local":
                    size = _var_size(v)
                    al = v.align or PTX_TYPES[v.type].size
                    off = (off + al - 1) // al * al
                    info.local_offsets[name] = off
                    off += size
                elif v.space == "param":
                    # call-sequence temporaries (param0, retval0) reuse names
                    # across functions; one per-thread store serves them all
                    self.param_vars[name] = max(self.param_vars.get(name, 0), _var_size(v))
                elif v.space == "shared":
                    self.shared_vars[name] = v
            info.frame_size = (off + 15) // 16 * 16
            for p in f.params + f.returns:
                if f.kind == "func":
                    self.param_vars[p.name] = max(self.param_vars.get(p.name, 0), _var_size(p))
            info.param_names = [p.name for p in f.params]
            info.return_names = [p.name for p in f.returns]
            for s in f.body:
                if isinstance(s, ir.Label):
                    self._labels[(f.name, s.name)] = pc
                else:
                    pc += 1
            info.end_pc = pc
            self.functions[f.name] = info

    def register_index(self, function: ir.Function, name: str) -> tuple[int, np.dtype]:
        k = self._reg_index.get((function.name, name))
        if k is None:
            raise UnsupportedInstruction(f"register {name} is not declared in {function.name}")
        return k, self.reg_dtypes[k]

    def labels(self) -> dict[tuple[str, str], int]:
        """Every code label: (function name, label) -> the pc it marks."""
        return dict(self._labels)

    def label_pc(self, function: ir.Function, name: str) -> int:
        pc = self._labels.get((function.name, name))
        if pc is None:
            raise UnsupportedInstruction(f"label {name} is not defined in {function.name}")
        return pc

    def code_address(self, pc: int) -> int:
        return self.code_base + INSTRUCTION_BYTES * int(pc)

    def pc_of_address(self, address: int) -> int | None:
        off = address - self.code_base
        if off < 0 or off % INSTRUCTION_BYTES or off // INSTRUCTION_BYTES >= len(self.code):
            return None
        return off // INSTRUCTION_BYTES

    def function_address(self, name: str) -> int:
        info = self.functions[name]
        if info.builtin is not None:
            # builtins get addresses past the code so indirect calls resolve
            return self.code_base + INSTRUCTION_BYTES * (len(self.code) + 1 + sorted(self.functions).index(name))
        return self.code_address(info.entry_pc)

    def function_at_address(self, address: int) -> FunctionInfo | None:
        for info in self.functions.values():
            if self.function_address(info.name) == address:
                return info
        return None

    # ------------------------------------------------------------ translate
    def _translate(self) -> None:
        ops = registry()
        for f in self.module.functions.values():
            if f.body is None:
                continue
            for inst in f.instructions:
                pc = len(self.code)
                builder = ops.get(inst.opcode)
                if builder is None:
                    raise LoadError(_unsupported(inst, f, f"unsupported instruction '{inst.opcode}'"))
                tc = TranslateContext(self, f, pc)
                try:
                    built = builder(inst, tc)
                    guard = None
                    if inst.guard is not None:
                        gk, gdt = self.register_index(f, inst.guard.name)
                        if gdt != np.bool_:
                            raise UnsupportedInstruction(f"guard {inst.guard.name} is not a predicate")
                        guard = guard_filter(gk, inst.guard_negated)
                except UnsupportedInstruction as e:
                    raise LoadError(_unsupported(inst, f, str(e))) from None
                except (IndexError, KeyError, ValueError, TypeError) as e:
                    raise LoadError(_unsupported(inst, f, f"malformed operands ({e})")) from None
                if built.kind == "call":
                    callee = built.info.get("callee")
                    if callee:
                        self.functions[f.name].callees.add(callee)
                comp = Compiled(pc, inst, f.name, built, guard)
                if inst.guard is not None:
                    comp.guard_reg = gk
                    comp.guard_neg = inst.guard_negated
                self.code.append(comp)

    def _leaders(self) -> np.ndarray:
        lead = np.zeros(len(self.code) + 1, dtype=bool)
        for (fname, _), pc in self._labels.items():
            lead[pc] = True
        for info in self.functions.values():
            if info.builtin is None:
                lead[info.entry_pc] = True
        for c in self.code:
            if c.built.kind != "straight":
                lead[c.pc + 1] = True
        lead[len(self.code)] = True
        return lead

    def _indirect_callees(self) -> None:
        """An indirect call may reach any function whose address the module
        takes (in code or in a variable initializer), so those count as its
        callees: their registers exist and their frames fit the stack."""
        taken = set()
        for v in self.module.globals.values():
            for item in (v.initializer.items if v.initializer is not None else ()):
                sym = item.symbol if isinstance(item, ir.GenericSymbol) else item
                if isinstance(sym, ir.Symbol) and sym.name in self.functions:
                    taken.add(sym.name)
        for c in self.code:
            if c.built.kind == "call":
                continue
            for o in c.inst.operands:
                if isinstance(o, ir.Symbol) and o.name in self.functions:
                    taken.add(o.name)
        for c in self.code:
            if c.built.kind == "call" and c.built.info.get("callee") is None:
                self.functions[c.function].callees |= taken

    def _recursive_functions(self) -> set[str]:
        """Functions that can be re-entered while active (on a cycle)."""
        out = set()
        for name in self.functions:
            seen, todo = set(), list(self.functions[name].callees)
            while todo:
                n = todo.pop()
                if n == name:
                    out.add(name)
                    break
                if n in seen or n not in self.functions:
                    continue
                seen.add(n)
                todo.extend(self.functions[n].callees)
        return out

    def _live_across_recursion(self, info: FunctionInfo) -> list[int]:
        """The registers of a recursive function that a nested activation
        could clobber while the outer one still needs them: those live
        after a call that can reach the function again (backward liveness
        over its instructions). Only these go to the callee-saved area, as
        ptxas saves only live callee-saved registers, so frames stay as
        small as real ones and recursion depth matches the hardware's."""
        lo, hi = info.entry_pc, info.end_pc
        if hi <= lo:
            return []
        own = {k for k, (fn, _) in enumerate(self.reg_names) if fn == info.name}
        fname = info.name
        uses, defs, succ = [], [], []
        for pc in range(lo, hi):
            c = self.code[pc]
            inst, b = c.inst, c.built
            u = {self._reg_index[(fname, r)] for o in _source_operands(inst) for r in _registers_in(o)
                 if (fname, r) in self._reg_index}
            if inst.guard is not None:
                u.add(self._reg_index[(fname, inst.guard.name)])
            d = set()
            if inst.guard is None:
                for o in _dest_operands(inst):
                    d |= {self._reg_index[(fname, r)] for r in _registers_in(o) if (fname, r) in self._reg_index}
            uses.append(u)
            defs.append(d)
            nxt = []
            if b.kind == "branch":
                targets = b.info.get("targets")
                if targets is None:
                    targets = [b.info["target"]] if "target" in b.info else [pc + 1]
                nxt = list(targets) + ([pc + 1] if inst.guard is not None or "target" not in b.info else [])
            elif b.kind in ("ret", "exit"):
                nxt = [pc + 1] if inst.guard is not None else []
            else:
                nxt = [pc + 1]
            succ.append([t - lo for t in nxt if lo <= t < hi])
        live_in = [set() for _ in range(hi - lo)]
        changed = True
        while changed:
            changed = False
            for i in range(hi - lo - 1, -1, -1):
                out = set().union(*(live_in[j] for j in succ[i])) if succ[i] else set()
                new = uses[i] | (out - defs[i])
                if new != live_in[i]:
                    live_in[i] = new
                    changed = True
        saved = set()
        for i in range(hi - lo):
            b = self.code[lo + i].built
            if b.kind != "call":
                continue
            callee = b.info.get("callee")
            if callee is None or fname in self.reachable(callee):
                saved |= set().union(*(live_in[j] for j in succ[i])) if succ[i] else set()
        return sorted(saved & own)

    def _registers_read(self) -> set[tuple[str, str]]:
        read = set()
        for f in self.module.functions.values():
            for inst in f.instructions:
                if inst.guard is not None:
                    read.add((f.name, inst.guard.name))
                for o in _source_operands(inst):
                    for r in _registers_in(o):
                        read.add((f.name, r))
        return read

    def register_is_read(self, function: ir.Function, name: str) -> bool:
        """Whether any instruction reads the register (valid once the whole
        module is translated; during translation every register counts as
        read, which is always safe)."""
        rr = getattr(self, "_read_regs", None)
        return True if rr is None else (function.name, name) in rr

    # ------------------------------------------------------------ queries
    def max_stack(self, entry: str) -> int:
        """Worst-case local-memory bytes a thread of `entry` needs (for a
        recursive call graph: the frames up to the first repeat; the stack
        limit bounds the rest)."""
        def depth(name, chain):
            info = self.functions[name]
            inner = [depth(c, chain | {c}) for c in info.callees if c in self.functions and c not in chain]
            return info.frame_size + max(inner, default=0)
        return depth(entry, {entry})

    def max_call_depth(self, entry: str, stack_limit: int) -> int:
        def depth(name, chain):
            info = self.functions[name]
            if any(c in chain for c in info.callees):
                return stack_limit // 16 + 2
            return 1 + max((depth(c, chain | {c}) for c in info.callees if c in self.functions), default=0)
        return depth(entry, {entry})

    def reachable(self, entry: str) -> set[str]:
        seen, todo = set(), [entry]
        while todo:
            n = todo.pop()
            if n in seen or n not in self.functions:
                continue
            seen.add(n)
            todo.extend(self.functions[n].callees)
        return seen

    def registers_of(self, fname: str) -> list[int]:
        return [i for i, (f, _) in enumerate(self.reg_names) if f == fname]


def _var_size(v: ir.VariableDecl) -> int:
    n = v.element_count
    if n is None:
        n = 0
    return PTX_TYPES[v.type].size * (v.vector or 1) * n


def _unsupported(inst: ir.Instruction, f: ir.Function, why: str) -> str:
    return f"{inst.loc}: {why} in {'kernel' if f.kind == 'entry' else 'function'} {f.name}: {inst.text}"


def _source_operands(inst: ir.Instruction):
    ops = inst.operands
    if inst.opcode in ("st", "red", "bar", "barrier", "bra", "call", "prefetch", "cp", "sust", "sured") or not ops:
        if inst.opcode == "bar" and "red" in inst.modifiers:
            return ops[1:]
        return ops
    first = ops[0]
    rest = ops[1:]
    if isinstance(first, ir.Address):
        return ops
    return rest


def _dest_operands(inst: ir.Instruction):
    ops = inst.operands
    if not ops or inst.opcode in ("st", "red", "bra", "call", "prefetch", "cp", "brx", "ret", "exit", "trap",
                                  "sust", "sured"):
        return ()
    if inst.opcode in ("bar", "barrier"):
        return ops[:1] if "red" in inst.modifiers else ()
    return () if isinstance(ops[0], ir.Address) else ops[:1]


def _registers_in(o):
    if isinstance(o, ir.Register):
        yield o.name
    elif isinstance(o, ir.Address) and isinstance(o.base, ir.Register):
        yield o.base.name
    elif isinstance(o, ir.Vector):
        for e in o.elements:
            yield from _registers_in(e)
    elif isinstance(o, ir.ImageOperand):
        for e in (o.handle, o.sampler, o.coords):
            yield from _registers_in(e)
    elif isinstance(o, ir.Negated):
        yield from _registers_in(o.operand)
    elif isinstance(o, ir.CallTarget):
        for e in (o.target,) + tuple(o.args):
            yield from _registers_in(e)
    elif isinstance(o, ir.PredicatePair):
        yield from _registers_in(o.first)
        yield from _registers_in(o.second)
