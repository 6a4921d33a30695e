"""CoreBackend over cores that are not (entirely) ours: one without our
note (as NVIDIA's driver writes them) names registers R0..Rn / P0..Pn and
shows the warp-level exception of the table; damaged or unknown sections,
a bad note, an unreadable cubin and PTX that no longer matches the code
are noted and degrade a view, never crash one."""
from __future__ import annotations

import numpy as np
import pytest

from gpudbg.debug.backend import BackendError, MemorySpace
from gpudbg.dump.coredump import snapshot as S
from gpudbg.dump.coredump.cubin import CodeFunction, build_cubin
from gpudbg.dump.coredump.elf import ET_CORE, Section, read_elf, write_elf
from gpudbg.dump.coredump.reader import CoredumpError
from gpudbg.dump.coredump.tables import SectionType as T
from gpudbg.dump.coredump.target import open_core
from gpudbg.dump.coredump.writer import build_coredump
from gpudbg.sim.faults import CUDBGException as E

BASE = 0x7000_0000_2000
HANDLE = BASE - 0x2000
SHARED_WINDOW = 0xFD0000000000
LOCAL_WINDOW = 0xFE0000000000


def driver_snapshot() -> S.DeviceSnapshot:
    """A core as a driver writes it: tables, registers, memory; no note."""
    cubin = build_cubin([CodeFunction("k", BASE, bytes(range(64)), ()),
                         CodeFunction("helper", BASE + 64, b"\xab" * 32, ())], 70)
    lanes = [S.LaneState(i, (i, 0, 0), BASE + 32 if i != 3 else BASE + 80, exception=14 if i == 2 else 0,
                         regs=np.arange(8, dtype=np.uint32) + (i << 16), preds=np.array([i & 1, 1], np.uint8),
                         local=bytes([i]) * 8, local_base=LOCAL_WINDOW,
                         call_depth=1 if i == 3 else 0,
                         backtrace=[S.Frame(1, 16, BASE + 48)] if i == 3 else [])
             for i in range(4)]
    warp = S.WarpState(5, 0xF, 0x7, broken=1, error_pc=BASE + 32, error_pc_valid=1, lanes=lanes)
    cta = S.CtaState(7, (1, 2, 0), shared=bytes(range(16)), warps=[warp])
    ctx = S.ContextInfo(0xC7000000, 42, SHARED_WINDOW, LOCAL_WINDOW,
                        modules=[S.ModuleImage(HANDLE, "k", cubin)])
    grid = S.GridInfo(7, 0xC7000000, BASE, BASE, HANDLE, (4, 1, 1), (64, 1, 1), 8,
                      params=b"\x01\x02\x03\x04", const_banks=[(BASE + 0x1000, 4, 3)])
    return S.DeviceSnapshot(0, "Tesla V100", "GV100", "sm_70", 7, 0, 80, 64, 32, 8, 2,
                            contexts=[ctx], grids=[grid], sms=[S.SmState(3, [cta])],
                            memory=[S.MemorySegment(BASE + 0x1000, b"abcdefgh"),
                                    S.MemorySegment(BASE + 0x1008, b"ijkl")])


def _open(tmp_path, raw: bytes, name="c.nvcudmp"):
    path = tmp_path / name
    path.write_bytes(raw)
    return open_core(path)


def test_a_core_without_our_note_shows_r_and_p_registers(tmp_path):
    b = _open(tmp_path, build_coredump(driver_snapshot()))
    regs = b.registers(0, 3, 5, 1)
    assert [r.name for r in regs] == [f"R{i}" for i in range(8)] + ["P0", "P1"]
    assert [int(r.value) for r in regs[:8]] == [(1 << 16) + i for i in range(8)]
    assert {r.dtype for r in regs[:8]} == {"uint32"} and regs[8].dtype == "bool"
    assert (bool(regs[8].value), bool(regs[9].value)) == (True, True)
    assert b.read_register(0, 3, 5, 1, "R3") == (1 << 16) + 3 and b.read_predicate(0, 3, 5, 0, 0) == 0
    (g,) = b.grids(0)
    assert (g.kernel, g.shared_bytes, g.params) == ("k", 0, b"\x01\x02\x03\x04")
    w = b.warp(0, 3, 5)
    assert (w.pc, w.function, w.error_pc, w.broken, w.at_barrier) == (BASE + 32, "k", BASE + 32, True, False)
    assert w.lane(2).exception is E.CUDBG_EXCEPTION_WARP_ILLEGAL_ADDRESS     # the table's code
    assert [lv.active for lv in w.lanes] == [True, True, True, False]
    inner = w.lane(3)
    assert (inner.function, inner.call_depth, inner.return_addresses) == ("helper", 1, (BASE + 48,))
    assert b.programs(0) == [] and b.program_of_address(0, BASE) is None and b.fault_report() is None
    assert b.device(0).global_memory_size == 0 and b.device(0).type_name == "GV100"


def test_memory_of_a_driver_core(tmp_path):
    b = _open(tmp_path, build_coredump(driver_snapshot()))
    # a read across two adjacent segments
    assert b.read_memory(0, MemorySpace.GLOBAL, BASE + 0x1006, 4) == b"ghij"
    assert b.read_memory(0, MemorySpace.CONST, BASE + 0x1000, 4) == b"abcd"
    with pytest.raises(BackendError, match=f"address 0x{BASE + 0x1004:x}"):
        b.read_memory(0, MemorySpace.CONST, BASE + 0x1004, 2)   # past the const bank
    with pytest.raises(BackendError, match=f"address 0x{BASE + 0x100a:x}"):
        b.read_memory(0, MemorySpace.GLOBAL, BASE + 0x100a, 8)  # runs past the last segment
    assert b.read_memory(0, MemorySpace.CODE, BASE + 60, 8) == bytes([60, 61, 62, 63]) + b"\xab" * 4
    assert b.read_memory(0, MemorySpace.SHARED, 4, 4, 3, 5) == bytes([4, 5, 6, 7])
    assert b.read_memory(0, MemorySpace.LOCAL, 0, 8, 3, 5, 2) == b"\x02" * 8
    # driver cores use cuda-gdb's 16 MiB generic windows
    assert b.read_memory(0, MemorySpace.GENERIC, SHARED_WINDOW + 2, 2, 3, 5) == bytes([2, 3])
    assert b.read_memory(0, MemorySpace.GENERIC, LOCAL_WINDOW + 1, 2, 3, 5, 1) == b"\x01\x01"
    assert b.read_memory(0, MemorySpace.GENERIC, BASE + 0x1001, 2) == b"bc"
    assert b.read_memory(0, MemorySpace.PARAM, 1, 2) == b"\x02\x03"
    with pytest.raises(BackendError, match="Cannot access memory at address 0x3"):
        b.read_memory(0, MemorySpace.PARAM, 3, 2)
    assert b.read_memory(0, MemorySpace.GLOBAL, BASE + 0x1000, 0) == b""
    with pytest.raises(BackendError) as ei:
        b.read_memory(0, MemorySpace.GLOBAL, BASE, -1)
    assert ei.value.code == "INVALID_ARGS"
    with pytest.raises(BackendError) as ei:
        b.read_memory(0, "global", BASE, 1)
    assert ei.value.code == "INVALID_MEMORY_SEGMENT"


def _with_sections(raw: bytes, transform) -> bytes:
    elf = read_elf(raw, expect_type=ET_CORE)
    secs = [s for s in elf.sections[1:] if s.name != ".shstrtab"]
    return write_elf(transform(secs), ET_CORE)


def test_damaged_sections_are_noted_not_fatal(tmp_path):
    snap = driver_snapshot()
    snap.note = {"generator": "gpudbg", "registers": {str(HANDLE): {"k": [["%r1", "no-such-dtype", "R", 0, 1]]}},
                 "grids": "not a dict", "at_barrier": [1, 2], "fault": {"kind": "NO_SUCH_KIND"}}

    def damage(secs):
        for s in secs:
            if s.type == int(T.RELF_IMG):
                s.data = b"\x7fELF garbage"
        return secs + [Section(".cudbg.future", 0x80000070, b"??")]

    b = _open(tmp_path, _with_sections(build_coredump(snap), damage))
    assert any("unknown type 0x80000070" in n for n in b.notes)
    assert any("relocated cubin unreadable" in n for n in b.notes)
    w = b.warp(0, 3, 5)
    assert w.function == "" and w.lane(3).function == "" and not w.at_barrier
    assert b.grids(0)[0].kernel == f"0x{BASE:x}"
    assert b.fault_report() is None and any("fault record of the note is damaged" in n for n in b.notes)
    assert [r.name for r in b.registers(0, 3, 5, 0)][:2] == ["R0", "R1"]
    with pytest.raises(BackendError, match=f"address 0x{BASE:x}"):
        b.read_memory(0, MemorySpace.CODE, BASE, 4)

    def bad_note(secs):
        for s in secs:
            if s.type == int(T.GPUDBG_NOTE):
                s.data = b"{not json"
        return secs

    b = _open(tmp_path, _with_sections(build_coredump(snap), bad_note), "n.nvcudmp")
    assert any("not valid JSON" in n for n in b.notes) and b.note == {}
    assert b.warp(0, 3, 5).function == "k" and b.registers(0, 3, 5, 0)[0].name == "R0"


def test_a_damaged_register_map_falls_back(tmp_path):
    snap = driver_snapshot()
    snap.note = {"registers": {str(HANDLE): {"k": [["%r1", "no-such-dtype", "R", 0, 1]]}}}
    b = _open(tmp_path, build_coredump(snap))
    assert b.registers(0, 3, 5, 0)[0].name == "R0"
    assert any("register map of k is damaged" in n for n in b.notes)
    snap.note = {"registers": {str(HANDLE): {"k": [["%rd1", "uint64", "R", 2, 2], ["%p1", "bool", "P", 1, 1],
                                                   ["%h1", "float16", "R", 4, 1], ["%x", "uint32", "R", -1, 1]]}}}
    b = _open(tmp_path, build_coredump(snap), "m.nvcudmp")
    regs = {r.name: r for r in b.registers(0, 3, 5, 1)}
    assert set(regs) == {"%rd1", "%p1", "%h1"}     # the one past R254 is unavailable
    assert int(regs["%rd1"].value) == ((1 << 16) + 3) << 32 | (1 << 16) + 2
    assert regs["%h1"].value.dtype == np.float16 and bool(regs["%p1"].value)


def test_ptx_that_does_not_match_the_code_is_refused(tmp_path):
    snap = driver_snapshot()
    ptx = ".version 8.0\n.target sm_70\n.address_size 64\n.visible .entry k()\n{\n\tret;\n}\n"
    snap.note = {"modules": {str(HANDLE): {"name": "k.ptx", "ptx": ptx, "symbols": {}, "fingerprint": "0" * 64}}}
    b = _open(tmp_path, build_coredump(snap))
    assert b.programs(0) == [] and any("does not match the code that ran" in n for n in b.notes)
    snap.note["modules"][str(HANDLE)]["ptx"] = "this is not PTX"
    b = _open(tmp_path, build_coredump(snap), "p.nvcudmp")
    assert b.programs(0) == [] and any("does not load" in n for n in b.notes)
    del snap.note["modules"][str(HANDLE)]["fingerprint"]
    snap.note["modules"][str(HANDLE)]["ptx"] = ptx
    b = _open(tmp_path, build_coredump(snap), "q.nvcudmp")
    (p,) = b.programs(0)
    assert p.code_base == HANDLE and b.program_of_address(0, HANDLE) is p


def test_structural_damage_is_the_readers_clear_error(tmp_path):
    raw = build_coredump(driver_snapshot())
    with pytest.raises(CoredumpError, match="not a CUDA GPU coredump"):
        _open(tmp_path, raw[:200])
