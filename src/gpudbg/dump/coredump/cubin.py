"""A synthetic, relocated EM_CUDA cubin for one simulated module.

cuda-gdb resolves every lane's virtual PC against the relocated cubins in a
core (STT_FUNC symbols with absolute addresses in SHF_ALLOC sections), and
refuses a grid whose module has no cubin. The simulator has no SASS, but it
has code addresses (`code_base + 16 * pc`), so each function becomes one
`.text.<name>` section placed at its address, holding our code image bytes
(see sim/loader.py), with a symbol covering exactly its instructions.

For source lines, an optional DWARF 2 `.debug_line` maps each instruction
address to the `.loc` line the PTX gave it, with a minimal `.debug_info`
compile unit per module (gdb only reads line programs through a unit's
DW_AT_stmt_list) and one DW_TAG_subprogram per function. No variables,
frames or types: that needs the PTX's own DWARF mapped onto registers, which
this does not attempt. Disassembly is impossible (no SASS), by design.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field

from gpudbg.dump.coredump.elf import (
    EM_CUDA, ET_EXEC, SHF_ALLOC, SHF_EXECINSTR, SHT_PROGBITS, SHT_STRTAB, SHT_SYMTAB, STB_GLOBAL,
    STT_FUNC, SYMBOL_SIZE, ElfError, Section, StringTable, Symbol, pack_symbols, read_elf,
    unpack_symbols, write_elf,
)

# e_flags of a cubin: SM number in the low byte and (virtual arch << 16),
# plus EF_CUDA_64BIT_ADDRESS (0x400) and EF_CUDA_TEXMODE_UNIFIED (0x100).
EF_CUDA_64BIT_ADDRESS = 0x400
EF_CUDA_TEXMODE_UNIFIED = 0x100

DW_LNS_copy = 1
DW_LNS_advance_pc = 2
DW_LNS_advance_line = 3
DW_LNS_set_file = 4
DW_LNE_end_sequence = 1
DW_LNE_set_address = 2
DW_TAG_compile_unit = 0x11
DW_TAG_subprogram = 0x2E
DW_FORM_addr = 0x01
DW_FORM_data4 = 0x06
DW_FORM_string = 0x08
DW_FORM_data1 = 0x0B
DW_FORM_flag = 0x0C
DW_AT_name = 0x03
DW_AT_stmt_list = 0x10
DW_AT_low_pc = 0x11
DW_AT_high_pc = 0x12
DW_AT_language = 0x13
DW_AT_comp_dir = 0x1B
DW_AT_producer = 0x25
DW_AT_external = 0x3F
DW_LANG_C_plus_plus = 0x04


@dataclass(frozen=True)
class CodeFunction:
    """One function's code: [address, address + len(code)) and, per
    instruction (16 bytes each), its (file index, line) or None."""

    name: str
    address: int
    code: bytes
    lines: tuple[tuple[int, int] | None, ...] = ()


def program_functions(program, code: bytes, relocated: bool, step: int = 16) -> list[CodeFunction]:
    """The functions of a loaded Program with code, cut from its code
    image `code`: at their code addresses (relocated) or at their offsets
    in the module, each with its per-instruction source lines."""
    out = []
    for info in program.function_list:
        if info.builtin is not None or info.end_pc <= info.entry_pc:
            continue
        lines = []
        for c in program.code[info.entry_pc:info.end_pc]:
            li = c.inst.line_info
            lines.append((li.file_index, li.line) if li is not None else None)
        body = code[step * info.entry_pc:step * info.end_pc]
        address = program.code_address(info.entry_pc) if relocated else step * info.entry_pc
        out.append(CodeFunction(info.name, address, body, tuple(lines)))
    return out


@dataclass
class CubinInfo:
    """What a reader needs from a cubin: function ranges and the line table."""

    sm: int
    functions: list[Symbol] = field(default_factory=list)
    lines: dict[int, tuple[str, int]] = field(default_factory=dict)  # address -> (file, line)

    def function_at(self, address: int) -> Symbol | None:
        for s in self.functions:
            if s.value <= address < s.value + s.size:
                return s
        return None


def cubin_flags(sm: int) -> int:
    return (sm << 16) | EF_CUDA_64BIT_ADDRESS | EF_CUDA_TEXMODE_UNIFIED | sm


def _uleb(v: int) -> bytes:
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def _sleb(v: int) -> bytes:
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        done = (v == 0 and not b & 0x40) or (v == -1 and b & 0x40)
        out.append(b | (0 if done else 0x80))
        if done:
            return bytes(out)


def _read_uleb(data: bytes, pos: int) -> tuple[int, int]:
    v = shift = 0
    while True:
        if pos >= len(data):
            raise ElfError("truncated LEB128 in .debug_line")
        b = data[pos]
        pos += 1
        v |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return v, pos


def _read_sleb(data: bytes, pos: int) -> tuple[int, int]:
    v = shift = 0
    while True:
        if pos >= len(data):
            raise ElfError("truncated LEB128 in .debug_line")
        b = data[pos]
        pos += 1
        v |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return (v - (1 << shift)) if b & 0x40 else v, pos


_STD_LENGTHS = bytes([0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1])


def debug_line(functions: list[CodeFunction], files: dict[int, str], step: int = 16) -> bytes:
    """A DWARF 2 line program: one sequence per function, a row per
    instruction whose line differs from the previous row's."""
    order = sorted(files)
    fileno = {idx: i + 1 for i, idx in enumerate(order)}
    hdr = bytearray([1, 1, (-5) & 0xFF, 14, 13]) + _STD_LENGTHS + b"\0"
    for idx in order:
        hdr += files[idx].encode() + b"\0" + b"\0\0\0"
    hdr += b"\0"
    prog = bytearray()
    for f in functions:
        prog += b"\0" + _uleb(9) + bytes([DW_LNE_set_address]) + struct.pack("<Q", f.address)
        cur_file, cur_line, cur_addr = 1, 1, f.address
        for i, li in enumerate(f.lines):
            if li is None or li[0] not in fileno:
                continue
            fno, line = fileno[li[0]], li[1]
            if (fno, line) == (cur_file, cur_line) and i:
                continue
            addr = f.address + step * i
            if addr != cur_addr:
                prog += bytes([DW_LNS_advance_pc]) + _uleb(addr - cur_addr)
                cur_addr = addr
            if fno != cur_file:
                prog += bytes([DW_LNS_set_file]) + _uleb(fno)
                cur_file = fno
            if line != cur_line:
                prog += bytes([DW_LNS_advance_line]) + _sleb(line - cur_line)
                cur_line = line
            prog += bytes([DW_LNS_copy])
        end = f.address + len(f.code)
        if end != cur_addr:
            prog += bytes([DW_LNS_advance_pc]) + _uleb(end - cur_addr)
        prog += b"\0" + _uleb(1) + bytes([DW_LNE_end_sequence])
    body = struct.pack("<HI", 2, len(hdr)) + bytes(hdr) + bytes(prog)
    return struct.pack("<I", len(body)) + body


def parse_debug_line(data: bytes) -> dict[int, tuple[str, int]]:
    """address -> (file name, line) for every row of every unit."""
    out: dict[int, tuple[str, int]] = {}
    pos = 0
    while pos + 4 <= len(data):
        (length,) = struct.unpack_from("<I", data, pos)
        end = pos + 4 + length
        if length == 0xFFFFFFFF or end > len(data):
            raise ElfError(f".debug_line unit at 0x{pos:x} has an unsupported or oversized length")
        _version, hlen = struct.unpack_from("<HI", data, pos + 4)
        p = pos + 10
        _minlen, _def_stmt, line_base, line_range, opcode_base = struct.unpack_from("<BBbBB", data, p)
        lengths = data[p + 5:p + 5 + opcode_base - 1]
        p = p + 5 + opcode_base - 1
        while data[p] != 0:       # include directories
            p = data.index(b"\0", p) + 1
        p += 1
        names = []
        while data[p] != 0:
            z = data.index(b"\0", p)
            names.append(data[p:z].decode("utf-8", errors="replace"))
            p = z + 1
            for _ in range(3):
                _, p = _read_uleb(data, p)
        p = pos + 10 + hlen
        addr, fno, line = 0, 1, 1
        while p < end:
            op = data[p]
            p += 1
            if op == 0:
                n, p = _read_uleb(data, p)
                sub = data[p]
                if sub == DW_LNE_set_address:
                    (addr,) = struct.unpack_from("<Q", data, p + 1)
                elif sub == DW_LNE_end_sequence:
                    fno, line = 1, 1
                p += n
            elif op == DW_LNS_copy:
                out[addr] = (names[fno - 1] if 0 < fno <= len(names) else f"file{fno}", line)
            elif op == DW_LNS_advance_pc:
                d, p = _read_uleb(data, p)
                addr += d
            elif op == DW_LNS_advance_line:
                d, p = _read_sleb(data, p)
                line += d
            elif op == DW_LNS_set_file:
                fno, p = _read_uleb(data, p)
            elif op >= opcode_base:
                adj = op - opcode_base
                addr += adj // line_range
                line += line_base + adj % line_range
                out[addr] = (names[fno - 1] if 0 < fno <= len(names) else f"file{fno}", line)
            else:
                for _ in range(lengths[op - 1] if op - 1 < len(lengths) else 0):
                    _, p = _read_uleb(data, p)
        pos = end
    return out


def _debug_info(name: str, functions: list[CodeFunction]) -> tuple[bytes, bytes]:
    """(.debug_abbrev, .debug_info) for one compile unit with subprograms."""
    abbrev = bytearray()
    abbrev += _uleb(1) + _uleb(DW_TAG_compile_unit) + b"\x01"
    for at, form in ((DW_AT_producer, DW_FORM_string), (DW_AT_language, DW_FORM_data1),
                     (DW_AT_name, DW_FORM_string), (DW_AT_comp_dir, DW_FORM_string),
                     (DW_AT_stmt_list, DW_FORM_data4), (DW_AT_low_pc, DW_FORM_addr),
                     (DW_AT_high_pc, DW_FORM_addr)):
        abbrev += _uleb(at) + _uleb(form)
    abbrev += b"\0\0"
    abbrev += _uleb(2) + _uleb(DW_TAG_subprogram) + b"\x00"
    for at, form in ((DW_AT_name, DW_FORM_string), (DW_AT_low_pc, DW_FORM_addr),
                     (DW_AT_high_pc, DW_FORM_addr), (DW_AT_external, DW_FORM_flag)):
        abbrev += _uleb(at) + _uleb(form)
    abbrev += b"\0\0\0"
    lo = min(f.address for f in functions)
    hi = max(f.address + len(f.code) for f in functions)
    die = bytearray(_uleb(1)) + b"gpudbg simulator\0" + bytes([DW_LANG_C_plus_plus])
    die += name.encode() + b"\0" + b".\0" + struct.pack("<IQQ", 0, lo, hi)
    for f in functions:
        die += _uleb(2) + f.name.encode() + b"\0" + struct.pack("<QQ", f.address,
                                                                  f.address + len(f.code)) + b"\x01"
    die += b"\0"
    body = struct.pack("<HIB", 2, 0, 8) + bytes(die)
    return bytes(abbrev), struct.pack("<I", len(body)) + body


def build_cubin(functions: list[CodeFunction], sm: int, files: dict[int, str] | None = None,
                unit_name: str = "module") -> bytes:
    """The relocated cubin: `.text.<fn>` per function at its address, a
    symbol per function, and line info when `files` is given."""
    if not functions:
        raise ValueError("a cubin needs at least one function")
    strtab = StringTable()
    sections = [Section(".strtab", SHT_STRTAB, b"")]  # index 1; body filled in last
    symbols = []
    for f in functions:
        sections.append(Section(f".text.{f.name}", SHT_PROGBITS, f.code, SHF_ALLOC | SHF_EXECINSTR,
                                f.address, addralign=128))
        symbols.append(Symbol(f.name, f.address, len(f.code), STT_FUNC, STB_GLOBAL, len(sections)))
    sections.append(Section(".symtab", SHT_SYMTAB, pack_symbols(symbols, strtab), link=1, info=1,
                            addralign=8, entsize=SYMBOL_SIZE))
    if files:
        abbrev, info = _debug_info(unit_name, functions)
        sections.append(Section(".debug_line", SHT_PROGBITS, debug_line(functions, files)))
        sections.append(Section(".debug_abbrev", SHT_PROGBITS, abbrev))
        sections.append(Section(".debug_info", SHT_PROGBITS, info))
    sections[0].data = strtab.bytes()
    return write_elf(sections, ET_EXEC, EM_CUDA, flags=cubin_flags(sm))


def read_cubin(data: bytes) -> CubinInfo:
    """Function symbols and line table of a relocated cubin (ours or the
    driver's; a driver cubin's lines are read when it has .debug_line)."""
    elf = read_elf(data, expect_type=None, expect_machine=EM_CUDA, expect_ident=False)
    info = CubinInfo(sm=elf.flags & 0xFF)
    symtab = next((s for s in elf.sections if s.type == SHT_SYMTAB), None)
    if symtab is not None and 0 < symtab.link < len(elf.sections):
        syms = unpack_symbols(symtab.data, elf.sections[symtab.link].data)
        info.functions = sorted((s for s in syms if s.type == STT_FUNC), key=lambda s: s.value)
    dl = elf.by_name(".debug_line")
    if dl is not None:
        info.lines = parse_debug_line(dl.data)
    return info
