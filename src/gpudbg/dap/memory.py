"""readMemory, writeMemory and disassemble for the focused lane.

The one idea: a memoryReference is an address with an optional state
space (`0x7000...` generic or global, `shared:0x10`, `local:0x8`), read
and written through the lane's LaneContext like the CLI's `x` and `set
var`, so shared and local memory are those of the lane the editor shows.
A read that runs into unmapped memory returns the readable prefix and
counts the rest as `unreadableBytes`, as DAP asks, instead of failing.
Disassembly is the PTX the simulator executes, one instruction per
16-byte code address, with the source line of each.
"""
from __future__ import annotations

import base64
import binascii
from typing import Any

from .protocol import DapError, int_arg

CHUNK = 4096
MAX_READ = 1 << 24


def parse_reference(ref: Any) -> tuple[Any, int]:
    from gpudbg.debug.backend import MemorySpace
    if not isinstance(ref, str) or not ref.strip():
        raise DapError(f"memoryReference {ref!r} is not an address.")
    text = ref.strip()
    space = MemorySpace.GENERIC
    if ":" in text:
        name, _, text = text.partition(":")
        try:
            space = MemorySpace(name.strip().lower())
        except ValueError:
            raise DapError(f"memoryReference {ref!r}: unknown memory space {name!r} "
                           f"(one of {', '.join(m.value for m in MemorySpace)}).") from None
    try:
        address = int(text, 0)
    except ValueError:
        raise DapError(f"memoryReference {ref!r} is not an address (0x... or SPACE:0x...).") from None
    if address < 0:
        raise DapError(f"memoryReference {ref!r} is negative.")
    return space, address


def _ctx(engine: Any):
    from gpudbg.cli.debugger.context import LaneContext
    dbg = engine.require_stopped()
    f = dbg.focus
    if f is None:
        raise DapError("No CUDA focus: memory is read as the focused lane sees it.")
    return LaneContext(dbg.session, f.dev, f.sm, f.wp, f.ln, dbg.store)


def read_memory(engine: Any, args: dict) -> dict:
    from .engine import _debug_errors
    space, base = parse_reference(args.get("memoryReference"))
    address = base + int_arg(args, "offset")
    count = int_arg(args, "count")
    if count < 0 or count > MAX_READ:
        raise DapError(f"readMemory: count {count} is not between 0 and {MAX_READ}.")
    ctx = _ctx(engine)
    data = bytearray()
    pos = address
    while pos < address + count:
        n = min(CHUNK, address + count - pos)
        try:
            data += ctx.read_memory(space, pos, n)
        except _debug_errors():
            if n == 1:
                break
            lo = 0                      # find the readable prefix of this chunk
            hi = n
            while hi - lo > 1:
                mid = (lo + hi) // 2
                try:
                    ctx.read_memory(space, pos, mid)
                    lo = mid
                except _debug_errors():
                    hi = mid
            if lo:
                data += ctx.read_memory(space, pos, lo)
            break
        pos += n
    body: dict[str, Any] = {"address": f"0x{address:x}", "data": base64.b64encode(bytes(data)).decode("ascii")}
    if len(data) < count:
        body["unreadableBytes"] = count - len(data)
    return body


def write_memory(engine: Any, args: dict) -> dict:
    from .engine import _debug_errors, error_text
    if engine.core:
        raise DapError("writeMemory: a GPU coredump is read-only.")
    space, base = parse_reference(args.get("memoryReference"))
    address = base + int_arg(args, "offset")
    try:
        data = base64.b64decode(args.get("data") or "", validate=True)
    except (binascii.Error, ValueError, TypeError) as e:
        raise DapError(f"writeMemory: data is not base64: {e}") from None
    ctx = _ctx(engine)
    try:
        ctx.write_memory(space, address, data)
    except _debug_errors() as e:
        raise DapError(f"writeMemory at 0x{address:x} ({space.value}): {error_text(e)}") from None
    return {"offset": 0, "bytesWritten": len(data)}


def disassemble(engine: Any, sources: Any, args: dict) -> dict:
    from gpudbg.cli.debugger.frames import INSTRUCTION_BYTES, safe, source_of
    dbg = engine.require_stopped()
    _, base = parse_reference(args.get("memoryReference"))
    count = int_arg(args, "instructionCount")
    if count < 0 or count > 100_000:
        raise DapError(f"disassemble: instructionCount {count} is not between 0 and 100000.")
    address = base + int_arg(args, "offset")
    first = address + int_arg(args, "instructionOffset") * INSTRUCTION_BYTES
    dev = dbg.focus.dev if dbg.focus is not None else 0
    s = dbg.session
    program = safe(s.program_at, dev, address)
    out = []
    last_file = None
    for i in range(count):
        a = first + i * INSTRUCTION_BYTES
        pc = program.pc_of_address(a) if program is not None and a >= 0 else None
        if pc is None:
            out.append({"address": f"0x{max(a, 0):x}", "instruction": "??", "presentationHint": "invalid"})
            continue
        inst = program.code[pc].inst
        fn = safe(s.function_at, dev, a)
        entry: dict[str, Any] = {"address": f"0x{a:x}", "instruction": inst.text}
        if fn:
            entry["symbol"] = f"{fn[0]}+{fn[1]}"
        where = source_of(s, dev, a)
        if where is not None:
            if where[0] != last_file:
                src = sources.describe(where[0])
                if src is not None:
                    entry["location"] = src
                last_file = where[0]
            entry["line"] = engine.line_out(where[1])
        out.append(entry)
    return {"instructions": out}
