"""A minimal ELF64 little-endian container: sections only, no segments.

Both a GPU coredump (ET_CORE) and the cubins inside it (ET_EXEC) are plain
section lists, so one writer serves both: sections are given in index order
with names, the writer appends `.shstrtab`, lays the bodies out 8-aligned
after the header and puts the section header table last. The reader is the
inverse and validates what libcudacore validates (the 9-byte ident, entry
size, offsets inside the file) with a specific error for each. It does not
handle ELF32, big-endian files, program headers or the SHN_XINDEX forms on
the write side (a reader of extended section counts is included because
NVIDIA's reader accepts them).
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field

from gpudbg.reader_error import ReaderError

ELFCLASS64 = 2
ELFDATA2LSB = 1
EV_CURRENT = 1
ELFOSABI_CUDA = 0x33
ELFOSABIV_LATEST = 7
ET_EXEC = 2
ET_CORE = 4
EM_CUDA = 190

SHT_NULL = 0
SHT_PROGBITS = 1
SHT_SYMTAB = 2
SHT_STRTAB = 3
SHF_WRITE = 1
SHF_ALLOC = 2
SHF_EXECINSTR = 4

_EHDR = struct.Struct("<16sHHIQQQIHHHHHH")
_SHDR = struct.Struct("<IIQQQQIIQQ")
_SYM = struct.Struct("<IBBHQQ")
SHN_UNDEF = 0
SHN_ABS = 0xFFF1
SHN_XINDEX = 0xFFFF
STT_FUNC = 2
STT_SECTION = 3
STB_GLOBAL = 1
STB_LOCAL = 0


class ElfError(ReaderError, ValueError):
    """A file that is not a well-formed ELF of the kind expected; `offset`
    is the byte offset of the damage when one place is to blame."""

    def __init__(self, message: str, offset: int | None = None):
        super().__init__(message)
        self.offset = offset


@dataclass
class Section:
    name: str
    type: int
    data: bytes = b""
    flags: int = 0
    addr: int = 0
    link: int = 0
    info: int = 0
    addralign: int = 1
    entsize: int = 0
    # filled in by the reader
    index: int = 0
    offset: int = 0


@dataclass
class ElfFile:
    type: int
    machine: int
    osabi: int
    abiversion: int
    flags: int
    sections: list[Section] = field(default_factory=list)
    shoff: int = 0    # file offset of the section header table (read files)

    def by_name(self, name: str) -> Section | None:
        return next((s for s in self.sections if s.name == name), None)


class StringTable:
    """An ELF string table under construction; equal strings share an offset."""

    def __init__(self) -> None:
        self._data = bytearray(b"\0")
        self._index: dict[str, int] = {"": 0}

    def add(self, s: str) -> int:
        off = self._index.get(s)
        if off is None:
            off = self._index[s] = len(self._data)
            self._data += s.encode() + b"\0"
        return off

    def bytes(self) -> bytes:
        return bytes(self._data)


def cstring(table: bytes, offset: int) -> str:
    if not 0 <= offset < len(table):
        raise ElfError(f"string offset {offset} is outside the {len(table)}-byte string table")
    end = table.find(b"\0", offset)
    return table[offset:end if end >= 0 else len(table)].decode("utf-8", errors="replace")


def write_elf(sections: list[Section], e_type: int, machine: int = EM_CUDA,
              osabi: int = ELFOSABI_CUDA, abiversion: int = ELFOSABIV_LATEST, flags: int = 0) -> bytes:
    """Serialize: index 0 is the null section, then `sections` (indices 1..),
    then `.shstrtab`, which e_shstrndx names."""
    shstr = StringTable()
    names = [shstr.add(s.name) for s in sections]
    shstr_name = shstr.add(".shstrtab")
    shstr_bytes = shstr.bytes()
    bodies = [s.data for s in sections] + [shstr_bytes]
    out = bytearray(_EHDR.size)
    offsets = []
    for body in bodies:
        pad = (-len(out)) % 8
        out += b"\0" * pad
        offsets.append(len(out))
        out += body
    out += b"\0" * ((-len(out)) % 8)
    shoff = len(out)
    nsec = len(sections) + 2
    if nsec >= 0xFF00:
        raise ElfError(f"{nsec} sections need the extended numbering this writer does not produce")
    out += _SHDR.pack(0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
    for s, name, off in zip(sections, names, offsets):
        out += _SHDR.pack(name, s.type, s.flags, s.addr, off, len(s.data), s.link, s.info,
                          s.addralign, s.entsize)
    out += _SHDR.pack(shstr_name, SHT_STRTAB, 0, 0, offsets[-1], len(shstr_bytes), 0, 0, 1, 0)
    ident = bytes([0x7F, ord("E"), ord("L"), ord("F"), ELFCLASS64, ELFDATA2LSB, EV_CURRENT,
                   osabi, abiversion]) + b"\0" * 7
    _EHDR.pack_into(out, 0, ident, e_type, machine, EV_CURRENT, 0, 0, shoff, flags,
                    _EHDR.size, 0, 0, _SHDR.size, nsec, nsec - 1)
    return bytes(out)


def read_elf(data: bytes, expect_type: int | None = None, expect_machine: int | None = EM_CUDA,
             expect_ident: bool = True) -> ElfFile:
    """Parse the header and section table; section bodies are sliced out."""
    if len(data) < _EHDR.size:
        raise ElfError(f"file of {len(data)} bytes is too short for an ELF64 header", len(data))
    (ident, e_type, machine, _ver, _entry, _phoff, shoff, flags, _ehsize, _phentsize, _phnum,
     shentsize, shnum, shstrndx) = _EHDR.unpack_from(data, 0)
    if ident[:4] != b"\x7fELF":
        raise ElfError("not an ELF file (bad magic)", 0)
    if ident[4] != ELFCLASS64 or ident[5] != ELFDATA2LSB or ident[6] != EV_CURRENT:
        raise ElfError("not a little-endian ELF64 (EV_CURRENT) file", 4)
    if expect_ident and (ident[7], ident[8]) != (ELFOSABI_CUDA, ELFOSABIV_LATEST):
        raise ElfError(f"ELF ident has OSABI 0x{ident[7]:x} ABI version {ident[8]}; a CUDA "
                       f"coredump has OSABI 0x{ELFOSABI_CUDA:x} ABI version {ELFOSABIV_LATEST}", 7)
    if expect_type is not None and e_type != expect_type:
        raise ElfError(f"ELF type {e_type}, expected {expect_type}", 0x10)
    if expect_machine is not None and machine != expect_machine:
        raise ElfError(f"ELF machine {machine}, expected EM_CUDA ({EM_CUDA})", 0x12)
    if shoff == 0:
        raise ElfError("ELF file has no section header table", 0x28)
    if shentsize != _SHDR.size:
        raise ElfError(f"section header entry size {shentsize}, expected {_SHDR.size}", 0x3A)
    if shoff + _SHDR.size > len(data):
        raise ElfError(f"section header table at 0x{shoff:x} lies outside the file", 0x28)
    first = _SHDR.unpack_from(data, shoff)
    if shnum == 0:
        shnum = first[5]
    if shstrndx == SHN_XINDEX:
        shstrndx = first[6]
    if shoff + shnum * _SHDR.size > len(data):
        raise ElfError(f"{shnum} section headers at 0x{shoff:x} run past the end of the file", 0x3C)
    raw = []
    for i in range(shnum):
        (name, typ, sflags, addr, off, size, link, info, align,
         entsize) = _SHDR.unpack_from(data, shoff + i * _SHDR.size)
        body = b""
        if typ not in (SHT_NULL, 8) and size:  # 8 = SHT_NOBITS
            if off + size > len(data):
                raise ElfError(f"section {i} (0x{size:x} bytes at 0x{off:x}) runs past the end "
                               f"of the file", shoff + i * _SHDR.size)
            body = bytes(data[off:off + size])
        raw.append((name, Section("", typ, body, sflags, addr, link, info, align, entsize, i, off)))
    if not 0 <= shstrndx < shnum:
        raise ElfError(f"e_shstrndx {shstrndx} is not a section index (0..{shnum - 1})", 0x3E)
    names = raw[shstrndx][1].data
    for name, s in raw:
        s.name = cstring(names, name) if s.type != SHT_NULL or name else ""
    return ElfFile(e_type, machine, ident[7], ident[8], flags, [s for _, s in raw], shoff)


@dataclass(frozen=True)
class Symbol:
    name: str
    value: int
    size: int
    type: int
    bind: int
    shndx: int


def pack_symbols(symbols: list[Symbol], strtab: StringTable) -> bytes:
    """A .symtab body: the null symbol, then `symbols` (locals first, as ELF requires)."""
    out = bytearray(_SYM.size)
    for s in sorted(symbols, key=lambda s: s.bind != STB_LOCAL):
        out += _SYM.pack(strtab.add(s.name), (s.bind << 4) | s.type, 0, s.shndx, s.value, s.size)
    return bytes(out)


def unpack_symbols(data: bytes, strtab: bytes) -> list[Symbol]:
    if len(data) % _SYM.size:
        raise ElfError(f"symbol table of {len(data)} bytes is not a whole number of entries")
    out = []
    for off in range(_SYM.size, len(data), _SYM.size):
        name, info, _other, shndx, value, size = _SYM.unpack_from(data, off)
        out.append(Symbol(cstring(strtab, name), value, size, info & 0xF, info >> 4, shndx))
    return out


SYMBOL_SIZE = _SYM.size
SECTION_HEADER_SIZE = _SHDR.size
