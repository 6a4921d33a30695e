"""The PTX census: which opcodes and forms the loader accepts, and which
instructions of a given PTX file it rejects and why.

The one idea: nothing here is a hand-kept list. The opcodes are the keys of
the op registry (sim/ops/base.py), the modifiers each accepts are read from
its builder's own code -- the constants it hands to `Mods.take`/`flag`, the
named tuples it spreads there, the `"x" in inst.modifiers` tests, the
dictionaries of whole forms it checks against (hints.py), following the
helpers of the same module it calls -- so adding a builder or a modifier
changes the census by itself. A file is checked by translating it exactly
as the loader does (sim/program.py), but carrying on past each rejected
instruction to report all of them.

What it does not do: prove that every combination of the listed modifiers
is accepted (builders reject invalid combinations, which the file check
shows); modifiers only checked by helpers of another module are not listed.
"""
from __future__ import annotations

import ast
import inspect
import sys
import textwrap
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from gpudbg.ptx.errors import PTXParseError
from gpudbg.sim.ops import base as _base
from gpudbg.sim.ops import registry
from gpudbg.sim.ops.base import Built, TranslateContext, UnsupportedInstruction, guard_filter
from gpudbg.sim.program import Compiled, Program

# what Mods' helper methods consult
_HELPER_MODIFIERS = {
    "space": _base.SPACES,
    "rounding": _base.ROUNDINGS,
    "vector": ("v2", "v4", "v8"),
}
_TYPED = ("types", "one_type")


@dataclass
class OpcodeForms:
    opcode: str
    builder: str                      # module.function that translates it
    modifiers: list[str]              # every modifier the builder consults
    forms: list[str] = field(default_factory=list)   # whole forms, where the builder lists them
    typed: bool = False               # takes a type modifier (.u32, .f16x2, ...)

    def as_dict(self) -> dict[str, Any]:
        return {"opcode": self.opcode, "builder": self.builder, "modifiers": self.modifiers,
                "forms": self.forms, "typed": self.typed}


class _Scan(ast.NodeVisitor):
    """What one function of an op module consults, and the same-module
    functions it calls."""

    def __init__(self, env: dict[str, Any]):
        self.env = env
        self.mods: set[str] = set()
        self.forms: set[tuple[str, ...]] = set()
        self.typed = False
        self.calls: set[str] = set()

    def _strings(self, node) -> list[str]:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return [node.value]
        if isinstance(node, ast.Starred) and isinstance(node.value, ast.Name):
            v = self.env.get(node.value.id)
            if isinstance(v, (tuple, list, frozenset, set)):
                return [s for s in v if isinstance(s, str)]
        return []

    def _form_table(self, node) -> None:
        v = None
        if isinstance(node, ast.Name):
            v = self.env.get(node.id)
        elif isinstance(node, ast.Dict):
            try:
                v = {ast.literal_eval(k): None for k in node.keys if k is not None}
            except ValueError:
                return
        if isinstance(v, dict) and v and all(isinstance(k, tuple) and all(isinstance(s, str) for s in k)
                                             for k in v):
            self.forms.update(v)

    def visit_Call(self, node: ast.Call) -> None:
        f = node.func
        if isinstance(f, ast.Attribute):
            if f.attr in ("take", "flag"):
                for a in node.args:
                    self.mods.update(self._strings(a))
            elif f.attr in _HELPER_MODIFIERS:
                self.mods.update(_HELPER_MODIFIERS[f.attr])
            elif f.attr in _TYPED:
                self.typed = True
        elif isinstance(f, ast.Name):
            self.calls.add(f.id)
            for a in node.args:
                self._form_table(a)
        self.generic_visit(node)

    def visit_Compare(self, node: ast.Compare) -> None:
        # "x" in inst.modifiers / "x" not in inst.modifiers
        if (isinstance(node.left, ast.Constant) and isinstance(node.left.value, str)
                and any(isinstance(c, ast.Attribute) and c.attr == "modifiers" for c in node.comparators)):
            self.mods.add(node.left.value)
        self.generic_visit(node)


@lru_cache(maxsize=None)
def _module_functions(modname: str) -> dict[str, ast.FunctionDef]:
    src = inspect.getsource(sys.modules[modname])
    tree = ast.parse(textwrap.dedent(src))
    found: dict[str, ast.FunctionDef] = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    for n in ast.walk(tree):        # nested builders too (top-level names win)
        if isinstance(n, ast.FunctionDef):
            found.setdefault(n.name, n)
    return found


def _scan_builder(fn) -> tuple[set[str], set[tuple[str, ...]], bool]:
    modname = fn.__module__
    funcs = _module_functions(modname)
    env = vars(sys.modules[modname])
    mods: set[str] = set()
    forms: set[tuple[str, ...]] = set()
    typed = False
    seen: set[str] = set()
    todo = [fn.__name__]
    while todo:
        name = todo.pop()
        if name in seen or name not in funcs:
            continue
        seen.add(name)
        s = _Scan(env)
        s.visit(funcs[name])
        mods |= s.mods
        forms |= s.forms
        typed |= s.typed
        todo.extend(s.calls - seen)
    for f in forms:
        mods.update(f)
    return mods, forms, typed


def accepted() -> list[OpcodeForms]:
    """Every opcode of the registry with the modifiers its builder
    consults (plus the ones every instruction may carry, base.IGNORABLE)."""
    out = []
    for opcode, fn in sorted(registry().items()):
        mods, forms, typed = _scan_builder(fn)
        out.append(OpcodeForms(opcode, f"{fn.__module__}.{fn.__name__}", sorted(mods),
                               sorted(opcode + "".join("." + m for m in f) for f in forms), typed))
    return out


def ignorable() -> list[str]:
    """Modifiers accepted on any instruction (they cannot change a result)."""
    return sorted(_base.IGNORABLE)


# ------------------------------------------------------------------ files

@dataclass
class Rejection:
    line: int
    function: str
    instruction: str
    reason: str

    def as_dict(self) -> dict[str, Any]:
        return {"line": self.line, "function": self.function, "instruction": self.instruction,
                "reason": self.reason}


@dataclass
class FileCensus:
    path: str
    instructions: int
    rejected: list[Rejection]
    error: str | None = None          # the file does not parse

    @property
    def accepted(self) -> int:
        return self.instructions - len(self.rejected)

    def as_dict(self) -> dict[str, Any]:
        return {"path": self.path, "instructions": self.instructions, "accepted": self.accepted,
                "rejected": [r.as_dict() for r in self.rejected], "error": self.error}


def check_text(text: str, path: str = "<ptx>") -> FileCensus:
    """Translate every instruction of a PTX text as the loader would; the
    ones it rejects, with the loader's reason."""
    from gpudbg.ptx import parse
    try:
        module = parse(text, path)
    except PTXParseError as e:
        return FileCensus(path, 0, [], str(e))
    program = _CensusProgram.of(module)
    total = sum(len(f.instructions) for f in module.functions.values() if f.body is not None)
    return FileCensus(path, total, program.rejections)


def check_file(path: str) -> FileCensus:
    with open(path, encoding="utf-8", errors="replace") as f:
        return check_text(f.read(), path)


class _CensusProgram(Program):
    """The loader's translation, carrying on past rejected instructions
    (each becomes a no-op so the rest of the program can be laid out)."""

    rejections: list[Rejection]

    @classmethod
    def of(cls, module) -> "_CensusProgram":
        symbols = {}
        for i, v in enumerate(module.globals.values()):
            if v.space in ("global", "const"):
                symbols[v.name] = 0x10000 * (i + 1)   # addresses only the layout needs
        p = cls.__new__(cls)
        p.rejections = []
        Program.__init__(p, module, symbols, code_base=0)
        return p

    def _translate(self) -> None:
        ops = registry()
        for f in self.module.functions.values():
            if f.body is None:
                continue
            for inst in f.instructions:
                pc = len(self.code)
                builder = ops.get(inst.opcode)
                built = guard = None
                try:
                    if builder is None:
                        raise UnsupportedInstruction(f"unsupported instruction '{inst.opcode}'")
                    built = builder(inst, TranslateContext(self, f, pc))
                    if inst.guard is not None:
                        gk, _ = self.register_index(f, inst.guard.name)
                        guard = guard_filter(gk, inst.guard_negated)
                except UnsupportedInstruction as e:
                    self._reject(inst, f, str(e))
                except (IndexError, KeyError, ValueError, TypeError) as e:
                    self._reject(inst, f, f"malformed operands ({e})")
                self.code.append(Compiled(pc, inst, f.name, built or Built(_no_op), guard))

    def _reject(self, inst, f, why: str) -> None:
        self.rejections.append(Rejection(inst.loc.line, f.name, inst.text, why))


def _no_op(X, idx) -> None:
    return None


# ------------------------------------------------------------------ text

def format_accepted(entries: list[OpcodeForms]) -> str:
    lines = [f"{len(entries)} PTX opcodes accepted (modifiers any instruction may carry: "
             + " ".join("." + m for m in ignorable()) + ")"]
    for e in entries:
        mods = " ".join("." + m for m in e.modifiers)
        lines.append(f"{e.opcode:<16} {'[typed] ' if e.typed else ''}{mods}")
        for f in e.forms:
            lines.append(f"{'':<16}   {f}")
    return "\n".join(lines)


def format_file(c: FileCensus) -> str:
    if c.error is not None:
        return f"{c.path}: does not parse: {c.error}"
    head = f"{c.path}: {c.accepted} of {c.instructions} instruction(s) accepted, {len(c.rejected)} rejected"
    return "\n".join([head] + [f"  {c.path}:{r.line}: {r.instruction}\n      {r.reason}" for r in c.rejected])
