"""The checked-in PTX fixtures are the NVRTC output of the current .cu
sources (a stale fixture would silently test old code)."""
from __future__ import annotations

import pytest

import kernels

CASES = [(cu.stem, opts) for cu in sorted(kernels.HERE.glob("*.cu"))
         for opts in kernels.VARIANTS.get(cu.stem, kernels.DEFAULT_VARIANTS)]


@pytest.mark.parametrize("name,opts", CASES, ids=[f"{n}-{kernels._tag(o)}" for n, o in CASES])
def test_fixture_is_current(name, opts):
    path = kernels.fixture_path(name, opts)
    src = (kernels.HERE / f"{name}.cu").read_text()
    assert path.exists(), f"missing {path.name}: run kernels.regenerate()"
    first = path.read_text().partition("\n")[0]
    assert first == kernels._HEADER + kernels._digest(src, opts), f"{path.name} is stale: run kernels.regenerate()"
