"""The instruction-translation toolkit: how one PTX instruction becomes one
Python closure that executes it for a whole set of threads.

The one idea: operands are resolved at load time into small reader and
writer closures over register *indices*, so running an instruction is a few
array operations with no name lookups, type dispatch or per-thread loops.
A reader returns the operand for the selected threads (`idx is None` means
every thread of the wave) already viewed as the instruction's type; a writer
stores a result, converting it to the destination register's declared type.

Op builders register themselves per base opcode with `@op("add", ...)`; the
registry is also the definition of what the simulator supports, so the
translator can reject anything else at load time.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from gpudbg.ptx import ir
from gpudbg.ptx.types import PTX_TYPES, PTXType

Reader = Callable  # (X, idx) -> np.ndarray | numpy scalar
Writer = Callable  # (X, idx, value) -> None
Builder = Callable  # (inst, TranslateContext) -> Built

ROUNDINGS = ("rn", "rz", "rm", "rp", "rna", "rni", "rzi", "rmi", "rpi", "rs")
SPACES = ("global", "shared", "local", "const", "param", "generic")
IGNORABLE = {
    # cache operators, memory-consistency qualifiers, scopes and hints have no
    # observable effect on a sequentially consistent simulator
    "ca", "cg", "cs", "lu", "cv", "wb", "wt", "nc", "volatile", "weak",
    "relaxed", "acquire", "release", "acq_rel", "sc", "mmio",
    "cta", "gpu", "sys", "cluster",
    "L1::evict_normal", "L1::evict_unchanged", "L1::evict_first",
    "L1::evict_last", "L1::no_allocate", "L2::evict_first", "L2::evict_last",
    "L2::evict_normal", "L2::64B", "L2::128B", "L2::256B", "L2::cache_hint",
    "aligned", "uni", "sync",
}


class UnsupportedInstruction(Exception):
    """An instruction the simulator cannot execute (raised at load time)."""


@dataclass
class Built:
    """A translated instruction. `run(X, idx)` executes straight-line code;
    control instructions instead provide `control(X, idx, pc)` which must
    set the next pc of every thread in idx."""

    run: Callable | None = None
    control: Callable | None = None
    kind: str = "straight"  # straight, branch, call, ret, exit, barrier
    reads: tuple[int, ...] = ()
    writes: tuple[int, ...] = ()
    info: dict = field(default_factory=dict)


_REGISTRY: dict[str, Builder] = {}


def op(*names: str):
    def deco(fn: Builder) -> Builder:
        for n in names:
            _REGISTRY[n] = fn
        return fn
    return deco


def registry() -> dict[str, Builder]:
    return _REGISTRY


class Mods:
    """The dot-modifiers of an instruction, classified. Builders `take`
    what they understand; `finish` rejects anything left over."""

    def __init__(self, inst: ir.Instruction):
        self.inst = inst
        self.left = [m for m in inst.modifiers if m not in IGNORABLE]
        self.all = inst.modifiers

    def take(self, *names: str) -> str | None:
        for m in list(self.left):
            if m in names:
                self.left.remove(m)
                return m
        return None

    def flag(self, name: str) -> bool:
        return self.take(name) is not None

    def types(self) -> list[PTXType]:
        out = []
        for m in list(self.left):
            if m in PTX_TYPES:
                out.append(PTX_TYPES[m])
                self.left.remove(m)
        return out

    def one_type(self) -> PTXType:
        ts = self.types()
        if len(ts) != 1:
            raise UnsupportedInstruction(f"expected one type modifier, got {len(ts)}")
        return ts[0]

    def rounding(self) -> str | None:
        return self.take(*ROUNDINGS)

    def space(self, default: str = "generic") -> str:
        return self.take(*SPACES) or default

    def vector(self) -> int:
        v = self.take("v2", "v4", "v8")
        return int(v[1:]) if v else 1

    def finish(self) -> None:
        if self.left:
            raise UnsupportedInstruction(
                "unsupported modifier" + ("s " if len(self.left) > 1 else " ")
                + ", ".join("." + m for m in self.left))


# ------------------------------------------------------------ operand access


def full_width(X, value, dtype):
    """Broadcast a scalar result to every thread of the wave."""
    if isinstance(value, np.ndarray) and value.ndim == 1 and value.shape[0] == X.n:
        return value
    return np.full(X.n, value, dtype=dtype)


def as_dtype(value, dtype: np.dtype):
    """Reinterpret (same width) or convert (other width) to dtype."""
    vd = value.dtype
    if vd == dtype:
        return value
    if vd.itemsize == dtype.itemsize and vd.kind != "b" and dtype.kind != "b":
        return value.view(dtype) if isinstance(value, np.ndarray) and value.ndim else np.asarray(value).view(dtype)
    if dtype.kind == "b":
        return value != 0
    if vd.kind == "b":
        return value.astype(dtype)
    if vd.kind == "f" and dtype.kind in "ui":
        # a float result stored to a wider/narrower bit register: keep bits
        bits = value.view({2: np.uint16, 4: np.uint32, 8: np.uint64}[vd.itemsize])
        return bits.astype(dtype)
    if dtype.kind == "f":
        return value.astype({2: np.uint16, 4: np.uint32, 8: np.uint64}[dtype.itemsize]).view(dtype)
    return value.astype(dtype)


class TranslateContext:
    """What a builder may ask while translating one instruction."""

    def __init__(self, program, function: ir.Function, pc: int):
        self.program = program
        self.function = function
        self.pc = pc

    # registers ---------------------------------------------------------
    def reg(self, r: ir.Register) -> tuple[int, np.dtype]:
        return self.program.register_index(self.function, r.name)

    def reader(self, operand, ptype: PTXType) -> Reader:
        return make_reader(self, operand, ptype.dtype)

    def reader_dtype(self, operand, dtype) -> Reader:
        return make_reader(self, operand, np.dtype(dtype))

    def writer(self, operand, ptype: PTXType | None = None) -> Writer:
        return make_writer(self, operand)

    def label_pc(self, name: str) -> int:
        return self.program.label_pc(self.function, name)


def make_reader(tc: TranslateContext, operand, dtype: np.dtype) -> Reader:
    if isinstance(operand, ir.Register):
        k, rd = tc.reg(operand)
        if rd == dtype:
            def read(X, idx, k=k):
                a = X.regs[k]
                return a if idx is None else a[idx]
        elif rd.itemsize == dtype.itemsize and rd.kind != "b" and dtype.kind != "b":
            def read(X, idx, k=k, dtype=dtype):
                a = X.regs[k]
                return (a if idx is None else a[idx]).view(dtype)
        else:
            def read(X, idx, k=k, dtype=dtype):
                a = X.regs[k]
                return as_dtype(a if idx is None else a[idx], dtype)
        return read
    if isinstance(operand, ir.Immediate):
        value = immediate_value(operand, dtype)
        return lambda X, idx, v=value: v
    if isinstance(operand, ir.Negated):
        inner = make_reader(tc, operand.operand, np.dtype(np.bool_))
        return lambda X, idx: ~inner(X, idx)
    if isinstance(operand, ir.SpecialRegister):
        from gpudbg.sim.ops.special import special_reader
        raw = special_reader(tc, operand)
        if dtype == np.uint32:
            return raw
        return lambda X, idx: as_dtype(np.asarray(raw(X, idx)), dtype)
    if isinstance(operand, ir.Symbol):
        from gpudbg.sim.ops.symbols import symbol_reader
        raw = symbol_reader(tc, operand)
        return lambda X, idx: as_dtype(np.asarray(raw(X, idx)), dtype)
    raise UnsupportedInstruction(f"operand {operand!r} cannot be read here")


def immediate_value(imm: ir.Immediate, dtype: np.dtype):
    dtype = np.dtype(dtype)
    v = imm.value
    if dtype.kind == "b":
        return np.bool_(bool(v))
    if dtype.kind == "f":
        if imm.bits is not None and imm.width == dtype.itemsize * 8:
            return np.array(imm.bits, dtype={2: np.uint16, 4: np.uint32, 8: np.uint64}[dtype.itemsize]).view(dtype)[()]
        if imm.bits is not None:
            f = np.array(imm.bits, dtype={32: np.uint32, 64: np.uint64}[imm.width]).view(
                {32: np.float32, 64: np.float64}[imm.width])[()]
            return np.array(f).astype(dtype)[()]
        return np.array(float(v)).astype(dtype)[()]
    if isinstance(v, float) or imm.bits is not None:
        if imm.bits is not None:
            return np.array(imm.bits & ((1 << (8 * dtype.itemsize)) - 1), dtype=np.uint64).astype(
                {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[dtype.itemsize]).view(dtype)[()]
        v = int(v)
    mask = (1 << (8 * dtype.itemsize)) - 1
    u = np.array(int(v) & mask, dtype=np.uint64).astype(
        {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[dtype.itemsize])
    return u.view(dtype)[()]


def make_writer(tc: TranslateContext, operand) -> Writer:
    if isinstance(operand, ir.Sink):
        return lambda X, idx, value: None
    if not isinstance(operand, ir.Register):
        raise UnsupportedInstruction(f"cannot write to operand {operand!r}")
    k, rd = tc.reg(operand)

    def write(X, idx, value, k=k, rd=rd):
        if not isinstance(value, np.ndarray) or value.dtype != rd:
            value = as_dtype(np.asarray(value), rd)
        regs = X.regs
        if idx is None and getattr(X, "reg_ptrs", None) is not None:
            regs[k][...] = value        # native segments address this array: keep it in place
            return
        if idx is None:
            if value.ndim == 0:
                regs[k].fill(value)  # registers never share arrays (see reg_ids)
                return
            if value.shape[0] != X.n:
                new = np.full(X.n, value, dtype=rd)
            elif value.base is not None or not value.flags.owndata or id(value) in X.reg_ids:
                new = value.copy()
            else:
                new = value
            ids = X.reg_ids
            ids.discard(id(regs[k]))
            regs[k] = new
            ids.add(id(new))
        else:
            regs[k][idx] = value
    return write


def guard_filter(guard_k: int, negated: bool):
    """Narrow a selection to the threads whose guard predicate holds."""
    def narrow(X, idx):
        p = X.regs[guard_k]
        sel = p if idx is None else p[idx]
        if negated:
            sel = ~sel
        if idx is None:
            if sel.all():
                return None
            return np.flatnonzero(sel)
        return idx[sel]
    return narrow
