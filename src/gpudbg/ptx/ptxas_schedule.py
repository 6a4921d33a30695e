"""What ptxas's instruction order does to register lifetimes, from the
PTX: which registers an instruction defines and reads, and the order a
basic block gets when long-latency instructions (loads, texture fetches,
shuffles, atomics) are issued early together with the instructions that
compute their operands, within memory order (a load never passes a
store, barrier or call: no alias analysis).

Used by gpudbg.ptx.regalloc; it reorders nothing that is executed.
"""
from __future__ import annotations

from typing import Callable

from . import ir

#: Opcodes whose first operand is never a destination.
_NO_DEST = frozenset({
    "st", "red", "bar", "barrier", "bra", "brx", "call", "ret", "exit", "trap", "prefetch",
    "prefetchu", "cp", "membar", "fence", "sust", "sured", "nanosleep", "griddepcontrol",
    "setmaxnreg", "pmevent", "discard", "applypriority", "stmatrix", "brkpt", "cp.async",
    "st.async", "red.async", "tensormap", "multimem.st", "multimem.red",
})


def _regs(o) -> list[str]:
    if isinstance(o, ir.Register):
        return [o.name]
    if isinstance(o, ir.Address):
        return [o.base.name] if isinstance(o.base, ir.Register) else []
    if isinstance(o, ir.Vector):
        return [n for e in o.elements for n in _regs(e)]
    if isinstance(o, ir.ImageOperand):      # [tex, {coords}]: the handle and coordinates are read
        return [n for e in (o.handle, o.sampler, o.coords) if e is not None for n in _regs(e)]
    if isinstance(o, ir.Negated):
        return _regs(o.operand)
    if isinstance(o, ir.PredicatePair):
        return _regs(o.first) + _regs(o.second)
    if isinstance(o, ir.CallTarget):
        return _regs(o.target) + [n for a in o.args for n in _regs(a)]
    return []


def split_operands(inst: ir.Instruction) -> tuple[list[str], list[str]]:
    """(destination registers, source registers) of one instruction: the
    first operand is the destination unless the opcode writes none or it
    is a memory operand (`st [a], v`; `mbarrier.init [a], n`)."""
    ops = inst.operands
    if not ops:
        return [], []
    if inst.opcode == "bar" and "red" in inst.modifiers or inst.opcode == "barrier" and "red" in inst.modifiers:
        return _regs(ops[0]), [n for o in ops[1:] for n in _regs(o)]
    first = ops[0]
    if (inst.opcode in _NO_DEST or isinstance(first, (ir.Address, ir.Immediate, ir.CallTarget))
            or inst.opcode == "wmma" and "store" in inst.modifiers):
        return [], [n for o in ops for n in _regs(o)]
    return _regs(first), [n for o in ops[1:] for n in _regs(o)]


TERMINATORS = frozenset({"bra", "brx", "ret", "exit", "trap"})
_READS = frozenset({"ld", "ldu", "tex", "tld4", "suld", "ldmatrix", "txq", "suq"})
_WRITES = frozenset({"st", "red", "atom", "sust", "sured", "stmatrix", "cp", "mbarrier", "prefetch",
                     "cp.async", "st.async", "red.async"})
_FENCES = frozenset({"bar", "barrier", "membar", "fence", "call", "nanosleep", "griddepcontrol",
                     "setmaxnreg", "elect", "brkpt", "pmevent"})
_ORDERED_SPECIALS = frozenset({"%clock", "%clock64", "%globaltimer", "%globaltimer_lo", "%globaltimer_hi"})


def _memory_role(inst: ir.Instruction) -> str:
    """'read', 'write', 'fence' or '' (no memory ordering)."""
    op = inst.opcode
    if op in _FENCES or any(isinstance(o, ir.SpecialRegister) and o.name in _ORDERED_SPECIALS
                            for o in inst.operands):
        return "fence"
    if op == "wmma":
        return "write" if "store" in inst.modifiers else "read" if "load" in inst.modifiers else ""
    if op in _WRITES:
        return "write"
    if op in _READS:
        if op in ("ld", "ldu") and ("param" in inst.modifiers or "const" in inst.modifiers):
            return ""
        return "read"
    return ""


_SPACES = ("global", "shared", "local", "param", "generic")


def _space(inst: ir.Instruction) -> str:
    """The state space an access names (texture and surface memory count
    as global: surfaces are written through it)."""
    named = [sp for sp in ("global", "shared", "local", "param")
             if sp in inst.modifiers or f"{sp}::cta" in inst.modifiers or f"{sp}::cluster" in inst.modifiers]
    if len(named) == 1:
        return named[0]
    if named:               # a copy between spaces (cp.async): orders like a generic access
        return "generic"
    if inst.opcode in ("tex", "tld4", "suld", "sust", "sured", "txq", "suq"):
        return "global"
    return "generic"


def _aliases(space: str) -> tuple[str, ...]:
    return _SPACES if space == "generic" else (space, "generic")


def _long_latency(inst: ir.Instruction) -> bool:
    """Instructions whose result comes back late (memory, texture, warp
    shuffles), the ones ptxas's scheduler issues early."""
    op = inst.opcode
    if op in ("ld", "ldu"):
        return "param" not in inst.modifiers
    # (matrix fragment loads are not: each fills a group of registers the
    # next mma consumes, and ptxas keeps them next to it)
    return op in ("tex", "tld4", "suld", "shfl", "atom")


def schedule_block(insts: list[ir.Instruction], window: int,
                   vanishes: Callable[[ir.Instruction], bool] = lambda inst: False) -> list[ir.Instruction]:
    """The order ptxas's scheduler gives a basic block, approximately:
    long-latency instructions (loads, texture fetches, shuffles) move up
    to `window` SASS instructions earlier (instructions that `vanishes`
    leave no SASS behind and do not count), never above an instruction they
    depend on (an operand's producer, a store or barrier for a load); the
    rest keep their order. Issuing loads early is what makes ptxas's
    register use exceed the PTX order's pressure. The block's terminator
    stays last."""
    if len(insts) < 3:
        return list(insts)
    body = insts[:-1] if insts[-1].opcode in TERMINATORS else insts
    tail = insts[len(body):]
    key = [0.0] * len(body)
    producer: dict[str, float] = {}    # register -> key of its last writer
    readers: dict[str, float] = {}     # register -> highest key of a reader since its last write
    last_write = dict.fromkeys(_SPACES, -1e9)     # per state space: key of the last write/fence
    reads_since = dict.fromkeys(_SPACES, -1e9)    # per state space: highest key of a read since then
    eps = 1.0 / (4 * len(body) + 4)
    # a load moves up together with the instructions computing its address
    hoist = [False] * len(body)
    wanted: set[str] = set()
    for i in range(len(body) - 1, -1, -1):
        dests, srcs = split_operands(body[i])
        if _long_latency(body[i]) or (_memory_role(body[i]) == "" and wanted.intersection(dests)):
            hoist[i] = True
            wanted.update(srcs)
    sass = 0
    highest = -1e9                     # the largest key so far (a fence follows everything)
    for i, inst in enumerate(body):
        free = vanishes(inst)       # constants and copies: only their operands hold them back
        if not free:
            sass += 1
        dests, srcs = split_operands(inst)
        if inst.guard is not None:
            srcs = srcs + [inst.guard.name]
        k = -1e9 if free else float(sass - window) if hoist[i] else float(sass) + i * eps / 2
        for r in srcs:
            k = max(k, producer.get(r, -1e9) + eps)
        for r in dests:
            k = max(k, producer.get(r, -1e9) + eps, readers.get(r, -1e9) + eps)
        role = _memory_role(inst)
        # distinct state spaces never alias; a generic address may be any:
        # an access waits for those that may alias it and records itself
        # under its own space (a generic one under all)
        space = "generic" if role == "fence" else _space(inst)
        check = _aliases(space)
        own = _SPACES if space == "generic" else (space,)
        if role == "read":
            k = max([k] + [last_write[sp] + eps for sp in check])
            for sp in own:
                reads_since[sp] = max(reads_since[sp], k)
        elif role in ("write", "fence"):
            k = max([k] + [max(last_write[sp], reads_since[sp]) + eps for sp in check])
            if role == "fence":
                k = max(k, highest + eps)
            for sp in own:
                last_write[sp] = k
                reads_since[sp] = -1e9
        key[i] = k
        highest = max(highest, k)
        for r in srcs:
            readers[r] = max(readers.get(r, -1e9), k)
        for r in dests:
            producer[r] = k
            readers.pop(r, None)
    order = sorted(range(len(body)), key=lambda j: (key[j], j))
    return [body[j] for j in order] + tail
