"""Damaged GPU coredumps: the reader refuses structural damage with its own
CoredumpError (a ReaderError naming the section), damage to our JSON note
only drops the damaged part (with a line in `notes`), and `gpudbg core`
prints one line and exits 2 instead of a traceback. Each case is one the
fuzz target fuzz/coredump.py found escaping as another exception."""
from __future__ import annotations

import argparse
import json
import struct

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from gpudbg.cli import core as core_cli
from gpudbg.dump.coredump import snapshot as S
from gpudbg.dump.coredump.elf import ET_CORE, SECTION_HEADER_SIZE, read_elf, write_elf
from gpudbg.dump.coredump.reader import CoredumpError, read_coredump
from gpudbg.dump.coredump.tables import SectionType as T
from gpudbg.dump.coredump.target import CoreBackend, open_core
from gpudbg.dump.coredump.writer import build_coredump
from gpudbg.reader_error import ReaderError

BASE = 0x7000_0000_0000
HANDLE = 0x7000_0000_1000


def small_snapshot(note: dict | None = None) -> S.DeviceSnapshot:
    lanes = [S.LaneState(i, (i, 0, 0), BASE + 32, exception=14 if i == 1 else 0,
                         regs=np.arange(4, dtype=np.uint32), preds=np.array([1], np.uint8))
             for i in range(2)]
    warp = S.WarpState(2, 0x3, 0x3, broken=1, error_pc=BASE + 32, error_pc_valid=1, lanes=lanes)
    ctx = S.ContextInfo(0xC7000000, 42, 0, 0, modules=[S.ModuleImage(HANDLE, "k")])
    grid = S.GridInfo(7, 0xC7000000, BASE, BASE, HANDLE, (1, 1, 1), (64, 1, 1), 4)
    return S.DeviceSnapshot(0, "GPU", "GV100", "sm_70", 7, 0, 4, 8, 32, 4, 1, contexts=[ctx],
                            grids=[grid], sms=[S.SmState(1, [S.CtaState(7, (0, 0, 0), warps=[warp])])],
                            note=note or {})


def _sections(raw: bytes, transform) -> bytes:
    elf = read_elf(raw, expect_type=ET_CORE)
    secs = [s for s in elf.sections[1:] if s.name != ".shstrtab"]
    return write_elf(transform(secs) or secs, ET_CORE)


def _with_note(text: str) -> bytes:
    def put(secs):
        for s in secs:
            if s.type == int(T.GPUDBG_NOTE):
                s.data = text.encode()
    return _sections(build_coredump(small_snapshot({"generator": "gpudbg"})), put)


def _views(b: CoreBackend) -> None:
    """What `gpudbg core` reads at open: every view must answer."""
    b.device(0), b.grids(0), b.warps(0), b.programs(0), b.fault_report()
    for w in b.warps(0):
        for lane in w.lanes:
            b.registers(0, w.sm, w.wp, lane.ln)


@pytest.mark.parametrize("note", [
    "[" * 100_000 + "]" * 100_000,                         # RecursionError in json.loads
    '{"modules": ' + "[" * 3000 + "1" + "]" * 3000 + "}",  # RecursionError, nested inside
    '{"flags": ' + "9" * 5000 + "}",                       # ValueError: int() digit limit
])
def test_a_note_nested_or_numbered_past_the_limits_is_ignored(note):
    core = read_coredump(_with_note(note))
    assert core.note == {} and any("note section" in n and "ignored" in n for n in core.notes)
    _views(CoreBackend(core))


@pytest.mark.parametrize("key, value", [
    ("fault", {"kind": "CUDBG_EXCEPTION_LANE_ILLEGAL_ADDRESS", "code": 1, "address": "%r1"}),
    ("fault", {"kind": "X", "code": 1, "block": [0, float("inf"), 0]}),
    ("fault", {"kind": "X", "code": 3, "sm": [], "warp": 1, "lane": 0}),
    ("modules", "xxx"),
    ("modules", {str(HANDLE): {"name": 5, "ptx": ["not text"]}}),
    ("grids", {"7": {"kernel": "k", "dynamic_shared": 1.5}}),
    ("registers", {str(HANDLE): {"k": [["%r1", {}, "R", 0, 1]]}}),
    ("registers", {str(HANDLE): {"k": [["%r1", ["uint32"], "R", 0, 1]]}}),
    ("at_barrier", {"1/2": "all"}),
    ("device", []),
])
def test_a_note_value_of_the_wrong_type_is_dropped_with_a_note(key, value):
    note = json.dumps({"generator": "gpudbg", key: value}, allow_nan=True)
    b = CoreBackend(read_coredump(_with_note(note)))
    assert key not in b.note or b.note[key] in ({}, None)
    assert any("that part of the note is ignored" in n for n in b.notes)
    _views(b)


def _swap_types(raw: bytes, a: T, b: T) -> bytes:
    def swap(secs):
        sa = next(s for s in secs if s.type == int(a))
        sb = next(s for s in secs if s.type == int(b))
        sa.type, sb.type = int(b), int(a)
    return _sections(raw, swap)


@pytest.mark.parametrize("a, b", [(T.LN_TABLE, T.WP_TABLE), (T.DEV_TABLE, T.META_DATA),
                                  (T.CTX_TABLE, T.GRID_TABLE), (T.DEV_REGS, T.LN_TABLE),
                                  (T.SM_TABLE, T.CTA_TABLE)])
def test_swapped_sections_are_refused_naming_the_section(a, b):
    with pytest.raises(CoredumpError) as ei:
        read_coredump(_swap_types(build_coredump(small_snapshot()), a, b))
    e = ei.value
    assert isinstance(e, ReaderError) and e.section is not None and e.offset is not None
    assert str(e).startswith(f"section {e.section} (")


def test_rows_too_short_for_their_table_are_refused():
    def shrink(secs):
        lanes = next(s for s in secs if s.type == int(T.LN_TABLE))
        lanes.entsize = 4
        lanes.data = lanes.data[:4 * (len(lanes.data) // 4)]
    with pytest.raises(CoredumpError, match=r"lane rows of 4 bytes are too short .* up to ccRegister"):
        read_coredump(_sections(build_coredump(small_snapshot()), shrink))


def test_a_child_under_a_row_of_the_wrong_table_is_refused():
    def relink(secs):
        regs = next(s for s in secs if s.type == int(T.DEV_REGS))
        regs.link = next(i for i, s in enumerate(secs, 1) if s.type == int(T.CTA_TABLE))
        regs.info = 0
    with pytest.raises(CoredumpError, match="DEV_REGS section must hang under a lane row, but row 0 of "
                                            r"section \d+ is a CTA row"):
        read_coredump(_sections(build_coredump(small_snapshot()), relink))


@pytest.mark.parametrize("change, message", [
    (lambda s: setattr(s, "num_sms", 1), "SM 1 of device 0, which has 1 SMs"),
    (lambda s: setattr(s, "warps_per_sm", 2), "warp 2 on SM 1, which has 2 warp slots"),
    (lambda s: setattr(s, "lanes_per_warp", 1), "lane masks name lanes past 1"),
    (lambda s: setattr(s, "num_sms", 0), r"numSMs = 0 is outside \[1, 65536\]"),
    (lambda s: setattr(s, "lanes_per_warp", 1 << 20), "numLanesPerWarp"),
])
def test_ids_outside_the_device_geometry_are_refused(change, message):
    snap = small_snapshot()
    change(snap)
    with pytest.raises(CoredumpError, match=message):
        read_coredump(build_coredump(snap))


def test_gpudbg_core_prints_one_line_and_exits_2(tmp_path, capsys):
    path = tmp_path / "bad.nvcudmp"
    path.write_bytes(_swap_types(build_coredump(small_snapshot()), T.LN_TABLE, T.WP_TABLE))
    args = argparse.Namespace(core=str(path), commands=[], command_files=[], batch=True)
    assert core_cli.execute(args) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"gpudbg core: {path}: section ") and err.count("\n") == 1
    assert "(byte offset 0x" in err and "Traceback" not in err
    path.write_bytes(b"\x7fELF" + b"\0" * 10)
    assert core_cli.execute(args) == 2
    assert "too short for an ELF64 header" in capsys.readouterr().err


def test_a_damaged_elf_header_names_its_offset():
    raw = bytearray(build_coredump(small_snapshot()))
    shoff, = struct.unpack_from("<Q", raw, 0x28)
    struct.pack_into("<Q", raw, 0x28, len(raw) + 8)
    with pytest.raises(CoredumpError, match="section header table at .* lies outside the file") as ei:
        read_coredump(bytes(raw))
    assert ei.value.offset == 0x28
    raw = bytearray(build_coredump(small_snapshot()))
    struct.pack_into("<Q", raw, shoff + 3 * SECTION_HEADER_SIZE + 32, 1 << 40)   # a section's size
    with pytest.raises(CoredumpError, match="runs past the end of the file") as ei:
        read_coredump(bytes(raw))
    assert ei.value.offset == shoff + 3 * SECTION_HEADER_SIZE


def test_the_reader_error_names_the_file(tmp_path):
    path = tmp_path / "x.nvcudmp"
    path.write_bytes(b"not an elf at all, but long enough to hold a header" * 2)
    with pytest.raises(CoredumpError) as ei:
        open_core(path)
    assert ei.value.file == str(path) and ei.value.location() == f"{path}: offset 0x0"


def test_embedded_ptx_whose_debug_sections_are_damaged_is_not_rebuilt():
    """The fingerprint covers the code only: a core whose embedded PTX
    differs in a DWARF section (a flipped byte) must not hand the debugger a
    Program whose DebugInfo raises (DwarfAssemblyError escaped `gpudbg core`)."""
    from pathlib import Path

    from gpudbg.dump.coredump.embedded import code_fingerprint, rebuild_program
    from gpudbg.ptx import parse
    from gpudbg.sim.program import Program

    text = (Path(__file__).resolve().parents[2] / "ptx" / "fixtures" / "debug_mix.sm80.ptx").read_text()
    module = parse(text, "d.ptx")
    symbols = {g: BASE + 0x10_0000 + 64 * i for i, g in enumerate(module.globals)}
    entry = {"name": "d.ptx", "ptx": text, "symbols": symbols,
             "fingerprint": code_fingerprint(Program(module, symbols, code_base=HANDLE))}
    assert rebuild_program(entry, HANDLE).code_base == HANDLE
    damaged = dict(entry, ptx=text.replace(".b64 $L__tmp3\n", ".b64 $L__tmp_gone\n", 1))
    with pytest.raises(ValueError, match=r"debug sections of embedded PTX d.ptx do not load: "
                                         r"d.ptx:\d+:\d+: .debug_loc: unknown symbol \$L__tmp_gone"):
        rebuild_program(damaged, HANDLE)


_JSON = st.recursive(st.none() | st.booleans() | st.integers(-(2 ** 70), 2 ** 70) | st.floats()
                     | st.text(max_size=8) | st.sampled_from(["R", "P", "uint32", "float16", "%r1"]),
                     lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=6), inner,
                                                                                 max_size=4),
                     max_leaves=12)


@settings(max_examples=120, deadline=None)
@given(st.sampled_from(["fault", "modules", "grids", "registers", "at_barrier", "device", "flags",
                        "generator"]), _JSON,
       st.sampled_from(["", "7", str(HANDLE), "1/2", "k", "kind", "sm", "ptx", "symbols"]), _JSON)
def test_any_note_value_leaves_every_view_answering(key, value, inner_key, inner_value):
    note = {"generator": "gpudbg", key: value}
    if isinstance(value, dict):
        value[inner_key] = inner_value
    core = read_coredump(_with_note(json.dumps(note)))
    b = CoreBackend(core)
    _views(b)
    for w in b.warps(0):
        b.register_map(0, w.sm, w.wp, w.lanes[0].ln)
