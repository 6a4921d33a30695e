"""Fuzz target: PTX modules through gpudbg's front end and loader.

Seeds are every PTX file of the tests (NVRTC output with and without debug
info, hand-written kernels) and, when NVRTC is there, the kernels of
examples/ compiled to PTX. Mutations are the text operators of
fuzz/_files.py (byte flips, token deletions, duplications and moves, huge
numbers, NULs) plus PTX-aware ones: a `.version` with thousands of digits,
an operand replaced by a deeply nested expression, a declaration's count,
alignment or array size made absurd, a line of another seed pasted in.

Each input is parsed (gpudbg.ptx.parse), which may only raise PTXParseError
with a file:line:col inside the text, and what parses is loaded on the
current context the way mcModuleLoadData loads it (driver.module.load_ir),
which may only refuse with a PTX error: an EngineError whose cause is the
translator's LoadError or UnsupportedInstruction, a target or resource
refusal; an engine error that wraps any other exception (RecursionError,
IndexError, ...) is a finding, like any exception that escapes.

`run(seconds, seed)` returns the counts (see fuzz/_files.py);
`python -m fuzz.ptx --seed S --input N --write FILE` rebuilds one input.
"""
from __future__ import annotations

import ast
import functools
import random
import re
from pathlib import Path

from fuzz import _files as F

TARGET = "ptx"
ROOT = Path(__file__).resolve().parent.parent
_LOADER_CAUSES = ("LoadError", "UnsupportedInstruction")
_ALLOWED_CODES = ("CUDA_ERROR_INVALID_PTX", "CUDA_ERROR_INVALID_IMAGE", "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
                  "CUDA_ERROR_NO_BINARY_FOR_GPU", "CUDA_ERROR_OUT_OF_MEMORY", "CUDA_ERROR_INVALID_VALUE")
_VERSION = re.compile(rb"\.version[ \t]+[0-9.]+")
_OPERAND_INT = re.compile(rb"(?<=[ ,\[+])-?\d+(?=[;,\]\s])")
_DECL_NUMBER = re.compile(rb"(<\d+>|\.align[ \t]+\d+|\[\d*\]|\.v\d)")


def _example_sources() -> list[tuple[str, str]]:
    """(name, CUDA C source) of the kernels in examples/*.py: the string
    constants that define a __global__ function."""
    out = []
    for path in sorted((ROOT / "examples").glob("*.py")):
        try:
            tree = ast.parse(path.read_text())
        except (OSError, SyntaxError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and "__global__" in node.value:
                out.append((f"{path.stem}.cu", node.value))
    return out


@functools.lru_cache(maxsize=1)
def corpus() -> tuple[bytes, ...]:
    seen: dict[bytes, None] = {}
    for path in sorted((ROOT / "tests").rglob("*.ptx")):
        seen.setdefault(path.read_bytes(), None)
    try:
        from gpudbg.compiler import CompileError, compile_ptx
        for name, source in _example_sources():
            try:
                seen.setdefault(compile_ptx(source, name=name).encode(), None)
            except CompileError:
                pass
    except ImportError:
        pass
    return tuple(seen)


# ---------------------------------------------------------------- PTX-aware mutations
def huge_version(rng: random.Random, data: bytes) -> F.Mutated:
    m = _VERSION.search(data)
    digits = rng.choice((30, 4300, 5000, 20000))
    value = rng.choice(("9" * digits + ".0", "8." + "9" * digits, "1" + "0" * digits, "-1.0", "8.", "0x10"))
    if m is None:
        return b".version " + value.encode() + b"\n" + data, f".version {F._short(value)} prepended"
    return data[:m.start()] + b".version " + value.encode() + data[m.end():], f".version set to {F._short(value)}"


def nested_expression(rng: random.Random, data: bytes) -> F.Mutated:
    spots = [m.span() for m in _OPERAND_INT.finditer(data)]
    if not spots:
        return F.insert_text(rng, data)
    i, j = F.pick(rng, spots)
    depth = rng.choice((100, 900, 3000, 20000))
    shape = rng.choice(("paren", "neg", "not", "sum"))
    if shape == "paren":
        expr = "(" * depth + "1" + ")" * depth
    elif shape == "neg":
        expr = "-" * depth + "1"
    elif shape == "not":
        expr = "~" * depth + "1"
    else:
        expr = "1" + "+1" * depth
    return data[:i] + expr.encode() + data[j:], f"operand at byte {i} replaced by a {shape} nest of {depth}"


def absurd_declaration(rng: random.Random, data: bytes) -> F.Mutated:
    spots = [m for m in _DECL_NUMBER.finditer(data)]
    if not spots:
        return F.replace_number(rng, data)
    m = F.pick(rng, spots)
    value = F.pick(rng, ("0", "1", "3", "4294967296", "18446744073709551616", "9" * 5000, "2147483648",
                         "1099511627776", "65536", "-1"))
    text = m.group().decode()
    if text.startswith("<"):
        new = f"<{value}>"
    elif text.startswith(".align"):
        new = f".align {value}"
    elif text.startswith("["):
        new = f"[{value}]"
    else:
        new = f".v{value}"
    return data[:m.start()] + new.encode() + data[m.end():], f"{text!r} at byte {m.start()} made {F._short(new)}"


def paste_line(rng: random.Random, data: bytes) -> F.Mutated:
    other = F.pick(rng, corpus()).split(b"\n")
    line = F.pick(rng, other)
    lines = data.split(b"\n")
    k = rng.randrange(len(lines) + 1)
    return b"\n".join(lines[:k] + [line] + lines[k:]), f"pasted {F._short(line.decode('utf-8', 'replace'))} at line {k + 1}"


def _ops():
    return F.TEXT_OPERATORS + (huge_version, nested_expression, nested_expression, absurd_declaration,
                               absurd_declaration, paste_line)


def generate(rng: random.Random) -> F.Mutated:
    seeds = corpus()
    k = rng.randrange(len(seeds))
    data, what = F.mutate_text(rng, seeds[k], operators=_ops())
    return data, f"seed {k}: {what}"


def generate_for(seed: int, index: int) -> F.Mutated:
    return generate(F.input_rng(TARGET, seed, index))


# ---------------------------------------------------------------- the check
class BadError(AssertionError):
    """A refusal that is not a PTX error with its place."""


def check(data: bytes) -> str:
    """Parse (PTXParseError only, placed inside the text), then load on the
    current context (a PTX/loader refusal only)."""
    from gpudbg.driver.engine import get_engine
    from gpudbg.driver.module import load_ir
    from gpudbg.driver.status import EngineError
    from gpudbg.ptx import PTXParseError, parse
    text = data.decode("utf-8", errors="replace")
    try:
        module = parse(text, "fuzz.ptx")
    except PTXParseError as e:
        lines = text.count("\n") + 1
        if not (e.file == "fuzz.ptx" and 1 <= e.line <= lines and e.col >= 1
                and str(e).startswith(f"fuzz.ptx:{e.line}:{e.col}: ")):
            raise BadError(f"PTXParseError without a place in the text: {str(e)[:200]!r}") from None
        return "parse error"
    ctx = get_engine().current_context()
    try:
        m = load_ir(ctx, module, "fuzz.ptx")
    except EngineError as e:
        if e.status.name not in _ALLOWED_CODES:
            raise BadError(f"load refused with {e.status.name}: {e.message[:200]}") from None
        wrapped = re.match(r"([A-Za-z_]\w*): ", e.message)   # load_ir's "<exception type>: <message>"
        if e.status.name == "CUDA_ERROR_INVALID_PTX" and wrapped and wrapped.group(1) not in _LOADER_CAUSES:
            raise BadError(f"the loader failed inside with {e.message[:300]}") from None
        return "load error"
    m.unload()
    return "loaded"


def run(seconds: float, seed: int) -> dict:
    """Fuzz for `seconds` with `seed`; see fuzz/_files.py for the result."""
    return F.fuzz_loop(TARGET, seconds, seed, generate, check, {"corpus": len(corpus())})


if __name__ == "__main__":
    raise SystemExit(F.main(TARGET, generate_for, run))
