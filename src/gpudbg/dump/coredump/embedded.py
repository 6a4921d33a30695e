"""The module PTX a core carries in our note, so a debugger opening the core
rebuilds the simulator Program the live run executed and gets source
lines, DWARF variables and disassembly back.

The one idea: a Program is a pure function of (PTX text, global-variable
addresses, code base), and the code base is the module handle the core
already records; so the note keeps, per module handle, the text, the
symbol addresses and a fingerprint of the translated code (function, PTX
line and text of every instruction). The rebuilt Program is accepted only
if its fingerprint matches, so a PTX file that changed on disk after the
run can never put wrong lines under the dumped pcs, and only if its debug
sections (which the fingerprint does not cover) still load.

Where the text comes from: the simulator does not keep PTX text after
parsing, so it is taken from `loaded.ptx_text` when the loading layer
recorded it, else from the file the module was parsed from
(`mcModuleLoad`), if it is still readable and still the same code.
Source files (CUDA C++) are embedded when readable, up to the last line
the line table names. Not embedded: anything of modules without text.
"""
from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

MAX_SOURCE_LINES = 100_000


def code_fingerprint(program: Any) -> str:
    """What must be equal for a rebuilt Program to have the same pcs."""
    h = hashlib.sha256()
    for c in program.code:
        h.update(f"{c.function}\x1f{c.inst.loc.line}\x1f{c.inst.text}\x1e".encode())
    return h.hexdigest()


def _text_matches(text: str, program: Any) -> bool:
    """Cheap check at dump time: every instruction's first token is on the
    line the program says it came from."""
    lines = text.splitlines()
    for c in program.code:
        n = c.inst.loc.line
        if not 1 <= n <= len(lines):
            return False
        head = c.inst.text.split(" ", 1)[0]
        if head not in " ".join(lines[n - 1].split()):
            return False
    return True


def ptx_text_of(loaded: Any) -> tuple[str | None, str]:
    """(PTX text, "") of a loaded module, or (None, why it is not available)."""
    program = loaded.program
    text = getattr(loaded, "ptx_text", None)
    if isinstance(text, str) and _text_matches(text, program):
        return text, ""
    name = program.module.filename or ""
    if name.startswith("<") or not name:
        return None, f"module {name or '(unnamed)'} was loaded from memory and its PTX text was not kept"
    try:
        text = Path(name).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        why = getattr(e, "strerror", None) or type(e).__name__
        return None, f"the PTX text of {name} was not kept at load and the file is not readable ({why})"
    if not _text_matches(text, program):
        return None, f"PTX file {name} no longer matches the loaded code"
    return text, ""


def _source_text(file: str, last_line: int) -> str | None:
    try:
        return Path(file).read_text(errors="replace")
    except (OSError, ValueError):
        pass
    from gpudbg.compiler import source_line   # sources compiled in this process
    out = []
    for n in range(1, min(last_line, MAX_SOURCE_LINES) + 1):
        line = source_line(file, n)
        if line is None:
            break
        out.append(line)
    return "\n".join(out) + "\n" if out else None


def _sources(program: Any) -> dict[str, str]:
    files = dict(program.module.files)
    last: dict[int, int] = {}
    for c in program.code:
        li = c.inst.line_info
        while li is not None:
            last[li.file_index] = max(last.get(li.file_index, 0), li.line)
            li = li.inlined_at
    out = {}
    for idx, file in files.items():
        if idx in last:
            text = _source_text(file, last[idx] + 20)
            if text is not None:
                out[file] = text
    return out


def module_note(loaded: Any) -> dict:
    """The note entry of one module (keyed by its handle by the caller)."""
    program = loaded.program
    text, why = ptx_text_of(loaded)
    entry: dict = {"name": program.module.filename, "symbols": dict(program.symbols),
                   "fingerprint": code_fingerprint(program)}
    if text is None:
        entry["ptx_missing"] = why
        return entry
    entry["ptx"] = text
    entry["sources"] = _sources(program)
    return entry


def rebuild_program(entry: dict, handle: int) -> Any:
    """The simulator Program of a note entry at code base `handle`; raises
    ValueError saying why when the entry has no usable PTX."""
    from gpudbg.ptx import PTXParseError, parse
    from gpudbg.sim.program import LoadError, Program
    text = entry.get("ptx")
    if not isinstance(text, str):
        raise ValueError(entry.get("ptx_missing") or "the core carries no PTX for this module")
    name = str(entry.get("name") or f"module_0x{handle:x}.ptx")
    try:
        module = parse(text, name)
        symbols = {str(k): int(v) for k, v in dict(entry.get("symbols") or {}).items()}
        program = Program(module, symbols, code_base=handle)
    except (PTXParseError, LoadError, TypeError, ValueError) as e:
        raise ValueError(f"embedded PTX {name} does not load: {e}") from None
    want = entry.get("fingerprint")
    if want is not None and code_fingerprint(program) != want:
        raise ValueError(f"embedded PTX {name} does not match the code that ran (fingerprint differs)")
    from gpudbg.debug.dwarf.api import DebugInfo
    try:   # the fingerprint covers the code, not the DWARF sections: a damaged core may differ there
        DebugInfo(program)
    except ValueError as e:   # DwarfReadError, DwarfAssemblyError
        raise ValueError(f"the debug sections of embedded PTX {name} do not load: {e}") from None
    return program
