"""Our JSON note (`.gpudbg.note` section) read defensively: raw bytes in, a
note whose every value has the shape its users expect out.

The note is advisory (register names, the lane-level exception, kernel
names, embedded PTX and sources): a core without it still debugs at the
machine level. So damage here never refuses the core. The one idea: the
note is checked once, against the schema the writer (snapshot.py,
embedded.py) produces, at the reader's boundary; a value of the wrong type
or out of range is dropped (with the smallest enclosing record: a whole
fault record, one module, one function's register map) and a line is added
to the core's notes saying what was dropped. Everything downstream (the
CoreBackend, `gpudbg core`) can then index the note without guarding every
access. Unknown keys are dropped silently (newer writers may add some).

What it does not do: check that the note agrees with the tables (a pc in
the fault record that no warp holds is the debugger's business), or
recurse into values it does not know.
"""
from __future__ import annotations

import json
import re
from typing import Any, Callable

import numpy as np

U64 = 1 << 64
REG_DTYPES = frozenset(np.dtype(c).name for c in "?bBhHiIlLqQefd")
_GRID_KEY = re.compile(r"[0-9]{1,20}")
_BARRIER_KEY = re.compile(r"[0-9]{1,10}/[0-9]{1,10}")
MAX_NOTE_BYTES = 1 << 30


class _Bad(Exception):
    """A value of the note that does not have its expected shape."""


def _int(v: Any, what: str, lo: int = 0, hi: int = U64) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or not lo <= v < hi:
        raise _Bad(f"{what} is {_show(v)}, not an integer in [{lo}, {hi})")
    return v


def _opt_int(v: Any, what: str, lo: int = 0, hi: int = U64) -> int | None:
    return None if v is None else _int(v, what, lo, hi)


def _str(v: Any, what: str) -> str:
    if not isinstance(v, str):
        raise _Bad(f"{what} is {_show(v)}, not a string")
    return v


def _opt_str(v: Any, what: str) -> str | None:
    return None if v is None else _str(v, what)


def _dict(v: Any, what: str) -> dict:
    if not isinstance(v, dict):
        raise _Bad(f"{what} is {_show(v)}, not an object")
    return v


def _triple(v: Any, what: str) -> list[int] | None:
    if v is None:
        return None
    if not isinstance(v, list) or len(v) != 3:
        raise _Bad(f"{what} is {_show(v)}, not three integers")
    return [_int(x, what, 0, 1 << 32) for x in v]


def _show(v: Any) -> str:
    text = type(v).__name__ if isinstance(v, (list, dict)) else repr(v)
    return text if len(text) <= 40 else text[:37] + "..."


# ---------------------------------------------------------------- records
_FAULT_FIELDS: dict[str, Callable[[Any, str], Any]] = {
    "kind": _str, "code": lambda v, w: _int(v, w, 0, 1 << 32), "written": lambda v, w: _opt_int(v, w, 0, 1 << 32),
    "hang": _opt_str, "title": _opt_str, "message": _str, "kernel": _str, "function": _str,
    "pc": _int, "instruction": _str, "ptx_file": _opt_str, "ptx_line": _opt_int,
    "source_file": _opt_str, "source_line": _opt_int, "block": _triple, "thread": _triple,
    "sm": _opt_int, "warp": _opt_int, "lane": _opt_int, "address": _opt_int,
    "access_size": _opt_int, "space": _opt_str, "grid_id": _opt_int,
}


def _fault(v: Any) -> dict | None:
    if v is None:
        return None
    d = _dict(v, "fault")
    return {k: check(d.get(k), f"fault {k}") for k, check in _FAULT_FIELDS.items()}


def _register_entry(e: Any, what: str) -> list:
    if not isinstance(e, list) or len(e) != 5:
        raise _Bad(f"{what}: entry {_show(e)} is not [name, dtype, class, first, words]")
    name, dtype, cls, first, words = e
    _str(name, f"{what} name")
    if not isinstance(dtype, str) or dtype not in REG_DTYPES:
        raise _Bad(f"{what}: {_show(dtype)} is not a register dtype")
    if not isinstance(cls, str) or cls not in ("R", "P"):
        raise _Bad(f"{what}: register class {_show(cls)} is not R or P")
    return [name, dtype, cls, _int(first, f"{what} first", -(1 << 31), 1 << 31),
            _int(words, f"{what} words", 1, 1 << 8)]   # first < 0: not in the dumped words


def _registers(v: Any, dropped: list[str]) -> dict:
    out: dict = {}
    for handle, functions in _dict(v, "registers").items():
        for function, entries in (functions.items() if isinstance(functions, dict) else [(None, functions)]):
            what = f"module {handle}"
            try:
                if function is None or not isinstance(entries, list):
                    raise _Bad(f"{what}: the map is {_show(entries)}")
                out.setdefault(handle, {})[function] = [_register_entry(e, what) for e in entries]
            except _Bad as e:
                dropped.append(f"register map of {function} is damaged ({e})")
    return out


_MODULE_FIELDS: dict[str, Callable[[Any, str], Any]] = {
    "name": _opt_str, "fingerprint": _opt_str, "ptx": _opt_str, "ptx_missing": _opt_str,
}


def _module(v: Any, what: str) -> dict:
    d = _dict(v, what)
    out = {k: check(d.get(k), f"{what} {k}") for k, check in _MODULE_FIELDS.items() if d.get(k) is not None}
    symbols = _dict(d.get("symbols", {}), f"{what} symbols")
    out["symbols"] = {_str(k, f"{what} symbol"): _int(a, f"{what} symbol {k}") for k, a in symbols.items()}
    sources = _dict(d.get("sources", {}), f"{what} sources")
    out["sources"] = {k: _str(t, f"{what} source {k}") for k, t in sources.items()}
    return out


def _modules(v: Any, dropped: list[str]) -> dict:
    out = {}
    for handle, entry in _dict(v, "modules").items():
        try:
            if not _GRID_KEY.fullmatch(handle) or int(handle) >= U64:
                raise _Bad(f"module key {_show(handle)} is not a module handle")
            out[handle] = _module(entry, f"module {handle}")
        except _Bad as e:
            dropped.append(str(e))
    return out


def _grids(v: Any, dropped: list[str]) -> dict:
    out = {}
    for gid, entry in _dict(v, "grids").items():
        try:
            if not _GRID_KEY.fullmatch(gid):
                raise _Bad(f"grid key {_show(gid)} is not a grid id")
            d = _dict(entry, f"grid {gid}")
            out[gid] = {"kernel": _str(d.get("kernel", ""), f"grid {gid} kernel"),
                        "dynamic_shared": _int(d.get("dynamic_shared", 0), f"grid {gid} dynamic_shared", 0, 1 << 32)}
        except _Bad as e:
            dropped.append(str(e))
    return out


def _at_barrier(v: Any, dropped: list[str]) -> dict:
    out = {}
    for key, mask in _dict(v, "at_barrier").items():
        try:
            if not _BARRIER_KEY.fullmatch(key):
                raise _Bad(f"at_barrier key {_show(key)} is not 'sm/warp'")
            out[key] = _int(mask, f"at_barrier {key}")
        except _Bad as e:
            dropped.append(str(e))
    return out


_TOP: dict[str, Callable[[Any, list[str]], Any]] = {
    "generator": lambda v, _d: _str(v, "generator"),
    "flags": lambda v, _d: _int(v, "flags", 0, 1 << 32),
    "device": lambda v, _d: {"global_memory": _int(_dict(v, "device").get("global_memory", 0),
                                                   "device global_memory")},
    "fault": lambda v, _d: _fault(v),
    "grids": _grids,
    "at_barrier": _at_barrier,
    "registers": _registers,
    "modules": _modules,
}


def read_note(raw: bytes, where: str, notes: list[str]) -> dict:
    """The checked note of section `where` ({} when unusable); what was
    dropped is appended to `notes`."""
    if len(raw) > MAX_NOTE_BYTES:
        notes.append(f"{where} is {len(raw)} bytes, over the {MAX_NOTE_BYTES}-byte limit; ignored")
        return {}
    try:
        doc = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as e:
        notes.append(f"{where} is not UTF-8 text (byte {e.start}); ignored")
        return {}
    except RecursionError:
        notes.append(f"{where} is JSON nested too deeply to read; ignored")
        return {}
    except ValueError as e:   # JSONDecodeError, or an integer over int()'s digit limit
        notes.append(f"{where} is not valid JSON ({str(e)[:120]}); ignored")
        return {}
    if not isinstance(doc, dict):
        notes.append(f"{where} is JSON but not an object; ignored")
        return {}
    out: dict = {}
    dropped: list[str] = []
    for key, check in _TOP.items():
        if key not in doc:
            continue
        try:
            out[key] = check(doc[key], dropped)
        except _Bad as e:
            dropped.append(f"fault record of the note is damaged ({e})" if key == "fault" else str(e))
    notes += [f"{where}: {d}; that part of the note is ignored" for d in dropped]
    return out
