"""Fuzz target: drm/msm devcoredumps through `gpudbg dump show`.

Seeds are the real Adreno dumps of tests/data/msm (whole, or one of their
sections with the header, which keeps an input fast) and the dumps gpudbg writes for
faulting and hanging kernels (fuzz/_dumps.py). Mutations are the text
operators of fuzz/_files.py (byte flips, truncation, line and token
deletions and duplications, numbers replaced by huge ones, NULs) plus
format-aware ones: a `key: value` line's value replaced by an odd value, a
section header duplicated or moved. Each input goes through what
`gpudbg dump show FILE` (and `--json`) does: parse, analyze, format the
text and the JSON. Only the parser's DevcoredumpError (with its line) may
come out; any other exception is a finding.

`run(seconds, seed)` returns the counts (see fuzz/_files.py);
`python -m fuzz.devcoredump --seed S --input N --write FILE` rebuilds one input.
"""
from __future__ import annotations

import functools
import json
import random
import re
from pathlib import Path

from fuzz import _files as F
from fuzz._dumps import gpudbg_devcoredumps

TARGET = "devcoredump"
MSM = Path(__file__).resolve().parent.parent / "tests" / "data" / "msm"
ODD_VALUES = ("", "-1", "0", "0x", "0x" + "f" * 17, "0xffffffffffffffff", "9223372036854775808",
              "18446744073709551616", "9" * 5000, "1" * 4301, "0x" + "1" * 5000, "z", "!!ascii85 |",
              "1.2.3", "4294967296", "-9223372036854775809", "\x00", "nan", "1e400")
_KV = re.compile(rb"^( *(?:- )?[A-Za-z][\w\-\[\]]*:) (.*)$", re.M)


def _sections(lines: list[bytes]) -> list[list[bytes]]:
    """Top-level records: a column-0 line and the indented lines under it."""
    out: list[list[bytes]] = []
    for ln in lines:
        if ln.startswith(b" ") and out:
            out[-1].append(ln)
        else:
            out.append([ln])
    return out


def _cut(section: list[bytes], keep: int) -> list[bytes]:
    """At most about `keep` lines of a section, cut where an item starts."""
    if len(section) <= keep:
        return section
    for k in range(keep, 0, -1):
        if section[k].startswith(b"  - "):
            return section[:k]
    return section[:1]


def _windows(data: bytes) -> list[bytes]:
    """One small, well-formed dump per section of a real one: the header
    scalars plus that section, cut at an item boundary to ~120 lines."""
    recs = _sections(data.rstrip(b"\n").split(b"\n"))
    head = [r for r in recs if len(r) == 1]
    bodies = [r for r in recs if len(r) > 1]
    return [b"\n".join(sum(head, []) + _cut(r, 120)) + b"\n" for r in bodies]


@functools.lru_cache(maxsize=1)
def corpus() -> tuple[bytes, ...]:
    real = [p.read_bytes() for p in sorted(MSM.glob("*.devcore"))]
    windows = [w for data in real for w in _windows(data)]
    return tuple(gpudbg_devcoredumps()) + tuple(real) + tuple(windows)


def replace_value(rng: random.Random, data: bytes) -> F.Mutated:
    spots = [m.span(2) for m in _KV.finditer(data)]
    if not spots:
        return F.replace_number(rng, data)
    i, j = F.pick(rng, spots)
    value = F.pick(rng, ODD_VALUES)
    return data[:i] + value.encode() + data[j:], f"value at byte {i} replaced by {F._short(value)}"


def move_section(rng: random.Random, data: bytes) -> F.Mutated:
    """A top-level section (a column-0 line and its indented body) moved or duplicated."""
    lines = data.split(b"\n")
    starts = [k for k, ln in enumerate(lines) if ln and not ln.startswith(b" ")]
    if len(starts) < 2:
        return F.swap_lines(rng, data)
    k = rng.randrange(len(starts))
    a = starts[k]
    b = starts[k + 1] if k + 1 < len(starts) else len(lines)
    section = lines[a:b]
    dest = F.pick(rng, starts)
    if rng.random() < 0.5:
        rest = lines[:a] + lines[b:]
        dest = dest if dest < a else max(0, dest - (b - a))
        what = "moved"
    else:
        rest, what = lines, "duplicated"
    return b"\n".join(rest[:dest] + section + rest[dest:]), f"section at line {a + 1} {what} to line {dest + 1}"


def _ops():
    return F.TEXT_OPERATORS + (replace_value, replace_value, replace_value, move_section)


def generate(rng: random.Random) -> F.Mutated:
    seeds = corpus()
    k = rng.randrange(len(seeds))
    data, what = F.mutate_text(rng, seeds[k], operators=_ops())
    return data, f"seed {k}: {what}"


def generate_for(seed: int, index: int) -> F.Mutated:
    return generate(F.input_rng(TARGET, seed, index))


def check(data: bytes) -> str:
    """`gpudbg dump show`: parse; refuse only with DevcoredumpError; else
    analyze and print (text and JSON) without any exception."""
    from gpudbg.dump.devcoredump import DevcoredumpError, parse
    from gpudbg.dump.devcoredump.analyzer import analyze, to_dict
    from gpudbg.dump.devcoredump.report import format_text
    try:
        dump = parse(data)
    except DevcoredumpError as e:
        if not (isinstance(e.line, int) and e.line >= 1 and str(e).startswith(f"line {e.line}: ")):
            raise AssertionError(f"DevcoredumpError without a usable line: {e!r}") from None
        return "refused"
    summary = analyze(dump, packets=16)
    format_text(summary, title="fuzz.devcore")
    json.dumps(to_dict(summary))
    return "shown"


def run(seconds: float, seed: int) -> dict:
    """Fuzz for `seconds` with `seed`; see fuzz/_files.py for the result."""
    return F.fuzz_loop(TARGET, seconds, seed, generate, check, {"corpus": len(corpus())})


if __name__ == "__main__":
    raise SystemExit(F.main(TARGET, generate_for, run))
