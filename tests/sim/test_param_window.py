"""cvta.param: the generic address of a kernel parameter (a
__grid_constant__ parameter's address in -G code) reads the launch's
parameters from a read-only copy that lives while the wave runs
(sim/param_window.py)."""
from __future__ import annotations

import numpy as np
import pytest

from kernels import ARCH, Out, compile_cuda, run

pytest.importorskip("cuda.bindings.nvrtc", reason="the kernels are compiled by NVRTC")

SRC = r'''
struct P { int v[8]; };
extern "C" __global__ void read_param(const __grid_constant__ P p, int* out) {
  const int* q = &p.v[0];
  out[threadIdx.x] = q[threadIdx.x % 8] * 10 + (int)threadIdx.x;
}
extern "C" __global__ void write_param(const __grid_constant__ P p, int* out) {
  int* q = const_cast<int*>(&p.v[0]);
  q[threadIdx.x % 8] = 1;
  out[threadIdx.x] = 0;
}
'''


@pytest.mark.parametrize("opts", [(ARCH,), (ARCH, "-G")], ids=["O", "G"])
def test_grid_constant_parameter_read_through_its_address(opts):
    ptx = compile_cuda(SRC, opts)
    if "-G" in opts:    # -G code takes the parameter's generic address (NVRTC may in optimized code too)
        assert "cvta.param" in ptx
    p = (np.arange(8, dtype=np.int32) * 7 - 3).tobytes()
    r = run(ptx, "read_param", (1,), (32,), [p, Out(32, np.int32)])
    t = np.arange(32)
    np.testing.assert_array_equal(r[1], (np.arange(8) * 7 - 3)[t % 8] * 10 + t)
    labels = [a.label for a in r.gpu.memory.allocations()]
    assert not any("cvta.param" in (x or "") for x in labels)      # the copy went with the wave


def test_a_store_through_a_parameter_address_faults():
    ptx = compile_cuda(SRC, (ARCH, "-G"))
    r = run(ptx, "write_param", (1,), (32,), [bytes(32), Out(32, np.int32)], expect_fault=True)
    assert "read-only" in r.fault.message or "readonly" in r.fault.message.replace("-", "")
