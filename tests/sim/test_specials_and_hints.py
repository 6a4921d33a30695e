"""The PTX a real -G build and sm_90 code use beyond the basics: WARP_SZ,
the shared-memory size and %reserved_smem_* special registers (agreeing
with the simulator's shared layout), elect.sync, redux.sync forms, and the
ordering/cache-hint instructions that are accepted exactly in the ISA's
forms (sim/ops/hints.py)."""
from __future__ import annotations

import numpy as np
import pytest

from gpudbg.ptx import parse
from gpudbg.sim.gpu import SimGPU
from gpudbg.sim.loader import load_module
from gpudbg.sim.program import LoadError
from kernels import Out, run

HEAD = ".version 8.6\n.target sm_100a\n.address_size 64\n"


def kernel(body: str, decls: str = "") -> str:
    return HEAD + f""".visible .entry k(.param .u64 out, .param .u64 in)
{{
    .reg .pred %p<8>;
    .reg .b32 %r<40>;
    .reg .f32 %f<8>;
    .reg .b64 %rd<16>;
    {decls}
    ld.param.u64 %rd1, [out];
    cvta.to.global.u64 %rd1, %rd1;
    ld.param.u64 %rd2, [in];
    cvta.to.global.u64 %rd2, %rd2;
    mov.u32 %r0, %tid.x;
    mul.wide.u32 %rd3, %r0, 4;
    add.s64 %rd4, %rd1, %rd3;
    add.s64 %rd5, %rd2, %rd3;
{body}
    ret;
}}
"""


def test_warp_sz_is_the_warp_size_constant():
    body = """
    mov.u32 %r1, WARP_SZ;
    add.u32 %r2, %r1, WARP_SZ;
    mov.u32 %r3, (WARP_SZ-1);
    st.global.v4.u32 [%rd1], {%r1, %r2, %r3, %r3};
    """
    r = run(kernel(body, ".shared .b32 w[WARP_SZ];"), "k", (1,), (1,), [Out(4, np.uint32), Out(1, np.uint32)])
    assert r[0].tolist() == [32, 64, 31, 31]


RESERVED = """
    mov.u32 %r20, s;
    mov.u32 %r1, %reserved_smem_offset_begin;
    mov.u32 %r2, %reserved_smem_offset_end;
    mov.u32 %r3, %reserved_smem_offset_cap;
    mov.u32 %r4, %reserved_smem_offset_0;
    mov.u32 %r5, %reserved_smem_offset_1;
    mov.u32 %r6, %total_smem_size;
    mov.u32 %r7, %aggr_smem_size;
    mov.u32 %r8, %dynamic_smem_size;
    st.global.v4.u32 [%rd1], {%r1, %r2, %r3, %r4};
    st.global.v4.u32 [%rd1+16], {%r5, %r6, %r7, %r8};
    // the region is ordinary shared memory of the block: write it through
    // %reserved_smem_offset_1 and read it back through a generic address
    add.u32 %r9, %r0, 7;
    shl.b32 %r10, %r0, 2;
    add.u32 %r11, %r5, %r10;
    st.shared.u32 [%r11], %r9;
    bar.sync 0;
    cvt.u64.u32 %rd6, %r11;
    cvta.shared.u64 %rd7, %rd6;
    ld.u32 %r12, [%rd7];
    st.global.u32 [%rd4+32], %r12;
"""


def test_reserved_shared_memory_follows_the_blocks_shared_memory():
    r = run(kernel(RESERVED, ".shared .align 4 .b8 s[100];"),
            "k", (1,), (64,), [Out(8 + 64, np.uint32), Out(1, np.uint32)], shared=60)
    assert r.module.functions["k"].static_shared == 100
    begin = 160                                  # 100 static + 60 dynamic, 16-byte aligned
    cap = SimGPU().model.reserved_shared_per_block
    assert r[0][:8].tolist() == [begin, begin + cap, cap, begin, begin + cap // 2, 160, 160 + cap, 60]
    assert r[0][8:].tolist() == [t + 7 for t in range(64)]


def test_the_region_ends_where_the_registers_say():
    body = RESERVED.split("// the region")[0] + """
    add.u32 %r21, %r2, -4;
    st.shared.u32 [%r21], %r0;
    st.shared.u32 [%r2], %r0;
    """
    r = run(kernel(body, ".shared .align 4 .b8 s[100];"), "k", (1,), (1,), [Out(8, np.uint32), Out(1, np.uint32)],
            expect_fault=True)
    end = 112 + SimGPU().model.reserved_shared_per_block
    assert r[0][1] == end
    assert r.fault.address == end and "__shared__" in r.fault.message


def test_kernels_not_naming_the_region_keep_exact_shared_bounds():
    body = """
    mov.u32 %r20, s;
    mov.u32 %r1, %total_smem_size;
    st.shared.u32 [%r1], %r0;
    """
    r = run(kernel(body, ".shared .align 4 .b8 s[100];"), "k", (1,), (1,), [Out(1, np.uint32), Out(1, np.uint32)],
            expect_fault=True)
    assert r.fault.address == 100


def test_unknown_reserved_register_is_refused_at_load():
    with pytest.raises(LoadError) as e:
        load_module(SimGPU(), parse(kernel("mov.u32 %r1, %reserved_smem_offset_2;"), "k.ptx"))
    assert "%reserved_smem_offset_2 does not exist" in str(e.value)


def test_elect_sync_picks_the_lowest_member_lane():
    body = """
    elect.sync %r1|%p1, -1;
    elect.sync %r2|%p2, 0xF0F0F0F0;
    selp.u32 %r3, 1, 0, %p1;
    selp.u32 %r4, 1, 0, %p2;
    and.b32 %r5, %r0, 1;
    setp.eq.u32 %p3, %r5, 1;
    mov.u32 %r6, 99;
    mov.u32 %r7, 99;
    @!%p3 bra SKIP;
    elect.sync %r6|%p4, -1;
    selp.u32 %r7, 1, 0, %p4;
SKIP:
    mul.wide.u32 %rd8, %r0, 24;
    add.s64 %rd9, %rd1, %rd8;
    st.global.v2.u32 [%rd9], {%r1, %r3};
    st.global.v2.u32 [%rd9+8], {%r2, %r4};
    st.global.v2.u32 [%rd9+16], {%r6, %r7};
    """
    r = run(kernel(body), "k", (1,), (64,), [Out(64 * 6, np.uint32), Out(1, np.uint32)])
    got = r[0].reshape(64, 6)
    lane = np.arange(64) % 32
    assert (got[:, 0] == 0).all() and got[:, 1].tolist() == (lane == 0).astype(int).tolist()
    assert (got[:, 2] == 4).all() and got[:, 3].tolist() == (lane == 4).astype(int).tolist()
    odd = lane % 2 == 1          # only the odd lanes execute the third elect: lane 1 leads
    assert (got[odd, 4] == 1).all() and got[odd, 5].tolist() == (lane[odd] == 1).astype(int).tolist()
    assert (got[~odd, 4:] == 99).all()


def test_redux_float_min_max_with_abs_and_nan():
    vals = np.random.RandomState(4).standard_normal(64).astype(np.float32) * 100
    vals[40] = np.nan               # second warp has a NaN
    vals[5] = -0.0
    body = """
    ld.global.f32 %f1, [%rd5];
    redux.sync.min.f32 %f2, %f1, -1;
    redux.sync.max.abs.f32 %f3, %f1, -1;
    redux.sync.min.NaN.f32 %f4, %f1, -1;
    mul.wide.u32 %rd8, %r0, 12;
    add.s64 %rd9, %rd1, %rd8;
    st.global.f32 [%rd9], %f2;
    st.global.f32 [%rd9+4], %f3;
    st.global.f32 [%rd9+8], %f4;
    """
    r = run(kernel(body), "k", (1,), (64,), [Out(64 * 3, np.float32), vals])
    got = r[0].reshape(64, 3)
    for w in range(2):
        v = vals[32 * w:32 * w + 32]
        assert (got[32 * w:32 * w + 32, 0] == np.nanmin(v)).all()
        assert (got[32 * w:32 * w + 32, 1] == np.nanmax(np.abs(v))).all()
        col = got[32 * w:32 * w + 32, 2]
        assert np.isnan(col).all() if w == 1 else (col == np.nanmin(v)).all()


@pytest.mark.parametrize("line,needle", [
    ("redux.sync.add.f32 %f1, %f2, -1;", "redux.sync.add takes .u32 or .s32, not .f32"),
    ("redux.sync.and.u32 %r1, %r2, -1;", "redux.sync.and takes .b32"),
    ("redux.sync.min.abs.u32 %r1, %r2, -1;", ".abs and .NaN apply to redux.sync.min/max.f32 only"),
    ("elect %r1|%p1, -1;", "elect needs .sync"),
    ("setmaxnreg.inc.sync.aligned.u32 300;", "multiple of 8 in 24..256"),
    ("fence.proxy.bogus;", "fence.proxy.bogus is not a form of fence"),
    ("griddepcontrol.launch;", "griddepcontrol.launch is not a form of griddepcontrol"),
    ("discard.global.L2 [%rd1], 64;", "discard's size operand must be 128"),
    ("applypriority.global.L2::evict_last [%rd1], 128;", "is not a form of applypriority"),
    ("prefetchu.L2 [%rd1];", "prefetchu.L2 is not a form of prefetchu"),
    ("createpolicy.fractional.b64 %rd9, 0.5;", "primary L2::evict_* priority"),
])
def test_malformed_forms_are_refused_at_load(line, needle):
    with pytest.raises(LoadError) as e:
        load_module(SimGPU(), parse(kernel(line), "k.ptx"))
    assert needle in str(e.value)


def test_hint_and_ordering_forms_run_as_no_ops():
    body = """
    ld.global.u32 %r1, [%rd5];
    fence.proxy.async.shared::cta;
    fence.proxy.async;
    fence.acq_rel.gpu;
    fence.sc.sys;
    fence.mbarrier_init.release.cluster;
    membar.gl;
    griddepcontrol.wait;
    griddepcontrol.launch_dependents;
    setmaxnreg.dec.sync.aligned.u32 40;
    setmaxnreg.inc.sync.aligned.u32 232;
    prefetch.global.L2 [%rd5];
    prefetch.global.L2::evict_last [%rd5];
    prefetchu.L1 [%rd5];
    applypriority.global.L2::evict_normal [%rd2], 128;
    discard.global.L2 [%rd2], 128;
    createpolicy.fractional.L2::evict_last.b64 %rd10, 0.5;
    createpolicy.fractional.L2::evict_last.L2::evict_unchanged.b64 %rd11, 1.0;
    createpolicy.fractional.L2::evict_first.b64 %rd12;
    nanosleep.u32 100;
    add.u32 %r1, %r1, 1;
    st.global.u32 [%rd4], %r1;
    setp.eq.u32 %p1, %r0, 0;
    @%p1 st.global.v2.u64 [%rd1+256], {%rd10, %rd11};
    @%p1 st.global.u64 [%rd1+272], %rd12;
    """
    x = np.arange(32, dtype=np.uint32) * 3
    r = run(kernel(body), "k", (1,), (32,), [Out(64 + 6, np.uint32), x])
    assert r[0][:32].tolist() == (x + 1).tolist()
    policies = r[0][64:70].view(np.uint64)
    assert len(set(policies.tolist())) == 3       # different policies are different words



def _every_special_register() -> list[str]:
    from gpudbg.ptx import operands
    names = sorted(operands._SCALAR_SPECIALS)
    names += [f"{v}.{c}" for v in sorted(operands._VECTOR_SPECIALS) for c in "xyz"]
    names += [f"%envreg{k}" for k in range(32)] + [f"%pm{k}" for k in range(8)] + [f"%pm{k}_64" for k in range(8)]
    names += [f"%reserved_smem_offset_{w}" for w in ("begin", "end", "cap", "0", "1")]
    return names


@pytest.mark.parametrize("name", _every_special_register())
def test_every_special_register_of_the_isa_reads(name):
    wide = name in ("%clock64", "%globaltimer", "%gridid", "%current_graph_exec") or name.endswith("_64")
    pred = name == "%is_explicit_cluster"
    body = (f"mov.pred %p1, {name};\n selp.u64 %rd9, 1, 0, %p1;" if pred else
            f"mov.u64 %rd9, {name};" if wide else f"mov.u32 %r9, {name};\n cvt.u64.u32 %rd9, %r9;")
    r = run(kernel(body + "\n st.global.u64 [%rd1], %rd9;"), "k", (2,), (3,), [Out(1, np.uint64), Out(1, np.uint64)])
    assert r[0].dtype == np.uint64


def test_globaltimer_halves_agree_and_time_advances():
    body = """
    mov.u64 %rd9, %globaltimer;
    mov.u32 %r1, %globaltimer_lo;
    mov.u32 %r2, %globaltimer_hi;
    mov.u32 %r3, %clock;
    mov.u32 %r4, %clock_hi;
    mov.u64 %rd10, %clock64;
    nanosleep.u32 20000;
    mov.u64 %rd11, %globaltimer;
    st.global.v2.u64 [%rd1], {%rd9, %rd11};
    st.global.v4.u32 [%rd1+16], {%r1, %r2, %r3, %r4};
    st.global.u64 [%rd1+32], %rd10;
    """
    r = run(kernel(body), "k", (1,), (1,), [Out(5, np.uint64), Out(1, np.uint64)])
    t0, t1, halves, c64 = int(r[0][0]), int(r[0][1]), r[0][2:4].view(np.uint32), int(r[0][4])
    assert int(halves[0]) == t0 & 0xFFFFFFFF and int(halves[1]) == t0 >> 32
    assert t1 - t0 >= 20000                        # nanosleep advanced the device's time
    assert (int(halves[3]) << 32 | int(halves[2])) < c64     # %clock/%clock_hi read before %clock64
