"""rbreak REGEX: a breakpoint on every loaded function whose name matches.

The one idea: gdb's rbreak is `break` repeated over the symbol table, so
this is `break NAME` (the same breakpoint, resolution and listing) for
each kernel and device function with code in the loaded modules whose
source name (the C++ qualified name, `helper`) or PTX name (`_Z6helperi`)
the regular expression matches (Python `re.search`, as gdb searches),
each announced with the function's signature line. `rbreak -t REGEX`
(and `trbreak`) make them temporary, so a kernel can be caught once by
pattern. Like gdb, it sees only code already loaded: before the program
has loaded a module there is nothing to match, and it says so.
"""
from __future__ import annotations

import re
from typing import Any

from .commands import Command, CommandError


def register(dbg: Any) -> None:
    dbg.add(Command("rbreak", lambda rest: _rbreak(dbg, rest, temporary=False),
                    "rbreak [-t] REGEX: a breakpoint (-t: temporary) on every loaded kernel and device "
                    "function matching REGEX"))
    dbg.add(Command("trbreak", lambda rest: _rbreak(dbg, rest, temporary=True),
                    "trbreak REGEX: temporary breakpoints on every loaded function matching REGEX"))


def matching_functions(dbg: Any, pattern: "re.Pattern[str]") -> list[tuple[str, Any]]:
    """(PTX name, program) of each loaded function with code that matches,
    in load order, each name once."""
    from gpudbg.debug.breakpoints import qualified_name
    from .frames import safe
    out: dict[str, Any] = {}
    for dev in dbg.devices():
        for program in safe(dbg.session.programs, dev, default=[]):
            for name, info in program.functions.items():
                if info.builtin is not None or info.end_pc <= info.entry_pc or name in out:
                    continue
                source = qualified_name(name) or name
                if pattern.search(source) or pattern.search(name):
                    out[name] = program
    return list(out.items())


def signature(dbg: Any, name: str, program: Any) -> str:
    """gdb's line under each rbreak breakpoint: `int helper(int, float);`
    from the DWARF (-G), else the function's name and kind."""
    from .breakpoints import source_name
    from .frames import safe
    sp = safe(lambda: dbg.session.debug_info(program).function(name))
    if sp is None:
        fn = program.module.functions.get(name)
        kind = "kernel" if fn is not None and fn.kind == "entry" else "device function"
        return f"{source_name(name)}; ({kind} {name})"
    ret = str(sp.return_type) if sp.return_type is not None else "void"
    params = ", ".join(str(p.type) if p.type is not None else "?" for p in sp.parameters)
    return f"{ret} {sp.name}({params});"


def _rbreak(dbg: Any, rest: str, temporary: bool) -> None:
    from .breakpoints import announce, create_breakpoint
    text = rest.strip()
    if text.startswith("-t ") or text == "-t":
        temporary, text = True, text[2:].strip()
    if not text:
        raise CommandError("rbreak needs a regular expression: rbreak [-t] REGEX")
    if not dbg.can_execute:
        raise CommandError("Breakpoints cannot be set in a GPU coredump: the program is not being run.")
    try:
        pattern = re.compile(text)
    except re.error as e:
        raise CommandError(f"Invalid regexp: {e}") from None
    found = matching_functions(dbg, pattern)
    if not found:
        print(f'No loaded function matches "{text}" (rbreak sees the code loaded so far; '
              f"run to a stop once the module is loaded, or use `break NAME` for a pending breakpoint).")
        return
    for name, program in found:
        bp = create_breakpoint(dbg, name, temporary)
        print(announce(dbg, bp))
        print(signature(dbg, name, program))
