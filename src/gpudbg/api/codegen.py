"""CUDA C for the array operations, compiled by NVRTC and cached per device.

One idea: every elementwise operation (arithmetic, comparisons, casts,
strided copies) is the same grid-stride kernel over byte-strided operands,
specialised only by the C expression, the C types and the number of axes;
broadcasting is a zero stride, so no operand is ever materialised. Sources
are generated from the data tables below, compiled once per process and
device context (and on disk by gpudbg.compile's PTX cache), and launched
through the ordinary Kernel path, so these kernels are checked, traced and
sanitized like the user's own.

It does not do float16/complex (no C type here) or fuse operations.
"""
from __future__ import annotations

import threading
from typing import Any

import numpy as np

from gpudbg.api.device import current_ordinal, generation

MAX_DIMS = 8
BLOCK = 256
MAX_BLOCKS = 64   # few large waves: the simulator is fastest on wide waves, not many blocks

C_TYPES: dict[str, str] = {
    "?": "bool", "b": "signed char", "B": "unsigned char", "h": "short", "H": "unsigned short",
    "i": "int", "I": "unsigned int", "l": "long long", "L": "unsigned long long",
    "q": "long long", "Q": "unsigned long long", "f": "float", "d": "double", "e": "__half",
}
# numpy computes float16 ufuncs in float32 and rounds each result to half; so do the kernels
_COMPUTE = {"e": np.dtype(np.float32)}

PRELUDE = r"""
struct gd_geo { long long v[%(MAX)d]; };
template <typename T> struct gd_u;
template <> struct gd_u<signed char> { typedef unsigned int t; };
template <> struct gd_u<unsigned char> { typedef unsigned int t; };
template <> struct gd_u<short> { typedef unsigned int t; };
template <> struct gd_u<unsigned short> { typedef unsigned int t; };
template <> struct gd_u<int> { typedef unsigned int t; };
template <> struct gd_u<unsigned int> { typedef unsigned int t; };
template <> struct gd_u<long long> { typedef unsigned long long t; };
template <> struct gd_u<unsigned long long> { typedef unsigned long long t; };
template <typename T> struct gd_lim;
template <> struct gd_lim<signed char> { static __device__ signed char lo() { return -128; } static __device__ signed char hi() { return 127; } };
template <> struct gd_lim<unsigned char> { static __device__ unsigned char lo() { return 0; } static __device__ unsigned char hi() { return 255; } };
template <> struct gd_lim<short> { static __device__ short lo() { return -32768; } static __device__ short hi() { return 32767; } };
template <> struct gd_lim<unsigned short> { static __device__ unsigned short lo() { return 0; } static __device__ unsigned short hi() { return 65535; } };
template <> struct gd_lim<int> { static __device__ int lo() { return -2147483647 - 1; } static __device__ int hi() { return 2147483647; } };
template <> struct gd_lim<unsigned int> { static __device__ unsigned int lo() { return 0u; } static __device__ unsigned int hi() { return 4294967295u; } };
template <> struct gd_lim<long long> { static __device__ long long lo() { return -9223372036854775807LL - 1; } static __device__ long long hi() { return 9223372036854775807LL; } };
template <> struct gd_lim<unsigned long long> { static __device__ unsigned long long lo() { return 0ull; } static __device__ unsigned long long hi() { return 18446744073709551615ull; } };
template <> struct gd_lim<bool> { static __device__ bool lo() { return false; } static __device__ bool hi() { return true; } };
template <> struct gd_lim<float> { static __device__ float lo() { return -__int_as_float(0x7f800000); } static __device__ float hi() { return __int_as_float(0x7f800000); } };
template <> struct gd_lim<double> { static __device__ double lo() { return -__longlong_as_double(0x7ff0000000000000LL); } static __device__ double hi() { return __longlong_as_double(0x7ff0000000000000LL); } };

/* integer arithmetic wraps as numpy's does: computed unsigned, no C overflow */
template <typename T> __device__ T gd_add(T a, T b) { typedef typename gd_u<T>::t U; return (T)((U)a + (U)b); }
template <typename T> __device__ T gd_sub(T a, T b) { typedef typename gd_u<T>::t U; return (T)((U)a - (U)b); }
template <typename T> __device__ T gd_mul(T a, T b) { typedef typename gd_u<T>::t U; return (T)((U)a * (U)b); }
template <typename T> __device__ T gd_neg(T a) { typedef typename gd_u<T>::t U; return (T)((U)0 - (U)a); }
template <typename T> __device__ T gd_abs(T a) { return a < (T)0 ? gd_neg(a) : a; }
/* numpy: x // 0 == 0 and x %% 0 == 0 for integers; MIN // -1 wraps to MIN */
template <typename T> __device__ T gd_ifloordiv(T a, T b) {
    if (b == (T)0) return (T)0;
    if ((T)-1 < (T)0 && b == (T)-1) return gd_neg(a);
    T q = a / b;
    if ((a %% b) != (T)0 && ((a < (T)0) != (b < (T)0))) q = q - (T)1;
    return q;
}
template <typename T> __device__ T gd_imod(T a, T b) {
    if (b == (T)0) return (T)0;
    if ((T)-1 < (T)0 && b == (T)-1) return (T)0;
    T r = a %% b;
    if (r != (T)0 && ((r < (T)0) != (b < (T)0))) r = r + b;
    return r;
}
template <typename T> __device__ T gd_ipow(T a, T b) {
    typedef typename gd_u<T>::t U;
    U r = 1, base = (U)a; unsigned long long e = (unsigned long long)b;
    while (e) { if (e & 1ull) r = (U)(r * base); base = (U)(base * base); e >>= 1; }
    return (T)r;
}
/* npy_divmod: floor division and remainder of floats exactly as numpy computes them */
template <typename T> __device__ T gd_fdivmod(T a, T b, T *mod_out) {
    T mod = fmod(a, b);
    if (b == (T)0) { *mod_out = mod; return a / b; }
    T div = (a - mod) / b;
    if (mod != (T)0) { if ((b < (T)0) != (mod < (T)0)) { mod += b; div -= (T)1; } }
    else { mod = copysign((T)0, b); }
    T floordiv;
    if (div != (T)0) { floordiv = floor(div); if (div - floordiv > (T)0.5) floordiv += (T)1; }
    else { floordiv = copysign((T)0, a / b); }
    *mod_out = mod;
    return floordiv;
}
template <typename T> __device__ T gd_ffloordiv(T a, T b) { T m; if (b == (T)0) return a / b; return gd_fdivmod(a, b, &m); }
template <typename T> __device__ T gd_fmod(T a, T b) { T m; if (b == (T)0) return fmod(a, b); gd_fdivmod(a, b, &m); return m; }
/* comparisons of a signed with an unsigned 64-bit value, by value (numpy's mixed loops) */
__device__ int gd_cmp_su(long long a, unsigned long long b) { if (a < 0) return -1; unsigned long long u = (unsigned long long)a; return u < b ? -1 : (u > b ? 1 : 0); }
__device__ int gd_cmp_us(unsigned long long a, long long b) { return -gd_cmp_su(b, a); }
/* min/max that propagate NaN as numpy's minimum/maximum reductions do */
template <typename T> __device__ T gd_min(T a, T b) { return (a != a || a < b) ? a : b; }
template <typename T> __device__ T gd_max(T a, T b) { return (a != a || a > b) ? a : b; }
""" % {"MAX": MAX_DIMS}


def c_type(dtype: np.dtype) -> str:
    """The C type that stores `dtype`."""
    t = C_TYPES.get(dtype.char)
    if t is None or dtype.byteorder == ">":
        raise TypeError(f"device array operations support bool, integer, float16, float32 and float64 "
                        f"arrays in native byte order, not {dtype}")
    return t


def compute_dtype(dtype: np.dtype) -> np.dtype:
    """The dtype arithmetic on `dtype` is done in (float32 for float16)."""
    return _COMPUTE.get(dtype.char, dtype)


def compute_type(dtype: np.dtype) -> str:
    return c_type(compute_dtype(dtype))


def store(dtype: np.dtype, expr: str, expr_dtype: np.dtype) -> str:
    """C converting `expr` (of `expr_dtype`) to the storage type of `dtype`:
    to float16 by one correctly rounded conversion, as numpy's casts."""
    if dtype.char == "e":
        return f"__double2half({expr})" if expr_dtype.char == "d" else f"__float2half_rn((float)({expr}))"
    return f"({c_type(dtype)})({expr})"


def geo(values: tuple[int, ...]) -> bytes:
    """A gd_geo kernel argument (the struct's raw bytes, padded with zeros)."""
    if len(values) > MAX_DIMS:
        raise ValueError(f"device array operations support at most {MAX_DIMS} dimensions, got {len(values)}")
    return np.array(list(values) + [0] * (MAX_DIMS - len(values)), dtype="<i8").tobytes()


def offsets_code(ndim: str, names: list[str], shape: str, index: str, strides: list[str]) -> str:
    """C that turns a linear C-order `index` into byte offsets `names[k]`
    over the first `ndim` (a C expression) axes of `shape` and `strides`.
    The number of axes is a kernel argument, not part of the source, so one
    compiled kernel serves arrays of every rank."""
    lines = [f"long long {n} = 0;" for n in names]
    # one axis (what coalescing makes of any contiguous operand set): no division at all
    lines.append(f"if ({ndim} == 1) {{")
    for n, s in zip(names, strides):
        lines.append(f"  {n} = {index} * {s}.v[0];")
    lines.append("} else {")
    lines.append(f"  long long gd_r = {index};")
    lines.append(f"  for (int gd_d = {ndim} - 1; gd_d >= 0; --gd_d) {{")
    lines.append(f"    long long gd_c = gd_r % {shape}.v[gd_d]; gd_r /= {shape}.v[gd_d];")
    for n, s in zip(names, strides):
        lines.append(f"    {n} += gd_c * {s}.v[gd_d];")
    lines.append("  }")
    lines.append("}")
    return "\n    ".join(lines)


def grid_for(n: int) -> int:
    return max(1, min(MAX_BLOCKS, -(-n // BLOCK)))


class KernelCache:
    """Compiled modules by (device, its context generation, source)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._modules: dict[tuple[int, str], tuple[Any, Any]] = {}

    def kernel(self, source: str, name: str, file_name: str) -> Any:
        from gpudbg.compiler import compile as compile_cuda

        device = current_ordinal()
        token = generation(device)
        key = (device, source)
        with self._lock:
            hit = self._modules.get(key)
            if hit is not None and hit[0] is token:
                return hit[1][name]
        header = "#include <cuda_fp16.h>\n" if "__half" in source else ""
        module = compile_cuda(header + PRELUDE + source, name=file_name, options=["-std=c++17"])
        with self._lock:
            self._modules[key] = (token, module)
        return module[name]

    def clear(self) -> None:
        with self._lock:
            self._modules.clear()


CACHE = KernelCache()
