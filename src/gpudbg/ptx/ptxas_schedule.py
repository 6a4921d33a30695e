"""What ptxas's instruction order does to register lifetimes, from the
PTX: which registers an instruction defines and reads, and the order a
basic block gets when long-latency instructions (loads, texture fetches,
shuffles, atomics, special-register reads) are issued early together with
the instructions that compute their operands, within memory order (a load
passes no barrier or call, and no store unless both address disjoint bytes
off the same base value or different variables).

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


#: Special registers read by S2R, a variable-latency instruction ptxas
#: issues early like a load (probe: every S2R of a kernel reading
#: %tid/%ctaid/%laneid sits at its top in the SASS, its result held until
#: the PTX's use; %ntid and the like are constant-bank operands instead).
_S2R_SPECIALS = frozenset({"%tid", "%ctaid", "%laneid", "%warpid", "%smid", "%nsmid", "%gridid",
                           "%lanemask_eq", "%lanemask_le", "%lanemask_lt", "%lanemask_ge", "%lanemask_gt"})


def _long_latency(inst: ir.Instruction) -> bool:
    """Instructions whose result comes back late (memory, texture, warp
    shuffles and reductions, special-register reads), the ones ptxas's
    scheduler issues early."""
    op = inst.opcode
    if op in ("ld", "ldu"):
        return "param" not in inst.modifiers
    # (matrix fragment loads are not: each fills a group of registers the
    # next mma consumes, and ptxas keeps them next to it)
    if op == "mov" and len(inst.operands) == 2 and isinstance(inst.operands[1], ir.SpecialRegister):
        return inst.operands[1].name in _S2R_SPECIALS
    # warp reductions and matches too (probe: REDUX and MATCH issue right
    # after the load they read, above the stores the PTX puts before them;
    # VOTE does not move)
    return op in ("tex", "tld4", "suld", "shfl", "atom", "redux", "match")


#: An access's extent: (base register or symbol, which definition of the
#: base register it reads (None for a symbol), first byte, bytes).
_Footprint = tuple[str, "int | None", int, int]
_BYTES = {"b8": 1, "u8": 1, "s8": 1, "b16": 2, "u16": 2, "s16": 2, "f16": 2, "bf16": 2, "b32": 4, "u32": 4,
          "s32": 4, "f32": 4, "f16x2": 4, "bf16x2": 4, "b64": 8, "u64": 8, "s64": 8, "f64": 8, "b128": 16}


def _footprint(inst: ir.Instruction, versions: dict[str, int]) -> "_Footprint | None":
    """The bytes a plain ld/st touches relative to its base, or None when
    they are not known (other accesses, an unknown base)."""
    if inst.opcode not in ("ld", "ldu", "st"):
        return None
    addr = next((o for o in inst.operands if isinstance(o, ir.Address)), None)
    size = next((_BYTES[m] for m in reversed(inst.modifiers) if m in _BYTES), None)
    if addr is None or size is None:
        return None
    vec = next((int(m[1:]) for m in inst.modifiers if m in ("v2", "v4", "v8")), 1)
    if isinstance(addr.base, ir.Symbol):
        return addr.base.name, None, addr.offset, size * vec
    if isinstance(addr.base, ir.Register):
        return addr.base.name, versions.get(addr.base.name, 0), addr.offset, size * vec
    return None


def _may_alias(a: "_Footprint | None", b: "_Footprint | None") -> bool:
    """Two accesses are independent when they address disjoint bytes off
    the same base value, or two different variables; ptxas disambiguates
    so (probe: `ld [%rd+4j]; st [%rd+4j]` repeated j = 0..3 issues all
    four LDGs before the first STG, 14 registers where keeping the PTX
    order needs 8). Anything else may alias."""
    if a is None or b is None:
        return True
    if a[1] is None and b[1] is None and a[0] != b[0]:
        return False            # two different variables
    if a[0] != b[0] or a[1] != b[1]:
        return True
    return a[2] < b[2] + b[3] and b[2] < a[2] + a[3]


#: Instructions from the one computing a load's operands to the load
#: itself, when ptxas has independent work to put between (probe: eight
#: independent address -> LDG chains issue each LDG 3, 3, 3, 4, 4, 4, 3 and
#: 2 instructions after its IMAD.WIDE; 3 reproduces that order best).
LOAD_ISSUE_DISTANCE = 3


def schedule_block(insts: list[ir.Instruction], window: int,
                   vanishes: Callable[[ir.Instruction], bool] = lambda inst: False,
                   issue_distance: int = 0) -> list[ir.Instruction]:
    """The order ptxas's scheduler gives a basic block, approximately:
    long-latency instructions (loads, texture fetches, shuffles) move up
    to `window` SASS instructions earlier (instructions that `vanishes`
    leave no SASS behind and do not count), never above an instruction they
    depend on (an operand's producer, a barrier, a store that may alias); the
    rest keep their order. Issuing loads early is what makes ptxas's
    register use exceed the PTX order's pressure. With `issue_distance`
    a long-latency instruction also comes that many instructions after
    the producers of its operands (others' instructions fill the gap, as a
    latency-driven scheduler does). The block's terminator stays last."""
    if len(insts) < 3:
        return list(insts)
    body = insts[:-1] if insts[-1].opcode in TERMINATORS else insts
    tail = insts[len(body):]
    key = [0.0] * len(body)
    producer: dict[str, float] = {}    # register -> key of its last writer
    producer_free: dict[str, bool] = {}    # register -> whether that writer leaves no SASS
    versions: dict[str, int] = {}          # register -> definitions of it so far in the block
    readers: dict[str, float] = {}     # register -> highest key of a reader since its last write
    # per state space: (key, is_write, footprint) of the accesses since the last fence
    accesses: dict[str, list[tuple[float, bool, "_Footprint | None"]]] = {sp: [] for sp in _SPACES}
    fenced = -1e9                      # key of the last fence
    eps = 1.0 / (4 * len(body) + 4)
    # a load moves up together with the instructions computing its address
    hoist = [False] * len(body)
    wanted: set[str] = set()
    for i in range(len(body) - 1, -1, -1):
        dests, srcs = split_operands(body[i])
        if _long_latency(body[i]) or (_memory_role(body[i]) == "" and wanted.intersection(dests)):
            hoist[i] = True
            wanted.update(srcs)
            if body[i].guard is not None:       # a predicated load moves up with its predicate
                wanted.add(body[i].guard.name)
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
        wait = issue_distance if issue_distance and not free and _long_latency(inst) else 0
        for r in srcs:
            k = max(k, producer.get(r, -1e9) + eps + (0 if producer_free.get(r) else wait))
        for r in dests:
            k = max(k, producer.get(r, -1e9) + eps, readers.get(r, -1e9) + eps)
        role = _memory_role(inst)
        # distinct state spaces never alias; a generic address may be any:
        # an access waits for those that may alias it and records itself
        # under its own space (a generic one under all)
        space = "generic" if role == "fence" else _space(inst)
        check = _aliases(space)
        own = _SPACES if space == "generic" else (space,)
        if role in ("read", "write"):
            me = _footprint(inst, versions)
            k = max(k, fenced + eps)
            for sp in check:
                for other, other_writes, where in accesses[sp]:
                    if (role == "write" or other_writes) and other + eps > k and _may_alias(me, where):
                        k = other + eps
            for sp in own:
                accesses[sp].append((k, role == "write", me))
        elif role == "fence":
            k = max(k, highest + eps)
            fenced = k
            accesses = {sp: [] for sp in _SPACES}
        key[i] = k
        highest = max(highest, k)
        for r in srcs:
            readers[r] = max(readers.get(r, -1e9), k)
        for r in dests:
            producer[r] = k
            producer_free[r] = free
            versions[r] = versions.get(r, 0) + 1
            readers.pop(r, None)
    order = sorted(range(len(body)), key=lambda j: (key[j], j))
    return [body[j] for j in order] + tail
