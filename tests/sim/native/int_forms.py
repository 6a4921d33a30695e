"""One-instruction kernels for the integer lowerings' differential tests.

`form_kernel(body, ins, outs)` wraps PTX lines (with {a} {b} {c} {e} for
the inputs and {d} {d1} {d2} for the results) in a kernel that loads each
input of each thread from its own array (8 bytes per thread, the low bytes
as the operand's width; predicates from nonzero words), presets every
result register to a fixed pattern (so a guarded or partial write is
compared too) and stores the results, 8 bytes per thread. `check` runs it
under both engines (engines_pair.run_both) and also asserts that the body's
instructions themselves ran in compiled segments, not only the harness's
loads and stores.
"""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from engines_pair import Out, engine_choice, run, run_both

HEAD = ".version 8.0\n.target sm_80\n.address_size 64\n"
LANES = 128
_NAMES_IN = "abce"
_NAMES_OUT = ("d", "d1", "d2")
_PRESET = {16: "0x5a5a", 32: "0x5a5a5a5a", 64: "0x5a5a5a5a5a5a5a5a"}


def _reg_width(w) -> int:
    return 16 if w == 8 else w


def form_kernel(body: str, ins: list, outs: list) -> str:
    """ins/outs: widths (8, 16, 32, 64) or "pred", one per operand."""
    decl, code = [], []
    subs = {}
    for k, w in enumerate(ins):
        name = f"%in{k}"
        subs[_NAMES_IN[k]] = name
        decl.append(f".reg .pred {name};" if w == "pred" else f".reg .b{_reg_width(w)} {name};")
        code.append(f"ld.param.u64 %rd{k}, [pin{k}];")
        code.append(f"add.s64 %rd{k}, %rd{k}, %off;")
        if w == "pred":
            code.append(f"ld.global.u32 %w, [%rd{k}];")
            code.append(f"setp.ne.u32 {name}, %w, 0;")
        else:
            code.append(f"ld.global.u{w} {name}, [%rd{k}];")
    for k, w in enumerate(outs):
        name = f"%out{k}"
        subs[_NAMES_OUT[k]] = name
        if w == "pred":
            decl.append(f".reg .pred {name};")
            code.append(f"setp.ne.u32 {name}, %t, 5;")
        else:
            decl.append(f".reg .b{_reg_width(w)} {name};")
            code.append(f"mov.b{_reg_width(w)} {name}, {_PRESET[_reg_width(w)]};")
    code.append(body.format(**subs))
    for k, w in enumerate(outs):
        name = f"%out{k}"
        code.append(f"ld.param.u64 %rd{8 + k}, [pout{k}];")
        code.append(f"add.s64 %rd{8 + k}, %rd{8 + k}, %off;")
        if w == "pred":
            code.append(f"selp.u32 %w, 1, 0, {name};")
            code.append(f"st.global.u32 [%rd{8 + k}], %w;")
        else:
            code.append(f"st.global.b{_reg_width(w)} [%rd{8 + k}], {name};")
    params = [f".param .u64 pin{k}" for k in range(len(ins))] + \
             [f".param .u64 pout{k}" for k in range(len(outs))]
    lines = "\n    ".join(decl + code)
    return HEAD + f""".visible .entry k({", ".join(params)})
{{
    .reg .b32 %t, %w; .reg .b64 %off, %rd<16>;
    mov.u32 %t, %tid.x;
    mul.wide.u32 %off, %t, 8;
    {lines}
    ret;
}}
"""


def native_pcs(result) -> set[int]:
    """The pcs that compiled segments (or regions) cover."""
    covered = set()
    for c in result.module.program.code:
        for attr in ("native", "region"):
            seg = getattr(c, attr, None)
            if seg is not None and hasattr(seg, "start"):
                covered.update(range(seg.start, seg.end))
    return covered


def check(body: str, ins: list, outs: list, values: list, require_native: bool = True):
    """Run the form under both engines with `values` (one uint64 array of
    LANES raw bit patterns per input); returns the interpreter's result
    arrays. Asserts the body ran natively (unless require_native is False)."""
    ptx = form_kernel(body, ins, outs)
    args = [np.asarray(v, dtype=np.uint64) for v in values] + [Out(LANES, np.uint64) for _ in outs]
    ref, got = run_both(ptx, "k", (1,), (LANES,), args)
    if require_native:
        wanted = {line.strip().rstrip(";") for line in body.format(
            **{n: "" for n in _NAMES_IN}, **{n: "" for n in _NAMES_OUT}).splitlines() if line.strip()}
        code = got.module.program.code
        body_pcs = [pc for pc, c in enumerate(code) if _shape(c.inst.text) in {_shape(w) for w in wanted}]
        assert body_pcs, f"body not found in {[c.inst.text for c in code]}"
        missing = [code[pc].inst.text for pc in body_pcs if pc not in native_pcs(got)]
        assert not missing, f"interpreted, not native: {missing}"
    return [ref[len(values) + k] for k in range(len(outs))]


def _shape(text: str) -> str:
    """An instruction's text without its register names (body lines are
    matched against the loaded code by opcode and literal operands)."""
    import re
    return re.sub(r"%[A-Za-z0-9_]+", "", text).replace(" ", "").rstrip(";")


def interpreted_only(body: str, ins: list, outs: list, values: list) -> None:
    """The form stays interpreted: still identical results, and the body's
    instructions are not in a compiled segment."""
    ptx = form_kernel(body, ins, outs)
    args = [np.asarray(v, dtype=np.uint64) for v in values] + [Out(LANES, np.uint64) for _ in outs]
    with engine_choice("native"):
        got = run(ptx, "k", (1,), (LANES,), args)
    line = _shape(body.format(**{n: "" for n in _NAMES_IN}, **{n: "" for n in _NAMES_OUT}))
    pcs = [pc for pc, c in enumerate(got.module.program.code) if _shape(c.inst.text) == line]
    assert pcs and not set(pcs) & native_pcs(got)


def edges(bits: int) -> list[int]:
    """Edge bit patterns of a `bits`-wide integer: 0, 1, -1, INT_MIN/MAX and
    their neighbours, and small shift-count-like values."""
    m = (1 << bits) - 1
    top = 1 << (bits - 1)
    vals = {0, 1, 2, 3, m, m - 1, top, top - 1, top + 1, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65,
            0x80, 0xFF, 0x100, 0x7FFF, 0x8000, 0xFFFF, 0x10000, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF,
            255, 256, 0x1234_5678_9ABC_DEF0}
    return sorted(v & m for v in vals)


def lanes(bits: int):
    """A strategy: LANES raw values of `bits` width, edge-heavy."""
    if bits == "pred":
        return st.lists(st.sampled_from([0, 1]), min_size=LANES, max_size=LANES)
    one = st.one_of(st.sampled_from(edges(bits)), st.integers(0, (1 << bits) - 1))
    return st.lists(one, min_size=LANES, max_size=LANES)


def edge_grid(widths: list, seed: int = 0) -> list[np.ndarray]:
    """Deterministic inputs: each operand's edge values, shuffled per
    operand, so the lanes pair edges of different operands with each other."""
    rng = np.random.default_rng(seed)
    out = []
    for w in widths:
        vals = [0, 1] if w == "pred" else edges(w)
        out.append(rng.choice(np.array(vals, dtype=np.uint64), LANES))
    return out


def form_tests(forms: list):
    """The two tests every form table gets: the edge-value grid and
    hypothesis-drawn lanes, each through `check` (both engines, the form
    itself run compiled). A module binds them: `test_edge_values,
    test_random_values = form_tests(FORMS)`."""
    import pytest
    from hypothesis import HealthCheck, given, settings

    ids = [f[0].split(" ")[0] + f"-{i}" for i, f in enumerate(forms)]

    @pytest.mark.parametrize("form", forms, ids=ids)
    def test_edge_values(form):
        body, ins, outs = form
        check(body, ins, outs, edge_grid(ins))

    @pytest.mark.parametrize("form", forms, ids=ids)
    @settings(max_examples=2, deadline=None, suppress_health_check=list(HealthCheck))
    @given(data=st.data())
    def test_random_values(form, data):
        body, ins, outs = form
        check(body, ins, outs, [data.draw(lanes(w)) for w in ins])

    return test_edge_values, test_random_values
