"""A program's compiled native form on disk, whole: the object code and
the plans that say where it attaches, so that a warm load rebuilds a
program's segments and regions from the cache entry alone, without
planning, emitting LLVM IR or running LLVM.

The one idea: the entry is keyed by what the code depends on, never by
the IR (which a warm load does not produce): the program's key
(engine.program_key: instructions, registers, declarations, the LLVM
version and the host CPU; with the variant and the symbol table the
emission started from), the entry format, and the code generator itself,
i.e. the source of every package whose behaviour the emitted code or the
plans depend on (generator_digest: hashed once per process, so a gpudbg
whose lowerings changed never loads an older gpudbg's code). The payload
is a JSON header (format, the plans as their dataclass fields, the
function names, the environment's symbol table and the environment
entries the code reads) followed by the object bytes; code_cache.py keeps
it (checksummed, replaced atomically, bounded).

What it deliberately does not do: trust a payload it cannot read back. A
header that does not parse, names another format or describes plans of
another shape is a miss, and the entry is removed, exactly like a damaged
file; the program is then compiled again.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import struct
import threading
from dataclasses import dataclass
from pathlib import Path

FORMAT = 2      # 2: tuples in plan fields are tagged (if_branches)
# the packages (under gpudbg/) whose source decides the emitted code and the plans
GENERATOR_SOURCES = ("sim/native", "sim/ops", "sim/arith", "sim/memory", "ptx", "sim/program.py",
                     "sim/instrument.py")    # the plans' tool event classes (instruction_events)
_LEN = struct.Struct("<I")       # header length, before the header


@dataclass
class Stored:
    """What a warm load needs besides the object code."""

    plans: list                  # segments.SegmentPlan and regions.RegionPlan, in function order
    names: list[str]             # each plan's function symbol in the object
    symbols: list[tuple[str, str]]   # the environment's symbol table after emission
    env_used: set[int]           # environment entries the code reads (environment.ENTRIES)


_digest_lock = threading.Lock()
_digest: list[str] = []


def source_digest(root: Path, sources: tuple[str, ...]) -> str:
    """sha256 of the Python files named by `sources` (files, or folders
    taken whole) under `root`: their paths and contents."""
    h = hashlib.sha256()
    for rel in sources:
        p = root / rel
        for f in sorted(p.rglob("*.py")) if p.is_dir() else [p]:
            h.update(f.relative_to(root).as_posix().encode() + b"\0")
            h.update(f.read_bytes())
            h.update(b"\0")
    return h.hexdigest()


def generator_digest() -> str:
    """The code generator's source digest (GENERATOR_SOURCES), once per process."""
    with _digest_lock:
        if not _digest:
            _digest.append(source_digest(Path(__file__).resolve().parents[2], GENERATOR_SOURCES))
        return _digest[0]


def disk_key(program_key: str) -> str:
    """The cache key (64 hex digits) of a program key's entry."""
    h = hashlib.sha256(f"gpudbg native plan store {FORMAT}\0".encode())
    h.update(generator_digest().encode() + b"\0")
    h.update(program_key.encode())
    return h.hexdigest()


# ------------------------------------------------------------ encoding

def _plan_classes() -> dict[str, type]:
    from gpudbg.sim.native.regions import RegionPlan
    from gpudbg.sim.native.segments import SegmentPlan
    return {"segment": SegmentPlan, "region": RegionPlan}


def _value(v):
    """A plan field as JSON: sets and int-keyed dicts tagged."""
    if isinstance(v, (set, frozenset)):
        return {"set": sorted(v)}
    if isinstance(v, dict):
        return {"dict": sorted([k, _value(x)] for k, x in v.items())}
    if isinstance(v, tuple):
        return {"tuple": [_value(x) for x in v]}
    if isinstance(v, list):
        return [_value(x) for x in v]
    if v is None or isinstance(v, (bool, int, str)):
        return v
    raise TypeError(f"plan field value {v!r} cannot be stored")


def _unvalue(v):
    if isinstance(v, dict):
        if set(v) == {"set"}:
            return set(v["set"])
        if set(v) == {"dict"}:
            return {k: _unvalue(x) for k, x in v["dict"]}
        if set(v) == {"tuple"}:
            return tuple(_unvalue(x) for x in v["tuple"])
        raise ValueError("an untagged object in a plan field")
    if isinstance(v, list):
        return [_unvalue(x) for x in v]
    return v


def _encode_plan(plan) -> dict:
    kinds = {cls: kind for kind, cls in _plan_classes().items()}
    kind = kinds.get(type(plan))
    if kind is None:
        raise TypeError(f"{type(plan).__name__} is not a segment or region plan")
    return {"kind": kind, "fields": {f.name: _value(getattr(plan, f.name))
                                     for f in dataclasses.fields(plan)}}


def _decode_plan(d: dict):
    cls = _plan_classes()[d["kind"]]
    fields = d["fields"]
    if set(fields) != {f.name for f in dataclasses.fields(cls)}:
        raise ValueError(f"a stored {d['kind']} plan of another shape")
    return cls(**{k: _unvalue(v) for k, v in fields.items()})


def pack(stored: Stored, obj: bytes) -> bytes:
    """The payload of an entry: header length, JSON header, object code."""
    if len(stored.plans) != len(stored.names):
        raise ValueError("one function name per plan")
    header = json.dumps({
        "format": FORMAT,
        "plans": [_encode_plan(p) for p in stored.plans],
        "names": list(stored.names),
        "symbols": [list(s) for s in stored.symbols],
        "env_used": sorted(stored.env_used),
        "object_bytes": len(obj),
    }, separators=(",", ":")).encode()
    return _LEN.pack(len(header)) + header + obj


def unpack(payload: bytes) -> tuple[Stored, bytes] | None:
    """(what was stored, object code) from a payload; None if it is not
    a whole payload of this format."""
    try:
        if len(payload) < _LEN.size:
            return None
        (n,) = _LEN.unpack_from(payload)
        start = _LEN.size + n
        head = json.loads(payload[_LEN.size:start].decode())
        obj = payload[start:]
        if head["format"] != FORMAT or head["object_bytes"] != len(obj):
            return None
        plans = [_decode_plan(p) for p in head["plans"]]
        names = [str(x) for x in head["names"]]
        symbols = [(str(k), str(name)) for k, name in head["symbols"]]
        env_used = {int(i) for i in head["env_used"]}
        if len(plans) != len(names):
            return None
    except (ValueError, KeyError, TypeError, UnicodeDecodeError, struct.error):
        return None
    return Stored(plans, names, symbols, env_used), obj


def load(key: str) -> tuple[Stored, bytes] | None:
    """The entry of a disk key in the current cache, or None (absent,
    damaged, or of another format: such an entry is removed)."""
    from gpudbg.sim.native import code_cache
    payload = code_cache.load(key)
    if payload is None:
        return None
    got = unpack(payload)
    if got is None:
        code_cache.discard(key)
    return got


def store(key: str, stored: Stored, obj: bytes) -> None:
    """Keep the entry (never fails: see code_cache.store)."""
    from gpudbg.sim.native import code_cache
    code_cache.store(key, pack(stored, obj))
