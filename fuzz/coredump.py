"""Fuzz target: GPU coredumps (`.nvcudmp`) through `gpudbg core`.

Seeds are cores gpudbg writes for faulting and hanging kernels
(fuzz/_dumps.py). Mutations work at three levels: bytes (flips,
truncation, deletions, duplications), the ELF section table (a field of a
section header set to an odd value, two headers swapped, a section's type
changed to another CUDA section type) and our JSON note (a value replaced
by a wrong type, a huge or negative number, deep nesting; a key dropped).
Each input goes through exactly what `gpudbg core FILE --batch` does, with
the state commands a user types first (info cuda, bt, info registers,
print, x, list, disassemble): the reader may only refuse the file with its
own error (CoredumpError, reported as one line with exit status 2); every
other exception that escapes is a finding.

`run(seconds, seed)` returns the counts (see fuzz/_files.py);
`python -m fuzz.coredump --seed S --input N --write FILE` rebuilds one input.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import random
import struct
import tempfile

from fuzz import _files as F
from fuzz._dumps import gpudbg_coredumps

TARGET = "coredump"
COMMANDS = ("info cuda kernels", "info cuda devices", "info cuda threads", "bt", "info registers",
            "print $pc", "print tile[1]", "print *out@2", "x/4xw $pc", "list", "disassemble",
            "info cuda lanes", "cuda thread (1,0,0)", "info locals", "print in[0]")
_SHDR = struct.Struct("<IIQQQQIIQQ")
_ODD_INTS = (0, 1, 2, 3, 7, 8, 0x40, 0x7FFFFFFF, 0xFFFFFFFF, 0xFFFFFFFFFFFFFFFF, 1 << 62)


def corpus() -> tuple[bytes, ...]:
    return gpudbg_coredumps()


# ---------------------------------------------------------------- structural mutations
def _headers(data: bytes) -> tuple[int, int] | None:
    if len(data) < 64 or data[:4] != b"\x7fELF":
        return None
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shnum, = struct.unpack_from("<H", data, 0x3C)
    if shoff + shnum * _SHDR.size > len(data):
        return None
    return shoff, shnum


def mutate_header(rng: random.Random, data: bytes) -> F.Mutated:
    """One field of one section header set to an odd or borrowed value."""
    where = _headers(data)
    if where is None:
        return F.flip_bytes(rng, data)
    shoff, shnum = where
    i = rng.randrange(1, max(shnum, 2))
    out = bytearray(data)
    fields = list(_SHDR.unpack_from(out, shoff + i * _SHDR.size))
    k = rng.randrange(len(fields))
    names = ("name", "type", "flags", "addr", "offset", "size", "link", "info", "addralign", "entsize")
    if rng.random() < 0.5:   # borrow the value of another section's same field
        j = rng.randrange(1, shnum)
        fields[k] = _SHDR.unpack_from(out, shoff + j * _SHDR.size)[k]
    else:
        fields[k] = F.pick(rng, _ODD_INTS)
    width = _SHDR.format[1 + k]
    fields[k] &= 0xFFFFFFFF if width == "I" else 0xFFFFFFFFFFFFFFFF
    _SHDR.pack_into(out, shoff + i * _SHDR.size, *fields)
    return bytes(out), f"section header {i}: {names[k]} = 0x{fields[k]:x}"


def swap_headers(rng: random.Random, data: bytes) -> F.Mutated:
    where = _headers(data)
    if where is None or where[1] < 3:
        return F.flip_bytes(rng, data)
    shoff, shnum = where
    i, j = rng.randrange(1, shnum), rng.randrange(1, shnum)
    out = bytearray(data)
    a = bytes(out[shoff + i * _SHDR.size: shoff + (i + 1) * _SHDR.size])
    b = bytes(out[shoff + j * _SHDR.size: shoff + (j + 1) * _SHDR.size])
    what = "whole headers"
    if rng.random() < 0.5:   # swap only the types: a table read as another table
        ta, tb = struct.unpack_from("<I", a, 4)[0], struct.unpack_from("<I", b, 4)[0]
        a, b = a[:4] + struct.pack("<I", tb) + a[8:], b[:4] + struct.pack("<I", ta) + b[8:]
        what = "types"
    out[shoff + i * _SHDR.size: shoff + (i + 1) * _SHDR.size] = b
    out[shoff + j * _SHDR.size: shoff + (j + 1) * _SHDR.size] = a
    return bytes(out), f"sections {i} and {j}: {what} swapped"


def _odd_json(rng: random.Random):
    return F.pick(rng, (
        None, True, -1, 0, 2 ** 64, -(2 ** 63) - 1, int("9" * 4000), 1.5,
        float("inf"), "", "x" * 3, "%r1", [], [1, 2], [[1, 2, 3, 4, 5]], {}, {"a": 1},
        ["R0", "uint32", "R", -5, 2], ["R0", "no_such_dtype", "R", 0, 1], ["R0", "uint64", "Q", 0, 2]))


_DEEP = "<deep>"


def _nested(depth: int) -> str:
    """JSON text of `depth` nested lists (json.dumps itself cannot write it)."""
    return "[" * depth + '"x"' + "]" * depth


def _paths(node, prefix=()):
    yield prefix
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node[:6]):
            yield from _paths(v, prefix + (i,))


def mutate_note(rng: random.Random, data: bytes) -> F.Mutated:
    """Our JSON note with one node replaced, dropped or nested deep."""
    from gpudbg.dump.coredump.elf import ElfError, read_elf, write_elf
    try:
        elf = read_elf(data)
    except ElfError:
        return F.flip_bytes(rng, data)
    note = next((s for s in elf.sections if s.name == ".gpudbg.note"), None)
    if note is None:
        return F.flip_bytes(rng, data)
    try:
        doc = json.loads(note.data)
    except (ValueError, RecursionError):   # an earlier round damaged it already
        return F.flip_bytes(rng, data)
    paths = list(_paths(doc))
    path = F.pick(rng, paths)
    choice = rng.random()
    if choice < 0.08:
        depth = rng.choice((3000, 100000))
        raw = "[" * depth + "]" * depth if rng.random() < 0.5 else '{"modules": ' + _nested(depth) + "}"
        what = "note replaced by deep nesting"
    elif choice < 0.16:   # text level: a number of the JSON over int()'s digit limit, a cut
        raw_bytes, what = F.pick(rng, (F.replace_number, F.truncate, F.insert_text))(rng, note.data)
        raw, what = raw_bytes.decode("utf-8", "replace"), "note text: " + what
    else:
        deep = choice < 0.2
        value = _DEEP if deep else _odd_json(rng)
        if not path:
            doc = value
        else:
            parent = doc
            for k in path[:-1]:
                parent = parent[k]
            if rng.random() < 0.2 and isinstance(parent, dict):
                parent.pop(path[-1], None)
                value = "<dropped>"
            else:
                parent[path[-1]] = value
        raw = json.dumps(doc, sort_keys=True)
        if deep:
            depth = rng.choice((50, 2000))
            raw, value = raw.replace(json.dumps(_DEEP), _nested(depth)), f"<{depth} nested lists>"
        what = f"note {'/'.join(map(str, path)) or '<root>'} = {F._short(repr(value))}"
    note.data = raw.encode()
    sections = elf.sections[1:]
    shstr = next((s for s in sections if s.name == ".shstrtab"), None)
    if shstr is not None:
        sections.remove(shstr)
    return write_elf(sections, elf.type, elf.machine, elf.osabi, elf.abiversion, elf.flags), what


def _ops():
    return (F.flip_bytes, F.flip_bytes, F.truncate, F.delete_range, F.duplicate_range, mutate_header,
            mutate_header, mutate_header, swap_headers, swap_headers, mutate_note, mutate_note, mutate_note)


def generate(rng: random.Random) -> F.Mutated:
    seeds = corpus()
    k = rng.randrange(len(seeds))
    data, steps = seeds[k], []
    for _ in range(rng.choice((1, 1, 1, 2, 3))):
        data, what = F.pick(rng, _ops())(rng, data)
        steps.append(what)
    return data, f"seed core {k}: " + "; ".join(steps)


def generate_for(seed: int, index: int) -> F.Mutated:
    return generate(F.input_rng(TARGET, seed, index))


# ---------------------------------------------------------------- the check
class BadExit(AssertionError):
    """`gpudbg core` refused a file without the reader's one-line error."""


def check(data: bytes, commands: tuple[str, ...] = COMMANDS) -> str:
    """`gpudbg core FILE --batch -ex ...`: no exception may escape; a refused
    file is one line `gpudbg core: FILE: ...` with status 2."""
    from gpudbg.cli import core
    fd, path = tempfile.mkstemp(prefix="fuzz-", suffix=".nvcudmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        args = argparse.Namespace(core=path, commands=list(commands), command_files=[], batch=True)
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = core.execute(args)
        text = err.getvalue()
        if "Traceback" in text or "Traceback" in out.getvalue():
            raise BadExit(f"a traceback was printed: {text[-300:]!r}")
        if status == 2:
            if not (text.startswith(f"gpudbg core: {path}: ") and text.count("\n") == 1):
                raise BadExit(f"status 2 without the one-line reader error: {text[:300]!r}")
            return "refused"
        return "opened"
    finally:
        os.unlink(path)


def run(seconds: float, seed: int) -> dict:
    """Fuzz for `seconds` with `seed`; see fuzz/_files.py for the result."""
    return F.fuzz_loop(TARGET, seconds, seed, generate, check, {"corpus": len(corpus())})


if __name__ == "__main__":
    raise SystemExit(F.main(TARGET, generate_for, run))
