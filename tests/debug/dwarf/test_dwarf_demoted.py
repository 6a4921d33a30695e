"""Demoted __shared__ arrays (NVVM emits no DWARF for them) become
variables typed from their source declaration."""
from __future__ import annotations

import pytest

import gpudbg
from gpudbg.debug.dwarf.api import DebugInfo
from gpudbg.debug.dwarf.demoted import _local_name, _prefix
from gpudbg.debug.dwarf.model import AddressSpace, LocationKind

SRC = r"""
extern "C" __global__ void tiles(float *out) {
    __shared__ float acc[64];
    __shared__ unsigned int counts[8][4];
    int t = threadIdx.x;
    acc[t] = t * 0.5f;
    counts[t % 8][t % 4] = t;
    __syncthreads();
    out[t] = acc[63 - t] + counts[0][0];
}
"""


def _info(name: str, source: str = SRC):
    m = gpudbg.compile(source, name=name, options=["-G"])
    return DebugInfo(m.handle.loaded.program), m.handle.loaded.program


def test_demoted_arrays_get_their_source_types():
    info, prog = _info("tiles.cu")
    pc = prog.functions["tiles"].entry_pc + 4
    acc = info.lookup("acc", pc)
    assert acc is not None and str(acc.variable.type) == "float [64]"
    loc = acc.location
    assert loc.kind is LocationKind.MEMORY and loc.space is AddressSpace.SHARED
    assert loc.symbol in prog.shared_vars and loc.symbol.endswith("3acc")
    counts = info.lookup("counts", pc)
    assert counts.variable.type.target.name == "unsigned int" and counts.variable.type.dims == (32,)


def test_without_source_the_array_is_bytes(monkeypatch):
    import gpudbg.compiler as compiler
    info, prog = _info("tiles_nosrc.cu", SRC.replace("tiles(", "tiles2("))
    monkeypatch.setattr(compiler, "_SOURCES", {})
    info = DebugInfo(prog)
    acc = info.lookup("acc", prog.functions["tiles2"].entry_pc + 4)
    assert str(acc.variable.type) == "unsigned char [256]"


@pytest.mark.parametrize("symbol,function,want", [
    ("_ZZ6rotateE4tile", "rotate", "tile"),
    ("_ZZ6rotatePiE4tile", "_Z6rotatePi", "tile"),
    ("_ZZ6rotatePiE4tile_0", "_Z6rotatePi", "tile"),
    ("_ZZ6rotateE4ti", "rotate", None),
    ("_ZZ5otherE4tile", "rotate", None),
    ("tile", "rotate", None),
])
def test_local_static_names(symbol, function, want):
    class SP:
        linkage_name = function
    assert _local_name(symbol, _prefix(SP)) == want
