"""Cooperative and multi-device launches (seed 002 §2.4.3.4-6).

A cooperative grid may synchronize grid-wide, which is only safe when all
of its blocks are resident at once. The one idea: on the simulator that is
exactly "the grid fits in one wave" (sim/wave.py build_waves deals
`sm_count * blocks_per_sm` blocks per wave from the same occupancy rule),
so checking the grid against the occupancy answer is both the CUDA rule
(mcErrorCooperativeLaunchTooLarge) and the guarantee that every block runs
in the same wave, where spinning and arriving blocks progress together.

Multi-device launches resolve each mcLaunchParams entry against its
function's context, validate all entries before any is enqueued, then push
the launches holding every involved context's lock, so no other host
thread's work lands between them on those streams. The simulated devices
cannot read each other's semaphores, so the cooperative variant's pre- and
post-launch synchronization across devices (unless mcCooperativeLaunch-
MultiDeviceNoPreSync/NoPostSync) is done with host waits on the streams:
stronger than CUDA's device-side ordering, never weaker.
"""
from __future__ import annotations

from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from gpudbg.driver import launch_config
from gpudbg.driver import module as _module
from gpudbg.driver.status import CUresult, EngineError
from gpudbg.driver.types import (
    CUDA_COOPERATIVE_LAUNCH_MULTI_DEVICE_NO_POST_LAUNCH_SYNC as NO_POST_SYNC,
    CUDA_COOPERATIVE_LAUNCH_MULTI_DEVICE_NO_PRE_LAUNCH_SYNC as NO_PRE_SYNC, LaunchParams,
)

_INVALID = CUresult.CUDA_ERROR_INVALID_VALUE


def _is_int(v: Any) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def _dim3(name: str, d: Any) -> tuple[int, int, int]:
    """A dim3 from an int or 1 to 3 ints (numpy ints too)."""
    if _is_int(d):
        t: tuple = (int(d),)
    elif isinstance(d, (Sequence, np.ndarray)) and not isinstance(d, (str, bytes, bytearray)) \
            and 1 <= len(d) <= 3 and all(_is_int(x) for x in d):
        t = tuple(int(x) for x in d)
    else:
        raise EngineError(_INVALID, f"{name} must be an int or 1 to 3 ints")
    return t + (1,) * (3 - len(t))  # type: ignore[return-value]


def _args(name: str, args: Any) -> list:
    """Kernel arguments: None (no arguments) or a sequence of values."""
    if args is None:
        return []
    if isinstance(args, (str, bytes, bytearray, memoryview)) or not isinstance(args, (Sequence, np.ndarray)):
        raise EngineError(_INVALID, f"{name} must be a sequence of kernel arguments, not a {type(args).__name__}")
    return list(args)


@dataclass
class Part:
    context: Any
    function: Any
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    shared: int
    stream: Any
    args: list


def launch_cooperative(context: Any, function: Any, grid: Any, block: Any, shared_bytes: Any,
                       stream: Any, args: Sequence[Any] | None) -> int:
    """mcLaunchCooperativeKernel: validate, check co-residency, launch."""
    if not isinstance(function, _module.Function):
        raise EngineError(CUresult.CUDA_ERROR_INVALID_HANDLE, f"{function!r} is not a function handle")
    g, b = _dim3("gridDim", grid), _dim3("blockDim", block)
    g, b = _module.validate_launch(context, function, g, b, shared_bytes)
    launch_config.check_cooperative(function, g, b, shared_bytes)
    return _module.launch(context, function, g, b, shared_bytes, stream, _args("kernelParams", args), None,
                          cooperative=True)


_FIELDS = ("func", "gridDim", "blockDim", "args", "sharedMem", "stream")


def _entry(p: Any) -> LaunchParams:
    """One entry of a launch list: a LaunchParams, a mapping of its fields,
    or any record with those fields (an API layer's own struct)."""
    if isinstance(p, LaunchParams):
        return p
    if isinstance(p, Mapping):
        names = [str(k) for k in p]
        if not set(names) <= set(_FIELDS) or not {"func", "gridDim", "blockDim"} <= set(names):
            raise EngineError(_INVALID, f"launch parameters must name func, gridDim and blockDim (and "
                                        f"optionally args, sharedMem, stream), not {sorted(names)[:8]}")
        return LaunchParams(**p)
    if all(hasattr(p, f) for f in ("func", "gridDim", "blockDim")):
        return LaunchParams(**{f: getattr(p, f) for f in _FIELDS if hasattr(p, f)})
    raise EngineError(_INVALID, f"launch parameters must name func, gridDim and blockDim, "
                                f"not be a {type(p).__name__}")


def resolve(engine: Any, params: Any, num_devices: Any) -> list[Part]:
    if not _is_int(num_devices) or num_devices < 1:
        raise EngineError(_INVALID, f"numDevices must be an int >= 1, got a {type(num_devices).__name__}"
                                    if not _is_int(num_devices) else f"numDevices must be >= 1, got {num_devices}")
    num_devices = int(num_devices)
    if num_devices > engine.device_count():
        raise EngineError(_INVALID, f"numDevices {num_devices} exceeds the {engine.device_count()} devices")
    if params is None:
        raise EngineError(_INVALID, "launchParamsList is NULL")
    if isinstance(params, (str, bytes, bytearray)) or not isinstance(params, (Sequence, np.ndarray)):
        raise EngineError(_INVALID, f"launchParamsList must be a sequence, not a {type(params).__name__}")
    entries = list(params)
    if len(entries) < num_devices:
        raise EngineError(_INVALID, f"launchParamsList has {len(entries)} entries, numDevices is {num_devices}")
    parts = []
    for p in map(_entry, entries[:num_devices]):
        f = p.func
        if not isinstance(f, _module.Function) or f.module.unloaded:
            raise EngineError(CUresult.CUDA_ERROR_INVALID_HANDLE, f"{f!r} is not a loaded function handle")
        ctx = f.module.context
        ctx.check()
        stream = ctx.stream(p.stream)
        g, b = _module.validate_launch(ctx, f, _dim3("gridDim", p.gridDim), _dim3("blockDim", p.blockDim),
                                       p.sharedMem)
        parts.append(Part(ctx, f, g, b, p.sharedMem, stream, _args("args", p.args)))
    return parts


def _submit_all(parts: list[Part], cooperative: bool) -> None:
    contexts = sorted({id(p.context): p.context for p in parts}.values(), key=lambda c: c.id)
    with ExitStack() as stack:
        for c in contexts:
            stack.enter_context(c.lock)
        for p in parts:
            _module.launch(p.context, p.function, p.grid, p.block, p.shared, p.stream, p.args, None,
                           cooperative=cooperative)


def launch_multi_device(engine: Any, params: Any, num_devices: Any, flags: Any) -> None:
    """mcLaunchCooperativeKernelMultiDevice."""
    allowed = NO_PRE_SYNC | NO_POST_SYNC
    if not _is_int(flags) or flags < 0 or int(flags) & ~allowed:
        shown = int(flags) if _is_int(flags) and int(flags).bit_length() < 64 else f"a {type(flags).__name__}"
        raise EngineError(_INVALID, f"unknown multi-device launch flags {shown}")
    flags = int(flags)
    parts = resolve(engine, params, num_devices)
    devices = [p.context.device.ordinal for p in parts]
    if len(set(devices)) != len(devices):
        raise EngineError(CUresult.CUDA_ERROR_INVALID_DEVICE,
                          f"a multi-device cooperative launch needs distinct devices, got {devices}")
    first = parts[0]
    for p in parts[1:]:
        if (p.function.name, p.grid, p.block, p.shared) != (first.function.name, first.grid, first.block,
                                                            first.shared):
            raise EngineError(_INVALID, "every device of a multi-device cooperative launch must run the same "
                                        "kernel with the same grid, block and shared memory size")
    for p in parts:
        launch_config.check_cooperative(p.function, p.grid, p.block, p.shared)
    if not flags & NO_PRE_SYNC:
        for p in parts:
            p.stream.wait()
    _submit_all(parts, cooperative=True)
    if not flags & NO_POST_SYNC:
        for p in parts:
            p.stream.wait()
        for p in parts:
            p.context.after_wait()


def launch_multi_kernel(engine: Any, params: Any, num_devices: Any, flags: Any) -> None:
    """mcExtLaunchMultiKernelMultiDevice: any kernels, one per entry,
    enqueued together; flags are reserved and must be 0."""
    if not _is_int(flags) or flags != 0:
        raise EngineError(_INVALID, "flags are reserved and must be 0")
    _submit_all(resolve(engine, params, num_devices), cooperative=False)
