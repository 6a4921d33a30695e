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

from gpudbg.driver import launch_config
from gpudbg.driver import module as _module
from gpudbg.driver.status import CUresult, EngineError
from gpudbg.driver.types import (
    CUDA_COOPERATIVE_LAUNCH_MULTI_DEVICE_NO_POST_LAUNCH_SYNC as NO_POST_SYNC,
    CUDA_COOPERATIVE_LAUNCH_MULTI_DEVICE_NO_PRE_LAUNCH_SYNC as NO_PRE_SYNC, LaunchParams,
)

_INVALID = CUresult.CUDA_ERROR_INVALID_VALUE


def _dim3(name: str, d: Any) -> tuple[int, int, int]:
    if isinstance(d, int) and not isinstance(d, bool):
        return (d, 1, 1)
    try:
        t = tuple(d)
    except TypeError:
        raise EngineError(_INVALID, f"{name} must be an int or up to 3 ints") from None
    if not 1 <= len(t) <= 3:
        raise EngineError(_INVALID, f"{name} must have 1 to 3 dimensions")
    return tuple(t) + (1,) * (3 - len(t))  # type: ignore[return-value]


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
    return _module.launch(context, function, g, b, shared_bytes, stream,
                          list(args) if args is not None else [], None)


_FIELDS = ("func", "gridDim", "blockDim", "args", "sharedMem", "stream")


def _entry(p: Any) -> LaunchParams:
    """One entry of a launch list: a LaunchParams, a mapping of its fields,
    or any record with those fields (an API layer's own struct)."""
    if isinstance(p, LaunchParams):
        return p
    if isinstance(p, Mapping):
        try:
            return LaunchParams(**p)
        except TypeError as e:
            raise EngineError(_INVALID, f"bad launch parameters {dict(p)!r}: {e}") from None
    if all(hasattr(p, f) for f in ("func", "gridDim", "blockDim")):
        return LaunchParams(**{f: getattr(p, f) for f in _FIELDS if hasattr(p, f)})
    raise EngineError(_INVALID, f"launch parameters must name func, gridDim and blockDim, "
                                f"not be a {type(p).__name__}")


def resolve(engine: Any, params: Any, num_devices: Any) -> list[Part]:
    if isinstance(num_devices, bool) or not isinstance(num_devices, int) or num_devices < 1:
        raise EngineError(_INVALID, f"numDevices must be an int >= 1, got {num_devices!r}")
    if num_devices > engine.device_count():
        raise EngineError(_INVALID, f"numDevices {num_devices} exceeds the {engine.device_count()} devices")
    if params is None:
        raise EngineError(_INVALID, "launchParamsList is NULL")
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
        parts.append(Part(ctx, f, g, b, p.sharedMem, stream, list(p.args or ())))
    return parts


def _submit_all(parts: list[Part]) -> None:
    contexts = sorted({id(p.context): p.context for p in parts}.values(), key=lambda c: c.id)
    with ExitStack() as stack:
        for c in contexts:
            stack.enter_context(c.lock)
        for p in parts:
            _module.launch(p.context, p.function, p.grid, p.block, p.shared, p.stream, p.args, None)


def launch_multi_device(engine: Any, params: Any, num_devices: Any, flags: Any) -> None:
    """mcLaunchCooperativeKernelMultiDevice."""
    allowed = NO_PRE_SYNC | NO_POST_SYNC
    if isinstance(flags, bool) or not isinstance(flags, int) or flags < 0 or flags & ~allowed:
        raise EngineError(_INVALID, f"unknown multi-device launch flags {flags!r}")
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
    _submit_all(parts)
    if not flags & NO_POST_SYNC:
        for p in parts:
            p.stream.wait()
        for p in parts:
            p.context.after_wait()


def launch_multi_kernel(engine: Any, params: Any, num_devices: Any, flags: Any) -> None:
    """mcExtLaunchMultiKernelMultiDevice: any kernels, one per entry,
    enqueued together; flags are reserved and must be 0."""
    if isinstance(flags, bool) or not isinstance(flags, int) or flags != 0:
        raise EngineError(_INVALID, f"flags must be 0, got {flags!r}")
    _submit_all(resolve(engine, params, num_devices))
