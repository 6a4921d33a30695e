"""Kernels and helpers for the driver API tests of modules, libraries,
launches, occupancy, streams and events: hand-written PTX, loaded and
launched through the cu* functions with ctypes arguments as a C caller
passes them."""
from __future__ import annotations

import ctypes

import numpy as np

from cudrv_helpers import check, out_u64
from gpudbg.cuda_driver import copies as X
from gpudbg.cuda_driver import memory as M
from gpudbg.cuda_driver import module as MOD

SAXPY_PTX = r"""
.version 8.0
.target sm_80
.address_size 64

.global .align 4 .u32 counter = 7;
.global .align 8 .u64 table[4] = {1, 2, 3, 4};

.visible .entry saxpy(
    .param .u32 n,
    .param .f32 a,
    .param .u64 x,
    .param .u64 y
)
{
    .reg .pred %p<2>;
    .reg .b32 %r<6>;
    .reg .f32 %f<4>;
    .reg .b64 %rd<8>;
    ld.param.u32 %r1, [n];
    ld.param.f32 %f1, [a];
    ld.param.u64 %rd1, [x];
    ld.param.u64 %rd2, [y];
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mov.u32 %r4, %tid.x;
    mad.lo.s32 %r5, %r2, %r3, %r4;
    setp.ge.u32 %p1, %r5, %r1;
    @%p1 bra DONE;
    cvta.to.global.u64 %rd3, %rd1;
    cvta.to.global.u64 %rd4, %rd2;
    mul.wide.u32 %rd5, %r5, 4;
    add.s64 %rd6, %rd3, %rd5;
    add.s64 %rd7, %rd4, %rd5;
    ld.global.f32 %f2, [%rd6];
    ld.global.f32 %f3, [%rd7];
    fma.rn.f32 %f3, %f1, %f2, %f3;
    st.global.f32 [%rd7], %f3;
DONE:
    ret;
}

.visible .entry poke(.param .u64 p, .param .u32 v)
{
    .reg .b64 %rd<2>;
    .reg .b32 %r<2>;
    ld.param.u64 %rd1, [p];
    ld.param.u32 %r1, [v];
    st.global.u32 [%rd1], %r1;
    ret;
}
"""


_alive: dict[str, ctypes.Array] = {}


def c_string(text: str) -> ctypes.Array:
    return ctypes.create_string_buffer(text.encode())


def cstr(text: str) -> int:
    """The address of a NUL-terminated copy of `text` that stays alive."""
    buf = _alive.get(text)
    if buf is None:
        buf = _alive[text] = c_string(text)
    return ctypes.addressof(buf)


def load_module(text: str = SAXPY_PTX) -> int:
    buf = c_string(text)
    h = out_u64()
    check(MOD.cuModuleLoadData(h.addr, ctypes.addressof(buf)))
    return h.value


def function(hmod: int, name: str) -> int:
    h = out_u64()
    check(MOD.cuModuleGetFunction(h.addr, hmod, cstr(name)))
    return h.value


def dalloc(nbytes: int) -> int:
    p = out_u64()
    check(M.cuMemAlloc_v2(p.addr, nbytes))
    return p.value


def to_device(arr: np.ndarray) -> int:
    p = dalloc(arr.nbytes)
    check(X.cuMemcpyHtoD_v2(p, arr.ctypes.data, arr.nbytes))
    return p


def from_device(ptr: int, like: np.ndarray) -> np.ndarray:
    out = np.empty_like(like)
    check(X.cuMemcpyDtoH_v2(out.ctypes.data, ptr, out.nbytes))
    return out


class Params:
    """kernelParams: an array of void* pointing at ctypes values."""

    def __init__(self, *values):
        self.values = values
        self.array = (ctypes.c_void_p * max(len(values), 1))(*[ctypes.addressof(v) for v in values])

    @property
    def addr(self) -> int:
        return ctypes.addressof(self.array)


def saxpy_params(n: int, a: float, x: int, y: int) -> Params:
    return Params(ctypes.c_uint32(n), ctypes.c_float(a), ctypes.c_uint64(x), ctypes.c_uint64(y))


def saxpy_data(n: int = 1000):
    rng = np.random.default_rng(1)
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    return x, y, to_device(x), to_device(y)
