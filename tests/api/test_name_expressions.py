"""Templated kernels through NVRTC name expressions: gpudbg.compile(...,
name_expressions=[...]) and mod["foo<float>"] launch the instantiation; the
lowered names survive the PTX disk cache; bad expressions are errors."""
from __future__ import annotations

import numpy as np
import pytest

import gpudbg
from gpudbg.compiler import CompileError, compile_ptx, lowered_names

SRC = r'''
template <typename T, int N>
__global__ void scale(T *x, T a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = x[i] * a + (T)N;
}'''
EXPRS = ["scale<float, 1>", "scale<double, 2>", "scale<int, 3>"]


def test_each_instantiation_launches_by_its_expression(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    mod = gpudbg.compile(SRC, name_expressions=EXPRS)
    assert set(mod.lowered) == set(EXPRS) and all(v.startswith("_Z") for v in mod.lowered.values())
    for expr, dtype, bias in zip(EXPRS, (np.float32, np.float64, np.int32), (1, 2, 3)):
        x = gpudbg.to_device(np.arange(5, dtype=dtype))
        mod[expr][1, 32](x, dtype(3), 5)
        np.testing.assert_array_equal(x.to_host(), np.arange(5, dtype=dtype) * 3 + bias)
    assert mod.get_kernel("scale<int, 3>") is mod["scale<int, 3>"]
    again = gpudbg.compile(SRC, name_expressions=EXPRS)           # from the disk cache
    assert again.lowered == mod.lowered


def test_expressions_are_part_of_the_cache_key(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    one = lowered_names(compile_ptx(SRC, name_expressions=EXPRS[:1]))
    two = lowered_names(compile_ptx(SRC, name_expressions=EXPRS[1:]))
    assert set(one) == {EXPRS[0]} and set(two) == set(EXPRS[1:])


def test_bad_expressions_are_errors():
    with pytest.raises(CompileError):
        gpudbg.compile(SRC, name_expressions=["scale<float>"])    # one template argument missing
    with pytest.raises(TypeError, match="list of strings"):
        gpudbg.compile(SRC, name_expressions="scale<float, 1>")
    mod = gpudbg.compile(SRC, name_expressions=EXPRS[:1])
    with pytest.raises(gpudbg.GPUError, match="its name expressions are: scale<float, 1>"):
        mod["scale<double, 2>"]


def test_name_expressions_of_templated_variables():
    mod = gpudbg.compile(r'''
    template <typename T> __device__ T table[4] = {1, 2, 3, 4};
    __global__ void touch(int *) {}''', name_expressions=["&table<int>", "table<double>"])
    np.testing.assert_array_equal(mod.get_global("table<int>", np.int32).to_host(), [1, 2, 3, 4])
    np.testing.assert_array_equal(mod.get_global("table<double>", np.float64).to_host(), [1, 2, 3, 4])
