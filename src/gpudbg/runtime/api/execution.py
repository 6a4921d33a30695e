"""Seed 002 §2.4: execution control (kernel launches, cooperative and
multi-device launches, function attributes).

The annotated kinds check the arguments (_args.py: function handles, dims,
kernel argument sequences, launch lists) and each function makes one driver call:
driver/module.py for ordinary launches, driver/cooperative.py for
cooperative and multi-device ones, driver/launch_config.py for function
attributes. A function handle is the mcFunction_t of mcModuleGetFunction
(this runtime has no host-side kernel stubs, so `const void *func` is that
handle). mcLaunchHostFunc lives with the stream functions.
"""
from __future__ import annotations

from typing import Any

from gpudbg.driver import cooperative as _coop
from gpudbg.driver import launch_config as _cfg
from gpudbg.driver import module as _module
from gpudbg.driver.engine import get_engine
from gpudbg.driver.status import CUresult, EngineError
from gpudbg.runtime.api._args import (DeviceFunction, Dim3, DimX, Enum, Flags, Int, KernelParams, LaunchExtra,
                                      LaunchList, OptionalKernelParams, Size, Struct, mcFunction_t, mcStream_t)
from gpudbg.runtime.api._base import _api, _ctx
from gpudbg.runtime.api._kinds import STREAM, Dim3Kind, IntKind
from gpudbg.runtime.exec_types import mcFuncAttribute, mcLaunchAttributeID, mcLaunchConfig_t
from gpudbg.runtime.exec_types import mcFuncAttributes


# ------------------------------------------------------------------ 2.4 launch
@_api(0)
def mcModuleLaunchKernel(f: mcFunction_t, gridDimX: DimX, gridDimY: DimX, gridDimZ: DimX, blockDimX: DimX,
                         blockDimY: DimX, blockDimZ: DimX, sharedMemBytes: Size, stream: mcStream_t,
                         kernelParams: OptionalKernelParams, extra: LaunchExtra) -> None:
    """Seed 002 §2.4.3.2: kernelParams are Python/numpy values matched to the
    PTX parameter types; extra is a packed buffer or a
    [MC_LAUNCH_PARAM_BUFFER_POINTER, buf, MC_LAUNCH_PARAM_BUFFER_SIZE, n,
    MC_LAUNCH_PARAM_END] list (passing both is mcErrorInvalidValue). Grid or
    block dimensions outside the device limits are
    mcErrorInvalidConfiguration; more dynamic shared memory than the
    kernel's mcFuncAttributeMaxDynamicSharedMemorySize is mcErrorInvalidValue;
    a footprint that fits no SM is mcErrorLaunchOutOfResources."""
    ctx = _ctx()
    _module.launch(ctx, f, (gridDimX, gridDimY, gridDimZ), (blockDimX, blockDimY, blockDimZ),
                   sharedMemBytes, ctx.stream(stream), kernelParams, extra)


@_api(0)
def mcLaunchKernel(function_address: mcFunction_t, numBlocks: Dim3, dimBlocks: Dim3, args: KernelParams = (),
                   sharedMemBytes: Size = 0, stream: mcStream_t = None) -> None:
    """Seed 002 §2.4.3.1: function_address is an mcFunction_t; dims are ints
    or 1-3 tuples; the same checks as mcModuleLaunchKernel."""
    ctx = _ctx()
    _module.launch(ctx, function_address, numBlocks, dimBlocks, sharedMemBytes, ctx.stream(stream), args, None)


@_api(0)
def mcLaunchCooperativeKernel(f: mcFunction_t, gridDim: Dim3, blockDim: Dim3, kernelParams: OptionalKernelParams,
                              sharedMemBytes: Size, stream: mcStream_t) -> None:
    """Seed 002 §2.4.3.4: a grid whose blocks may synchronize grid-wide. It
    must not exceed mcOccupancyMaxActiveBlocksPerMultiprocessor x
    multiProcessorCount blocks (mcErrorCooperativeLaunchTooLarge); within
    that, all blocks run in one simulator wave, co-resident."""
    ctx = _ctx()
    _coop.launch_cooperative(ctx, f, gridDim, blockDim, sharedMemBytes, ctx.stream(stream), kernelParams)


# attributes a launch accepts as hints the simulator may ignore, as a GPU may
_LAUNCH_HINTS = frozenset(range(1, 15)) - {2, 4}


def _dim3(value: Any, what: str) -> tuple[int, int, int]:
    v = (value,) if isinstance(value, int) else tuple(value)
    if not 1 <= len(v) <= 3 or not all(isinstance(x, int) and not isinstance(x, bool) for x in v):
        raise EngineError(CUresult.CUDA_ERROR_INVALID_VALUE, f"{what} must be 1 to 3 ints, not {value!r}")
    return (v + (1, 1))[:3]


LaunchConfig = Struct(mcLaunchConfig_t, gridDim=Dim3Kind(), blockDim=Dim3Kind(),
                      dynamicSmemBytes=IntKind(0, 2**64 - 1, "an int >= 0"), stream=STREAM)


@_api(0)
def mcLaunchKernelExC(config: LaunchConfig, func: mcFunction_t, args: KernelParams) -> None:
    """cudaLaunchKernelExC under the runtime's names (a gpudbg extension of
    seed 002): the grid, block, dynamic shared memory and stream of
    `config`, and its attributes: mcLaunchAttributeCooperative makes a
    cooperative launch, mcLaunchAttributeClusterDimension shapes
    thread-block clusters (sim/cluster.py); the other known ids are hints;
    an unknown id is mcErrorInvalidValue."""
    ctx = _ctx()
    cooperative, cluster = False, None
    for i, a in enumerate(config.attrs or ()):
        ident = int(getattr(a, "id", -1))
        if ident == mcLaunchAttributeID.mcLaunchAttributeCooperative:
            cooperative = bool(a.val)
        elif ident == mcLaunchAttributeID.mcLaunchAttributeClusterDimension:
            cluster = _dim3(a.val, f"config.attrs[{i}].val (a cluster dimension)")
        elif ident != mcLaunchAttributeID.mcLaunchAttributeIgnore and ident not in _LAUNCH_HINTS:
            raise EngineError(CUresult.CUDA_ERROR_INVALID_VALUE,
                              f"config.attrs[{i}].id {ident} is not an mcLaunchAttributeID")
    stream = ctx.stream(config.stream)
    grid, block = _dim3(config.gridDim, "config.gridDim"), _dim3(config.blockDim, "config.blockDim")
    if cooperative:
        _coop.launch_cooperative(ctx, func, grid, block, config.dynamicSmemBytes, stream, args)
    else:
        _module.launch(ctx, func, grid, block, config.dynamicSmemBytes, stream, args, None, cluster=cluster)


@_api(0)
def mcLaunchCooperativeKernelMultiDevice(launchParamsList: LaunchList, numDevices: Int,
                                         flags: Flags) -> None:
    """Seed 002 §2.4.3.5: one mcLaunchParams per (distinct) device, the same
    kernel, grid, block and shared size on each, every part co-resident on
    its device; flags mcCooperativeLaunchMultiDeviceNoPreSync/NoPostSync
    drop the ordering against other work of the listed streams."""
    _coop.launch_multi_device(get_engine(), launchParamsList, numDevices, flags)


@_api(0)
def mcExtLaunchMultiKernelMultiDevice(launchParamsList: LaunchList, numDevices: Int,
                                      flags: Flags) -> None:
    """Seed 002 §2.4.3.6: one kernel per mcLaunchParams entry, all enqueued
    before any other host thread's work reaches those streams; flags must be 0."""
    _coop.launch_multi_kernel(get_engine(), launchParamsList, numDevices, flags)


# ------------------------------------------------------------------ 2.4 function attributes
@_api(1)
def mcFuncGetAttributes(func: DeviceFunction) -> mcFuncAttributes:
    """Seed 002 §2.4.3.7: from the translated kernel: static shared, const
    and per-thread local bytes, registers (the loader's estimate), the
    thread limit launches enforce (launch bounds and registers), PTX
    version, the device's binary version, and the settable attributes."""
    _ctx()
    return _cfg.attributes(_cfg.check_function(func))


@_api(0)
def mcFuncSetAttribute(func: DeviceFunction, attr: Enum(mcFuncAttribute), value: Int) -> None:
    """Seed 002 §2.4.3.8: mcFuncAttributeMaxDynamicSharedMemorySize (up to
    the opt-in maximum minus static shared; launches honour it) or
    mcFuncAttributePreferredSharedMemoryCarveout (-1 or 0..100, a hint)."""
    _ctx()
    _cfg.set_attribute(_cfg.check_function(func), attr, value)


__all__ = ['mcModuleLaunchKernel', 'mcLaunchKernel', 'mcLaunchKernelExC', 'mcLaunchCooperativeKernel',
           'mcLaunchCooperativeKernelMultiDevice', 'mcExtLaunchMultiKernelMultiDevice',
           'mcFuncGetAttributes', 'mcFuncSetAttribute']
