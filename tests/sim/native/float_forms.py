"""One-instruction kernels for the float lowerings' differential tests.

`check_form(body, ins, outs, columns)` builds a kernel in which thread i
loads element i of one array per input type, runs `body` (PTX with {a} {b}
{c} for the inputs and {d} {e} for the outputs), stores each output (a
predicate as 0/1 u32), runs it under both engines (engines_pair.run_both:
bit-identical buffers) and asserts that every instruction of the body was
inside a compiled segment, so a lowering that silently refuses its form
fails the test instead of passing vacuously.

Values are bit patterns (uint arrays of the type's width): the strategies
mix IEEE edge cases (signed zeros, subnormals, infinities, NaNs with
distinct payloads and signs, signalling NaNs, integer limits) with
arbitrary bits.
"""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from engines_pair import Out, run_both

HEAD = ".version 8.0\n.target sm_80\n.address_size 64\n"
N = 64   # two warps per launch

_REG = {"f16": "f16", "f32": "f32", "f64": "f64", "s8": "s16", "u8": "u16", "s16": "s16", "u16": "u16",
        "s32": "s32", "u32": "u32", "s64": "s64", "u64": "u64", "b32": "b32", "b64": "b64",
        "pred": "pred"}
_BYTES = {"f16": 2, "f32": 4, "f64": 8, "s8": 1, "u8": 1, "s16": 2, "u16": 2, "s32": 4, "u32": 4,
          "s64": 8, "u64": 8, "b32": 4, "b64": 8, "pred": 4}
_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
_STORE = {"s8": "b8", "u8": "b8"}


def form_kernel(body: str, ins: list[str], outs: list[str]) -> str:
    params = ", ".join([f".param .u64 in{k}" for k in range(len(ins))]
                       + [f".param .u64 out{k}" for k in range(len(outs))])
    lines = [HEAD, f".visible .entry k({params})", "{",
             "    .reg .b32 %t<4>; .reg .b64 %q<32>;"]
    for k, t in enumerate(ins):
        lines.append(f"    .reg .{_REG[t]} %i{k};")
    for k, t in enumerate(outs):
        lines.append(f"    .reg .{_REG[t]} %o{k};")
    lines += ["    mov.u32 %t1, %tid.x;", "    mov.u32 %t2, %ctaid.x;", "    mov.u32 %t3, %ntid.x;",
              "    mad.lo.u32 %t0, %t2, %t3, %t1;"]
    q = 0
    for k, t in enumerate(ins + outs):
        lines.append(f"    ld.param.u64 %q{q}, [{'in' if k < len(ins) else 'out'}{k if k < len(ins) else k - len(ins)}];")
        lines.append(f"    mul.wide.u32 %q{q + 1}, %t0, {_BYTES[t]};")
        lines.append(f"    add.s64 %q{q + 2}, %q{q}, %q{q + 1};")
        q += 3
    for k, t in enumerate(ins):
        lines.append(f"    ld.global.{t if t != 'pred' else 'u32'} %i{k}, [%q{3 * k + 2}];"
                     if t != "pred" else f"    ld.global.u32 %t1, [%q{3 * k + 2}];\n"
                     f"    setp.ne.u32 %i{k}, %t1, 0;")
    names = {"a": "%i0", "b": "%i1", "c": "%i2", "d": "%o0", "e": "%o1"}
    lines.append("    " + body.format(**names))
    for k, t in enumerate(outs):
        addr = f"%q{3 * (len(ins) + k) + 2}"
        if t == "pred":
            lines.append(f"    selp.u32 %t1, 1, 0, %o{k};")
            lines.append(f"    st.global.u32 [{addr}], %t1;")
        else:
            lines.append(f"    st.global.{_STORE.get(t, t)} [{addr}], %o{k};")
    lines += ["    ret;", "}"]
    return "\n".join(lines) + "\n"


def _covered(program) -> set[int]:
    pcs: set[int] = set()
    for c in program.code:
        for attr in ("native", "region"):      # compiled segments and loop regions
            seg = getattr(c, attr, None)
            if seg is not None and hasattr(seg, "start"):
                pcs.update(range(seg.start, seg.end))
    return pcs


def check_form(body: str, ins: list[str], outs: list[str], columns: list) -> list[np.ndarray]:
    """Run the form under both engines on `columns` (one bit array per
    input); returns the outputs (as bits). Asserts bit equality and that
    the body's instructions ran native."""
    ptx = form_kernel(body, ins, outs)
    args = [np.ascontiguousarray(np.asarray(col, dtype=_UINT[_BYTES[t]]))
            for col, t in zip(columns, ins)]
    args += [Out(N, _UINT[_BYTES[t]]) for t in outs]
    ref, got = run_both(ptx, "k", (1,), (N,), args)
    program = got.module.program
    covered = _covered(program)
    body_ops = [s.strip().split()[0] for s in body.split(";") if s.strip()]
    for c in program.code:
        if c.inst.full_opcode in body_ops and c.pc not in covered:
            raise AssertionError(f"{c.inst.full_opcode} (pc {c.pc}) did not run native")
    return got.arrays[len(ins):]


# ------------------------------------------------------------ values

def _f32_bits(x: float) -> int:
    return int(np.array(x, np.float32).view(np.uint32))


def _f64_bits(x: float) -> int:
    return int(np.array(x, np.float64).view(np.uint64))


EDGE32 = sorted({_f32_bits(x) for x in (0.0, -0.0, 1.0, -1.0, 0.5, 1.5, 2.5, -2.5, 3.0, 1e-45, -1e-45,
                                        1.1754942e-38, 1.17549435e-38, -1.17549435e-38, 3.4028235e38,
                                        -3.4028235e38, np.inf, -np.inf, 2.0 ** 24, 2.0 ** 31,
                                        -2.0 ** 31, 2.0 ** 32, 2.0 ** 63, 2.0 ** 64, 4294967040.0,
                                        0.1, 1.0000001, 16777217.0, 1e10, -1e10)}
                | {0x7FC00000, 0xFFC00000, 0x7F800001, 0xFFA00001, 0x7FC12345, 0x7FFFFFFF, 0x00000001,
                   0x807FFFFF, 0x3F800001})
EDGE64 = sorted({_f64_bits(x) for x in (0.0, -0.0, 1.0, -1.0, 0.5, 2.5, -2.5, 5e-324, -5e-324,
                                        2.2250738585072014e-308, 2.225073858507201e-308,
                                        1.7976931348623157e308, -1.7976931348623157e308, np.inf,
                                        -np.inf, 2.0 ** 53, 2.0 ** 63, -2.0 ** 63, 2.0 ** 64,
                                        2.0 ** 31, -2.0 ** 31 - 1, 2.0 ** 32, 1e-300, 1e300, 0.1,
                                        1.0000000000000002, 3.4028235677973366e38, 1.401298464324817e-45)}
                | {0x7FF8000000000000, 0xFFF8000000000000, 0x7FF0000000000001, 0xFFF4000000000123,
                   0x7FF8000000012345, 0x7FFFFFFFFFFFFFFF, 0x0000000000000001, 0x800FFFFFFFFFFFFF})


EDGE16 = [0x0000, 0x8000, 0x3C00, 0xBC00, 0x7C00, 0xFC00, 0x7E00, 0x7C01, 0xFE12, 0x0001, 0x8001,
          0x03FF, 0x0400, 0x7BFF, 0xFBFF, 0x3555, 0x3800, 0x3BFF, 0x4000,
          0x7F80, 0xFF80, 0x7FC0, 0xFFA1, 0x0080, 0x007F, 0x3F80, 0x7F7F]   # and bf16's


def floats16():
    return st.one_of(st.sampled_from(EDGE16), st.integers(0, 2 ** 16 - 1))


def floats32():
    return st.one_of(st.sampled_from(EDGE32), st.integers(0, 2 ** 32 - 1),
                     st.floats(width=32, allow_nan=False).map(_f32_bits),
                     st.floats(-1e6, 1e6, width=32).map(_f32_bits))


def floats64():
    return st.one_of(st.sampled_from(EDGE64), st.integers(0, 2 ** 64 - 1),
                     st.floats(allow_nan=False).map(_f64_bits),
                     st.floats(-1e6, 1e6).map(_f64_bits))


def ints(bits: int):
    top = (1 << bits) - 1
    edges = [0, 1, 2, top, top - 1, 1 << (bits - 1), (1 << (bits - 1)) - 1, (1 << (bits - 1)) + 1]
    return st.one_of(st.sampled_from(edges), st.integers(0, top))


def values(t: str):
    if t == "f32":
        return floats32()
    if t == "f64":
        return floats64()
    if t == "f16":
        return floats16()
    if t == "pred":
        return st.integers(0, 1)
    return ints(8 * _BYTES[t])


def column(t: str):
    """A strategy for one input column of N bit patterns of type t."""
    return st.lists(values(t), min_size=N, max_size=N)
