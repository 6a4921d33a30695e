"""The drop-in libraries' export tables, read from the committed TSV files.

`tables/libcuda.tsv` and `tables/libcudart.tsv` list every exported name with
its C prototype and ABI classes; `tables/procaddress.tsv` is the
cuGetProcAddress table. They are generated once from NVIDIA's CUDA headers by
`python -m gpudbg.native.gen_exports`; this module only reads them (stdlib
only, so setup.py's build hook can use it without importing gpudbg).

ABI classes: `e` (error code: CUresult / cudaError_t), `v` (void), `i8`..`u64`
(integers, enums, bool), `p` (pointer), `f32`/`f64`, and `s<size>a<align>`
(a struct by value; `:I`/`:F` per eightbyte when it travels in registers).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

TABLES = Path(__file__).resolve().parent / "tables"

#: library key -> (soname, implementation module)
LIBRARIES = {
    "cuda": ("libcuda.so.1", "gpudbg.cuda_driver.exports"),
    "cudart": ("libcudart.so.13", "gpudbg.cuda_runtime.exports"),
}

#: names implemented in C inside libcuda.so.1 (never looked up in Python)
C_IMPLEMENTED = {"cuda": ("cuGetProcAddress", "cuGetProcAddress_v2", "cuGetExportTable"), "cudart": ()}


@dataclass(frozen=True)
class Export:
    """One exported function: its name, C return type and parameter types."""
    name: str
    ret: str
    ret_abi: str
    params: tuple[str, ...]
    param_abi: tuple[str, ...]

    def prototype(self) -> str:
        return f"{self.ret} {self.name}({', '.join(self.params) or 'void'})"


def _rows(text: str) -> list[list[str]]:
    return [line.split("\t") for line in text.splitlines() if line and not line.startswith("#")]


def parse_exports(text: str) -> list[Export]:
    """The rows of an export table's TSV text."""
    return [Export(name, ret, ret_abi, tuple(params.split(";")) if params else (),
                   tuple(param_abi.split(",")) if param_abi else ())
            for name, ret, ret_abi, params, param_abi in _rows(text)]


def parse_procaddress(text: str) -> list[tuple[str, int, str, str]]:
    """The rows of procaddress.tsv's text."""
    return [(n, int(v), "" if k == "-" else k, s) for n, v, k, s in _rows(text)]


def exports(library: str) -> list[Export]:
    """Every export of `library` ("cuda" or "cudart"), sorted by name."""
    return parse_exports((TABLES / f"lib{library}.tsv").read_text())


def procaddress() -> list[tuple[str, int, str, str]]:
    """(name, PFN version, "" | "ptds" | "ptsz", exported symbol) rows."""
    return parse_procaddress((TABLES / "procaddress.tsv").read_text())


def resolve(name: str, version: int, flags: int = 0) -> tuple[str | None, int]:
    """What cuGetProcAddress_v2 answers, computed in Python from the table:
    (symbol or None, CUdriverProcAddressQueryResult). Mirrors csrc/procaddr.c."""
    rows = [r for r in procaddress() if r[0] == name]
    if not rows:
        return None, 1
    best: tuple[int, str] | None = None
    if flags & 2:
        pt = [(v, s) for _, v, k, s in rows if k and v <= version]
        best = max(pt) if pt else None
    if best is None:
        legacy = [(v, s) for _, v, k, s in rows if not k and v <= version]
        best = max(legacy) if legacy else None
    return (best[1], 0) if best else (None, 2)
