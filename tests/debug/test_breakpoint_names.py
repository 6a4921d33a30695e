"""`break NAME` against Itanium-mangled PTX names: nvcc's `_Z<len>name...`,
nested names (`_ZN2ns6kernelE...`) and Numba's kernels
(`_ZN8__main__4bodyB2v1B<len><abi tag>E5Array...`), whose
`..._exc_helper__` companion is not a match."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from gpudbg.debug.breakpoints import functions_named, names_function, qualified_name

NUMBA = ("_ZN8__main__4bodyB2v1B106cw51cXTLSUwv1sDUaKthoaNgoKmjgMVuW1AiA8rAEg2UjxRKtuAIAMYDWpKAqkSkPiQB1BQ"
         "Fk0DyoW21Oizc1a0UoPGnDpQE8oxrNQE_3dE5ArrayIiLi1E1C7mutable7alignedEi")


@pytest.mark.parametrize("linkage, name", [
    ("_Z6helperi", "helper"),
    ("_Z6kernelIiEvPT_", "kernel"),            # a template: the name before its arguments
    ("_ZN2ns6kernelEPf", "ns::kernel"),
    ("_ZNK1A1fEv", "A::f"),                     # a const method
    ("_Z3fooB5cxx11v", "foo"),                  # an ABI tag is not part of the name
    (NUMBA, "__main__::body"),
    ("saxpy", None),                            # extern "C"
    ("_ZZ6rotatePiE4tile", None),               # a local static, not a function
    ("_Z999x", None),                           # a length past the end
])
def test_qualified_name(linkage, name):
    assert qualified_name(linkage) == name


def test_wild_match_of_a_qualified_name():
    assert names_function(NUMBA, "body") and names_function(NUMBA, "__main__::body")
    assert not names_function(NUMBA, "main__::body") and not names_function(NUMBA, "other::body")
    assert not names_function("saxpy", "saxpy")     # an exact PTX name is matched before this


def _program(*names: str, builtin: str | None = None) -> SimpleNamespace:
    return SimpleNamespace(functions={n: SimpleNamespace(builtin=builtin, entry_pc=0, end_pc=4) for n in names})


def test_functions_named_drops_numba_companions_keeps_overloads():
    prog = _program(NUMBA, NUMBA + "__exc_helper__", "_Z6helperi", "_Z6helperii", "_Z7helpersi")
    assert functions_named(prog, "body") == [NUMBA]
    assert sorted(functions_named(prog, "helper")) == ["_Z6helperi", "_Z6helperii"]
    assert functions_named(prog, NUMBA + "__exc_helper__") == [NUMBA + "__exc_helper__"]   # its PTX name
    assert functions_named(_program("_Z6helperi", builtin="x"), "helper") == []           # no code
