"""`info cuda managed`: the program's managed memory, as cuda-gdb lists it.

The one idea: managed memory has one address for host and device, so what
cuda-gdb shows (`Static managed variables on device 0 are:` and each
`__managed__` variable's value) is read once from the unified memory:
each loaded module's `.global .attribute(.managed)` variables, typed by
the DWARF of a `-G` module (structs and arrays print as `print` prints
them) or else by their PTX type (untyped .b8 data as its bytes). Beyond cuda-gdb, the dynamic managed
allocations (mcMallocManaged / cudaMallocManaged) are listed after them
with address and size, since the simulator knows them all.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from gpudbg.ptx.types import PTX_TYPES

from .frames import safe


def _dwarf_globals(dbg: Any, program: Any) -> dict[str, Any]:
    di = safe(dbg.session.debug_info, program)
    out: dict[str, Any] = {}
    for u in getattr(di, "units", []) or []:
        for v in u.globals:
            loc = v.location_at(0) if hasattr(v, "location_at") else None
            sym = getattr(loc, "symbol", None) if loc is not None else None
            out[sym or v.name] = v
    return out


def _ptx_value(decl: Any, raw: bytes) -> str:
    t = PTX_TYPES.get(decl.type)
    if t is None or t.dtype.kind == "V":
        return "{" + ", ".join(f"0x{b:02x}" for b in raw) + "}"
    x = np.frombuffer(raw[:len(raw) - len(raw) % t.size], dtype=t.dtype.newbyteorder("<"))
    if t.dtype == np.bool_:
        items = ["true" if bool(a) else "false" for a in x]
    elif t.kind == "f":
        items = [f"{float(a):.9g}" for a in x]
    elif t.kind == "b":           # untyped bits (NVVM's .b8 arrays): bytes, as the PTX declares them
        items = [f"0x{int(a):0{2 * t.size}x}" for a in x]
    else:
        items = [str(int(a)) for a in x]
    return items[0] if len(items) == 1 and not decl.dims else "{" + ", ".join(items) + "}"


def _value_text(dbg: Any, dev: int, program: Any, decl: Any, dwarf: Any) -> str:
    from gpudbg.debug.backend import MemorySpace
    address = program.symbols[decl.name]
    t = PTX_TYPES.get(decl.type)
    size = (t.size if t is not None else 1) * (decl.vector or 1) * (decl.element_count or 1)
    vtype = getattr(dwarf, "type", None)
    if vtype is not None and vtype.byte_size:
        size = vtype.byte_size
    from .debugger import _errors
    try:
        raw = dbg.session.read_memory(dev, MemorySpace.GLOBAL, address, size)
    except _errors() as e:      # one unreadable variable does not hide the others
        return f"<error: {getattr(e, 'message', None) or e}>"
    if vtype is not None and vtype.byte_size:
        from .formatting import format_value
        from .inspection import eval_context
        from .values import Value
        return format_value(Value(vtype, raw, address=address, space=MemorySpace.GLOBAL), None,
                            eval_context(dbg))
    return _ptx_value(decl, raw)


def info_managed(dbg: Any) -> str:
    from gpudbg.debug.backend import RegionKind
    f = dbg.focus
    where = f"device {f.dev}" if f is not None else "host"
    lines = [f"Static managed variables on {where} are:"]
    static: set[int] = set()
    for dev in dbg.devices():
        for program in safe(dbg.session.programs, dev, default=[]):
            dwarf = None
            for decl in program.module.globals.values():
                if not decl.managed or decl.name not in program.symbols:
                    continue
                if dwarf is None:
                    dwarf = _dwarf_globals(dbg, program)
                var = dwarf.get(decl.name)
                name = getattr(var, "name", None) or decl.display_name or decl.name
                static.add(program.symbols[decl.name])
                lines.append(f"{name} = {_value_text(dbg, dev, program, decl, var)}")
    if len(lines) == 1:
        lines.append("(none)")
    dynamic = [(dev, r) for dev in dbg.devices() for r in dbg.session.allocations(dev)
               if r.kind is RegionKind.MANAGED and r.base not in static]
    if dynamic:
        lines.append("Managed allocations are:")
        for dev, r in dynamic:
            lines.append(f"  0x{r.base:x} ({r.size} bytes) on device {dev}")
    return "\n".join(lines)
