"""JIT and linker options (mcJitOption, numbered as CUDA's CUjit_option).

Options arrive as C does it: a count, a list of option codes and a list of
values. They are validated once into a JitOptions record; what the
simulator can honour it honours (register cap and thread count feed the
kernel's occupancy footprint, log buffers receive the load log and the PTX
errors, the wall time gets the measured load time, the cache mode shows in
MC_FUNC_CACHE_MODE_CA, debug/line info flags are recorded on the module),
and every option it cannot act on is named in the info log as ignored, so
no option disappears silently. The one idea for outputs: as in C, where
the driver overwrites `optionValues[i]`, outputs are written back into the
caller's optionValues list, and log text into the caller's buffer object.

It does not model ptxas optimisation levels or spilling.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gpudbg.driver.status import CUresult, EngineError


class mcJitOption(enum.IntEnum):
    mcJitMaxRegisters = 0
    mcJitThreadsPerBlock = 1
    mcJitWallTime = 2
    mcJitInfoLogBuffer = 3
    mcJitInfoLogBufferSizeBytes = 4
    mcJitErrorLogBuffer = 5
    mcJitErrorLogBufferSizeBytes = 6
    mcJitOptimizationLevel = 7
    mcJitTargetFromContext = 8
    mcJitTarget = 9
    mcJitFallbackStrategy = 10
    mcJitGenerateDebugInfo = 11
    mcJitLogVerbose = 12
    mcJitGenerateLineInfo = 13
    mcJitCacheMode = 14
    mcJitNewSm3xOpt = 15
    mcJitFastCompile = 16
    mcJitGlobalSymbolNames = 17
    mcJitGlobalSymbolAddresses = 18
    mcJitGlobalSymbolCount = 19
    mcJitLto = 20
    mcJitFtz = 21
    mcJitPrecDiv = 22
    mcJitPrecSqrt = 23
    mcJitFma = 24
    mcJitReferencedKernelNames = 25
    mcJitReferencedKernelCount = 26
    mcJitReferencedVariableNames = 27
    mcJitReferencedVariableCount = 28
    mcJitOptimizeUnusedDeviceVariables = 29
    mcJitPositionIndependentCode = 30
    mcJitMinCtaPerSm = 31
    mcJitMaxThreadsPerBlock = 32
    mcJitOverrideDirectiveValues = 33


class mcJitInputType(enum.IntEnum):
    """CUjitInputType numbering."""
    mcJitInputCubin = 0
    mcJitInputPtx = 1
    mcJitInputFatBinary = 2
    mcJitInputObject = 3
    mcJitInputLibrary = 4
    mcJitInputNvvm = 5


class mcJitCacheMode(enum.IntEnum):
    mcJitCacheOptionNone = 0
    mcJitCacheOptionCg = 1
    mcJitCacheOptionCa = 2


class mcJitFallback(enum.IntEnum):
    mcPreferPtx = 0
    mcPreferBinary = 1


# CUjit_target: CU_TARGET_COMPUTE_XX = XX
JIT_TARGETS = frozenset({30, 32, 35, 37, 50, 52, 53, 60, 61, 62, 70, 72, 75, 80, 86, 87, 89, 90,
                         100, 101, 103, 110, 120, 121})

O = mcJitOption
_BOOL = {O.mcJitGenerateDebugInfo, O.mcJitLogVerbose, O.mcJitGenerateLineInfo, O.mcJitNewSm3xOpt,
         O.mcJitFastCompile, O.mcJitLto, O.mcJitFtz, O.mcJitPrecDiv, O.mcJitPrecSqrt, O.mcJitFma,
         O.mcJitOptimizeUnusedDeviceVariables, O.mcJitPositionIndependentCode,
         O.mcJitOverrideDirectiveValues}
_OUTPUT_ONLY = {O.mcJitWallTime}
_NO_VALUE = {O.mcJitTargetFromContext}
# options recorded but without effect on the simulator, and why
IGNORED = {
    O.mcJitOptimizationLevel: "the simulator executes PTX as written",
    O.mcJitFallbackStrategy: "only PTX runs on the simulator",
    O.mcJitNewSm3xOpt: "no SASS is generated",
    O.mcJitFastCompile: "no SASS is generated",
    O.mcJitGlobalSymbolNames: "host-provided symbol addresses are not bound",
    O.mcJitGlobalSymbolAddresses: "host-provided symbol addresses are not bound",
    O.mcJitGlobalSymbolCount: "host-provided symbol addresses are not bound",
    O.mcJitLto: "inputs are PTX, not NVVM IR",
    O.mcJitFtz: "applies to LTO only",
    O.mcJitPrecDiv: "applies to LTO only",
    O.mcJitPrecSqrt: "applies to LTO only",
    O.mcJitFma: "applies to LTO only",
    O.mcJitReferencedKernelNames: "nothing is dead-stripped",
    O.mcJitReferencedKernelCount: "nothing is dead-stripped",
    O.mcJitReferencedVariableNames: "nothing is dead-stripped",
    O.mcJitReferencedVariableCount: "nothing is dead-stripped",
    O.mcJitOptimizeUnusedDeviceVariables: "nothing is dead-stripped",
    O.mcJitPositionIndependentCode: "code addresses are assigned at load",
    O.mcJitMinCtaPerSm: "the register estimate is not re-targeted for CTAs per SM",
}


@dataclass
class JitOptions:
    """Validated options; `slots` maps an option to its index in the
    caller's optionValues (for outputs)."""

    values: dict[mcJitOption, Any] = field(default_factory=dict)
    slots: dict[mcJitOption, int] = field(default_factory=dict)
    holder: Any = None   # the caller's optionValues list (written for outputs)

    def get(self, opt: mcJitOption, default: Any = None) -> Any:
        return self.values.get(opt, default)

    @property
    def max_registers(self) -> int | None:
        return self.values.get(O.mcJitMaxRegisters)

    @property
    def threads_per_block(self) -> int | None:
        return self.values.get(O.mcJitThreadsPerBlock)

    @property
    def max_threads_per_block(self) -> int | None:
        return self.values.get(O.mcJitMaxThreadsPerBlock)

    @property
    def cache_mode(self) -> mcJitCacheMode:
        return self.values.get(O.mcJitCacheMode, mcJitCacheMode.mcJitCacheOptionNone)

    @property
    def target(self) -> int | None:
        return self.values.get(O.mcJitTarget)

    @property
    def verbose(self) -> bool:
        return bool(self.values.get(O.mcJitLogVerbose, 0))

    def ignored_notes(self) -> list[str]:
        return [f"option {opt.name} ({int(opt)}) ignored: {IGNORED[opt]}"
                for opt in self.values if opt in IGNORED]

    def merged_with(self, other: "JitOptions") -> "JitOptions":
        """Link-state options overridden by one input's options."""
        out = JitOptions(dict(self.values), {}, None)
        for k, v in other.values.items():
            if k not in (O.mcJitInfoLogBuffer, O.mcJitInfoLogBufferSizeBytes, O.mcJitErrorLogBuffer,
                         O.mcJitErrorLogBufferSizeBytes, O.mcJitWallTime):
                out.values[k] = v
        return out

    # -------------------------------------------------------- outputs
    def _put(self, opt: mcJitOption, value: Any) -> None:
        i = self.slots.get(opt)
        if i is not None and isinstance(self.holder, list):
            self.holder[i] = value

    def write_outputs(self, info: str, error: str, wall_ms: float, threads: int | None = None) -> None:
        """Fill the log buffers, write the filled sizes, the wall time and the
        threads the load targeted back into optionValues."""
        for buf_opt, size_opt, text in ((O.mcJitInfoLogBuffer, O.mcJitInfoLogBufferSizeBytes, info),
                                        (O.mcJitErrorLogBuffer, O.mcJitErrorLogBufferSizeBytes, error)):
            if buf_opt in self.values:
                cap = self.values.get(size_opt, _capacity(self.values[buf_opt]))
                self._put(size_opt, _write_log(self.values[buf_opt], cap, text))
        if O.mcJitWallTime in self.slots:
            self._put(O.mcJitWallTime, float(wall_ms))
        if threads is not None and O.mcJitThreadsPerBlock in self.values:
            self._put(O.mcJitThreadsPerBlock, int(threads))


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


def _int_value(opt: mcJitOption, v: Any) -> int:
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, (int, np.integer)):
        return int(v)
    raise EngineError(CUresult.CUDA_ERROR_INVALID_VALUE, f"{opt.name} needs an integer value, got {v!r}")


def _buffer(opt: mcJitOption, v: Any) -> Any:
    try:
        view = memoryview(v)
    except TypeError:
        raise EngineError(CUresult.CUDA_ERROR_INVALID_VALUE,
                          f"{opt.name} needs a writable buffer (bytearray, numpy array), got "
                          f"{type(v).__name__}") from None
    if view.readonly:
        raise EngineError(CUresult.CUDA_ERROR_INVALID_VALUE, f"{opt.name} buffer is read-only")
    return v


def parse_options(numOptions: Any, options: Any, optionValues: Any) -> JitOptions:
    """Validate (numOptions, options, optionValues); mcErrorInvalidValue
    names the first bad option."""
    if isinstance(numOptions, bool) or not isinstance(numOptions, (int, np.integer)) or numOptions < 0:
        raise EngineError(CUresult.CUDA_ERROR_INVALID_VALUE, f"numOptions must be an int >= 0, got {numOptions!r}")
    n = int(numOptions)
    if n == 0:
        return JitOptions()
    opts = list(options) if options is not None else []
    vals = optionValues if isinstance(optionValues, list) else list(optionValues or [])
    if len(opts) < n or len(vals) < n:
        raise EngineError(CUresult.CUDA_ERROR_INVALID_VALUE,
                          f"numOptions is {n} but {len(opts)} options and {len(vals)} values were given")
    out = JitOptions(holder=optionValues if isinstance(optionValues, list) else None)
    for i in range(n):
        try:
            opt = mcJitOption(int(opts[i]))
        except (ValueError, TypeError):
            raise EngineError(CUresult.CUDA_ERROR_INVALID_VALUE, f"options[{i}] = {opts[i]!r} is not an mcJitOption") from None
        if opt in out.values:
            raise EngineError(CUresult.CUDA_ERROR_INVALID_VALUE, f"option {opt.name} given twice")
        out.slots[opt] = i
        v = vals[i]
        out.values[opt] = _validate(opt, v)
    for buf_opt, size_opt in ((O.mcJitInfoLogBuffer, O.mcJitInfoLogBufferSizeBytes),
                              (O.mcJitErrorLogBuffer, O.mcJitErrorLogBufferSizeBytes)):
        if buf_opt in out.values and size_opt in out.values \
                and out.values[size_opt] > _capacity(out.values[buf_opt]):
            raise EngineError(CUresult.CUDA_ERROR_INVALID_VALUE,
                              f"{size_opt.name} = {out.values[size_opt]} exceeds the "
                              f"{_capacity(out.values[buf_opt])}-byte buffer of {buf_opt.name}")
    names, addrs, count = (out.values.get(O.mcJitGlobalSymbolNames), out.values.get(O.mcJitGlobalSymbolAddresses),
                           out.values.get(O.mcJitGlobalSymbolCount))
    if count is not None and ((names is not None and len(names) != count) or
                              (addrs is not None and len(addrs) != count)):
        raise EngineError(CUresult.CUDA_ERROR_INVALID_VALUE,
                          f"mcJitGlobalSymbolCount is {count} but names/addresses have other lengths")
    return out


def _validate(opt: mcJitOption, v: Any) -> Any:
    bad = CUresult.CUDA_ERROR_INVALID_VALUE
    if opt in _OUTPUT_ONLY or opt in _NO_VALUE:
        return v
    if opt in (O.mcJitInfoLogBuffer, O.mcJitErrorLogBuffer):
        return _buffer(opt, v)
    if opt in (O.mcJitGlobalSymbolNames, O.mcJitGlobalSymbolAddresses, O.mcJitReferencedKernelNames,
               O.mcJitReferencedVariableNames):
        if isinstance(v, (str, bytes)) or not hasattr(v, "__len__"):
            raise EngineError(bad, f"{opt.name} needs a list, got {v!r}")
        return list(v)
    x = _int_value(opt, v)
    if opt in _BOOL and x not in (0, 1):
        raise EngineError(bad, f"{opt.name} is a flag (0 or 1), got {x}")
    limits = {O.mcJitMaxRegisters: (1, 255), O.mcJitThreadsPerBlock: (1, 1024),
              O.mcJitMaxThreadsPerBlock: (1, 1024), O.mcJitOptimizationLevel: (0, 4),
              O.mcJitInfoLogBufferSizeBytes: (0, 2**32 - 1), O.mcJitErrorLogBufferSizeBytes: (0, 2**32 - 1),
              O.mcJitGlobalSymbolCount: (0, 2**32 - 1), O.mcJitReferencedKernelCount: (0, 2**32 - 1),
              O.mcJitReferencedVariableCount: (0, 2**32 - 1), O.mcJitMinCtaPerSm: (0, 2**32 - 1)}
    if opt in limits:
        lo, hi = limits[opt]
        if not lo <= x <= hi:
            raise EngineError(bad, f"{opt.name} must be in {lo}..{hi}, got {x}")
    if opt is O.mcJitTarget and x not in JIT_TARGETS:
        raise EngineError(bad, f"mcJitTarget {x} is not an mcJitTarget (compute_XX as XX: "
                               f"{', '.join(map(str, sorted(JIT_TARGETS)))})")
    if opt is O.mcJitFallbackStrategy:
        try:
            return mcJitFallback(x)
        except ValueError:
            raise EngineError(bad, f"mcJitFallbackStrategy must be 0 (prefer PTX) or 1 (prefer binary), got {x}") from None
    if opt is O.mcJitCacheMode:
        try:
            return mcJitCacheMode(x)
        except ValueError:
            raise EngineError(bad, f"mcJitCacheMode must be 0 (none), 1 (cg) or 2 (ca), got {x}") from None
    return x


def check_input_type(value: Any) -> mcJitInputType:
    try:
        if isinstance(value, bool):
            raise TypeError
        return mcJitInputType(int(value))
    except (TypeError, ValueError):
        raise EngineError(CUresult.CUDA_ERROR_INVALID_VALUE, f"{value!r} is not an mcJitInputType") from None


__all__ = ["mcJitOption", "mcJitInputType", "mcJitCacheMode", "mcJitFallback", "JitOptions",
           "parse_options", "check_input_type", "JIT_TARGETS", "IGNORED"]
