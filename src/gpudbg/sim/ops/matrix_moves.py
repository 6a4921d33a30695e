"""Warp-collective 8x8 matrix moves: ldmatrix, stmatrix (sm_90) and
movmatrix, all .m8n8 with .b16 elements.

The one idea: lanes 8i..8i+7 supply the addresses of the 8 rows (16 bytes
each) of matrix i, and every lane then moves its own fragment of each
matrix, laid out as the 8x8 core-matrix table says (fragments.core_8x8):
without .trans lane l holds row l>>2, elements 2*(l%4) and 2*(l%4)+1 (one
4-byte access per matrix); with .trans it holds column l>>2 of rows
2*(l%4), 2*(l%4)+1 (two 2-byte accesses). So each access is a thread's own,
faults name that thread, and a row address that is not 16-byte aligned is
a misaligned-address fault of the lane that supplied it.

What it deliberately does not do: the sm_100 .m16n16/.m8n16 .b8/.b6/.b4
forms.
"""
from __future__ import annotations

import numpy as np

from gpudbg.ptx import ir
from gpudbg.ptx.types import PTX_TYPES
from gpudbg.sim.memory.spaces import AccessType
from gpudbg.sim.ops import tensor_memory as TMem
from gpudbg.sim.ops.base import Built, Mods, UnsupportedInstruction, op
from gpudbg.sim.ops.fragments import core_8x8
from gpudbg.sim.ops.memory_ops import address_of
from gpudbg.sim.ops.warp_matrix import Warps, gather_matrix, pack, read_bits, scatter_matrix

B32 = PTX_TYPES["b32"]
ROW_BYTES = 16
SYNC = {"sync_mask": None}


def _regs(operand, count: int, what: str) -> tuple:
    if isinstance(operand, ir.Vector):
        elements = operand.elements
    elif count == 1 and isinstance(operand, ir.Register):
        elements = (operand,)
    else:
        raise UnsupportedInstruction(f"{what} must be {count} registers {{...}}")
    if len(elements) != count:
        raise UnsupportedInstruction(f"{what} needs {count} registers for .x{count}, got {len(elements)}")
    return elements


def _parse(inst, what: str):
    m = Mods(inst)
    if m.take("m8n8") is None:
        raise UnsupportedInstruction(f"{what}: only the .m8n8 shape is supported")
    num = m.take("x1", "x2", "x4")
    trans = m.flag("trans")
    space = TMem.space_of(m.take("shared", "shared::cta"))
    t = m.one_type()
    m.finish()
    if num is None:
        raise UnsupportedInstruction(f"{what} needs .x1, .x2 or .x4")
    if t.name != "b16":
        raise UnsupportedInstruction(f"{what}.m8n8 moves .b16 elements, not .{t.name}")
    return int(num[1:]), trans, space


def _addresses(tc, operand, count: int, trans: bool):
    """(threads, elements) addresses each thread moves, from the row
    addresses of the lanes of its warp; plus the thread's own row address."""
    kind, base = address_of(tc, operand)
    if base is None:
        raise UnsupportedInstruction("the matrix address must be a register or a variable")

    def own(X, idx):
        return np.broadcast_to(np.asarray(base(X, idx), dtype=np.uint64), (X.count(idx),))

    def matrix(X, idx):
        warps = Warps(X, idx)
        rows = np.broadcast_to(np.asarray(base(X, warps.slots.reshape(-1)), dtype=np.uint64),
                               (warps.slots.size,)).reshape(-1, 32)
        sel = X.all_slots if idx is None else np.asarray(idx)
        wi = (sel >> 5) if warps.pos is None else warps.pos // 32
        lane = sel & 31
        g, t = lane >> 2, lane & 3
        i = np.arange(count)[None, :]
        if not trans:
            return rows[wi[:, None], 8 * i + g[:, None]] + (4 * t)[:, None].astype(np.uint64)
        e = np.arange(2)[None, None, :]
        r = rows[wi[:, None, None], 8 * i[:, :, None] + 2 * t[:, None, None] + e]
        return (r + (2 * g)[:, None, None].astype(np.uint64)).reshape(len(sel), 2 * count)
    return matrix, own


def _check_rows(X, idx, own, count: int, space: str, access: AccessType, size: int, what: str) -> None:
    lane = (X.all_slots if idx is None else np.asarray(idx)) & 31
    TMem.check_aligned(space, own(X, idx), ROW_BYTES, access, size,
                       f"a {what} row address must be a multiple of {ROW_BYTES} bytes", relevant=lane < 8 * count)


@op("ldmatrix")
def build_ldmatrix(inst, tc) -> Built:
    count, trans, space = _parse(inst, "ldmatrix")
    outs = [tc.writer(r) for r in _regs(inst.operands[0], count, "the ldmatrix destination")]
    addrs, own = _addresses(tc, inst.operands[1], count, trans)
    size = 2 if trans else 4

    def run(X, idx):
        _check_rows(X, idx, own, count, space, AccessType.READ, size, "ldmatrix")
        v = TMem.load(X, idx, space, addrs(X, idx), np.uint16 if trans else np.uint32)
        if trans:
            v = v.astype(np.uint32).reshape(-1, count, 2)
            v = v[:, :, 0] | (v[:, :, 1] << np.uint32(16))
        for i, w in enumerate(outs):
            w(X, idx, np.ascontiguousarray(v[:, i]))
    return Built(run, info={"space": space, "access": "read", "sync_op": "ldmatrix.sync", **SYNC,
                            "memory": TMem.probes(space, addrs, count * (2 if trans else 1),
                                                  AccessType.READ, size)})


@op("stmatrix")
def build_stmatrix(inst, tc) -> Built:
    count, trans, space = _parse(inst, "stmatrix")
    ins = [tc.reader(r, B32) for r in _regs(inst.operands[1], count, "the stmatrix source")]
    addrs, own = _addresses(tc, inst.operands[0], count, trans)
    size = 2 if trans else 4

    def run(X, idx):
        _check_rows(X, idx, own, count, space, AccessType.WRITE, size, "stmatrix")
        n = X.count(idx)
        v = np.stack([np.broadcast_to(np.asarray(r(X, idx)), (n,)) for r in ins], axis=1).astype(np.uint32)
        if trans:
            halves = np.stack([v & np.uint32(0xFFFF), v >> np.uint32(16)], axis=2)
            TMem.store(X, idx, space, addrs(X, idx), halves.reshape(n, 2 * count).astype(np.uint16), np.uint16)
        else:
            TMem.store(X, idx, space, addrs(X, idx), v, np.uint32)
    return Built(run, info={"space": space, "access": "write", "sync_op": "stmatrix.sync", **SYNC,
                            "memory": TMem.probes(space, addrs, count * (2 if trans else 1),
                                                  AccessType.WRITE, size)})


@op("movmatrix")
def build_movmatrix(inst, tc) -> Built:
    m = Mods(inst)
    if m.take("m8n8") is None or not m.flag("trans"):
        raise UnsupportedInstruction("movmatrix: only .m8n8.trans is defined")
    t = m.one_type()
    m.finish()
    if t.name != "b16":
        raise UnsupportedInstruction(f"movmatrix.m8n8.trans moves .b16 elements, not .{t.name}")
    d = tc.writer(inst.operands[0])
    a = tc.reader(inst.operands[1], B32)
    layout = core_8x8(False)

    def run(X, idx):
        warps = Warps(X, idx)
        mat = gather_matrix(warps, read_bits(X, [a], 4), layout)
        out = scatter_matrix(np.ascontiguousarray(mat.transpose(0, 2, 1)), layout)
        d(X, idx, warps.of_selected(pack(out, layout)[0]))
    return Built(run, info={"sync_op": "movmatrix.sync", **SYNC})
