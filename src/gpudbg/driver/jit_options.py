"""JIT and linker options (CUjit_option, numbered as CUDA's CUjit_option).

Options arrive as C does it: a count, a list of option codes and a list of
values. They are validated once into a JitOptions record; what the
simulator can honour it honours (register cap and thread count feed the
kernel's occupancy footprint, log buffers receive the load log and the PTX
errors, the wall time gets the measured load time, the cache mode shows in
CU_FUNC_ATTRIBUTE_CACHE_MODE_CA, debug/line info flags are recorded on the module),
and every option it cannot act on is named in the info log as ignored, so
no option disappears silently. The one idea for outputs: as in C, where
the driver overwrites `optionValues[i]`, outputs are written back into the
caller's optionValues list, and log text into the caller's buffer object.

It does not model ptxas optimisation levels or spilling.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gpudbg.driver.status import CUresult, EngineError
from gpudbg.driver.types import CUjit_cacheMode, CUjit_fallback, CUjit_option, CUjitInputType


# CUjit_target: CU_TARGET_COMPUTE_XX = XX
JIT_TARGETS = frozenset({30, 32, 35, 37, 50, 52, 53, 60, 61, 62, 70, 72, 75, 80, 86, 87, 89, 90,
                         100, 101, 103, 110, 120, 121})
# arch-specific (CU_TARGET_COMPUTE_90A = 0x10000 + 90) and family (..._100F =
# 0x20000 + 100) targets; `JitOptions.target` is their compute_XX number
ACCELERATED_TARGET_BASE, FAMILY_TARGET_BASE = 0x10000, 0x20000
JIT_TARGETS_ALL = JIT_TARGETS | {ACCELERATED_TARGET_BASE + t for t in (90, 100, 103, 110, 120, 121)} \
    | {FAMILY_TARGET_BASE + t for t in (100, 103, 110, 120, 121)}

O = CUjit_option
MAX_OPTIONS = 1 << 10     # far more than the CUjit_option values that exist
_BOOL = {O.CU_JIT_GENERATE_DEBUG_INFO, O.CU_JIT_LOG_VERBOSE, O.CU_JIT_GENERATE_LINE_INFO, O.CU_JIT_NEW_SM3X_OPT,
         O.CU_JIT_FAST_COMPILE, O.CU_JIT_LTO, O.CU_JIT_FTZ, O.CU_JIT_PREC_DIV, O.CU_JIT_PREC_SQRT, O.CU_JIT_FMA,
         O.CU_JIT_OPTIMIZE_UNUSED_DEVICE_VARIABLES, O.CU_JIT_POSITION_INDEPENDENT_CODE,
         O.CU_JIT_OVERRIDE_DIRECTIVE_VALUES}
_OUTPUT_ONLY = {O.CU_JIT_WALL_TIME}
_NO_VALUE = {O.CU_JIT_TARGET_FROM_CUCONTEXT}
# options recorded but without effect on the simulator, and why
IGNORED = {
    O.CU_JIT_OPTIMIZATION_LEVEL: "the simulator executes PTX as written",
    O.CU_JIT_FALLBACK_STRATEGY: "only PTX runs on the simulator",
    O.CU_JIT_NEW_SM3X_OPT: "no SASS is generated",
    O.CU_JIT_FAST_COMPILE: "no SASS is generated",
    O.CU_JIT_GLOBAL_SYMBOL_NAMES: "host-provided symbol addresses are not bound",
    O.CU_JIT_GLOBAL_SYMBOL_ADDRESSES: "host-provided symbol addresses are not bound",
    O.CU_JIT_GLOBAL_SYMBOL_COUNT: "host-provided symbol addresses are not bound",
    O.CU_JIT_LTO: "inputs are PTX, not NVVM IR",
    O.CU_JIT_FTZ: "applies to LTO only",
    O.CU_JIT_PREC_DIV: "applies to LTO only",
    O.CU_JIT_PREC_SQRT: "applies to LTO only",
    O.CU_JIT_FMA: "applies to LTO only",
    O.CU_JIT_REFERENCED_KERNEL_NAMES: "nothing is dead-stripped",
    O.CU_JIT_REFERENCED_KERNEL_COUNT: "nothing is dead-stripped",
    O.CU_JIT_REFERENCED_VARIABLE_NAMES: "nothing is dead-stripped",
    O.CU_JIT_REFERENCED_VARIABLE_COUNT: "nothing is dead-stripped",
    O.CU_JIT_OPTIMIZE_UNUSED_DEVICE_VARIABLES: "nothing is dead-stripped",
    O.CU_JIT_POSITION_INDEPENDENT_CODE: "code addresses are assigned at load",
    O.CU_JIT_MIN_CTA_PER_SM: "the register estimate is not re-targeted for CTAs per SM",
    O.CU_JIT_SPLIT_COMPILE: "no SASS is generated",
}


@dataclass
class JitOptions:
    """Validated options; `slots` maps an option to its index in the
    caller's optionValues (for outputs)."""

    values: dict[CUjit_option, Any] = field(default_factory=dict)
    slots: dict[CUjit_option, int] = field(default_factory=dict)
    holder: Any = None   # the caller's optionValues list (written for outputs)

    def get(self, opt: CUjit_option, default: Any = None) -> Any:
        return self.values.get(opt, default)

    @property
    def max_registers(self) -> int | None:
        return self.values.get(O.CU_JIT_MAX_REGISTERS)

    @property
    def threads_per_block(self) -> int | None:
        return self.values.get(O.CU_JIT_THREADS_PER_BLOCK)

    @property
    def max_threads_per_block(self) -> int | None:
        return self.values.get(O.CU_JIT_MAX_THREADS_PER_BLOCK)

    @property
    def cache_mode(self) -> CUjit_cacheMode:
        return self.values.get(O.CU_JIT_CACHE_MODE, CUjit_cacheMode.CU_JIT_CACHE_OPTION_NONE)

    @property
    def target(self) -> int | None:
        t = self.values.get(O.CU_JIT_TARGET)
        return None if t is None else t & 0xFFFF

    @property
    def verbose(self) -> bool:
        return bool(self.values.get(O.CU_JIT_LOG_VERBOSE, 0))

    def ignored_notes(self) -> list[str]:
        return [f"option {opt.name} ({int(opt)}) ignored: {IGNORED[opt]}"
                for opt in self.values if opt in IGNORED]

    def merged_with(self, other: "JitOptions") -> "JitOptions":
        """Link-state options overridden by one input's options."""
        out = JitOptions(dict(self.values), {}, None)
        for k, v in other.values.items():
            if k not in (O.CU_JIT_INFO_LOG_BUFFER, O.CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, O.CU_JIT_ERROR_LOG_BUFFER,
                         O.CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, O.CU_JIT_WALL_TIME):
                out.values[k] = v
        return out

    # -------------------------------------------------------- outputs
    def _put(self, opt: CUjit_option, value: Any) -> None:
        i = self.slots.get(opt)
        if i is not None and isinstance(self.holder, list):
            self.holder[i] = value

    def write_outputs(self, info: str, error: str, wall_ms: float, threads: int | None = None) -> None:
        """Fill the log buffers, write the filled sizes, the wall time and the
        threads the load targeted back into optionValues."""
        for buf_opt, size_opt, text in ((O.CU_JIT_INFO_LOG_BUFFER, O.CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, info),
                                        (O.CU_JIT_ERROR_LOG_BUFFER, O.CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, error)):
            if buf_opt in self.values:
                cap = self.values.get(size_opt, _capacity(self.values[buf_opt]))
                self._put(size_opt, _write_log(self.values[buf_opt], cap, text))
        if O.CU_JIT_WALL_TIME in self.slots:
            self._put(O.CU_JIT_WALL_TIME, float(wall_ms))
        if threads is not None and O.CU_JIT_THREADS_PER_BLOCK in self.values:
            self._put(O.CU_JIT_THREADS_PER_BLOCK, int(threads))


def _capacity(buf: Any) -> int:
    return memoryview(buf).nbytes


def _write_log(buf: Any, cap: int, text: str) -> int:
    """Write NUL-terminated text capped at cap bytes; returns bytes written."""
    if cap <= 0:
        return 0
    raw = text.encode("utf-8")[:cap - 1] + b"\x00"
    view = memoryview(buf).cast("B")
    view[:len(raw)] = raw
    return len(raw)


def _show(v: Any) -> str:
    """A value for a message: never fails, never thousands of digits long."""
    if isinstance(v, (int, np.integer)) and not isinstance(v, bool) and int(v).bit_length() > 128:
        return f"an int of {int(v).bit_length()} bits"
    try:
        text = repr(v)
    except Exception:
        return f"a {type(v).__name__}"
    return text if len(text) <= 80 else f"{text[:60]}... (a {type(v).__name__})"


def _int_value(opt: CUjit_option, v: Any) -> int:
    if isinstance(v, (bool, np.bool_)):
        return int(v)
    if isinstance(v, (int, np.integer)):
        if not -2**63 <= int(v) < 2**64:
            raise EngineError(CUresult.CUDA_ERROR_INVALID_VALUE,
                              f"{opt.name} value {_show(v)} does not fit in 64 bits")
        return int(v)
    raise EngineError(CUresult.CUDA_ERROR_INVALID_VALUE, f"{opt.name} needs an integer value, got {_show(v)}")


def _buffer(opt: CUjit_option, v: Any) -> Any:
    """A log buffer: writable, C-contiguous plain bytes (never an array of
    Python objects, whose pointers the log text would overwrite)."""
    bad = CUresult.CUDA_ERROR_INVALID_VALUE
    if isinstance(v, np.ndarray) and v.dtype.hasobject:
        raise EngineError(bad, f"{opt.name} buffer is an array of Python objects, not bytes")
    try:
        view = memoryview(v)
    except TypeError:
        raise EngineError(bad, f"{opt.name} needs a writable buffer (bytearray, numpy array), got "
                               f"{type(v).__name__}") from None
    if "O" in view.format or not view.c_contiguous:
        raise EngineError(bad, f"{opt.name} buffer must be contiguous plain bytes")
    if view.readonly:
        raise EngineError(bad, f"{opt.name} buffer is read-only")
    try:
        view.cast("B")
    except (TypeError, ValueError):
        raise EngineError(bad, f"{opt.name} buffer of format {view.format!r} cannot be written as bytes") from None
    return v


def _sequence(what: str, v: Any) -> list:
    if v is None:
        return []
    if isinstance(v, (str, bytes, bytearray, memoryview)) or not hasattr(v, "__len__") \
            or not hasattr(v, "__getitem__"):
        raise EngineError(CUresult.CUDA_ERROR_INVALID_VALUE, f"{what} must be a sequence, got {_show(v)}")
    return list(v)


def parse_options(numOptions: Any, options: Any, optionValues: Any) -> JitOptions:
    """Validate (numOptions, options, optionValues); CUDA_ERROR_INVALID_VALUE
    names the first bad option."""
    if isinstance(numOptions, bool) or not isinstance(numOptions, (int, np.integer)) \
            or not 0 <= numOptions <= MAX_OPTIONS:
        raise EngineError(CUresult.CUDA_ERROR_INVALID_VALUE,
                          f"numOptions must be an int in 0..{MAX_OPTIONS}, got {_show(numOptions)}")
    n = int(numOptions)
    if n == 0:
        return JitOptions()
    opts = _sequence("options", options)
    vals = optionValues if isinstance(optionValues, list) else _sequence("optionValues", optionValues)
    if len(opts) < n or len(vals) < n:
        raise EngineError(CUresult.CUDA_ERROR_INVALID_VALUE,
                          f"numOptions is {n} but {len(opts)} options and {len(vals)} values were given")
    out = JitOptions(holder=optionValues if isinstance(optionValues, list) else None)
    for i in range(n):
        code = opts[i]
        try:
            if isinstance(code, (bool, np.bool_)) or not isinstance(code, (int, np.integer)):
                raise TypeError
            opt = CUjit_option(int(code))
        except (ValueError, TypeError):
            raise EngineError(CUresult.CUDA_ERROR_INVALID_VALUE,
                              f"options[{i}] = {_show(code)} is not a CUjit_option") from None
        if opt in out.values:
            raise EngineError(CUresult.CUDA_ERROR_INVALID_VALUE, f"option {opt.name} given twice")
        out.slots[opt] = i
        v = vals[i]
        out.values[opt] = _validate(opt, v)
    for buf_opt, size_opt in ((O.CU_JIT_INFO_LOG_BUFFER, O.CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES),
                              (O.CU_JIT_ERROR_LOG_BUFFER, O.CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES)):
        if buf_opt in out.values and size_opt in out.values \
                and out.values[size_opt] > _capacity(out.values[buf_opt]):
            raise EngineError(CUresult.CUDA_ERROR_INVALID_VALUE,
                              f"{size_opt.name} = {out.values[size_opt]} exceeds the "
                              f"{_capacity(out.values[buf_opt])}-byte buffer of {buf_opt.name}")
    names, addrs, count = (out.values.get(O.CU_JIT_GLOBAL_SYMBOL_NAMES), out.values.get(O.CU_JIT_GLOBAL_SYMBOL_ADDRESSES),
                           out.values.get(O.CU_JIT_GLOBAL_SYMBOL_COUNT))
    if count is not None and ((names is not None and len(names) != count) or
                              (addrs is not None and len(addrs) != count)):
        raise EngineError(CUresult.CUDA_ERROR_INVALID_VALUE,
                          f"CU_JIT_GLOBAL_SYMBOL_COUNT is {count} but names/addresses have other lengths")
    return out


def _validate(opt: CUjit_option, v: Any) -> Any:
    bad = CUresult.CUDA_ERROR_INVALID_VALUE
    if opt in _OUTPUT_ONLY or opt in _NO_VALUE:
        return v
    if opt in (O.CU_JIT_INFO_LOG_BUFFER, O.CU_JIT_ERROR_LOG_BUFFER):
        return _buffer(opt, v)
    if opt in (O.CU_JIT_GLOBAL_SYMBOL_NAMES, O.CU_JIT_GLOBAL_SYMBOL_ADDRESSES, O.CU_JIT_REFERENCED_KERNEL_NAMES,
               O.CU_JIT_REFERENCED_VARIABLE_NAMES):
        return _sequence(opt.name, v)
    x = _int_value(opt, v)
    if opt in _BOOL and x not in (0, 1):
        raise EngineError(bad, f"{opt.name} is a flag (0 or 1), got {x}")
    limits = {O.CU_JIT_MAX_REGISTERS: (1, 255), O.CU_JIT_THREADS_PER_BLOCK: (1, 1024),
              O.CU_JIT_MAX_THREADS_PER_BLOCK: (1, 1024), O.CU_JIT_OPTIMIZATION_LEVEL: (0, 4),
              O.CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES: (0, 2**32 - 1), O.CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES: (0, 2**32 - 1),
              O.CU_JIT_GLOBAL_SYMBOL_COUNT: (0, 2**32 - 1), O.CU_JIT_REFERENCED_KERNEL_COUNT: (0, 2**32 - 1),
              O.CU_JIT_REFERENCED_VARIABLE_COUNT: (0, 2**32 - 1), O.CU_JIT_MIN_CTA_PER_SM: (0, 2**32 - 1)}
    if opt in limits:
        lo, hi = limits[opt]
        if not lo <= x <= hi:
            raise EngineError(bad, f"{opt.name} must be in {lo}..{hi}, got {_show(x)}")
    if opt is O.CU_JIT_TARGET and x not in JIT_TARGETS_ALL:
        raise EngineError(bad, f"CU_JIT_TARGET {_show(x)} is not a CUjit_target (compute_XX as XX: "
                               f"{', '.join(map(str, sorted(JIT_TARGETS)))})")
    if opt is O.CU_JIT_FALLBACK_STRATEGY:
        try:
            return CUjit_fallback(x)
        except ValueError:
            raise EngineError(bad, f"CU_JIT_FALLBACK_STRATEGY must be 0 (prefer PTX) or 1 (prefer binary), "
                                   f"got {_show(x)}") from None
    if opt is O.CU_JIT_CACHE_MODE:
        try:
            return CUjit_cacheMode(x)
        except ValueError:
            raise EngineError(bad, f"CUjit_cacheMode must be 0 (none), 1 (cg) or 2 (ca), got {_show(x)}") from None
    return x


def check_input_type(value: Any) -> CUjitInputType:
    try:
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
            raise TypeError
        return CUjitInputType(int(value))
    except (TypeError, ValueError):
        raise EngineError(CUresult.CUDA_ERROR_INVALID_VALUE, f"{_show(value)} is not a CUjitInputType") from None


__all__ = ["CUjit_option", "CUjitInputType", "CUjit_cacheMode", "CUjit_fallback", "JitOptions",
           "parse_options", "check_input_type", "JIT_TARGETS", "IGNORED"]
