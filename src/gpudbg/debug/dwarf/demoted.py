"""Variables NVVM "demoted" out of the debug information: `__shared__`
arrays declared inside a kernel.

NVRTC turns a kernel-local `__shared__ int tile[256]` into a module-level
`.shared .b8 _ZZ6rotateE4tile[1024]` ("// _ZZ6rotateE4tile has been
demoted") and emits no DWARF for it, so a debugger would answer "No
symbol". The one idea: the PTX symbol's Itanium local-static mangling
(`_ZZ <function> E <length> <name>`) names both the function and the
variable, and its byte size is exact; the element type comes from the
variable's declaration in the function's source (`__shared__ T name[...]`)
resolved against the compile unit's DWARF types. Without a readable
source, or for a type the DWARF does not name, the variable is an honest
`unsigned char[size]`, never a guess.
"""
from __future__ import annotations

import re
from typing import Callable

from gpudbg.ptx.types import PTX_TYPES

from .model import AddressSpace, Encoding, Location, LocationKind, Subprogram, Type, TypeKind, Variable

_LOCAL = re.compile(r"(\d+)")

# C base types a declaration may spell when the unit's DWARF has no DIE for
# them (nothing else used the type): size in bytes and encoding, as CUDA's
# LP64 data model has them.
_E = Encoding
C_BASE_TYPES: dict[str, tuple[int, Encoding]] = {
    "char": (1, _E.SIGNED_CHAR), "signed char": (1, _E.SIGNED_CHAR), "unsigned char": (1, _E.UNSIGNED_CHAR),
    "short": (2, _E.SIGNED), "unsigned short": (2, _E.UNSIGNED), "int": (4, _E.SIGNED),
    "unsigned int": (4, _E.UNSIGNED), "unsigned": (4, _E.UNSIGNED), "long": (8, _E.SIGNED),
    "unsigned long": (8, _E.UNSIGNED), "long long": (8, _E.SIGNED), "unsigned long long": (8, _E.UNSIGNED),
    "float": (4, _E.FLOAT), "double": (8, _E.FLOAT), "bool": (1, _E.BOOLEAN),
    "int8_t": (1, _E.SIGNED_CHAR), "uint8_t": (1, _E.UNSIGNED_CHAR), "int16_t": (2, _E.SIGNED),
    "uint16_t": (2, _E.UNSIGNED), "int32_t": (4, _E.SIGNED), "uint32_t": (4, _E.UNSIGNED),
    "int64_t": (8, _E.SIGNED), "uint64_t": (8, _E.UNSIGNED),
}


def _prefix(sp: Subprogram) -> str:
    """How the local statics of `sp` are mangled: `_ZZ<encoding>E`."""
    link = sp.linkage_name
    enc = link[2:] if link.startswith("_Z") else f"{len(link)}{link}"
    return f"_ZZ{enc}E"


def _local_name(symbol: str, prefix: str) -> str | None:
    if not symbol.startswith(prefix):
        return None
    rest = symbol[len(prefix):]
    m = _LOCAL.match(rest)
    if m is None:
        return None
    n = int(m.group(1))
    name = rest[m.end():m.end() + n]
    return name if len(name) == n and name.isidentifier() else None


def _declared_type(name: str, sp: Subprogram, source_line: Callable[[str, int], str | None],
                   last_line: int) -> str | None:
    """The element type spelled in `__shared__ T name[...]` between the
    function's declaration and its last line."""
    if sp.decl_file is None or sp.decl_line is None:
        return None
    pat = re.compile(r"__shared__\s+(?:volatile\s+)?([A-Za-z_][\w\s]*?)\s+" + re.escape(name) + r"\s*\[")
    for line in range(sp.decl_line, max(last_line, sp.decl_line) + 1):
        text = source_line(sp.decl_file, line)
        if text is None:
            return None
        m = pat.search(text)
        if m:
            return " ".join(m.group(1).split())
    return None


def _bytes_type() -> Type:
    return Type(TypeKind.BASE, "unsigned char", 1, Encoding.UNSIGNED_CHAR)


def demoted_shared(sp: Subprogram, shared_vars: dict, types: dict[str, Type],
                   source_line: Callable[[str, int], str | None], last_line: int) -> list[Variable]:
    """Variables for the demoted `__shared__` arrays of one function."""
    out = []
    prefix = _prefix(sp)
    for symbol, decl in shared_vars.items():
        name = _local_name(symbol, prefix)
        if name is None or decl.type not in PTX_TYPES:
            continue
        size = PTX_TYPES[decl.type].size * (decl.vector or 1) * (decl.element_count or 1)
        spelled = _declared_type(name, sp, source_line, last_line)
        elem = types.get(spelled) if spelled else None
        if elem is None and spelled in C_BASE_TYPES:
            elem = Type(TypeKind.BASE, spelled, *C_BASE_TYPES[spelled])
        if elem is None or not elem.byte_size or size % elem.byte_size:
            elem = _bytes_type()
        t = Type(TypeKind.ARRAY, target=elem, dims=(size // elem.byte_size,))
        loc = Location(LocationKind.MEMORY, space=AddressSpace.SHARED, symbol=symbol)
        out.append(Variable(name, t, False, sp.decl_file, sp.decl_line, loc, space=AddressSpace.SHARED))
    return out
