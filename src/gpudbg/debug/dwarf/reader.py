"""Read the assembled DWARF of a `-G` module into the model.

pyelftools parses the bytes (DIE trees, abbreviations, location lists) from
in-memory sections; this module walks the trees once and builds plain
CompileUnit / Subprogram / Scope / Variable / Type objects. The one idea
that makes NVIDIA's DWARF usable: every subprogram's linkage name is its
PTX function name, so register locations are checked against, and renamed
to, the registers that very function declares in the simulator.

It does not evaluate variables and does not read `.debug_line` (NVVM leaves
that section to ptxas; the line table comes from `.loc`, see lines.py).
Declaration files are `.file` indices, as NVVM numbers them.
"""
from __future__ import annotations

import io

from elftools.dwarf.dwarf_expr import DWARFExprParser
from elftools.dwarf.dwarfinfo import DebugSectionDescriptor, DWARFInfo, DwarfConfig
from elftools.dwarf.locationlists import BaseAddressEntry, LocationParser

from gpudbg.ptx import ir

from .assemble import Assembled
from .locations import decode
from .model import (AddressSpace, CompileUnit, Encoding, Location, LocationRange, Member,
                    Scope, Subprogram, Type, TypeKind, Variable)

_SECTION_ARGS = ("debug_info", "debug_aranges", "debug_abbrev", "debug_frame", "eh_frame", "debug_str",
                 "debug_loc", "debug_ranges", "debug_line", "debug_pubtypes", "debug_pubnames",
                 "debug_addr", "debug_str_offsets", "debug_line_str", "debug_loclists",
                 "debug_rnglists", "debug_sup", "gnu_debugaltlink", "debug_types")

_TYPE_TAGS = {
    "DW_TAG_base_type": TypeKind.BASE, "DW_TAG_unspecified_type": TypeKind.VOID,
    "DW_TAG_pointer_type": TypeKind.POINTER, "DW_TAG_reference_type": TypeKind.REFERENCE,
    "DW_TAG_rvalue_reference_type": TypeKind.REFERENCE, "DW_TAG_array_type": TypeKind.ARRAY,
    "DW_TAG_structure_type": TypeKind.STRUCT, "DW_TAG_union_type": TypeKind.UNION,
    "DW_TAG_class_type": TypeKind.CLASS, "DW_TAG_enumeration_type": TypeKind.ENUM,
    "DW_TAG_typedef": TypeKind.TYPEDEF, "DW_TAG_const_type": TypeKind.CONST,
    "DW_TAG_volatile_type": TypeKind.VOLATILE, "DW_TAG_restrict_type": TypeKind.RESTRICT,
    "DW_TAG_subroutine_type": TypeKind.FUNCTION,
}
_SCOPE_TAGS = {"DW_TAG_lexical_block": "lexical_block", "DW_TAG_inlined_subroutine": "inlined_subroutine"}


class DwarfReadError(ValueError):
    """The DWARF of a module is malformed beyond what we can read."""


def dwarf_info(assembled: Assembled) -> DWARFInfo | None:
    """pyelftools' view of the assembled sections; None without .debug_info."""
    if ".debug_info" not in assembled.sections or not assembled.sections[".debug_info"]:
        return None
    descs = {}
    for arg in _SECTION_ARGS:
        data = assembled.sections.get("." + arg)
        descs[arg + "_sec"] = None if data is None else DebugSectionDescriptor(
            io.BytesIO(data), "." + arg, None, len(data), 0)
    if descs["debug_abbrev_sec"] is None:
        raise DwarfReadError("the module has .debug_info but no .debug_abbrev section")
    config = DwarfConfig(little_endian=True, machine_arch="CUDA", default_address_size=8)
    return DWARFInfo(config, **descs)


class Reader:
    """One pass over the DIE trees of a module's assembled DWARF."""

    def __init__(self, module: ir.Module, assembled: Assembled, global_symbols: dict[str, tuple[int, int]]):
        self.module = module
        self.assembled = assembled
        self.global_symbols = global_symbols  # name -> (device address, size)
        self._types: dict[int, Type] = {}

    def read(self) -> list[CompileUnit]:
        try:
            info = dwarf_info(self.assembled)
            if info is None:
                return []
            self.info = info
            self.locparser = LocationParser(info.location_lists())
            return [self._unit(cu) for cu in info.iter_CUs()]
        except DwarfReadError:
            raise
        except Exception as e:  # pyelftools signals bad bytes with assorted types
            raise DwarfReadError(f"cannot read the DWARF of {self.module.filename}: {type(e).__name__}: {e}") from e

    # ------------------------------------------------------------ units
    def _unit(self, cu) -> CompileUnit:
        top = cu.get_top_DIE()
        self.cu = cu
        self.exprs = DWARFExprParser(cu.structs)
        self.cu_base = _attr(top, "DW_AT_low_pc", 0)
        unit = CompileUnit(_str(top, "DW_AT_name") or self.module.filename, _str(top, "DW_AT_comp_dir"),
                           _str(top, "DW_AT_producer"), _attr(top, "DW_AT_language"))
        for die in top.iter_children():
            if die.tag == "DW_TAG_subprogram":
                sp = self._subprogram(die)
                if sp is not None:
                    unit.subprograms.append(sp)
            elif die.tag == "DW_TAG_variable" and "DW_AT_location" in die.attributes:
                unit.globals.append(self._variable(die, False, lambda _n: None))
            elif die.tag in _TYPE_TAGS:
                t = self._type(die)
                if t.name:
                    unit.types.setdefault(t.name, t)
            elif die.tag == "DW_TAG_namespace":
                for sub in die.iter_children():
                    if sub.tag == "DW_TAG_subprogram":
                        sp = self._subprogram(sub)
                        if sp is not None:
                            unit.subprograms.append(sp)
        return unit

    def _subprogram(self, die) -> Subprogram | None:
        if "DW_AT_low_pc" not in die.attributes:
            return None  # a declaration, or a function with no code of its own
        low = die.attributes["DW_AT_low_pc"].value
        high = _high_pc(die, low)
        name = _name(die) or "<anonymous>"
        linkage = _linkage(die) or name
        function = self.module.functions.get(linkage)
        registers: dict[str, str] = {}
        if function is not None:
            for r in function.registers.values():
                registers.setdefault(r.display_name or r.name, r.name)
            for r in function.registers.values():
                registers[r.name] = r.name
        scope = Scope("subprogram", [(low, high)], name=name)
        self._fill(scope, die, registers.get)
        ret = self._type_ref(die)
        return Subprogram(name, linkage, low, high, self._file(_attr(die, "DW_AT_decl_file")),
                          _attr(die, "DW_AT_decl_line"), ret, scope)

    def _fill(self, scope: Scope, die, register_of) -> None:
        for child in die.iter_children():
            if child.tag == "DW_TAG_formal_parameter":
                scope.variables.append(self._variable(child, True, register_of))
            elif child.tag == "DW_TAG_variable":
                scope.variables.append(self._variable(child, False, register_of))
            elif child.tag in _SCOPE_TAGS:
                sub = Scope(_SCOPE_TAGS[child.tag], self._ranges(child), parent=scope, name=_name(child))
                self._fill(sub, child, register_of)
                scope.children.append(sub)

    def _ranges(self, die) -> list[tuple[int, int]]:
        if "DW_AT_low_pc" in die.attributes:
            low = die.attributes["DW_AT_low_pc"].value
            return [(low, _high_pc(die, low))]
        if "DW_AT_ranges" in die.attributes:
            rl = self.info.range_lists()
            if rl is None:
                raise DwarfReadError("DW_AT_ranges without a .debug_ranges section")
            out, base = [], self.cu_base
            for e in rl.get_range_list_at_offset(die.attributes["DW_AT_ranges"].value):
                if hasattr(e, "base_address"):
                    base = e.base_address
                else:
                    out.append((e.begin_offset + base, e.end_offset + base))
            return out
        return []

    # ------------------------------------------------------------ variables
    def _variable(self, die, is_param: bool, register_of) -> Variable:
        space = None
        if "DW_AT_address_class" in die.attributes:
            space = AddressSpace.from_dwarf(die.attributes["DW_AT_address_class"].value)
        var = Variable(_name(die) or "<anonymous>", self._type_ref(die), is_param,
                       self._file(_attr(die, "DW_AT_decl_file")), _attr(die, "DW_AT_decl_line"), space=space)
        attr = die.attributes.get("DW_AT_location")
        if attr is None:
            var.location = None
            return var
        mem_space = None if space is AddressSpace.REG else space
        parsed = self.locparser.parse_from_attribute(attr, self.cu.header.version, die)
        if isinstance(parsed, list):
            base = self.cu_base
            for entry in parsed:
                if isinstance(entry, BaseAddressEntry):
                    base = entry.base_address
                    continue
                lo, hi = entry.begin_offset, entry.end_offset
                if not getattr(entry, "is_absolute", False):
                    lo, hi = lo + base, hi + base
                loc = self._decode(entry.loc_expr, mem_space, register_of)
                var.ranges.append(LocationRange(lo, hi, loc))
        else:
            var.location = self._decode(parsed.loc_expr, mem_space, register_of)
        return var

    def _decode(self, expr, space, register_of) -> Location:
        return decode(expr, self.exprs, space, self._symbol_at, register_of)

    def _symbol_at(self, address: int) -> tuple[str, int] | None:
        hit = self.assembled.symbol_at(address)
        if hit is not None:
            return hit
        for name, (base, size) in self.global_symbols.items():
            if base <= address < base + max(size, 1):
                return name, address - base
        return None

    def _file(self, index: int | None) -> str | None:
        if index is None:
            return None
        return self.module.files.get(index, f"<file {index}>")

    # ------------------------------------------------------------ types
    def _type_ref(self, die) -> Type | None:
        if "DW_AT_type" not in die.attributes:
            return None
        return self._type(die.get_DIE_from_attribute("DW_AT_type"))

    def _type(self, die) -> Type:
        cached = self._types.get(die.offset)
        if cached is not None:
            return cached
        kind = _TYPE_TAGS.get(die.tag)
        if kind is None:
            raise DwarfReadError(f"DIE at {die.offset:#x} ({die.tag}) is used as a type")
        t = Type(kind, name=_name(die), size=_attr(die, "DW_AT_byte_size"))
        self._types[die.offset] = t  # before recursing: types may be cyclic
        if kind is TypeKind.BASE:
            enc = _attr(die, "DW_AT_encoding")
            t.encoding = Encoding(enc) if enc in Encoding._value2member_map_ else enc
        if kind is TypeKind.VOID:
            t.name = t.name or "void"
        if "DW_AT_type" in die.attributes:
            t.target = self._type(die.get_DIE_from_attribute("DW_AT_type"))
        if kind in (TypeKind.POINTER, TypeKind.REFERENCE):
            ac = _attr(die, "DW_AT_address_class")
            t.space = AddressSpace.from_dwarf(ac) if ac is not None else AddressSpace.GENERIC
            if t.size is None:
                t.size = self.cu.header.address_size
        elif kind is TypeKind.ARRAY:
            dims = []
            for sub in die.iter_children():
                if sub.tag != "DW_TAG_subrange_type":
                    continue
                if "DW_AT_count" in sub.attributes:
                    dims.append(sub.attributes["DW_AT_count"].value)
                elif "DW_AT_upper_bound" in sub.attributes:
                    dims.append(sub.attributes["DW_AT_upper_bound"].value - _attr(sub, "DW_AT_lower_bound", 0) + 1)
                else:
                    dims.append(None)
            t.dims = tuple(dims)
        elif kind in (TypeKind.STRUCT, TypeKind.UNION, TypeKind.CLASS):
            for m in die.iter_children():
                if m.tag in ("DW_TAG_member", "DW_TAG_inheritance") and "DW_AT_type" in m.attributes:
                    t.members.append(Member(_name(m), self._type(m.get_DIE_from_attribute("DW_AT_type")),
                                            self._member_offset(m), _attr(m, "DW_AT_bit_size"),
                                            _attr(m, "DW_AT_data_bit_offset", _attr(m, "DW_AT_bit_offset"))))
        elif kind is TypeKind.ENUM:
            for e in die.iter_children():
                if e.tag == "DW_TAG_enumerator":
                    t.enumerators[_name(e) or "?"] = _attr(e, "DW_AT_const_value")
        return t

    def _member_offset(self, die) -> int:
        attr = die.attributes.get("DW_AT_data_member_location")
        if attr is None:
            return 0
        if isinstance(attr.value, int):
            return attr.value
        ops = self.exprs.parse_expr(list(attr.value))
        if len(ops) == 1 and ops[0].op_name == "DW_OP_plus_uconst":
            return ops[0].args[0]
        raise DwarfReadError(f"member location {[o.op_name for o in ops]} at DIE {die.offset:#x} is not a constant")


def _attr(die, name: str, default=None):
    a = die.attributes.get(name)
    return default if a is None else a.value


def _str(die, name: str) -> str | None:
    v = _attr(die, name)
    return v.decode("utf-8", "replace") if isinstance(v, bytes) else v


def _name(die) -> str | None:
    """DW_AT_name, following DW_AT_specification / DW_AT_abstract_origin
    (out-of-class definitions, inlined copies)."""
    seen = 0
    while die is not None and seen < 8:
        n = _str(die, "DW_AT_name")
        if n is not None:
            return n
        nxt = next((a for a in ("DW_AT_specification", "DW_AT_abstract_origin") if a in die.attributes), None)
        die = die.get_DIE_from_attribute(nxt) if nxt else None
        seen += 1
    return None


def _linkage(die) -> str | None:
    seen = 0
    while die is not None and seen < 8:
        for a in ("DW_AT_linkage_name", "DW_AT_MIPS_linkage_name"):
            n = _str(die, a)
            if n is not None:
                return n
        nxt = next((a for a in ("DW_AT_specification", "DW_AT_abstract_origin") if a in die.attributes), None)
        die = die.get_DIE_from_attribute(nxt) if nxt else None
        seen += 1
    return None


def _high_pc(die, low: int) -> int:
    attr = die.attributes.get("DW_AT_high_pc")
    if attr is None:
        return low
    return attr.value if attr.form == "DW_FORM_addr" else low + attr.value


__all__ = ["Reader", "DwarfReadError", "dwarf_info"]
