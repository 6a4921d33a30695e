"""Symbols used as values: the address of a variable or function.

Where a symbol lives decides what its address is: global and const
variables have device virtual addresses fixed at load; shared variables have
offsets in their block's shared window, laid out per kernel at launch (so
one `.func` can serve kernels with different layouts); local variables are
at fixed offsets from the thread's stack pointer, which moves with calls.
"""
from __future__ import annotations

import numpy as np

from gpudbg.ptx import ir
from gpudbg.sim.ops.base import UnsupportedInstruction


def symbol_kind(tc, name: str) -> str:
    prog = tc.program
    if name in prog.functions[tc.function.name].local_offsets:
        return "local"
    if name in prog.shared_vars:
        return "shared"
    if name in prog.symbols:
        return "global"
    if tc.function.kind == "entry" and any(p.name == name for p in tc.function.params):
        return "kparam"
    if name in prog.param_vars:
        return "param"
    if name in prog.functions:
        return "function"
    raise UnsupportedInstruction(f"symbol {name} is not defined")


def symbol_reader(tc, sym: ir.Symbol):
    kind = symbol_kind(tc, sym.name)
    name, off = sym.name, sym.offset
    if kind == "global":
        addr = np.uint64(tc.program.symbols[name] + off)
        return lambda X, idx: addr
    if kind == "shared":
        return lambda X, idx: np.uint64(X.shared_symbols[name] + off)
    if kind == "local":
        local_off = np.uint64(tc.program.functions[tc.function.name].local_offsets[name] + off)

        def read(X, idx):
            sp = X.sp if idx is None else X.sp[idx]
            return sp + local_off
        return read
    if kind == "kparam":
        return lambda X, idx: np.uint64(X.kparam_offsets[name] + off)
    if kind == "function":
        return lambda X, idx: np.uint64(X.program.function_address(name) + off)
    raise UnsupportedInstruction(f"the address of .param variable {name} cannot be taken")
