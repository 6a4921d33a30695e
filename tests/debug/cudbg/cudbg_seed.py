"""Reads seed 000 (cudadebugger.h) independently of the package, so tests can
hold the hand-written enums, layouts and API table against the header text.

Only the subset of C the header uses is understood: ``typedef enum`` blocks
with constant expressions, ``typedef struct`` blocks of scalar/array fields
under ``#pragma pack``, and the ``CUDBGAPI_st`` function-pointer table with
its doxygen comments.
"""
from __future__ import annotations

import ast
import ctypes
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

SEED_FILE = Path(__file__).resolve().parents[2] / "data" / "seeds" / "cudadebugger.h"


@cache
def seed_text() -> str:
    if not SEED_FILE.is_file():
        pytest.fail(f"seed 000 (cudadebugger.h) missing: expected {SEED_FILE} (tests/data/seeds)")
    return SEED_FILE.read_text()


def strip_comments(src: str) -> str:
    src = re.sub(r"/\*.*?\*/", " ", src, flags=re.S)
    return re.sub(r"//[^\n]*", " ", src)


def header_code() -> str:
    """The C part of the seed (after the long doc comment), comments removed."""
    text = seed_text()
    return strip_comments(text[text.index("#ifndef CUDADEBUGGER_H"):])


def _eval_const(expr: str, known: dict[str, int]) -> int:
    expr = re.sub(r"\b(0[xX][0-9a-fA-F]+|\d+)[uUlL]+\b", r"\1", " ".join(expr.split()))
    tree = ast.parse(expr, mode="eval")

    def ev(node: ast.AST) -> int:
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, int):
            return node.value
        if isinstance(node, ast.Name):
            return known[node.id]
        if isinstance(node, ast.BinOp):
            ops = {ast.LShift: lambda a, b: a << b, ast.BitOr: lambda a, b: a | b,
                   ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b}
            return ops[type(node.op)](ev(node.left), ev(node.right))
        raise ValueError(f"unsupported enum expression {expr!r}")

    return ev(tree)


@cache
def parse_enums() -> dict[str, list[tuple[str, int]]]:
    enums: dict[str, list[tuple[str, int]]] = {}
    for body, name in re.findall(r"typedef\s+enum\s*\{(.*?)\}\s*(\w+)\s*;", header_code(), re.S):
        members: list[tuple[str, int]] = []
        known = {}
        nxt = 0
        for item in (i.strip() for i in body.split(",")):
            if not item:
                continue
            ident, _, expr = item.partition("=")
            ident = ident.strip()
            value = _eval_const(expr, known) if expr else nxt
            known[ident] = value
            members.append((ident, value))
            nxt = value + 1
        enums[name] = members
    return enums


def count_typedef_enums() -> int:
    return len(re.findall(r"\btypedef\s+enum\b", header_code()))


@dataclass(frozen=True)
class CField:
    ctype: str
    name: str
    count: int  # array length, 1 for scalars


@cache
def parse_packed_structs() -> dict[str, list[CField]]:
    """Top-level ``typedef struct {...} Name;`` blocks declared under pack(1), without unions."""
    code = header_code()
    out: dict[str, list[CField]] = {}
    packed = False
    pos = 0
    token = re.compile(r"#pragma\s+pack\(push,\s*1\)|#pragma\s+pack\(pop\)|typedef\s+struct\s*\{")
    while (m := token.search(code, pos)) is not None:
        if m.group(0).startswith("#pragma"):
            packed = "push" in m.group(0)
            pos = m.end()
            continue
        depth, i = 1, m.end()
        while depth:
            depth += {"{": 1, "}": -1}.get(code[i], 0)
            i += 1
        tail = re.match(r"\s*(\w+)\s*;", code[i:])
        body = code[m.end():i - 1]
        pos = i
        if not packed or tail is None or "{" in body:
            continue
        fields = []
        for decl in (d.strip() for d in body.split(";")):
            if not decl:
                continue
            fm = re.fullmatch(r"(\w[\w\s]*?)\s+(\w+)\s*(?:\[(\w+)\])?", " ".join(decl.split()))
            assert fm, f"unparsed field {decl!r} in {tail.group(1)}"
            count = fm.group(3)
            n = 1 if count is None else int(count) if count.isdigit() else HEADER_DEFINES[count]
            fields.append(CField(fm.group(1), fm.group(2), n))
        out[tail.group(1)] = fields
    return out


HEADER_DEFINES = {"CUDBG_MAX_WARP_BARRIERS": 16, "CUDBG_MAX_LANES": 32, "CUDBG_MAX_LOG_LEN": 256}


def event_union_members() -> dict[str, list[CField]]:
    """The members of CUDBGEvent's ``cases`` union (the packed 13.0 event)."""
    code = header_code()
    end = code.index("} CUDBGEvent;")
    start = code.rindex("typedef struct", 0, end)
    body = code[start:end]
    members: dict[str, list[CField]] = {}
    for fields, name in re.findall(r"struct\s+\w+\s*\{([^{}]*)\}\s*(\w+)\s*;", body):
        members[name] = [CField(*" ".join(d.split()).rsplit(" ", 1), 1)
                         for d in fields.split(";") if d.strip()]
    return members


@dataclass(frozen=True)
class CEntry:
    name: str
    doc: str
    params: list[tuple[str, str]]  # (normalized type, name)
    deprecated: bool
    since: str | None


def normalize_type(ctype: str) -> str:
    """``uint64_t* address`` and ``uint64_t *address`` both give ``uint64_t *``."""
    stars = ctype.count("*")
    base = " ".join(ctype.replace("*", " ").split())
    return base + (" " + "*" * stars if stars else "")


def split_param(param: str) -> tuple[str, str]:
    param = " ".join(param.split())
    m = re.fullmatch(r"(.*?[\s*])(\w+)", param)
    assert m, f"unparsed parameter {param!r}"
    return normalize_type(m.group(1)), m.group(2)


@cache
def parse_api_table() -> list[CEntry]:
    text = seed_text()
    start = text.index("struct CUDBGAPI_st {")
    body = text[start:text.index("\n};", start)]
    sig = re.compile(r"CUDBGResult\s*\(\*\s*(\w+)\s*\)\s*\((.*?)\)\s*;", re.S)
    entries = []
    for m in sig.finditer(body):
        before = body[:m.start()].rstrip()
        # The entry's doxygen comment is the /** ... */ right above it, if any.
        doc = ""
        if before.endswith("*/"):
            opening = before.rindex("/*")
            if before.startswith("/**", opening):
                doc = before[opening + 3:-2]
        name, params = m.group(1), m.group(2)
        plist = [] if params.strip() == "void" else [split_param(p) for p in params.split(",")]
        since = re.search(r"Since CUDA ([\d.]+?)\.?\s", doc)
        entries.append(CEntry(name, doc, plist, bool(re.search(r"\\deprecated\b", doc)),
                              since.group(1) if since else None))
    return entries


def count_api_signatures() -> int:
    text = seed_text()
    start = text.index("struct CUDBGAPI_st {")
    body = text[start:text.index("\n};", start)]
    return len(re.findall(r"CUDBGResult\s*\(\*\s*\w+\s*\)", body))


def param_docs(doc: str) -> dict[str, str]:
    """``\\param name - text`` lines of one entry's comment."""
    return {m.group(1): m.group(2) for m in re.finditer(r"\\param\s+(\w+)\s*-?\s*([^\n]*)", doc)}


_SCALARS = {"uint32_t": ctypes.c_uint32, "uint64_t": ctypes.c_uint64, "char": ctypes.c_char}


class CuDim3C(ctypes.Structure):
    _fields_ = [("x", ctypes.c_uint32), ("y", ctypes.c_uint32), ("z", ctypes.c_uint32)]


def ctype_of(cname: str, fields: list[CField], packed: bool = True) -> type:
    """The C struct rebuilt with ctypes from the seed's declaration (an independent layout engine)."""
    seed = parse_packed_structs()
    enum_names = parse_enums()  # every C enum of the header is uint32-sized

    def base(ctype: str):
        if ctype in _SCALARS:
            return _SCALARS[ctype]
        if ctype == "CuDim3":
            return CuDim3C
        if ctype in enum_names:
            return ctypes.c_uint32
        return ctype_of(ctype, seed[ctype])

    cfields = [(f.name, base(f.ctype) * f.count if f.count > 1 else base(f.ctype)) for f in fields]
    attrs = {"_fields_": cfields}
    if packed:
        attrs["_pack_"] = 1
    return type(cname, (ctypes.Structure,), attrs)
