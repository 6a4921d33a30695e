"""The plan store (sim/native/plan_store.py): what a warm load rebuilds a
program's native code from reads back exactly, anything else reads back
as nothing (never an exception), keys follow what the code depends on,
and the two compiled variants of a program never share a symbol table
they disagree on."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engines_pair import engine_choice, run
from gpudbg.ptx import parse
from gpudbg.sim.gpu import SimGPU
from gpudbg.sim.loader import load_module
from gpudbg.sim.native import code_cache, engine, plan_store
from gpudbg.sim.native.plan_store import Stored, pack, unpack
from gpudbg.sim.native.regions import RegionPlan
from gpudbg.sim.native.segments import SegmentPlan

small = st.integers(0, 5000)
regs = st.sets(st.integers(0, 300), max_size=12)
rows = st.dictionaries(st.integers(0, 300), st.integers(0, 40), max_size=8)


@st.composite
def plans(draw):
    start = draw(small)
    end = start + draw(st.integers(1, 500))
    if draw(st.booleans()):
        bodies = st.tuples(st.integers(start, end), st.integers(start, end))
        return SegmentPlan(start, end, draw(rows), draw(st.integers(0, 40)), draw(st.booleans()),
                           draw(st.none() | regs), draw(st.booleans()),
                           if_branches=tuple(draw(st.lists(bodies, max_size=2))))
    return RegionPlan(start, end, sorted(draw(st.sets(st.integers(start, end - 1), min_size=1))),
                      draw(rows), draw(st.integers(0, 40)), draw(st.booleans()), draw(st.none() | regs),
                      draw(regs), draw(st.booleans()))


@st.composite
def entries(draw):
    ps = draw(st.lists(plans(), max_size=6))
    names = [f"g{i:x}_{p.name}" for i, p in enumerate(ps)]
    symbols = draw(st.lists(st.tuples(st.sampled_from(["kparam", "shared", "global", "param"]),
                                      st.text(min_size=1, max_size=12)), max_size=6))
    return Stored(ps, names, symbols, draw(regs)), draw(st.binary(max_size=600))


@given(entries())
def test_an_entry_reads_back_exactly(entry):
    stored, obj = entry
    got = unpack(pack(stored, obj))
    assert got is not None
    back, obj2 = got
    assert obj2 == obj
    assert back.plans == stored.plans and [type(p) for p in back.plans] == [type(p) for p in stored.plans]
    assert back.names == stored.names and back.symbols == stored.symbols and back.env_used == stored.env_used


@given(entries(), st.data())
def test_a_cut_or_lengthened_payload_reads_back_as_nothing(entry, data):
    raw = pack(*entry)
    cut = data.draw(st.integers(0, len(raw) - 1))
    assert unpack(raw[:cut]) is None
    assert unpack(raw + data.draw(st.binary(min_size=1, max_size=8))) is None


@settings(max_examples=300)
@given(st.binary(max_size=400))
def test_arbitrary_bytes_never_raise(raw):
    assert unpack(raw) is None or isinstance(unpack(raw)[0], Stored)


@pytest.mark.parametrize("edit", [
    (b'"format":%d' % plan_store.FORMAT, b'"format":%d' % (plan_store.FORMAT + 1)),   # another format
    (b'"fields":{', b'"fields":{"extra":1,'),           # plans of another shape
    (b'"kind":"segment"', b'"kind":"loop"'),            # a plan kind this gpudbg lacks
    (b'"scratch_regs":{"dict"', b'"scratch_regs":{"oops"'),
])
def test_a_header_of_another_format_or_shape_reads_back_as_nothing(edit):
    stored = Stored([SegmentPlan(0, 4, {3: 0}, 1, True, {1, 2}, True)], ["g_seg_0_4"], [], {1})
    raw = pack(stored, b"\x7fELF")
    assert unpack(raw) is not None
    header_len = int.from_bytes(raw[:4], "little")
    head = raw[4:4 + header_len].replace(*edit)
    assert head != raw[4:4 + header_len]
    assert unpack(len(head).to_bytes(4, "little") + head + b"\x7fELF") is None


def test_what_cannot_be_stored_is_refused_with_its_reason():
    with pytest.raises(ValueError, match="one function name per plan"):
        pack(Stored([SegmentPlan(0, 1)], [], [], set()), b"")
    with pytest.raises(TypeError, match="not a segment or region plan"):
        pack(Stored([object()], ["x"], [], set()), b"")


def test_the_source_digest_follows_paths_and_contents(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "a.py").write_text("x = 1\n")
    (tmp_path / "one.py").write_text("y = 2\n")
    (tmp_path / "pkg" / "notes.txt").write_text("not code")
    sources = ("pkg", "one.py")
    first = plan_store.source_digest(tmp_path, sources)
    (tmp_path / "pkg" / "notes.txt").write_text("changed, still not code")
    assert plan_store.source_digest(tmp_path, sources) == first
    (tmp_path / "pkg" / "a.py").write_text("x = 3\n")
    second = plan_store.source_digest(tmp_path, sources)
    assert second != first
    (tmp_path / "pkg" / "b.py").write_text("")
    assert plan_store.source_digest(tmp_path, sources) != second


def test_disk_keys_follow_the_program_and_the_code_generator(monkeypatch):
    a, b = plan_store.disk_key("program a"), plan_store.disk_key("program b")
    assert a != b and len(a) == 64 and a == plan_store.disk_key("program a")
    monkeypatch.setattr(plan_store, "_digest", ["another generator"])
    assert plan_store.disk_key("program a") != a


# a kernel whose code reads several environment symbols (its parameters and
# a shared array), so the symbol table's order matters
SYMBOLS = """.version 8.0
.target sm_80
.address_size 64
.visible .entry sym(.param .u64 out, .param .u32 k, .param .u32 j)
{
    .shared .align 4 .b8 buf[256];
    .reg .b32 %r<8>; .reg .b64 %rd<6>;
    ld.param.u64 %rd1, [out];
    ld.param.u32 %r1, [k];
    ld.param.u32 %r2, [j];
    mov.u32 %r3, %tid.x;
    shl.b32 %r4, %r3, 2;
    mov.u32 %r5, buf;
    add.u32 %r5, %r5, %r4;
    mad.lo.u32 %r6, %r3, %r1, %r2;
    st.shared.u32 [%r5], %r6;
    ld.shared.u32 %r7, [%r5];
    mul.wide.u32 %rd2, %r3, 4;
    add.s64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r7;
    ret;
}
"""


def _program():
    lm = load_module(SimGPU(), parse(SYMBOLS, "sym.ptx"))
    return lm, lm.functions["sym"].program


def test_each_variant_order_gets_its_own_entries(tmp_path, monkeypatch):
    """The code indexes the symbol table the emission left; the table is
    shared by both variants, so the variant compiled second builds on the
    first's. Programs that compile the variants in opposite orders must
    not load each other's code (four entries), and a program compiling in
    an order already stored loads both entries and compiles nothing."""
    from gpudbg.sim.native import jit
    monkeypatch.setenv(code_cache.ENV_DIR, str(tmp_path))
    monkeypatch.delenv(code_cache.ENV_SWITCH, raising=False)
    _, p1 = _program()
    engine.prepare(p1, engine.PLAIN)
    engine.prepare(p1, engine.FULL)
    _, p2 = _program()
    engine.prepare(p2, engine.FULL)
    engine.prepare(p2, engine.PLAIN)
    assert len([e for e in tmp_path.iterdir() if e.suffix == ".o"]) == 4
    assert len(p1.native_symbols) >= 3
    compiled = []
    monkeypatch.setattr(jit, "compile_object", lambda ir: compiled.append(ir))
    monkeypatch.setattr(engine, "_loaded", {})          # as in a fresh process
    monkeypatch.setattr(engine, "_nothing", {})
    lm3, p3 = _program()
    engine.prepare(p3, engine.PLAIN)
    engine.prepare(p3, engine.FULL)
    assert compiled == [] and p3.native_symbols == p1.native_symbols
    assert p3.native_segments == p1.native_segments > 0
    with engine_choice("native"):
        r = run(SYMBOLS, "sym", (1,), (64,), [np.zeros(64, np.uint32), 5, 7], module=lm3)
    assert np.array_equal(r[0], np.arange(64, dtype=np.uint32) * 5 + 7)
