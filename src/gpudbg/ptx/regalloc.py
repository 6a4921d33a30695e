"""Per-thread register counts like ptxas's ("Used N registers"), computed
from the PTX of a kernel and everything it calls.

PTX registers are virtual and SSA-like: a tiled matmul declares ~150 words
where ptxas allocates 32, so occupancy from declarations is wrong. The one
idea: the physical registers a kernel needs are its register *pressure*,
the most 32-bit words simultaneously live at any point of its control flow
graph (backward liveness over the CFG, predicates excluded: they live in
the separate P file), allocated from R0 upward the way the Ampere ABI lays
the file out (R1 is the stack pointer, 64-bit values take even-aligned
pairs, 128-bit values aligned quads), plus:

* values ptxas keeps in the constant bank or as immediates (kernel
  parameters, `cvta.to.global` of them, `%ntid`/`%nctaid`, symbol
  addresses, literals) occupy a register only at a use that needs one (an
  address base, a stored value), not over their whole range;
* a call through the ABI (a `.func` ptxas keeps out of line, `vprintf`,
  an indirect call) needs the caller's values live across it plus the
  callee's own registers, and never fewer than the ABI's floor;
* instructions ptxas expands into multi-instruction sequences or
  subroutines (IEEE division, square root, 64-bit integer division) need
  the temporaries of their expansion (`EXPANSION_TEMPS`, measured from
  ptxas);
* tensor-core code as ptxas lowers it on sm_80: an f16 wmma A/B fragment's
  eight PTX registers hold m*k/64 distinct values (the rest are aliases),
  an mma writes its result over its dying accumulator, and a wmma
  load/store needs the per-lane addresses it expands to
  (WMMA_ADDRESS_PAIRS, measured from ptxas).

Short guarded regions are predicated (gpudbg.ptx.ptxas_ifconvert) and
counted single-block loops unrolled four times (gpudbg.ptx.ptxas_unroll)
first, as ptxas does. ptxas's scheduler is approximated per basic
block: loads, texture fetches, shuffles, atomics and special-register
reads move up with the instructions computing their operands,
HOIST_WINDOW instructions at most, or without bound while the kernel
fits full occupancy (FULL_OCCUPANCY_REGISTERS), the way ptxas
trades registers for latency only while they are free (then also each
load LOAD_ISSUE_DISTANCE instructions after its address, measured); and
a freed register is not reused for REUSE_DISTANCE instructions. Those two
constants are fitted to `ptxas -v` over tests/data/ptx_corpus
(benchmarks/bench_regcount.py measures the fit). Above full occupancy the
count gets a safety margin so the simulated GPU never places more blocks
per SM than a real one.

It deliberately does not model ptxas's rematerialisation of ordinary
arithmetic, instruction selection or spilling (the count
is clamped to the architecture's 255 and a kernel's `.maxnreg`, as ptxas
clamps and spills), nor how ptxas spreads a small kernel's values over
free registers (probes: each live 32-bit value in an odd register, a
freed one reused only ~10 instructions later; taken literally that
over-counts most of the corpus, where REUSE_DISTANCE stands in for it),
nor `-G` builds, which ptxas compiles at -O0. Pure analysis of the IR:
nothing here executes or imports the simulator.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from . import ir
from .ptxas_ifconvert import if_converted
from .ptxas_unroll import unrolled
from .ptxas_schedule import LOAD_ISSUE_DISTANCE, TERMINATORS, schedule_block, split_operands

__all__ = ["FunctionPressure", "function_pressures", "register_count", "register_counts", "split_operands"]

#: Registers ptxas reports beyond R0..Rmax: the empty kernel reports 4
#: (R0, R1 the stack pointer, and two the reported count always includes).
REPORTED_OVERHEAD = 2
#: R0 and R1 (stack pointer) exist in every kernel.
BASE_REGISTERS = 2
#: Fewest registers a kernel containing an ABI call reports (the ABI's
#: argument/return and callee-saved ranges up to R21, as ptxas -v shows
#: for any kernel calling vprintf, __assertfail or a noinline function).
ABI_CALL_FLOOR = 24
MAX_REGISTERS = 255
#: Up to this many registers per thread an SM still holds its full 2048
#: threads (65536 / 2048 on sm_80 and sm_90): the count cannot limit
#: occupancy. Above it, it does, and an estimate below ptxas's would let
#: the simulated GPU place more blocks per SM than a real one; so there
#: the estimate gets OCCUPANCY_MARGIN on top (measured: with it, no kernel
#: of the corpus gets more blocks per SM than its ptxas count allows).
FULL_OCCUPANCY_REGISTERS = 32
OCCUPANCY_MARGIN = 0.10
#: ptxas does not hand a register freed by an instruction to a value of
#: one of the next few SASS instructions (it spreads values over the file
#: while it is not short of registers): a freed register stays taken this
#: many instructions. Fitted to ptxas -v over the corpus.
REUSE_DISTANCE = 2
#: How many instructions earlier ptxas's scheduler issues a load, texture
#: fetch, shuffle or atomic than the PTX has it (dependencies permitting),
#: in a kernel above full occupancy. Fitted.
HOIST_WINDOW = 16
#: The window of a kernel that fits full occupancy: unbounded in practice.
FREE_HOIST_WINDOW = 1 << 20

#: Extra 32-bit temporaries live during the SASS expansion of an
#: instruction (ptxas turns IEEE division, reciprocal and square root and
#: integer division into multi-instruction sequences with a slow-path
#: subroutine), keyed by (opcode, type). Measured: ptxas -arch=sm_80 -v's
#: count of a kernel doing one such operation on loaded values minus our
#: count of it without the temporaries (CUDA 13.0).
EXPANSION_TEMPS: dict[tuple[str, str], int] = {
    ("div", "f32"): 7, ("rcp", "f32"): 6, ("sqrt", "f32"): 3,
    ("div", "f64"): 14, ("rcp", "f64"): 4, ("sqrt", "f64"): 10,
    ("div", "s64"): 11, ("div", "u64"): 11, ("rem", "s64"): 7, ("rem", "u64"): 7,
    ("div", "s32"): 5, ("div", "u32"): 5, ("rem", "s32"): 5, ("rem", "u32"): 5,
}
_APPROX = frozenset({"approx", "full"})

_CONST_SPECIALS = frozenset({"%ntid", "%nctaid", "%nclusterid", "%cluster_nctaid", "%cluster_nctarank",
                             "%nsmid", "%nwarpid", "%dynamic_smem_size", "%total_smem_size"})
#: Arithmetic ptxas folds or recomputes when all its inputs are constants
#: (a parameter plus an offset becomes an address immediate).
_CONST_FOLDABLE = frozenset({"mov", "cvta", "add", "sub", "mul", "mad", "shl", "shr", "and", "or", "xor",
                             "cvt", "neg", "not"})
_WORDS = {8: 1, 16: 1, 32: 1, 64: 2, 128: 4}


def _type_words(type_name: str, vector: int | None) -> int:
    if type_name == "pred":
        return 0
    bits = int("".join(ch for ch in type_name if ch.isdigit()) or 32)
    if type_name.endswith("x2"):
        bits = bits * 2
    return _WORDS.get(bits, max(1, bits // 32)) * (vector or 1)


@dataclass
class FunctionPressure:
    """What one function needs: `pressure` words live at its worst point
    (callees excluded), `calls` the (callee or None, words live across)
    of each call, `abi_calls` whether ptxas keeps a call out of line."""

    name: str
    pressure: int
    calls: list[tuple[str | None, int]] = field(default_factory=list)
    peak: ir.Instruction | None = None     # where the pressure is highest


class _Function:
    def __init__(self, fn: ir.Function, module: ir.Module, window: int = HOIST_WINDOW) -> None:
        self.fn = fn
        self.module = module
        self.window = window
        blocks: list[list[ir.Instruction]] = [[]]
        block_labels: list[list[str]] = [[]]
        nounroll_at = {i for i, text in fn.pragma_at if text == "nounroll"}
        nounroll: set[int] = set()          # blocks a `.pragma "nounroll"` starts
        for n, s in if_converted(fn.body or []):
            if isinstance(s, ir.Label):
                if blocks[-1]:
                    blocks.append([])
                    block_labels.append([])
                block_labels[-1].append(s.name)
            else:
                if n in nounroll_at:
                    nounroll.add(len(blocks) - 1)
                blocks[-1].append(s)
                if s.opcode in TERMINATORS:
                    blocks.append([])
                    block_labels.append([])
        self.words: dict[str, int] = {n: _type_words(d.type, d.vector) for n, d in fn.registers.items()}
        blocks = [unrolled(insts, names, self.words, b in nounroll)
                  for b, (insts, names) in enumerate(zip(blocks, block_labels))]
        self.insts: list[ir.Instruction] = [i for b in blocks for i in b]
        self.remat = self._rematerialisable()       # order-independent: computed before scheduling
        self.alias = self._offset_aliases()
        self.alias.update(_fragment_aliases(self.insts, self.words))
        self.insts = []
        self.labels: dict[str, int] = {}
        self.block_of: list[int] = []
        for b, (insts, names) in enumerate(zip(blocks, block_labels)):
            for name in names:
                self.labels[name] = len(self.insts)
            # the latency-driven order only where ptxas is not short of
            # registers (below full occupancy); above, HOIST_WINDOW's
            # register-aware placement stands
            distance = LOAD_ISSUE_DISTANCE if window >= FREE_HOIST_WINDOW else 0
            self.insts += schedule_block(insts, window, self._vanishes, distance)
            self.block_of += [b] * len(insts)

    def _rematerialisable(self) -> set[str]:
        """Registers whose every definition is a value ptxas encodes as a
        constant-bank or immediate operand, so the register exists only at
        a use that needs one."""
        entry = self.fn.kind == "entry"
        defs: dict[str, list[ir.Instruction]] = {}
        for inst in self.insts:
            for d in split_operands(inst)[0]:
                defs.setdefault(d, []).append(inst)
        remat: set[str] = set()
        changed = True
        while changed:
            changed = False
            for reg, ds in defs.items():
                if reg in remat or self.words.get(reg, 0) == 0:
                    continue
                if all(self._const_def(i, entry, remat) for i in ds):
                    remat.add(reg)
                    changed = True
        return remat

    def _offset_aliases(self) -> dict[str, str]:
        """64-bit values defined once as `base + constant` (the addresses of
        an unrolled loop's elements): ptxas folds the constant into the
        memory instruction's offset and keeps only the base, so each is an
        alias of its base for liveness."""
        defs: dict[str, int] = {}
        for inst in self.insts:
            for d in split_operands(inst)[0]:
                defs[d] = defs.get(d, 0) + 1
        alias: dict[str, str] = {}
        for inst in self.insts:
            if inst.opcode not in ("add", "sub") or inst.guard is not None or len(inst.operands) != 3:
                continue
            dst, a, b = inst.operands
            if not (isinstance(dst, ir.Register) and isinstance(a, ir.Register) and isinstance(b, ir.Immediate)):
                continue
            if self.words.get(dst.name) != 2 or defs.get(dst.name) != 1 or defs.get(a.name, 0) > 1:
                continue
            if dst.name in self.remat or a.name in self.remat:
                continue
            alias[dst.name] = alias.get(a.name, a.name)
        return alias

    @staticmethod
    def _const_def(inst: ir.Instruction, entry: bool, remat: set[str]) -> bool:
        if inst.guard is not None or len(inst.operands) < 2:
            return False
        srcs = inst.operands[1:]
        if inst.opcode == "ld":
            # a kernel parameter or a constant at a fixed address is a
            # constant-bank operand (c[bank][offset]) in SASS
            src = srcs[0]
            fixed = len(srcs) == 1 and isinstance(src, ir.Address) and isinstance(src.base, ir.Symbol)
            return fixed and ("param" in inst.modifiers and entry or "const" in inst.modifiers)
        if inst.opcode not in _CONST_FOLDABLE:
            return False
        for o in srcs:
            if isinstance(o, (ir.Immediate, ir.Symbol)):
                continue
            if isinstance(o, ir.SpecialRegister) and o.name in _CONST_SPECIALS:
                continue
            if isinstance(o, ir.Register) and o.name in remat:
                continue
            return False
        return True

    def _successors(self) -> list[list[int]]:
        n = len(self.insts)
        out = []
        for i, inst in enumerate(self.insts):
            guarded = inst.guard is not None
            if inst.opcode == "bra":
                tgt = [self.labels[o.name] for o in inst.operands if isinstance(o, ir.LabelRef) and o.name in self.labels]
                nxt = tgt + ([i + 1] if guarded or not tgt else [])
            elif inst.opcode == "brx":
                names: list[str] = []
                for o in inst.operands:
                    if isinstance(o, ir.LabelRef):
                        names += list(self.fn.branchtargets.get(o.name, (o.name,)))
                nxt = [self.labels[x] for x in names if x in self.labels] + ([i + 1] if guarded else [])
            elif inst.opcode in ("ret", "exit", "trap"):
                nxt = [i + 1] if guarded else []
            else:
                nxt = [i + 1]
            out.append([j for j in nxt if j < n])
        return out

    def analyse(self) -> FunctionPressure:
        """Backward liveness over the CFG with one bit per (non-constant)
        register; pressure is the words of the live set at every point,
        plus constant values materialised for the instruction, plus its
        expansion's temporaries."""
        names = [r for r in self.words if self.words[r] and r not in self.remat and r not in self.alias]
        bit = {r: 1 << k for k, r in enumerate(names)}
        masks: dict[int, int] = {}
        for r in names:
            masks[self.words[r]] = masks.get(self.words[r], 0) | bit[r]
        n = len(self.insts)
        use = [0] * n
        kill = [0] * n
        gen = [0] * n                          # registers the instruction writes, guarded or not
        extra = [0] * n
        ndefs: dict[str, int] = {}
        for inst in self.insts:
            for d in split_operands(inst)[0]:
                ndefs[d] = ndefs.get(d, 0) + 1
        for i, inst in enumerate(self.insts):
            dests, srcs = split_operands(inst)
            u = 0
            for s in srcs:
                u |= bit.get(self.alias.get(s, s), 0)
            # a guarded write keeps the old value where the guard is false,
            # unless there is none: a register defined only there
            if inst.guard is None or all(ndefs.get(d) == 1 for d in dests):
                k = 0
                for d in dests:
                    k |= bit.get(d, 0)
                kill[i] = k
            use[i] = u
            for d in dests:
                gen[i] |= bit.get(d, 0)
            extra[i] = _expansion(inst) + 2 * _wmma_address_pairs(inst)
        self._add_materialised(extra)
        succ = self._successors()
        live_in = [0] * n
        changed = True
        while changed:
            changed = False
            for i in range(n - 1, -1, -1):
                out = 0
                for j in succ[i]:
                    out |= live_in[j]
                new = use[i] | (out & ~kill[i])
                if new != live_in[i]:
                    live_in[i] = new
                    changed = True
        # a register live where no definition of it can have run holds an
        # undefined value (cub's unloaded items of a partial tile), which
        # needs no register there: count only values defined on some path
        defined = [0] * n                      # defined on some path into i
        changed = True
        while changed:
            changed = False
            for i in range(n):
                after = defined[i] | gen[i]
                for j in succ[i]:
                    if after & ~defined[j]:
                        defined[j] |= after
                        changed = True
        for i in range(n):
            live_in[i] &= defined[i]

        def words(live: int) -> int:
            return sum(w * (live & m).bit_count() for w, m in masks.items())

        best, peak = 0, None
        calls: list[tuple[str | None, int]] = []
        recent: list[tuple[int, int]] = []     # (position, words) of values that died lately
        pos = 0
        for i, inst in enumerate(self.insts):
            out = 0
            for j in succ[i]:
                out |= live_in[j]
            vanishes = self._vanishes(inst)
            if not vanishes:
                pos += 1
            recent = [(p, w) for p, w in recent if pos - p <= REUSE_DISTANCE]
            held = sum(w for _, w in recent)
            here = max(words(live_in[i]) + extra[i] + held, words(out) + held)
            if here > best:
                best, peak = here, inst
            died = 0 if vanishes else words(live_in[i] & ~out)   # a copy's source lives on as its result
            if _accumulates_in_place(inst):
                died = max(0, died - words(kill[i] & out))
            if died:
                recent.append((pos, died))
            if inst.opcode == "call":
                target = next((o for o in inst.operands if isinstance(o, ir.CallTarget)), None)
                callee = target.target.name if target is not None and isinstance(target.target, ir.Symbol) else None
                calls.append((callee, words(out & live_in[i])))
        return FunctionPressure(self.fn.name, best, calls, peak)

    def _vanishes(self, inst: ir.Instruction) -> bool:
        """Whether the instruction leaves no SASS instruction behind: a
        constant definition (folded into its uses) or a same-size copy
        (coalesced)."""
        dests, srcs = split_operands(inst)
        if dests and all(d in self.remat for d in dests):
            return True
        if inst.opcode != "mov" or inst.guard is not None or not dests or not srcs:
            return False
        if not all(isinstance(o, (ir.Register, ir.Vector)) for o in inst.operands):
            return False
        # a copy, or a pack/unpack of a wider value into its 32-bit halves
        return sum(self.words.get(d, 0) for d in dests) == sum(self.words.get(s, 0) for s in srcs)

    def _materialised(self, inst: ir.Instruction) -> list[str]:
        """Constant values this instruction needs in registers: an address
        base, and the data of a store/atomic (no SASS form takes those from
        the constant bank)."""
        need = []
        for k, o in enumerate(inst.operands):
            if isinstance(o, ir.Address) and isinstance(o.base, ir.Register) and o.base.name in self.remat:
                need.append(o.base.name)
            elif (inst.opcode in ("st", "atom", "red") and k > 0 and isinstance(o, ir.Register)
                  and o.name in self.remat):
                need.append(o.name)
        return need

    def _add_materialised(self, extra: list[int]) -> None:
        """Constants a block needs in registers are loaded by instructions
        with no dependencies, which ptxas issues early: each is live from
        up to HOIST_WINDOW instructions before its first use in the block
        (not before the block) to its last use there."""
        spans: dict[tuple[int, str], list[int]] = {}
        for i, inst in enumerate(self.insts):
            for r in self._materialised(inst):
                key = (self.block_of[i], r)
                if key in spans:
                    spans[key][1] = i
                else:
                    spans[key] = [i, i]
        starts: dict[int, int] = {}
        for i, b in enumerate(self.block_of):
            starts.setdefault(b, i)
        for (b, r), (first, last) in spans.items():
            for i in range(max(starts[b], first - self.window), last + 1):
                extra[i] += self.words[r]


_SHAPE = re.compile(r"m(\d+)n(\d+)k(\d+)$")


def _fragment_aliases(insts: list[ir.Instruction], words: dict[str, int]) -> dict[str, str]:
    """An f16 `wmma.load.a/b` fragment is eight .f16x2 registers in PTX for
    every shape, but a warp holds each matrix element once on sm_80: an
    m x k (or k x n) matrix is m*k/64 distinct registers per thread, and
    ptxas loads only those (probe: loading an m16n16k16 A fragment and
    storing its eight registers issues four LDGs, x[i+4] stored from the
    register of x[i]; m8n32k16's A, two LDGs, x[i] from x[i % 2]). So
    element i is an alias of element i % distinct, when each is defined
    only there."""
    defs: dict[str, int] = {}
    for inst in insts:
        for d in split_operands(inst)[0]:
            defs[d] = defs.get(d, 0) + 1
    alias: dict[str, str] = {}
    for inst in insts:
        if inst.opcode != "wmma" or "load" not in inst.modifiers or "f16" not in inst.modifiers[-1:]:
            continue
        shape = next((m for m in map(_SHAPE.match, inst.modifiers) if m), None)
        frag = inst.operands[0] if inst.operands else None
        if shape is None or not isinstance(frag, ir.Vector):
            continue
        m, n, k = (int(x) for x in shape.groups())
        rows_cols = m * k if "a" in inst.modifiers else k * n if "b" in inst.modifiers else 0
        distinct = rows_cols // 64
        regs = [e.name for e in frag.elements if isinstance(e, ir.Register)]
        if not distinct or len(regs) != len(frag.elements) or len(regs) <= distinct:
            continue
        if any(defs.get(r) != 1 or words.get(r) != 1 for r in regs):
            continue
        for i in range(distinct, len(regs)):
            alias[regs[i]] = regs[i % distinct]
    return alias


#: 64-bit addresses a wmma.load/store's SASS expansion computes: each
#: lane adds its own offset to the tile's address, and fragment rows a
#: runtime stride apart need one address each. Measured (ptxas -arch=sm_80,
#: CUDA 13.0; distinct address registers of the LDG/STG a single
#: wmma.load.global or wmma.store.global with a runtime stride expands to),
#: keyed by (matrix, element type, shape); any other form takes one.
WMMA_ADDRESS_PAIRS: dict[tuple[str, str, str], int] = {
    ("a", "f16", "m16n16k16"): 2, ("b", "f16", "m16n16k16"): 2, ("a", "bf16", "m16n16k16"): 2,
    ("b", "bf16", "m16n16k16"): 2, ("a", "f16", "m8n32k16"): 1, ("b", "f16", "m32n8k16"): 1,
    ("b", "f16", "m8n32k16"): 4, ("a", "f16", "m32n8k16"): 4,
    ("a", "tf32", "m16n16k8"): 4, ("b", "tf32", "m16n16k8"): 4, ("a", "s8", "m16n16k16"): 2,
    ("b", "s8", "m16n16k16"): 2, ("a", "u8", "m16n16k16"): 2, ("b", "u8", "m16n16k16"): 2,
    ("c", "f32", "m16n16k16"): 2, ("c", "f16", "m16n16k16"): 2, ("c", "s32", "m16n16k16"): 2,
    ("c", "f32", "m16n16k8"): 2, ("d", "f32", "m16n16k16"): 2, ("d", "f16", "m16n16k16"): 2,
    ("d", "s32", "m16n16k16"): 2, ("d", "f32", "m16n16k8"): 2,
    ("a", "f64", "m8n8k4"): 1, ("b", "f64", "m8n8k4"): 1, ("c", "f64", "m8n8k4"): 1, ("d", "f64", "m8n8k4"): 1,
}


def _wmma_address_pairs(inst: ir.Instruction) -> int:
    """The lane addresses a wmma.load/store needs while it issues (the
    PTX address operand is only the tile's base)."""
    if inst.opcode != "wmma" or not {"load", "store"}.intersection(inst.modifiers):
        return 0
    matrix = next((m for m in inst.modifiers if m in ("a", "b", "c", "d")), "")
    shape = next((m for m in inst.modifiers if _SHAPE.match(m)), "")
    return WMMA_ADDRESS_PAIRS.get((matrix, inst.modifiers[-1], shape), 1)


def _accumulates_in_place(inst: ir.Instruction) -> bool:
    """A tensor-core multiply-accumulate writes its result fragment over a
    dying operand fragment (probe: ptxas -arch=sm_80's SASS of a wmma GEMM
    loop is `HMMA.16816.F32 R4, R12, R20, R4`, of a single wmma with a zero
    accumulator `HMMA.16816.F32 R8, R8, R6, RZ`): the registers it frees
    are taken again at once, not held back like an ordinary instruction's."""
    return inst.opcode == "mma" or inst.opcode == "wmma" and "mma" in inst.modifiers


def _expansion(inst: ir.Instruction) -> int:
    if inst.opcode not in ("div", "rcp", "sqrt", "rsqrt", "rem") or _APPROX.intersection(inst.modifiers):
        return 0
    if inst.opcode in ("div", "rem") and inst.modifiers and inst.modifiers[-1] in ("f32", "f64") \
            and not {"rn", "rz", "rm", "rp"}.intersection(inst.modifiers):
        return 0
    return EXPANSION_TEMPS.get((inst.opcode, inst.modifiers[-1] if inst.modifiers else ""), 0)


def function_pressures(module: ir.Module, window: int = HOIST_WINDOW,
                       names: "set[str] | None" = None) -> dict[str, FunctionPressure]:
    """Each function's pressure (callees excluded) with loads hoisted up
    to `window` instructions; `names` limits it to those functions."""
    return {name: _Function(fn, module, window).analyse()
            for name, fn in module.functions.items()
            if fn.body is not None and (names is None or name in names)}


def _allocated(words: int) -> int:
    """Registers R0..Rmax covering `words` of values: R1 is the stack
    pointer, so values go to R0 and R2 upward."""
    return BASE_REGISTERS + max(words - 1, 0) if words else BASE_REGISTERS


def _base_count(module: ir.Module, entry: str, pressures: dict[str, FunctionPressure]) -> int:
    """The count before the occupancy margin and .maxnreg: the worst of
    the kernel's own pressure and, at each call, the values live across it
    plus the callee's need; the ABI's floor when a call follows the ABI."""
    def need(name: str, chain: frozenset[str]) -> tuple[int, bool]:
        p = pressures.get(name)
        if p is None:   # extern (vprintf, __assertfail): only the ABI floor is known
            return 0, True
        words, abi = p.pressure, False
        for callee, across in p.calls:
            fn = module.functions.get(callee) if callee is not None else None
            # ptxas keeps the ABI only for calls it cannot see into or that
            # others may link against; a module-internal .func gets a
            # calling convention of ptxas's choosing.
            if fn is None or fn.body is None or fn.linkage in ("visible", "weak", "extern") or callee in chain:
                abi = True
            inner, inner_abi = (0, True) if callee is None or callee in chain else need(callee, chain | {callee})
            abi = abi or inner_abi
            words = max(words, across + inner)
        return words, abi

    words, abi = need(entry, frozenset({entry}))
    count = _allocated(words) + REPORTED_OVERHEAD
    return max(count, ABI_CALL_FLOOR) if abi else count


def _reachable(pressures: dict[str, FunctionPressure], entry: str) -> set[str]:
    seen, todo = set(), [entry]
    while todo:
        n = todo.pop()
        if n in seen or n not in pressures:
            continue
        seen.add(n)
        todo += [c for c, _ in pressures[n].calls if c is not None]
    return seen


def register_count(module: ir.Module, entry: str,
                   pressures: dict[str, FunctionPressure] | None = None,
                   free: dict[str, FunctionPressure] | None = None) -> int:
    """The registers per thread ptxas would report for kernel `entry`.

    ptxas's scheduler hoists loads freely while the kernel still fits the
    registers of full occupancy (FULL_OCCUPANCY_REGISTERS) and becomes
    register-aware beyond: so a kernel below that is counted with every
    load hoisted as far as its operands allow (`free`), up to that bound,
    and above it with loads hoisted HOIST_WINDOW instructions."""
    pressures = pressures if pressures is not None else function_pressures(module)
    count = _base_count(module, entry, pressures)
    if count < FULL_OCCUPANCY_REGISTERS:
        reach = _reachable(pressures, entry)
        if free is None or not reach <= free.keys():
            free = function_pressures(module, FREE_HOIST_WINDOW, reach)
        count = max(count, min(_base_count(module, entry, free), FULL_OCCUPANCY_REGISTERS))
    if count > FULL_OCCUPANCY_REGISTERS:
        count += math.ceil(count * OCCUPANCY_MARGIN)
    fn = module.functions.get(entry)
    cap = MAX_REGISTERS
    if fn is not None and "maxnreg" in fn.directives:
        cap = min(cap, int(fn.directives["maxnreg"]))   # type: ignore[call-overload]
    return int(min(count, cap))


def register_counts(module: ir.Module) -> dict[str, int]:
    """Every kernel's count (one liveness pass per function, a second with
    free hoisting for the functions of kernels below full occupancy)."""
    pressures = function_pressures(module)
    entries = [name for name, fn in module.functions.items() if fn.kind == "entry" and fn.body is not None]
    small: set[str] = set()
    for name in entries:
        if _base_count(module, name, pressures) < FULL_OCCUPANCY_REGISTERS:
            small |= _reachable(pressures, name)
    free = function_pressures(module, FREE_HOIST_WINDOW, small)
    return {name: register_count(module, name, pressures, free) for name in entries}
