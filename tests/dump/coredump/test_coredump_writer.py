"""Writer and reader: a snapshot round trips through a core file, the
generation flags drop exactly what they name, writes are atomic, a
driver-style core (r346/r525 rows, padded rows, unknown sections) reads
into the same model, and a faulting simulator run dumps on exception."""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from gpudbg.dump.coredump import snapshot as S
from gpudbg.dump.coredump.cubin import CodeFunction, build_cubin, read_cubin
from gpudbg.dump.coredump.elf import ET_CORE, Section, StringTable, write_elf
from gpudbg.dump.coredump.reader import CoredumpError, read_coredump
from gpudbg.dump.coredump.tables import SectionType as T, pack_rows, row_layout
from gpudbg.dump.coredump.writer import build_coredump, expand_pattern, write_coredump

BASE = 0x7000_0000_2000


def snapshot() -> S.DeviceSnapshot:
    code = bytes(range(64))
    cubin = build_cubin([CodeFunction("k", BASE, code, ((0, 3), (0, 3), (0, 4), None))], 90,
                        {0: "k.cu"}, "k.ptx")
    lanes = [S.LaneState(i, (i, 0, 0), BASE + 32, 32, exception=14 if i == 2 else 0,
                         regs=np.arange(32, dtype=np.uint32) + (i << 16),
                         preds=np.array([i & 1], np.uint8), local=bytes([i]) * 8,
                         local_base=0xFE0000000000,
                         backtrace=[S.Frame(1, 16, BASE + 48)] if i == 1 else [])
             for i in range(4)]
    warp = S.WarpState(5, 0xF, 0xF, error_pc=BASE + 32, error_pc_valid=1, lanes=lanes)
    cta = S.CtaState(7, (1, 2, 0), shared=b"\x11" * 16, warps=[warp])
    ctx = S.ContextInfo(0xC7000000, 42, 0xFD0000000000, 0xFE0000000000,
                        modules=[S.ModuleImage(BASE - 0x2000, "k.ptx", cubin, b"nonrel")])
    grid = S.GridInfo(7, 0xC7000000, BASE, BASE, BASE - 0x2000, (4, 1, 1), (64, 1, 1), 32,
                      params=b"\x01\x02", host_tid=42, const_banks=[(BASE + 0x1000, 8, 3)])
    return S.DeviceSnapshot(0, "sim", "gpudbg-sim", "sm_90", 9, 0, 132, 64, 32, 32, 1,
                            contexts=[ctx], grids=[grid], sms=[S.SmState(3, [cta])],
                            memory=[S.MemorySegment(BASE + 0x1000, b"abcdefgh")],
                            note={"registers": {str(BASE - 0x2000): {"k": [["%r1", "uint32", "R", 0, 1]]}}},
                            timestamp=1700000000)


def test_round_trip_keeps_every_fact():
    snap = snapshot()
    core = read_coredump(build_coredump(snap))
    assert core.notes == [] and core.generator == "gpudbg simulator"
    d = core.devices[0]
    assert (d.name, d.sm_type, d.num_sms, d.warps_per_sm, d.regs_per_lane) == ("sim", "sm_90", 132, 64, 32)
    (g,) = d.grids
    assert (g.grid_id, g.grid_dim, g.block_dim, g.params, g.const_banks) == \
        (7, (4, 1, 1), (64, 1, 1), b"\x01\x02", [(BASE + 0x1000, 8, 3)])
    (sm,) = d.sms
    (cta,) = sm.ctas
    (w,) = cta.warps
    assert (sm.sm_id, cta.block_idx, cta.shared, w.warp_id, w.error_pc) == (3, (1, 2, 0), b"\x11" * 16, 5, BASE + 32)
    for got, want in zip(w.lanes, snap.sms[0].ctas[0].warps[0].lanes):
        assert (got.ln, got.thread_idx, got.virtual_pc, got.exception, got.local) == \
            (want.ln, want.thread_idx, want.virtual_pc, want.exception, want.local)
        assert got.regs.tolist() == want.regs.tolist() and got.preds.tolist() == want.preds.tolist()
        assert [(f.level, f.virtual_return_address) for f in got.backtrace] == \
            [(f.level, f.virtual_return_address) for f in want.backtrace]
    assert core.read_memory(BASE + 0x1002, 3) == b"cde"
    assert core.register_names(BASE - 0x2000, "k") == [("%r1", "uint32", "R", 0, 1)]
    info = core.cubin(BASE - 0x2000)
    assert info.function_at(BASE + 32).name == "k" and info.lines[BASE + 32] == ("k.cu", 4)
    assert d.contexts[0].modules[0].nonrelocated == b"nonrel"


@pytest.mark.parametrize("flag,gone", [
    (S.CUDBG_COREDUMP_SKIP_GLOBAL_MEMORY, {T.GLOBAL_MEM}),
    (S.CUDBG_COREDUMP_SKIP_SHARED_MEMORY, {T.SHARED_MEM}),
    (S.CUDBG_COREDUMP_SKIP_LOCAL_MEMORY, {T.LOCAL_MEM}),
    (S.CUDBG_COREDUMP_SKIP_NONRELOCATED_ELF_IMAGES, {T.ELF_IMG}),
    (S.CUDBG_COREDUMP_SKIP_CONSTBANK_MEMORY, {T.CB_TABLE}),
    (S.CUDBG_COREDUMP_LIGHTWEIGHT_FLAGS, {T.GLOBAL_MEM, T.SHARED_MEM, T.LOCAL_MEM, T.ELF_IMG, T.CB_TABLE}),
])
def test_flags_drop_what_they_name(flag, gone):
    from gpudbg.dump.coredump.elf import read_elf
    full = {s.type for s in read_elf(build_coredump(snapshot())).sections}
    light = {s.type for s in read_elf(build_coredump(snapshot(), flag)).sections}
    assert full - light == {int(t) for t in gone}
    core = read_coredump(build_coredump(snapshot(), flag))
    assert core.meta["flags"] == int(flag)
    assert core.devices[0].sms[0].ctas[0].warps[0].lanes[0].regs.tolist()[:2] == [0, 1]
    with pytest.raises(ValueError, match="unknown CUDBGCoredumpGenerationFlags"):
        build_coredump(snapshot(), 1 << 4)


def test_write_is_atomic(tmp_path, monkeypatch):
    path = tmp_path / "sub" / "x.nvcudmp"
    assert write_coredump(path, snapshot()) == path and read_coredump(path).devices
    before = path.read_bytes()
    monkeypatch.setattr(os, "fsync", lambda fd: (_ for _ in ()).throw(OSError("disk full")))
    with pytest.raises(OSError, match="disk full"):
        write_coredump(path, snapshot(), S.CUDBG_COREDUMP_LIGHTWEIGHT_FLAGS)
    assert path.read_bytes() == before and sorted(p.name for p in path.parent.iterdir()) == ["x.nvcudmp"]


def test_file_pattern():
    assert expand_pattern("core_%t_%p.nvcudmp", now=12.5, pid=77) == "core_12_77.nvcudmp"
    assert expand_pattern("a%%b") == "a%b"
    with pytest.raises(ValueError, match="unknown specifier %q"):
        expand_pattern("x%q")


def _driver_style_core() -> bytes:
    """As a driver of another branch writes it: r346 device rows (72 bytes),
    r525 grid/CTA/warp rows, SM rows padded by 16 unknown bytes, children
    before parents in the file, and sections we do not know."""
    strtab = StringTable()
    secs = [Section(".strtab", 3)]
    def add(s):
        secs.append(s)
        return len(secs)
    def tbl(name, typ, table, rows, version, link=0, info=0, pad=0):
        size = row_layout(table, version).size
        raw = pack_rows(table, rows, version)
        raw = b"".join(raw[i:i + size] + b"\xaa" * pad for i in range(0, len(raw), size))
        return Section(name, int(typ), raw, link=link, info=info, entsize=size + pad)
    add(Section(".cudbg.future", 0x80000063, b"??"))
    # lane table placed first; it links to the warp table at index 9
    lanes = add(tbl(".cudbg.lntbl", T.LN_TABLE, "lane", [dict(virtualPC=0x1040, ln=0, threadIdxX=5,
                                                              exception=14)], 400, 9, 0))
    add(Section(".cudbg.regs", int(T.DEV_REGS), np.arange(4, dtype=np.uint32).tobytes(), link=lanes))
    dev = add(tbl(".cudbg.devtbl", T.DEV_TABLE, "device", [dict(
        devName=strtab.add("Tesla V100"), devType=strtab.add("GV100"), smType=strtab.add("sm_70"),
        numSMs=80, numWarpsPerSM=64, numLanesPerWarp=32, numRegsPerLane=4, smMajor=7)], 346))
    sm = add(tbl(".cudbg.smtbl", T.SM_TABLE, "sm", [dict(smId=11)], 400, dev, 0, pad=16))
    cta = add(tbl(".cudbg.ctatbl", T.CTA_TABLE, "cta", [dict(gridId64=9, blockIdxX=2, clusterIdxX=1)],
                  525, sm, 0))
    add(tbl(".cudbg.gridtbl", T.GRID_TABLE, "grid", [dict(gridId64=9, gridDimX=3, blockDimX=32,
                                                          clusterDimX=1)], 525, dev, 0))
    assert add(tbl(".cudbg.wptbl", T.WP_TABLE, "warp", [dict(warpId=6, validLanesMask=1, numRegs=4)],
                   525, cta, 0)) == 9
    add(Section(".cudbg.global.0", int(T.GLOBAL_MEM), b"\x05\x06", addr=0x500))
    secs[0].data = strtab.bytes()
    return write_elf(secs, ET_CORE)


def test_reads_a_driver_style_core():
    core = read_coredump(_driver_style_core())
    d = core.devices[0]
    assert (d.name, d.dev_type, d.sm_type, d.num_sms, d.uregs_per_warp) == ("Tesla V100", "GV100", "sm_70", 80, 0)
    (sm,) = d.sms
    w = sm.ctas[0].warps[0]
    (ln,) = w.lanes
    assert (sm.sm_id, sm.ctas[0].block_idx, w.warp_id, w.num_regs) == (11, (2, 0, 0), 6, 4)
    assert (ln.virtual_pc, ln.thread_idx, ln.exception, ln.regs.tolist()) == (0x1040, (5, 0, 0), 14, [0, 1, 2, 3])
    assert d.grids[0].grid_dim == (3, 0, 0) and core.read_memory(0x500, 2) == b"\x05\x06"
    assert any("unknown type 0x80000063" in n for n in core.notes)


def test_damaged_cores_raise_the_readers_error():
    raw = bytearray(_driver_style_core())
    with pytest.raises(CoredumpError, match="not a CUDA GPU coredump"):
        read_coredump(bytes(raw[:100]))
    secs = [Section(".strtab", 3), Section(".cudbg.ctxtbl", int(T.CTX_TABLE), pack_rows("context", [{}]),
                                           link=5, entsize=40)]
    with pytest.raises(CoredumpError, match="links to row 0 of section 5"):
        read_coredump(write_elf(secs, ET_CORE))


def test_cubin_symbols_cover_the_code():
    f = [CodeFunction("a", 0x1000, b"\0" * 32, ()), CodeFunction("b", 0x1020, b"\0" * 16, ())]
    info = read_cubin(build_cubin(f, 70))
    assert [(s.name, s.value, s.size) for s in info.functions] == [("a", 0x1000, 32), ("b", 0x1020, 16)]
    assert info.sm == 70 and info.function_at(0x1028).name == "b" and info.function_at(0x1030) is None


KERNEL = r"""
extern "C" __global__ void poke(int *p, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    p[i] = i * 3;
    if (i == n) p[i + 1000] = 1;
}
"""


def test_kernel_fault_dumps_on_exception(tmp_path, monkeypatch):
    import gpudbg
    monkeypatch.setenv("GPUDBG_COREDUMP_ON_EXCEPTION", "1")
    monkeypatch.setenv("GPUDBG_COREDUMP_FILE", str(tmp_path / "c_%p.nvcudmp"))
    m = gpudbg.compile(KERNEL, name="poke.cu")
    buf = gpudbg.zeros(64, np.int32)
    m.poke[2, 32](buf, 37)
    with pytest.raises(gpudbg.KernelFaultError) as ei:
        buf.to_host()
    r = ei.value.report
    path = Path(r.details["coredump"])
    assert path == (tmp_path / f"c_{os.getpid()}.nvcudmp").resolve()
    core = read_coredump(path)
    d = core.devices[0]
    bad = [(sm, w, ln) for sm, _, w, ln in d.lanes() if ln.exception]
    assert len(bad) == 1
    sm, w, ln = bad[0]
    assert (sm.sm_id, w.warp_id, ln.ln, ln.thread_idx) == (r.sm, r.warp, r.lane, r.thread)
    assert ln.exception == 14 and w.error_pc == r.pc == ln.virtual_pc
    assert core.note["fault"]["kind"] == "CUDBG_EXCEPTION_LANE_ILLEGAL_ADDRESS"
    # the faulting thread's i (the %r register holding i) is in its R registers
    regmap = core.register_names(d.grids[0].module_handle, "poke")
    values = {name: int(ln.regs[first]) for name, _, cls, first, _ in regmap if cls == "R" and first >= 0}
    assert 37 in values.values()
    base = buf.ptr if hasattr(buf, "ptr") else None
    stored = np.frombuffer(core.read_memory(core.memory[0].address, 4 * 64), np.int32) \
        if base is None else np.frombuffer(core.read_memory(base, 4 * 64), np.int32)
    assert stored[:37].tolist() == [3 * i for i in range(37)]
    assert core.cubin(d.grids[0].module_handle).function_at(ln.virtual_pc).name == "poke"


def test_a_native_run_that_will_dump_compiles_the_variant_with_every_register(tmp_path, monkeypatch):
    """With coredumps on, compiled code is the FULL variant (every register
    stored, none written past a fault), and the dump is the same as above."""
    import gpudbg
    from gpudbg.sim.native import engine
    monkeypatch.setenv("GPUDBG_COREDUMP_ON_EXCEPTION", "1")
    monkeypatch.setenv("GPUDBG_COREDUMP_FILE", str(tmp_path / "n_%p.nvcudmp"))
    monkeypatch.setenv(engine.ENV_ENGINE, "native")
    asked = []
    real = engine.mode_for

    def spy(program, threads, debugger, **kw):
        asked.append(debugger)
        return real(program, threads, debugger, **kw)
    monkeypatch.setattr(engine, "mode_for", spy)
    m = gpudbg.compile(KERNEL, name="poke.cu")
    buf = gpudbg.zeros(64, np.int32)
    m.poke[2, 32](buf, 37)
    with pytest.raises(gpudbg.KernelFaultError) as ei:
        buf.to_host()
    assert asked == [True]
    core = read_coredump(Path(ei.value.report.details["coredump"]))
    d = core.devices[0]
    (ln,) = [ln for _, _, _, ln in d.lanes() if ln.exception]
    regmap = core.register_names(d.grids[0].module_handle, "poke")
    values = {name: int(ln.regs[first]) for name, _, cls, first, _ in regmap if cls == "R" and first >= 0}
    assert 37 in values.values()
