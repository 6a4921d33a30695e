"""Every mma.sync form the simulator accepts whose layout the ISA documents,
end to end through the public API: operands are packed into each lane's
registers by the ISA's own formulas (isa_fragments.py, not the simulator's
tables), a generated PTX kernel loads them, runs the one mma.sync and
stores D's registers, and D unpacked by the ISA's formula must equal a
numpy model of the documented arithmetic (f32: exact products summed in k
order with one rounding per step; f16 D: that, rounded once; integers:
exact, wrapped or saturated; f64: one fma per step)."""
from __future__ import annotations

import numpy as np
import pytest

import gpudbg
from gpudbg.sim.arith.floating import fma
from isa_fragments import isa_rc

SHAPES = {"m16n8k16": (16, 8, 16), "m16n8k8": (16, 8, 8), "m16n8k4": (16, 8, 4), "m8n8k16": (8, 8, 16),
          "m16n8k32": (16, 8, 32), "m8n8k4": (8, 8, 4)}
BYTES = {"f16": 2, "bf16": 2, "tf32": 4, "f32": 4, "f64": 8, "s8": 1, "u8": 1, "s32": 4}

# (shape, dtype, atype, btype, ctype, satfinite)
FORMS = [
    ("m16n8k16", "f32", "f16", "f16", "f32", False), ("m16n8k16", "f16", "f16", "f16", "f16", False),
    ("m16n8k16", "f32", "f16", "f16", "f16", False), ("m16n8k16", "f16", "f16", "f16", "f32", False),
    ("m16n8k8", "f32", "f16", "f16", "f32", False), ("m16n8k8", "f16", "f16", "f16", "f16", False),
    ("m16n8k16", "f32", "bf16", "bf16", "f32", False), ("m16n8k8", "f32", "bf16", "bf16", "f32", False),
    ("m16n8k8", "f32", "tf32", "tf32", "f32", False), ("m16n8k4", "f32", "tf32", "tf32", "f32", False),
    ("m8n8k16", "s32", "s8", "s8", "s32", False), ("m8n8k16", "s32", "u8", "s8", "s32", True),
    ("m16n8k16", "s32", "s8", "u8", "s32", False), ("m16n8k16", "s32", "u8", "u8", "s32", True),
    ("m16n8k32", "s32", "s8", "s8", "s32", True), ("m16n8k32", "s32", "u8", "s8", "s32", False),
    ("m8n8k4", "f64", "f64", "f64", "f64", False), ("m16n8k4", "f64", "f64", "f64", "f64", False),
    ("m16n8k8", "f64", "f64", "f64", "f64", False), ("m16n8k16", "f64", "f64", "f64", "f64", False),
]


def _values(rs, elem, shape):
    """(raw element bits, values as the arithmetic sees them)."""
    if elem in ("f16",):
        v = (rs.standard_normal(shape) * 4).astype(np.float16)
        return v.view(np.uint16), v.astype(np.float64)
    if elem == "bf16":
        u = (rs.standard_normal(shape).astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
        return u, (u.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    if elem in ("tf32", "f32"):
        v = rs.standard_normal(shape).astype(np.float32)
        u = v.view(np.uint32)
        seen = u & np.uint32(0xFFFFE000) if elem == "tf32" else u     # tf32: low 13 bits ignored
        return u, seen.view(np.float32).astype(np.float64)
    if elem == "f64":
        v = rs.standard_normal(shape)
        return v.view(np.uint64), v
    if elem == "s8":
        v = rs.randint(-128, 128, shape)
        return v.astype(np.int8).view(np.uint8), v
    if elem == "u8":
        v = rs.randint(0, 256, shape)
        return v.astype(np.uint8), v
    v = rs.randint(-2**31, 2**31, shape, dtype=np.int64)
    if elem == "s32":
        v[0, 0], v[-1, -1] = 2**31 - 7, -2**31 + 7          # overflow candidates
    return v.astype(np.int32).view(np.uint32), v


def _pack(bits, shape, matrix, elem):
    """Per lane, per register: the element bits packed low to high."""
    rc = isa_rc(shape, matrix, elem)
    nb = BYTES[elem]
    per_reg = max(4 // nb, 1)
    count = bits.size // 32
    regs = max(count // per_reg, 1)
    out = np.zeros((32, regs), dtype=np.uint64)
    for lane in range(32):
        for i in range(count):
            r, c = rc(lane, i)
            out[lane, i // per_reg] |= np.uint64(int(bits[r, c])) << np.uint64(8 * nb * (i % per_reg))
    return out


def _ptx(shape, dtype, atype, btype, ctype, sat, na, nb, nc, nd, wide):
    t = "b64" if wide else "b32"
    rb = 8 if wide else 4
    lines = []
    for name, n, p in (("a", na, "%rd1"), ("b", nb, "%rd2"), ("c", nc, "%rd3")):
        lines.append(f"mad.lo.u64 %rd9, %rd8, {n * rb}, {p};")
        lines += [f"ld.global.{t} %{name}{j}, [%rd9+{j * rb}];" for j in range(n)]
    regs = lambda name, n: "{" + ", ".join(f"%{name}{j}" for j in range(n)) + "}"
    sf = ".satfinite" if sat else ""
    lines.append(f"mma.sync.aligned.{shape}.row.col{sf}.{dtype}.{atype}.{btype}.{ctype} "
                 f"{regs('d', nd)}, {regs('a', na)}, {regs('b', nb)}, {regs('c', nc)};")
    lines.append(f"mad.lo.u64 %rd9, %rd8, {nd * rb}, %rd4;")
    lines += [f"st.global.{t} [%rd9+{j * rb}], %d{j};" for j in range(nd)]
    body = "\n    ".join(lines)
    return f"""
.version 8.0
.target sm_80
.address_size 64
.visible .entry one_mma(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pd)
{{
    .reg .{t} %a<{na}>, %b<{nb}>, %c<{nc}>, %d<{nd}>;
    .reg .b32 %r1;
    .reg .b64 %rd<10>;
    ld.param.u64 %rd1, [pa];
    ld.param.u64 %rd2, [pb];
    ld.param.u64 %rd3, [pc];
    ld.param.u64 %rd4, [pd];
    mov.u32 %r1, %laneid;
    cvt.u64.u32 %rd8, %r1;
    {body}
    ret;
}}
"""


def _reference(a, b, c, atype, dtype, sat):
    if atype in ("s8", "u8"):
        d = a.astype(np.int64) @ b.astype(np.int64) + c
        return np.clip(d, -2**31, 2**31 - 1) if sat else (d + 2**31) % 2**32 - 2**31
    if atype == "f64":
        d = c.copy()
        for k in range(a.shape[1]):
            d = fma(np.repeat(a[:, k, None], b.shape[1], 1), np.repeat(b[None, k, :], a.shape[0], 0), d)
        return d
    d = c.astype(np.float32)
    for k in range(a.shape[1]):
        d = (d.astype(np.float64) + np.outer(a[:, k], b[k, :])).astype(np.float32)
    return d.astype(np.float16).astype(np.float64) if dtype == "f16" else d.astype(np.float64)


@pytest.mark.parametrize("form", FORMS, ids=[".".join(str(x) for x in f[:5]) + (".sat" if f[5] else "")
                                             for f in FORMS])
def test_mma_form_matches_the_isa_layout_and_the_model(form):
    shape, dtype, atype, btype, ctype, sat = form
    M, N, K = SHAPES[shape]
    rs = np.random.RandomState(sum(map(ord, "".join(map(str, form)))))
    abits, a = _values(rs, atype, (M, K))
    bbits, b = _values(rs, btype, (K, N))
    cbits, c = _values(rs, ctype, (M, N))
    if atype in ("s8", "u8"):
        # D[0, 0] leaves the int32 range upwards (C there is 2^31 - 7), and
        # where the signs allow it D[-1, -1] downwards (C there is -2^31 + 7)
        top = {"s8": 127, "u8": 255}
        a[0, :], b[:, 0] = top[atype], top[btype]
        if atype == "s8":
            a[-1, :], b[:, -1] = -128, top[btype]
        elif btype == "s8":
            a[-1, :], b[:, -1] = 255, -128
        abits, bbits = a.astype(np.int64).astype(np.uint8), b.astype(np.int64).astype(np.uint8)
    wide = atype == "f64"
    A, B, C = _pack(abits, shape, "a", atype), _pack(bbits, shape, "b", btype), _pack(cbits, shape, "c", ctype)
    nd = C.shape[1] if BYTES[dtype] == BYTES[ctype] else (M * N // 32) // max(4 // BYTES[dtype], 1)
    host = np.uint64 if wide else np.uint32
    mod = gpudbg.Module.from_ptx(_ptx(shape, dtype, atype, btype, ctype, sat, A.shape[1], B.shape[1],
                                      C.shape[1], nd, wide), name="one_mma.ptx")
    bufs = [gpudbg.to_device(x.astype(host).ravel()) for x in (A, B, C)]
    out = gpudbg.zeros(32 * nd, host)
    mod.one_mma[1, 32](*bufs, out)
    D = out.to_host().reshape(32, nd).astype(np.uint64)
    # unpack D by the ISA's accumulator formula
    nbd = BYTES[dtype]
    per = max(4 // nbd, 1)
    rc = isa_rc(shape, "c", dtype)
    got = np.zeros((M, N), dtype=np.uint64)
    for lane in range(32):
        for i in range(M * N // 32):
            r, col = rc(lane, i)
            got[r, col] = (int(D[lane, i // per]) >> (8 * nbd * (i % per))) & ((1 << (8 * nbd)) - 1)
    want = _reference(a, b, c, atype, dtype, sat)
    if dtype == "f16":
        values = got.astype(np.uint16).view(np.float16).astype(np.float64)
    elif dtype == "f32":
        values = got.astype(np.uint32).view(np.float32).astype(np.float64)
    elif dtype == "f64":
        values = got.view(np.float64)
    else:
        values = got.astype(np.uint32).view(np.int32).astype(np.int64)
    assert np.array_equal(values, want)
    if atype in ("s8", "u8"):
        assert values[0, 0] == 2**31 - 1 if sat else values[0, 0] < 0        # saturated, or wrapped
