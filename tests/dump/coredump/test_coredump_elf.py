"""The ELF container: sections round trip with their link/info/addr, the
CUDA ident is written and checked, and damage gives specific errors."""
from __future__ import annotations

import struct

import pytest
from hypothesis import given, settings, strategies as st

from gpudbg.dump.coredump.elf import (
    ET_CORE, EM_CUDA, ElfError, Section, read_elf, write_elf,
)

section = st.builds(
    Section, name=st.text("abcdefgh.0123", min_size=1, max_size=12),
    type=st.integers(0x80000001, 0x80000017), data=st.binary(max_size=64),
    flags=st.integers(0, 7), addr=st.integers(0, 2**64 - 1), link=st.integers(0, 3),
    info=st.integers(0, 2**32 - 1), entsize=st.integers(0, 64))


@settings(max_examples=40, deadline=None)
@given(st.lists(section, max_size=6))
def test_sections_round_trip(secs):
    elf = read_elf(write_elf(secs, ET_CORE), expect_type=ET_CORE)
    assert (elf.type, elf.machine, elf.osabi, elf.abiversion) == (ET_CORE, EM_CUDA, 0x33, 7)
    got = elf.sections[1:-1]
    assert [(s.name, s.type, s.data, s.flags, s.addr, s.link, s.info, s.entsize) for s in got] == \
        [(s.name, s.type, s.data, s.flags, s.addr, s.link, s.info, s.entsize) for s in secs]
    assert elf.sections[-1].name == ".shstrtab"
    assert all(s.offset % 8 == 0 for s in got if s.data)


def test_ident_is_the_nine_bytes_cuda_gdb_compares():
    raw = write_elf([], ET_CORE)
    assert raw[:9] == bytes([0x7F, 0x45, 0x4C, 0x46, 2, 1, 1, 0x33, 7])


def test_damage_is_reported_specifically():
    raw = bytearray(write_elf([Section("x", 0x80000002, b"abc")], ET_CORE))
    bad = bytearray(raw); bad[8] = 6
    with pytest.raises(ElfError, match="ABI version 6"):
        read_elf(bytes(bad))
    with pytest.raises(ElfError, match="bad magic"):
        read_elf(b"\0" * 64)
    with pytest.raises(ElfError, match="too short"):
        read_elf(bytes(raw[:20]))
    bad = bytearray(raw); struct.pack_into("<H", bad, 58, 40)
    with pytest.raises(ElfError, match="entry size 40"):
        read_elf(bytes(bad))
    with pytest.raises(ElfError, match="past the end|outside the file"):
        read_elf(bytes(raw[:-70]))
    with pytest.raises(ElfError, match="ELF type 4, expected 2"):
        read_elf(bytes(raw), expect_type=2)
