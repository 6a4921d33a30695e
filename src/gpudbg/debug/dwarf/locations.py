"""DWARF location expressions of NVIDIA's PTX DWARF, decoded into Locations.

PTX has no fixed register file, so NVVM names a virtual register in
`DW_OP_regx` by packing the register's *name* into the register number:
the ASCII bytes of `%r1` read big-endian (`'%'` is the most significant
byte), i.e. 0x257231, written as ULEB128 (bytes 144 177 228 149 1 after
the opcode). That is the one idea here: decoding the number gives back the
PTX register name, which is exactly how the simulator indexes registers.
Memory-resident variables (`-G` puts structs and arrays in the local
depot) are `DW_OP_addr <symbol>` followed by `DW_OP_plus_uconst k`, with
the state space in the variable's DW_AT_address_class; the assembler gave
symbols without a device address symbolic addresses, mapped back here.

Only the shapes NVVM emits are decoded (register, address plus constant
offsets, constant values); anything else becomes an UNSUPPORTED Location
that names the opcode, so a debugger can say why it cannot show a value.
"""
from __future__ import annotations

from typing import Callable

from elftools.dwarf.dwarf_expr import DWARFExprParser

from .assemble import SYMBOLIC_BASE as _SYMBOLIC_MIN
from .model import AddressSpace, Location, LocationKind


def register_name(number: int) -> str:
    """The PTX register name packed into a DW_OP_regx number. Raises
    ValueError when the number is not printable ASCII starting with '%'."""
    if number <= 0:
        raise ValueError(f"register number {number} does not encode a PTX register name")
    raw = number.to_bytes((number.bit_length() + 7) // 8, "big")
    if raw[:1] != b"%" or not all(0x21 <= b < 0x7F for b in raw):
        raise ValueError(f"register number {number:#x} does not encode a PTX register name ({raw!r})")
    return raw.decode("ascii")


def register_number(name: str) -> int:
    """The DW_OP_regx number NVVM uses for a PTX register name."""
    if not name.startswith("%") or not name.isascii() or not name[1:] or not name.isprintable() or " " in name:
        raise ValueError(f"{name!r} is not a PTX register name")
    return int.from_bytes(name.encode("ascii"), "big")


def decode(expr: list[int] | bytes, parser: DWARFExprParser, space: AddressSpace | None,
           symbol_at: Callable[[int], tuple[str, int] | None],
           register_of: Callable[[str], str | None]) -> Location:
    """One location expression. `symbol_at` maps an address to (symbol,
    offset) for symbolic and global addresses; `register_of` maps a DWARF
    register name to the simulator's register name in the function, or
    None when the function declares no such register."""
    try:
        ops = parser.parse_expr(list(expr))
    except Exception as e:  # pyelftools raises a variety of types on junk
        return Location(LocationKind.UNSUPPORTED, detail=f"unreadable location expression ({e})")
    if not ops:
        return Location(LocationKind.UNSUPPORTED, detail="empty location (optimised out)")
    first = ops[0]
    if first.op_name == "DW_OP_regx" or first.op_name.startswith("DW_OP_reg") and first.op_name[9:].isdigit():
        if len(ops) != 1:
            return Location(LocationKind.UNSUPPORTED, detail="register location with further operations")
        number = first.args[0] if first.op_name == "DW_OP_regx" else int(first.op_name[9:])
        try:
            dwarf_name = register_name(number)
        except ValueError as e:
            return Location(LocationKind.UNSUPPORTED, detail=str(e))
        name = register_of(dwarf_name)
        if name is None:
            return Location(LocationKind.UNSUPPORTED,
                            detail=f"register {dwarf_name} is not declared in the function")
        return Location(LocationKind.REGISTER, name=name, space=AddressSpace.REG)
    if first.op_name == "DW_OP_addr":
        offset, rest = 0, ops[1:]
        while rest:
            op = rest[0]
            if op.op_name == "DW_OP_plus_uconst":
                offset += op.args[0]
                rest = rest[1:]
            elif op.op_name in ("DW_OP_constu", "DW_OP_consts") and len(rest) > 1 \
                    and rest[1].op_name in ("DW_OP_plus", "DW_OP_minus"):
                offset += op.args[0] if rest[1].op_name == "DW_OP_plus" else -op.args[0]
                rest = rest[2:]
            else:
                return Location(LocationKind.UNSUPPORTED, detail=f"{op.op_name} after DW_OP_addr")
        address = first.args[0]
        hit = symbol_at(address)
        sp = space or AddressSpace.GENERIC
        if hit is None:
            return Location(LocationKind.MEMORY, space=sp, address=address + offset)
        sym, base_off = hit
        real = None if address >= _SYMBOLIC_MIN else address + offset
        return Location(LocationKind.MEMORY, space=sp, symbol=sym, offset=base_off + offset, address=real)
    if first.op_name in ("DW_OP_constu", "DW_OP_consts") or first.op_name.startswith("DW_OP_lit"):
        value = first.args[0] if first.args else int(first.op_name[9:])
        if len(ops) == 2 and ops[1].op_name == "DW_OP_stack_value":
            return Location(LocationKind.VALUE, value=value)
    return Location(LocationKind.UNSUPPORTED, detail=" ".join(o.op_name for o in ops))

