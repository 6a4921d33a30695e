"""Elementwise operations on DeviceArrays, as numpy's ufuncs define them.

numpy decides everything but the arithmetic: the result shape is
`np.broadcast_shapes`, the loop and result dtypes are the ufunc's own
`resolve_dtypes` (NEP 50: Python scalars are weak, numpy scalars are not),
and unsupported combinations raise numpy's own TypeError. The arithmetic
then runs on the simulated GPU in one generated kernel (codegen.py) whose C
follows numpy's integer rules (wrap-around, x // 0 == 0, floored division
and modulo) and its float floor-division/modulo algorithm (npy_divmod).
Scalars travel as kernel parameters, never as device arrays.

Not here: ufunc keyword arguments beyond `out`, and float16/complex.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from gpudbg.api import codegen, views


@dataclass(frozen=True)
class Op:
    ufunc: np.ufunc
    int_expr: str      # C with a, b of the loop type T
    float_expr: str
    bool_expr: str | None = None


_OPS: dict[str, Op] = {
    "add": Op(np.add, "gd_add<T>(a, b)", "a + b", "a || b"),
    "subtract": Op(np.subtract, "gd_sub<T>(a, b)", "a - b"),
    "multiply": Op(np.multiply, "gd_mul<T>(a, b)", "a * b", "a && b"),
    "true_divide": Op(np.true_divide, "a / b", "a / b"),
    "floor_divide": Op(np.floor_divide, "gd_ifloordiv<T>(a, b)", "gd_ffloordiv<T>(a, b)"),
    "remainder": Op(np.remainder, "gd_imod<T>(a, b)", "gd_fmod<T>(a, b)"),
    "power": Op(np.power, "gd_ipow<T>(a, b)", "pow(a, b)"),
    "negative": Op(np.negative, "gd_neg<T>(a)", "-a"),
    "absolute": Op(np.absolute, "gd_abs<T>(a)", "fabs(a)", "a"),
    "copy": Op(np.positive, "a", "a", "a"),
}
_COMPARE = {"less": (np.less, "<"), "less_equal": (np.less_equal, "<="), "greater": (np.greater, ">"),
            "greater_equal": (np.greater_equal, ">="), "equal": (np.equal, "=="),
            "not_equal": (np.not_equal, "!=")}


def _expr(name: str, loop: list[np.dtype]) -> str:
    if name in _COMPARE:
        sym = _COMPARE[name][1]
        a, b = loop
        if a.kind in "iu" and b.kind in "iu" and a.kind != b.kind and 8 in (a.itemsize, b.itemsize):
            fn = "gd_cmp_su" if a.kind == "i" else "gd_cmp_us"
            return f"{fn}(a, b) {sym} 0"
        return f"a {sym} b"
    op = _OPS[name]
    kind = loop[0].kind
    if kind == "b":
        if op.bool_expr is None:
            raise TypeError(f"numpy has no boolean {name}")
        return op.bool_expr
    return op.float_expr if kind == "f" else op.int_expr


def _expr_dtype(name: str, loop: list[np.dtype]) -> np.dtype:
    return np.dtype(np.bool_) if name in _COMPARE else codegen.compute_dtype(loop[0])


def _ufunc(name: str) -> np.ufunc:
    return _COMPARE[name][0] if name in _COMPARE else _OPS[name].ufunc


def _source(name: str, loop: list[np.dtype], out_dt: np.dtype, kinds: list[tuple[str, np.dtype]]) -> str:
    """kinds: per input, ("array"|"scalar", its stored dtype)."""
    params = ["long long n", "int ndim", "gd_geo shape", "gd_geo s0", "char *p0"]
    loads = []
    for k, (kind, dt) in enumerate(kinds):
        var = "ab"[k]
        lt = codegen.compute_type(loop[k])
        if kind == "array":
            params += [f"gd_geo s{k + 1}", f"const char *p{k + 1}"]
            loads.append(f"{lt} {var} = ({lt})*(const {codegen.c_type(dt)} *)(p{k + 1} + o{k + 1});")
        else:
            params.append(f"{lt} {var}")
    arrays = [f"o{k + 1}" for k, (kind, _) in enumerate(kinds) if kind == "array"]
    offsets = codegen.offsets_code("ndim", ["o0", *arrays], "shape", "gd_i",
                                   ["s0", *[f"s{o[1:]}" for o in arrays]])
    t = codegen.compute_type(loop[0])
    return f"""
typedef {t} T;
extern "C" __global__ void gd_ew({", ".join(params)}) {{
  long long step = (long long)gridDim.x * blockDim.x;
  for (long long gd_i = (long long)blockIdx.x * blockDim.x + threadIdx.x; gd_i < n; gd_i += step) {{
    {offsets}
    {" ".join(loads)}
    *({codegen.c_type(out_dt)} *)(p0 + o0) = {codegen.store(out_dt, _expr(name, loop), _expr_dtype(name, loop))};
  }}
}}
"""


def _is_scalar(x: Any) -> bool:
    return isinstance(x, (bool, int, float, np.generic)) and not isinstance(x, (complex, np.complexfloating))


def _resolve(name: str, operands: list[Any]) -> tuple[list[np.dtype], np.dtype]:
    from gpudbg.api.memory import DeviceArray

    spec: list[Any] = []
    for x in operands:
        if isinstance(x, DeviceArray):
            spec.append(x.dtype)
        elif isinstance(x, np.generic):
            spec.append(x.dtype)
        elif isinstance(x, bool):
            spec.append(np.dtype(np.bool_))     # numpy treats a Python bool as np.bool_
        elif isinstance(x, (int, float)):
            spec.append(type(x))                # weak (NEP 50)
        else:
            raise TypeError(f"unsupported operand type for {name}: {type(x).__name__} "
                            f"(a DeviceArray, a Python or numpy scalar)")
    *loop, out = _ufunc(name).resolve_dtypes((*spec, None))
    if name in _COMPARE:
        # numpy compares a Python int with an integer array by value even when it does not
        # fit the array's dtype (uint8 array != -2); compare in a 64-bit type that holds it
        for k, x in enumerate(operands):
            if type(x) is int and loop[k].kind in "iu" and not _fits(x, loop[k]):
                loop[k] = np.dtype(np.int64) if _fits(x, np.dtype(np.int64)) else np.dtype(np.uint64)
    return list(loop), out


def _fits(value: int, dtype: np.dtype) -> bool:
    info = np.iinfo(dtype)
    return info.min <= value <= info.max


def apply(name: str, *operands: Any, out: Any = None, stream: Any = None) -> Any:
    """`ufunc(*operands)` on the device; returns a new DeviceArray unless `out` is given."""
    from gpudbg.api.memory import DeviceArray

    loop, out_dt = _resolve(name, list(operands))
    for dt in (*loop, out_dt):
        codegen.c_type(dt)
    arrays = [x for x in operands if isinstance(x, DeviceArray)]
    if not arrays:
        raise TypeError(f"{name}: at least one operand must be a DeviceArray")
    device = arrays[0].device
    for x in arrays:
        if x.device != device:
            raise ValueError(f"{name}: operands on devices {device} and {x.device}")
    shape = np.broadcast_shapes(*(x.shape for x in arrays))
    if name == "power" and loop[1].kind == "i":
        _check_integer_power(operands[1])
    if out is None:
        from gpudbg.api.device import on_device
        with on_device(device):
            out = DeviceArray.empty(shape, out_dt)
    else:
        if not isinstance(out, DeviceArray):
            raise TypeError(f"out must be a DeviceArray, not {type(out).__name__}")
        if np.broadcast_shapes(out.shape, shape) != out.shape:
            raise ValueError(f"{name}: result of shape {shape} does not fit out of shape {out.shape}")
        if not np.can_cast(out_dt, out.dtype, "same_kind"):
            raise TypeError(f"Cannot cast ufunc '{name}' output from {out_dt} to {out.dtype} "
                            f"with casting rule 'same_kind'")
        shape = out.shape
        if any(x is not out and x.overlaps(out) for x in arrays):
            # numpy buffers overlapping inputs; a kernel would read what it already wrote
            result = apply(name, *operands, stream=stream)
            launch("copy", [result.dtype], out, [result], shape, stream)
            return out
    launch(name, loop, out, list(operands), shape, stream)
    return out


def launch(name: str, loop: list[np.dtype], out: Any, operands: list[Any], shape: tuple[int, ...],
           stream: Any) -> None:
    """One gd_ew launch writing `out` (shape `shape`) from the operands."""
    from gpudbg.api.device import on_device
    from gpudbg.api.memory import DeviceArray

    out._check_writable()
    n = int(np.prod(shape, dtype=np.int64))
    if n == 0:
        return
    strides = [views.broadcast_strides(out.shape, out.strides, shape)]
    kinds: list[tuple[str, np.dtype]] = []
    for x in operands:
        if isinstance(x, DeviceArray):
            strides.append(views.broadcast_strides(x.shape, x.strides, shape))
            kinds.append(("array", x.dtype))
        else:
            kinds.append(("scalar", loop[len(kinds)]))
    cshape, cstrides = views.coalesce(shape, strides)
    src = _source(name, loop, out.dtype, kinds)
    args: list[Any] = [n, len(cshape), codegen.geo(cshape), codegen.geo(cstrides[0]), out.ptr]
    it = iter(cstrides[1:])
    for x, (kind, dt) in zip(operands, kinds):
        if kind == "array":
            args += [codegen.geo(next(it)), x.ptr]
        else:
            args.append(np.asarray(x, dtype=dt).astype(codegen.compute_dtype(dt)).tobytes())
    with on_device(out.device):
        kernel = codegen.CACHE.kernel(src, "gd_ew", f"gpudbg_{name}.cu")
        kernel.launch(codegen.grid_for(n), codegen.BLOCK, args, stream=stream)
    out._last_stream = stream


def _check_integer_power(exponent: Any) -> None:
    """numpy refuses negative integer exponents of integers; so do we (a
    device reduction of the exponents when they are an array)."""
    from gpudbg.api.memory import DeviceArray

    if isinstance(exponent, DeviceArray):
        if exponent.dtype.kind == "i" and exponent.size and int(exponent.min().item()) < 0:
            raise ValueError("Integers to negative integer powers are not allowed.")
    elif int(exponent) < 0:
        raise ValueError("Integers to negative integer powers are not allowed.")


def binary(name: str, reflected: bool = False) -> Callable[[Any, Any], Any]:
    def method(self: Any, other: Any) -> Any:
        from gpudbg.api.memory import DeviceArray
        if not isinstance(other, DeviceArray) and not _is_scalar(other):
            return NotImplemented
        return apply(name, other, self) if reflected else apply(name, self, other)
    method.__name__ = f"__{'r' if reflected else ''}{name}__"
    return method


def inplace(name: str) -> Callable[[Any, Any], Any]:
    def method(self: Any, other: Any) -> Any:
        from gpudbg.api.memory import DeviceArray
        if not isinstance(other, DeviceArray) and not _is_scalar(other):
            return NotImplemented
        return apply(name, self, other, out=self)
    return method


def unary(name: str) -> Callable[[Any], Any]:
    def method(self: Any) -> Any:
        return apply(name, self)
    return method


BINARY = {"add": ("__add__", "__radd__", "__iadd__"), "subtract": ("__sub__", "__rsub__", "__isub__"),
          "multiply": ("__mul__", "__rmul__", "__imul__"),
          "true_divide": ("__truediv__", "__rtruediv__", "__itruediv__"),
          "floor_divide": ("__floordiv__", "__rfloordiv__", "__ifloordiv__"),
          "remainder": ("__mod__", "__rmod__", "__imod__"), "power": ("__pow__", "__rpow__", "__ipow__")}
COMPARE = {"less": "__lt__", "less_equal": "__le__", "greater": "__gt__", "greater_equal": "__ge__",
           "equal": "__eq__", "not_equal": "__ne__"}
UNARY = {"negative": "__neg__", "absolute": "__abs__"}


def install(cls: type) -> None:
    """Give `cls` numpy's operators (the table above)."""
    for name, (fwd, ref, inp) in BINARY.items():
        setattr(cls, fwd, binary(name))
        setattr(cls, ref, binary(name, reflected=True))
        setattr(cls, inp, inplace(name))
    for name, dunder in COMPARE.items():
        setattr(cls, dunder, binary(name))
    for name, dunder in UNARY.items():
        setattr(cls, dunder, unary(name))
    cls.__hash__ = None   # type: ignore[assignment]   # == is elementwise, as numpy's
    cls.__array_ufunc__ = None   # numpy scalars and arrays defer to our reflected operators


def assign(dst: Any, value: Any, stream: Any) -> None:
    """`dst[...] = value` with numpy's broadcasting and its (unsafe) casting
    of arrays; a Python scalar that does not fit raises numpy's OverflowError."""
    from gpudbg.api.memory import DeviceArray

    if isinstance(value, DeviceArray):
        if value.device != dst.device:
            raise ValueError(f"cannot assign an array of device {value.device} to one of device {dst.device}")
        if np.broadcast_shapes(value.shape, dst.shape) != dst.shape:
            raise ValueError(f"could not broadcast input array from shape {value.shape} into shape {dst.shape}")
        if value.overlaps(dst):
            value = value.copy(stream)
        launch("copy", [value.dtype], dst, [value], dst.shape, stream)
        return
    from gpudbg.api.interop import asarray, is_device_producer
    if is_device_producer(value):
        assign(dst, asarray(value), stream)
        return
    if not isinstance(value, np.ndarray) and hasattr(value, "__dlpack__") and hasattr(value, "__dlpack_device__"):
        value = np.from_dlpack(value)     # a CPU DLPack producer
    host = np.asarray(value)
    if host.dtype.hasobject:
        raise TypeError(f"cannot assign {type(value).__name__} values to a device array")
    if host.ndim == 0:
        launch("copy", [dst.dtype], dst, [np.asarray(value, dtype=dst.dtype)], dst.shape, stream)
        return
    from gpudbg.api.device import on_device
    with on_device(dst.device):
        tmp = DeviceArray.empty(host.shape, host.dtype).copy_from_host(host, stream)
    assign(dst, tmp, stream)
