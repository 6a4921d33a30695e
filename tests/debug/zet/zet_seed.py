"""Reads seed 001 (the rendered Level Zero 1.18 Debug page) independently of the
package, so tests can hold the enums, structs and function table against it.

The page is Sphinx output turned to text: every API name is a line ending in
``#`` (``enum X#``, ``enumerator X#``, ``struct X#``, ``TYPE NAME#`` under
"Public Members", the full ``ZE_APIEXPORT ...(...)#`` declaration), and
parameters are ``name – [annotation] text`` lines between "Parameters:" and
"Returns:".
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

SEED_FILE = Path(__file__).resolve().parents[2] / "data" / "seeds" / "level_zero_1.18_debug.txt"


@cache
def seed_text() -> str:
    if not SEED_FILE.is_file():
        pytest.fail(f"seed 001 (Level Zero debug API) missing: expected {SEED_FILE} (tests/data/seeds)")
    return SEED_FILE.read_text()


def lines() -> list[str]:
    return [ln.strip() for ln in seed_text().splitlines()]


@cache
def parse_enums() -> dict[str, list[str]]:
    """C enum name -> enumerator names in the seed's order."""
    enums: dict[str, list[str]] = {}
    current = None
    for ln in lines():
        if m := re.fullmatch(r"enum (\w+)#", ln):
            current = enums.setdefault(m.group(1), [])
        elif (m := re.fullmatch(r"enumerator (\w+)#", ln)) and current is not None:
            current.append(m.group(1))
        elif ln.startswith(("struct ", "union ")):
            current = None
    return enums


@cache
def enum_titles() -> dict[str, str]:
    """The section title above each ``enum X#`` (the ``*_flags_t`` typedef for bit sets)."""
    out = {}
    ls = [ln for ln in lines() if ln]
    for i, ln in enumerate(ls):
        if m := re.fullmatch(r"enum (\w+)#", ln):
            title = next(x for x in reversed(ls[:i]) if re.fullmatch(r"\w+#", x))
            out[m.group(1)] = title[:-1]
    return out


def normalize_type(ctype: str) -> str:
    stars = ctype.count("*")
    base = " ".join(ctype.replace("*", " ").split())
    return base + (" " + "*" * stars if stars else "")


@cache
def parse_structs() -> dict[str, list[tuple[str, str]]]:
    """struct/union name -> (normalized C type, member name) in declaration order."""
    structs: dict[str, list[tuple[str, str]]] = {}
    current, members = None, False
    for ln in lines():
        if m := re.fullmatch(r"(?:struct|union) (\w+)#", ln):
            current, members = structs.setdefault(m.group(1), []), False
        elif ln == "Public Members":
            members = current is not None
        elif members and (m := re.fullmatch(r"((?:const )?\w+(?: \w+)*?)(\s*\*+\s*|\s+)(\w+)#", ln)):
            current.append((normalize_type(m.group(1) + m.group(2).strip()), m.group(3)))
    return structs


@dataclass(frozen=True)
class SeedFunction:
    name: str
    since: str
    signature: str
    params: list[tuple[str, str]]  # (normalized type, name)
    annotations: dict[str, str]  # name -> "[in,out][optional]..."
    summary: str


@cache
def parse_functions() -> list[SeedFunction]:
    text = seed_text()
    decl = re.compile(r"(ZE_APIEXPORT ze_result_t ZE_APICALL (\w+)\((.*?)\))#")
    out = []
    matches = list(decl.finditer(text))
    for i, m in enumerate(matches):
        before = text[:m.start()]
        since = re.findall(r"Added in version ([\d.]+)", before)[-1]
        end = matches[i + 1].start() if i + 1 < len(matches) else text.index("Debug Enums")
        body = text[m.end():end]
        summary = body.strip().splitlines()[0].strip()
        section = body[body.index("Parameters:"):body.index("Returns:")]
        ann = {p.group(1): p.group(2) for p in
               re.finditer(r"^\s*(?:•\s*)?(\w+) – ((?:\[[^\]]*\])+)", section, re.M)}
        params = []
        for p in m.group(3).split(","):
            pm = re.fullmatch(r"(.*?[\s*])(\w+)", " ".join(p.split()))
            params.append((normalize_type(pm.group(1)), pm.group(2)))
        out.append(SeedFunction(m.group(2), since, m.group(1), params, ann, summary))
    return out


def count_declarations() -> int:
    return seed_text().count("ZE_APIEXPORT ze_result_t ZE_APICALL")
