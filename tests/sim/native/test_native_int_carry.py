"""The carry chain (add.cc/addc/sub.cc/subc/mad.cc/madc, CC.CF in X.carry):
native against the interpreter, chains in one segment run compiled, and a
carry-in from before the segment (a writer only under a guard, one in an earlier
segment) keeps its reader interpreted with identical results."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from int_forms import LANES, check, edge_grid, form_kernel, lanes, native_pcs
from engines_pair import Out, run_both

CHAINS = [
    ("add.cc.u32 {d}, {a}, {b};\naddc.cc.u32 {d1}, {a}, {c};\naddc.u32 {d2}, {b}, {c};", [32, 32, 32]),
    ("add.cc.s64 {d}, {a}, {b};\naddc.cc.s64 {d1}, {b}, {c};\naddc.s64 {d2}, {a}, {c};", [64, 64, 64]),
    ("sub.cc.u32 {d}, {a}, {b};\nsubc.cc.u32 {d1}, {a}, {c};\nsubc.u32 {d2}, {c}, {b};", [32, 32, 32]),
    ("sub.cc.u64 {d}, {a}, {b};\nsubc.cc.u64 {d1}, {c}, {a};\nsubc.u64 {d2}, {b}, {c};", [64, 64, 64]),
    ("mad.lo.cc.u32 {d}, {a}, {b}, {c};\nmadc.hi.cc.u32 {d1}, {a}, {b}, {c};\n"
     "madc.lo.u32 {d2}, {b}, {c}, {a};", [32, 32, 32]),
    ("mad.hi.cc.s64 {d}, {a}, {b}, {c};\nmadc.lo.cc.s64 {d1}, {a}, {c}, {b};\n"
     "addc.s64 {d2}, {a}, {b};", [64, 64, 64]),
    ("add.cc.u32 {d}, {a}, {b};\nmul.hi.u32 {d2}, {a}, {b};\naddc.u32 {d1}, {c}, 0;", [32, 32, 32]),
    ("add.cc.u32 {d}, {a}, {b};\n@{e} addc.cc.u32 {d1}, {a}, {c};\naddc.u32 {d2}, {b}, {c};",
     [32, 32, 32, "pred"]),
]
IDS = [f"chain{i}" for i in range(len(CHAINS))]


@pytest.mark.parametrize("chain", CHAINS, ids=IDS)
def test_edge_values(chain):
    body, ins = chain
    check(body, ins, [ins[0]] * 3, edge_grid(ins))


@pytest.mark.parametrize("chain", CHAINS, ids=IDS)
@settings(max_examples=2, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_random_values(chain, data):
    body, ins = chain
    check(body, ins, [ins[0]] * 3, [data.draw(lanes(w)) for w in ins])


def test_a_128_bit_sum_carries_through_every_limb():
    ones = np.full(LANES, 0xFFFFFFFF, dtype=np.uint64)
    one = np.ones(LANES, dtype=np.uint64)
    body = "add.cc.u32 {d}, {a}, {b};\naddc.cc.u32 {d1}, {a}, 0;\naddc.u32 {d2}, {a}, 0;"
    d, d1, d2 = check(body, [32, 32], [32, 32, 32], [ones, one])
    assert d[0] == 0 and d1[0] == 0 and d2[0] == 0
    body = "sub.cc.u32 {d}, 0, {b};\nsubc.cc.u32 {d1}, 0, 0;\nsubc.u32 {d2}, {a}, 0;"
    d, d1, d2 = check(body, [32, 32], [32, 32, 32], [one, one])
    assert (d[0], d1[0], d2[0]) == (0xFFFFFFFF, 0xFFFFFFFF, 0)


def _interpreted_readers(body, ins, outs, values):
    """Run under both engines; the pcs of addc/subc/madc the native run left
    to the interpreter."""
    ptx = form_kernel(body, ins, outs)
    args = [np.asarray(v, dtype=np.uint64) for v in values] + [Out(LANES, np.uint64) for _ in outs]
    ref, got = run_both(ptx, "k", (1,), (LANES,), args)
    code = got.module.program.code
    covered = native_pcs(got)
    return [c.inst.text for pc, c in enumerate(code)
            if c.inst.opcode in ("addc", "subc", "madc") and pc not in covered]


def test_a_carry_only_a_guarded_writer_gave_stays_interpreted():
    body = "@{c} add.cc.u32 {d}, {a}, {b};\naddc.u32 {d1}, {a}, {b};"
    ins = [32, 32, "pred"]
    left = _interpreted_readers(body, ins, [32, 32], edge_grid(ins, 3))
    assert len(left) == 1 and left[0].startswith("addc.u32")


def test_a_carry_from_an_earlier_segment_stays_interpreted_and_agrees():
    # %clock is not native: it splits the chain into segments. The middle
    # addc.cc runs interpreted over the whole wave (its carry-in is live-in),
    # the second add.cc natively, the last addc interpreted again: the
    # interpreter must see the carry the native add.cc wrote.
    body = ("add.cc.u32 {d}, {a}, {b};\nmov.u32 %w, %clock;\naddc.cc.u32 {d1}, {a}, {b};\n"
            "add.cc.u32 {d2}, {a}, {a};\nmov.u32 %w, %clock;\naddc.u32 {d}, {b}, {b};")
    ins = [32, 32]
    for seed in range(2):
        left = _interpreted_readers(body, ins, [32, 32, 32], edge_grid(ins, seed))
        assert len(left) == 2


BORROWED_INDEX = """.version 8.0
.target sm_80
.address_size 64
.visible .entry gather(.param .u64 src, .param .u64 dst)
{
    .reg .b32 %t, %x, %lo, %hi, %v; .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [src];
    ld.param.u64 %rd2, [dst];
    mov.u32 %t, %tid.x;
    mul.wide.u32 %rd3, %t, 4;
    add.s64 %rd4, %rd1, %rd3;
    ld.global.u32 %x, [%rd4];
    sub.cc.u32 %lo, %x, 16;
    subc.u32 %hi, 0, 0;
    mov.b64 %rd5, {%lo, %hi};
    shl.b64 %rd5, %rd5, 2;
    add.s64 %rd6, %rd1, %rd5;
    ld.global.u32 %v, [%rd6];
    add.s64 %rd7, %rd2, %rd3;
    st.global.u32 [%rd7], %v;
    ret;
}
"""


def test_a_borrow_that_makes_an_index_wild_faults_as_in_the_interpreter():
    """The index comes from a borrow chain in the same segment as the load;
    x < 16 borrows, the 64-bit index {lo, hi} goes negative and the load faults: natively
    the check fails mid-selection and the interpreter's report is the same."""
    src = np.arange(16, 16 + LANES, dtype=np.uint32)
    ref, got = run_both(BORROWED_INDEX, "gather", (1,), (LANES,), [src, Out(LANES, np.uint32)])
    assert list(got[1][:3]) == [16, 17, 18]
    src[37] = 3
    ref, got = run_both(BORROWED_INDEX, "gather", (1,), (LANES,), [src, Out(LANES, np.uint32)],
                        expect_fault=True)
    assert got.fault.thread == (37, 0, 0) and got.fault.instruction.startswith("ld.global.u32")
    assert "52 bytes before the start" in got.fault.message       # index -13: the borrow went through


ACCUMULATE = """.version 8.0
.target sm_80
.address_size 64
.visible .entry acc(.param .u64 src, .param .u64 dst, .param .u32 n)
{
    .reg .pred %p; .reg .b32 %t, %x, %lo, %hi, %k, %n; .reg .b64 %rd<6>;
    ld.param.u64 %rd1, [src];
    ld.param.u64 %rd2, [dst];
    ld.param.u32 %n, [n];
    mov.u32 %t, %tid.x;
    mul.wide.u32 %rd3, %t, 4;
    add.s64 %rd4, %rd1, %rd3;
    ld.global.u32 %x, [%rd4];
    mov.u32 %lo, 0;
    mov.u32 %hi, 0;
    mov.u32 %k, 0;
LOOP:
    add.cc.u32 %lo, %lo, %x;
    addc.u32 %hi, %hi, 0;
    add.u32 %k, %k, 1;
    setp.lt.u32 %p, %k, %n;
    @%p bra LOOP;
    mul.wide.u32 %rd3, %t, 8;
    add.s64 %rd5, %rd2, %rd3;
    st.global.v2.u32 [%rd5], {%lo, %hi};
    ret;
}
"""


def test_a_carry_chain_in_a_loop_accumulates_64_bits_natively():
    """lo/hi += x through add.cc/addc, n times: the loop runs as a native
    region (or segments) and gives x * n exactly, as the interpreter does."""
    x = (np.arange(LANES, dtype=np.uint64) * 0x0F0F0F0F + 0xF0000000).astype(np.uint32)
    n = 300
    ref, got = run_both(ACCUMULATE, "acc", (1,), (LANES,), [x, Out(LANES, np.uint64), n])
    assert np.array_equal(got[1], x.astype(np.uint64) * n)
    code = got.module.program.code
    covered = native_pcs(got)
    assert all(pc in covered for pc, c in enumerate(code) if c.inst.opcode in ("add", "addc"))
