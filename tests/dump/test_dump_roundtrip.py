"""model -> write -> parse gives the same model, for every section shape the
format doc lists (a5xx hlsq, a6xx/a7xx/a8xx nesting, both fault forms,
both revision forms, vm-log, unknown sections)."""
from __future__ import annotations

import struct

from hypothesis import given, settings, strategies as st

from gpudbg.dump.devcoredump import (
    BufferObject, Cluster, ClusterContext, DebugbusBlock, Devcoredump, DumpTime, FaultForm,
    FaultInfo, GmuBuffer, IndexedRegisters, Layout, Register, Revision, RevisionForm, Ringbuffer,
    ShaderBlock, ShaderEntry, UnknownSection, VmLogEntry, parse, write,
)

u32 = st.integers(0, 2**32 - 1)
names = st.from_regex(r"[A-Z][A-Z0-9_]{0,20}", fullmatch=True)


def blob(max_dwords: int):
    return st.lists(st.one_of(st.just(0), u32), max_size=max_dwords).map(
        lambda v: struct.pack(f"<{len(v)}I", *v))


regs = st.lists(st.builds(Register, st.integers(0, 0xFFFFFF).map(lambda x: x * 4 & 0xFFFFFF), u32),
                max_size=6)
rings = st.lists(st.builds(
    lambda i, iova, lf, rf, r, w, data: Ringbuffer(i, iova, lf, rf, r % 64, w % 64, 256, data),
    st.integers(0, 3), st.integers(0, 2**64 - 1), u32, u32, st.integers(0, 63), st.integers(0, 63),
    blob(64)), max_size=3, unique_by=lambda r: r.id)
bos = st.lists(st.builds(lambda iova, size, data, flags, name: BufferObject(iova, size + 64, data, flags, name),
                         st.integers(0, 2**48), st.integers(0, 4096).map(lambda x: x * 4), blob(16),
                         st.one_of(st.none(), u32), st.one_of(st.none(), st.just(""), names)), max_size=4)
shader = st.lists(st.builds(
    lambda t, entries: ShaderBlock(t, [ShaderEntry((("bank", str(k)),), n, d) for k, (n, d) in enumerate(entries)]),
    names, st.lists(st.tuples(st.just(16), blob(16)), max_size=3)), max_size=3)
clusters = st.lists(st.builds(
    lambda n, ctxs: Cluster((("cluster-name", n),), [ClusterContext(i, r) for i, r in enumerate(ctxs)]),
    names, st.lists(regs, max_size=2)), max_size=3)


@st.composite
def dumps(draw):
    layout = draw(st.sampled_from(list(Layout)))
    form = draw(st.sampled_from(list(FaultForm)))
    fault = draw(st.one_of(st.none(), st.just(FaultInfo(
        [("ttbr0", "0000000123456000"), ("iova", "0000000100001000"), ("dir", "WRITE"),
         ("type", "TRANSLATION"), ("source", "CP")], form))))
    d = Devcoredump(
        module=draw(st.sampled_from(["msm", "gpudbg"])), kernel=draw(st.sampled_from(["6.1.0", "5.8.0-rc1+"])),
        time=DumpTime(draw(st.integers(0, 2**40)), draw(st.integers(0, 999_999_999))),
        comm=draw(st.one_of(st.none(), names)), cmdline=draw(st.one_of(st.none(), st.just("./a.out -x 1"))),
        revision=draw(st.one_of(st.none(), st.builds(Revision, st.integers(0, 999), u32,
                                                      st.sampled_from(list(RevisionForm))))),
        fault_info=fault, rbbm_status=draw(u32), ringbuffers=draw(rings), bos=draw(st.one_of(st.none(), bos)),
        registers=draw(st.one_of(st.none(), regs)), layout=layout)
    if layout is Layout.A5XX:
        d.registers_hlsq = draw(regs)
    if layout is Layout.A6XX:
        d.gpu_initialized = draw(st.integers(0, 1))
        d.gmu_log = GmuBuffer(0x60009000, 64, draw(blob(16)))
        d.gmu_hfi = GmuBuffer(0x60005000, 64, b"", [[-1, 0, 5], [1, 2, 3]])
        d.gmu_debug = GmuBuffer()
        d.registers_gmu = draw(regs)
        d.indexed_registers = [IndexedRegisters("CP_SQE_STAT", 8, draw(blob(8)))]
        d.shader_blocks = draw(shader)
        d.clusters = draw(clusters)
        d.debugbus = [DebugbusBlock("A6XX_DBGBUS_CP", 8, draw(blob(8)))]
    return d


@settings(max_examples=25, deadline=None)
@given(dumps())
def test_model_write_parse_round_trip(d):
    text = write(d)
    back = parse(text)
    if d.layout is Layout.ADRENO:
        # an adreno_show dump has no layout-specific section: the parser infers
        # the layout from the revision's core, which random chip ids blur
        back.layout = d.layout
    assert back == d
    assert write(back) == text
    assert back.warnings == []


def _a7xx_dump() -> Devcoredump:
    return Devcoredump(
        kernel="6.12.0", time=DumpTime(1, 5), revision=Revision(0, 0x43050A01, RevisionForm.HEX),
        gpu_initialized=1,
        fault_info=FaultInfo([("far", "0000000100002010"), ("ttbr0", "0000000812340000"),
                              ("iova", "0000000100002010"), ("dir", "READ"), ("type", "TRANSLATION"),
                              ("source", "UCHE")], FaultForm.COLON),
        pgtable_fault_info=FaultInfo([("ttbr0", "0000000812340000"), ("asid", "3"),
                                      ("ptes", "0000000000000003 0000000000000003 0 0")], FaultForm.COLON),
        vm_log=[VmLogEntry("map", 1, 0x100000000, 0x100001000), VmLogEntry("unmap", 0, 0x1000, 0x2000)],
        rbbm_status=0,
        ringbuffers=[Ringbuffer(0, 0x1000, 5, 4, 8, 12, 64, struct.pack("<4I", 0x70108000, 0, 0, 7))],
        bos=[BufferObject(0x100000000, 0x1000, b"\x01\0\0\0", 0x2, "cmdstream")],
        gmu_log=GmuBuffer(), gmu_hfi=GmuBuffer(), gmu_debug=GmuBuffer(),
        registers=[Register(0x840, 0x5), Register(0x844, 0, 1), Register(0x848, 7, 1), Register(0x84c, 9, 2)],
        registers_gmu=[], indexed_registers=[IndexedRegisters("CP_SQE_STAT", 4, b"", pipe=1, slice=0)],
        shader_blocks=[ShaderBlock("A7XX_SP_INST_DATA", [
            ShaderEntry((("pipe", "A7XX_PIPE_BR"), ("sp", "0"), ("usptp", "0")), 4, struct.pack("<I", 3)),
            ShaderEntry((("pipe", "A7XX_PIPE_BR"), ("sp", "0"), ("usptp", "1")), 4),
            ShaderEntry((("pipe", "A7XX_PIPE_BR"), ("sp", "1"), ("usptp", "0")), 4, struct.pack("<I", 9)),
        ])],
        clusters=[Cluster((("pipe", "A7XX_PIPE_BR"), ("cluster-name", "CLUSTER_GRAS")),
                          [ClusterContext(0, [Register(0x20000, 1)])]),
                  Cluster((("pipe", "A7XX_PIPE_BV"), ("cluster-name", "CLUSTER_GRAS")),
                          [ClusterContext(1, [Register(0x20004, 2)])])],
        debugbus=[], unknown_sections=[UnknownSection("future-thing", ["future-thing:", "  - x: 1"], 0, 0,
                                                      "registers")])


def test_a7xx_a8xx_shapes_round_trip_exactly():
    d = _a7xx_dump()
    text = write(d)
    assert "revision: 0 (43050a01)" in text
    assert "      - sp: 0\n        - usptp: 0\n          size: 4\n    data: !!ascii85 |\n      !!!!$\n" in text
    assert "  - slice: 0x000001\n    - { offset: 0x000844, value: 0x00000000 }" in text
    assert "  - pipe: A7XX_PIPE_BR\n    - cluster-name: CLUSTER_GRAS\n      - context: 0\n" \
           "        - { offset: 0x020000, value: 0x00000001 }" in text
    assert "  - far: 0000000100002010" in text and "  - map:1: 0x0000000100000000-0x0000000100001000" in text
    assert "    name: cmdstream                       \n" in text
    back = parse(text)
    assert [str(w) for w in back.warnings] == [
        f"line {text.split(chr(10)).index('future-thing:') + 1}: unknown section 'future-thing' "
        f"(lines {text.split(chr(10)).index('future-thing:') + 1}-{text.split(chr(10)).index('future-thing:') + 2})"
        " kept verbatim"]
    back.unknown_sections[0].start_line = back.unknown_sections[0].end_line = 0
    assert back == d
    assert write(back) == text
    assert back.fault_info.address == 0x100002010


def test_legacy_adreno_layout():
    d = Devcoredump(kernel="4.19", time=DumpTime(3, 0), revision=Revision.from_parts(330, 3, 3, 0, 2),
                    fault_info=FaultInfo([("ttbr0", "00000000deadb000"), ("iova", "0000000000001000"),
                                          ("dir", "READ"), ("type", "UNKNOWN"), ("source", "CP")]),
                    rbbm_status=0x80000000, ringbuffers=[], registers=[Register(0x40, 3)], layout=Layout.ADRENO)
    text = write(d)
    assert "  - { offset: 0x0040, value: 0x00000003 }" in text and "  - iova=0000000000001000" in text
    assert parse(text) == d
