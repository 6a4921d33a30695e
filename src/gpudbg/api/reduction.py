"""sum, min and max of DeviceArrays as kernels, with numpy's axis rules.

One kernel shape serves every axis choice: the reduced axes are moved
last, each output element is reduced by `parts` blocks over byte-strided
input (a shared-memory tree inside each block), and when there are fewer
outputs than the device wants blocks, the (outputs x parts) partials are
reduced again by the same kernel. Result dtypes are numpy's (sum of small
integers is int64/uint64, min/max keep the dtype); min and max propagate
NaN and refuse empty input as numpy does. Float sums are tree-ordered, as
numpy's pairwise summation is, so they agree to rounding, not bit for bit.

Not here: `dtype=`, `where=`, `initial=` or other reductions (prod, mean).
"""
from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np

from gpudbg.api import codegen

_COMBINE = {"sum": "gd_add<ACC>(x, y)", "min": "gd_min<ACC>(x, y)", "max": "gd_max<ACC>(x, y)"}
_FLOAT_SUM = "x + y"
_IDENTITY = {"sum": "(ACC)0", "min": "gd_lim<ACC>::hi()", "max": "gd_lim<ACC>::lo()"}


def _source(op: str, in_dt: np.dtype, acc_dt: np.dtype, out_dt: np.dtype) -> str:
    combine = _FLOAT_SUM if op == "sum" and acc_dt.kind == "f" else _COMBINE[op]
    if op == "sum" and acc_dt.kind == "b":
        combine = "x || y"
    koff = codegen.offsets_code("kdim", ["base"], "kshape", "o", ["kstr"])
    roff = codegen.offsets_code("rdim", ["off"], "rshape", "j", ["rstr"])
    return f"""
typedef {codegen.c_type(acc_dt)} ACC;
typedef {codegen.c_type(out_dt)} OUT;
__device__ __forceinline__ ACC gd_combine(ACC x, ACC y) {{ return {combine}; }}
extern "C" __global__ void gd_reduce(long long nout, long long m, long long parts, int kdim, gd_geo kshape,
                                     gd_geo kstr, int rdim, gd_geo rshape, gd_geo rstr, OUT *out,
                                     const char *in) {{
  __shared__ ACC sh[{codegen.BLOCK}];
  long long chunk = (m + parts - 1) / parts;
  for (long long blk = blockIdx.x; blk < nout * parts; blk += gridDim.x) {{
    long long o = blk / parts, part = blk % parts;
    {koff}
    ACC acc = {_IDENTITY[op]};
    long long hi = (part + 1) * chunk < m ? (part + 1) * chunk : m;
    for (long long j = part * chunk + threadIdx.x; j < hi; j += blockDim.x) {{
      {roff}
      acc = gd_combine(acc, (ACC)*(const {codegen.c_type(in_dt)} *)(in + base + off));
    }}
    sh[threadIdx.x] = acc;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {{
      if (threadIdx.x < s) sh[threadIdx.x] = gd_combine(sh[threadIdx.x], sh[threadIdx.x + s]);
      __syncthreads();
    }}
    if (threadIdx.x == 0) out[blk] = {codegen.store(out_dt, "sh[0]", acc_dt)};
    __syncthreads();
  }}
}}
"""


def result_dtype(op: str, dtype: np.dtype) -> np.dtype:
    return np.sum(np.zeros(1, dtype)).dtype if op == "sum" else dtype


def _axes(axis: Any, ndim: int) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    items = axis if isinstance(axis, tuple) else (axis,)
    out = []
    for a in items:
        try:
            i = operator.index(a)
        except TypeError:
            raise TypeError(f"axis must be None, an int or a tuple of ints, not {axis!r}") from None
        if not -ndim <= i < ndim:
            raise np.exceptions.AxisError(i, ndim)
        if i % ndim in out:
            raise ValueError(f"duplicate value in 'axis': {axis!r}")
        out.append(i % ndim)
    return tuple(sorted(out))


def reduce(op: str, arr: Any, axis: Any = None, keepdims: bool = False, stream: Any = None) -> Any:
    """`np.<op>(arr, axis, keepdims=...)` as a device array (0-d for a full reduction)."""
    from gpudbg.api.device import on_device
    from gpudbg.api.memory import DeviceArray

    codegen.c_type(arr.dtype)
    axes = _axes(axis, arr.ndim)
    kept = [d for d in range(arr.ndim) if d not in axes]
    out_shape = tuple(arr.shape[d] for d in kept)
    m = math.prod(arr.shape[d] for d in axes)
    nout = math.prod(out_shape)
    if m == 0 and op != "sum" and nout:
        raise ValueError(f"zero-size array to reduction operation {'minimum' if op == 'min' else 'maximum'} "
                         f"which has no identity")
    out_dt = result_dtype(op, arr.dtype)
    acc_dt = codegen.compute_dtype(out_dt)        # float16 is reduced in float32, as numpy's loops do
    final_shape = tuple(1 if d in axes else n for d, n in enumerate(arr.shape)) if keepdims else out_shape
    with on_device(arr.device):
        out = DeviceArray.empty(final_shape, out_dt)
        if nout == 0:
            return out
        kshape = out_shape
        kstr = tuple(arr.strides[d] for d in kept)
        rshape = tuple(arr.shape[d] for d in axes)
        rstr = tuple(arr.strides[d] for d in axes)
        parts = 1
        if nout < codegen.MAX_BLOCKS and m > codegen.BLOCK:
            parts = min(-(-codegen.MAX_BLOCKS // nout), -(-m // codegen.BLOCK))
        target = out if parts == 1 else DeviceArray.empty((nout, parts), acc_dt)
        _launch(op, arr, acc_dt, nout, m, parts, kshape, kstr, rshape, rstr, target, stream)
        if parts > 1:
            rows = target.itemsize * parts
            _launch(op, target, acc_dt, nout, parts, 1, (nout,), (rows,), (parts,), (target.itemsize,),
                    out, stream)
    out._last_stream = stream
    return out


def _launch(op: str, arr: Any, acc_dt: np.dtype, nout: int, m: int, parts: int, kshape: tuple[int, ...],
            kstr: tuple[int, ...], rshape: tuple[int, ...], rstr: tuple[int, ...], out: Any, stream: Any) -> None:
    from gpudbg.api import views

    kshape, (kstr,) = views.coalesce(kshape, [kstr])
    rshape, (rstr,) = views.coalesce(rshape, [rstr])
    src = _source(op, arr.dtype, acc_dt, out.dtype)
    kernel = codegen.CACHE.kernel(src, "gd_reduce", f"gpudbg_{op}.cu")
    blocks = max(1, min(nout * parts, codegen.MAX_BLOCKS))
    kernel.launch(blocks, codegen.BLOCK, [nout, m, parts, len(kshape), codegen.geo(kshape), codegen.geo(kstr),
                                          len(rshape), codegen.geo(rshape), codegen.geo(rstr), out.ptr, arr.ptr],
                  stream=stream)
