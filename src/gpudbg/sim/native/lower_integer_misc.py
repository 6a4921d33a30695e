"""Native lowerings of the remaining integer forms real kernels use: dp4a and
dp2a (int8/int16 dot products), vabsdiff4 (byte-wise absolute differences,
merged or summed), bmsk and szext (mask and sign/zero extension of a bit
count), and isspacep (which window a generic address falls in).

Transcriptions of sim/arith/integer.py (dp4a, dp2a, szext), arith/video.py
(vabsdiff4), arith/bits.py (bmsk) and ops/memory_ops.build_isspacep. The
dot products sum in 32-bit wrapping arithmetic: the interpreter sums
exactly in int64 and keeps the low 32 bits, and the low bits of a sum of
products do not depend on the high ones, so the two agree bit for bit
(the saturating vabsdiff4 sum works in 64 bits, as the clamp needs). fns
is bits.fns's 32-step scan unrolled.
"""
from __future__ import annotations

import numpy as np
from llvmlite import ir as L

from gpudbg.sim.memory import LOCAL_WINDOW_BASE, SHARED_WINDOW_BASE, WINDOW_SIZE
from gpudbg.sim.native import intmath as M
from gpudbg.sim.native.emit import BOOL, I32, I64, NotNative, lower

U32 = np.dtype(np.uint32)
U64 = np.dtype(np.uint64)
I8, I16 = L.IntType(8), L.IntType(16)


def _lane(b, word, index: int, width: L.IntType, signed: bool):
    """integer._lanes: lane `index` of `width` bits of a u32, extended to i32."""
    v = b.trunc(b.lshr(word, I32(index * width.width)) if index else word, width)
    return b.sext(v, I32) if signed else b.zext(v, I32)


@lower("dp4a", "dp2a", types="iu")
def dot(em, inst):
    m = em.mods(inst)
    half = m.take("hi", "lo")
    ts = m.types()
    m.finish()
    if len(ts) != 2 or any(t.bits != 32 or t.kind not in "us" for t in ts):
        raise NotNative(f"{inst.full_opcode}")
    if inst.opcode == "dp4a" and half is not None:
        raise NotNative("dp4a with .hi/.lo")     # ignored by the interpreter
    a_s, b_s = ts[0].kind == "s", ts[1].kind == "s"
    out = np.dtype(np.int32 if (a_s or b_s) else np.uint32)
    d, a, bo, c = inst.operands
    b = em.b
    x, y = em.read(a, U32), em.read(bo, U32)
    acc = em.read(c, out)
    if inst.opcode == "dp4a":
        pairs = [(_lane(b, x, i, I8, a_s), _lane(b, y, i, I8, b_s)) for i in range(4)]
    else:
        k = 2 if half == "hi" else 0
        pairs = [(_lane(b, x, i, I16, a_s), _lane(b, y, k + i, I8, b_s)) for i in range(2)]
    for p, q in pairs:
        acc = b.add(acc, b.mul(p, q))
    em.write(d, acc, out)


def _clamp_or_wrap_32(em, inst):
    """(.clamp or .wrap, the type) of bmsk/szext; only 32-bit forms are native."""
    m = em.mods(inst)
    mode = m.take("clamp", "wrap") or "clamp"
    t = m.one_type()
    m.finish()
    if t.bits != 32:
        raise NotNative(f"{inst.full_opcode}")
    return mode, t


@lower("bmsk", types="b")
def bmsk(em, inst):
    mode, t = _clamp_or_wrap_32(em, inst)
    d, a, bo = inst.operands
    b = em.b
    x = b.zext(em.read(a, t.dtype), I64)
    y = b.zext(em.read(bo, t.dtype), I64)
    full = I64(0xFFFFFFFF)
    a1, b1 = b.and_(x, I64(31)), b.and_(y, I64(31))
    s = b.add(a1, b1)
    mask0 = b.and_(b.shl(full, a1), full)
    mask1 = b.and_(b.shl(full, M.umin(b, s, I64(63))), full)
    kill1 = b.icmp_unsigned(">=", s, I64(32))
    if mode == "clamp":
        a_big = b.icmp_unsigned(">=", x, I64(32))
        mask0 = b.select(a_big, I64(0), mask0)
        kill1 = b.or_(kill1, b.or_(a_big, b.icmp_unsigned(">=", y, I64(32))))
    mask1 = b.select(kill1, I64(0), b.select(b.icmp_unsigned("==", b1, I64(0)), full, mask1))
    em.write(d, b.trunc(b.and_(mask0, b.xor(mask1, full)), I32), U32)


@lower("szext", types="iu")
def szext(em, inst):
    mode, t = _clamp_or_wrap_32(em, inst)
    d, a, bo = inst.operands
    b = em.b
    ua = b.zext(M.extend(b, em.read(a, t.dtype), 32, False), I64)
    n = b.zext(em.read(bo, U32), I64)
    n1 = b.and_(n, I64(31))
    full = I64(0xFFFFFFFF)
    mask = b.and_(b.shl(full, n1), full)
    too_large = b.icmp_unsigned(">=", n, I64(32)) if mode == "clamp" else None
    if too_large is not None:
        mask = b.select(too_large, I64(0), mask)
    r = b.and_(ua, b.xor(mask, full))
    if t.kind == "s":
        sign_pos = b.and_(b.sub(n1, I64(1)), I64(31))
        sbit = b.and_(b.trunc(b.lshr(ua, sign_pos), L.IntType(1)), b.icmp_unsigned("!=", n1, I64(0)))
        if too_large is not None:
            sbit = b.and_(sbit, b.not_(too_large))
        r = b.or_(r, b.select(sbit, mask, I64(0)))
    em.write(d, b.trunc(r, I32), np.dtype(np.int32 if t.kind == "s" else np.uint32))


def _in_window(b, v, base: int):
    off = b.sub(v, I64(base))
    return b.icmp_unsigned("<", off, I64(WINDOW_SIZE))


@lower("isspacep")
def isspacep(em, inst):
    m = em.mods(inst)
    space = m.take("global", "shared", "local", "const", "param")
    m.finish()
    if space is None:
        raise NotNative(f"{inst.full_opcode}")
    d, a = inst.operands
    b = em.b
    v = em.read(a, U64)
    if space in ("shared", "local"):
        r = _in_window(b, v, SHARED_WINDOW_BASE if space == "shared" else LOCAL_WINDOW_BASE)
    elif space in ("global", "const"):
        r = b.not_(b.or_(_in_window(b, v, SHARED_WINDOW_BASE), _in_window(b, v, LOCAL_WINDOW_BASE)))
    else:
        r = L.Constant(L.IntType(1), 0)          # the interpreter: never a kernel parameter
    em.write(d, r, BOOL)


@lower("vabsdiff4", types="iu")
def vabsdiff4(em, inst):
    """video.vop("absdiff", 8): lane |a_i - b_i| (.sat: clamped to the
    destination lane range, signed when either source is), merged into c
    lane by lane, or with .add summed onto c (.sat: clamped to 32 bits)."""
    m = em.mods(inst)
    sat = m.flag("sat")
    secondary = m.take("add", "min", "max")
    ts = m.types()
    m.finish()
    if len(ts) != 3 or len(inst.operands) < 4 or secondary in ("min", "max"):
        raise NotNative(f"{inst.full_opcode}")      # .min/.max raise in the interpreter
    a_s, b_s = ts[1].kind == "s", ts[2].kind == "s"
    signed = a_s or b_s
    d, a, bo, c = inst.operands[:4]
    b = em.b
    x, y, z = em.read(a, U32), em.read(bo, U32), em.read(c, U32)
    lo, hi = (-128, 127) if signed else (0, 255)
    lanes = []
    for i in range(4):
        r = b.sub(b.sext(_lane(b, x, i, I8, a_s), I64), b.sext(_lane(b, y, i, I8, b_s), I64))
        r = b.select(b.icmp_signed("<", r, I64(0)), b.sub(I64(0), r), r)
        if sat:
            r = M.smin(b, M.smax(b, r, I64(lo)), I64(hi))
        lanes.append(r)
    if secondary == "add":
        acc = M.extend(b, z, 64, signed)
        for r in lanes:
            acc = b.add(acc, r)
        if sat:
            acc = M.smin(b, M.smax(b, acc, I64(-2**31 if signed else 0)), I64(2**31 - 1 if signed else 2**32 - 1))
        out = b.trunc(acc, I32)
    else:
        out = b.zext(z, I64)
        for i, r in enumerate(lanes):
            keep = I64(~(0xFF << (8 * i)) & 0xFFFFFFFF)
            out = b.or_(b.and_(out, keep), b.shl(b.and_(r, I64(0xFF)), I64(8 * i)))
        out = b.trunc(out, I32)
    em.write(d, out, np.dtype(np.int32 if signed else np.uint32))


@lower("fns")
def fns(em, inst):
    """bits.fns: the position of the |offset|-th set bit of mask from base
    (upward for offset > 0, downward for < 0, base itself for 0), all ones
    when there is none or base is past bit 31; the scan, step by step."""
    m = em.mods(inst)
    m.types()
    m.finish()
    d, mask, base, offset = inst.operands
    b = em.b
    mv = b.zext(em.read(mask, U32), I64)
    bv = b.zext(em.read(base, U32), I64)
    off = b.sext(em.read(offset, np.dtype(np.int32)), I64)
    up = b.icmp_signed(">=", off, I64(0))
    want = M.smax(b, b.select(up, off, b.sub(I64(0), off)), I64(1))
    base_ok = b.icmp_unsigned("<", bv, I64(32))
    nonzero = b.icmp_signed("!=", off, I64(0))
    res, count = I64(-1), I64(0)
    for step in range(32):
        pos = b.select(up, b.add(bv, I64(step)), b.sub(bv, I64(step)))
        valid = b.and_(b.and_(b.icmp_signed(">=", pos, I64(0)), b.icmp_signed("<", pos, I64(32))), base_ok)
        if step:
            valid = b.and_(valid, nonzero)
        at = b.and_(b.select(valid, pos, I64(0)), I64(31))
        bit = b.and_(valid, b.trunc(b.lshr(mv, at), L.IntType(1)))
        count = b.add(count, b.zext(bit, I64))
        hit = b.and_(b.and_(bit, b.icmp_signed("<", res, I64(0))), b.icmp_signed("==", count, want))
        res = b.select(hit, pos, res)
    em.write(d, b.trunc(b.select(b.icmp_signed("<", res, I64(0)), I64(0xFFFFFFFF), res), I32), U32)
