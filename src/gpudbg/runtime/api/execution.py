"""Seed 002 §2.4: execution control (kernel launches)."""
from __future__ import annotations

from typing import Any, Sequence

from gpudbg.driver import module as _module
from gpudbg.runtime.api._base import _api, _ctx, _dim3


# ------------------------------------------------------------------ 2.4 launch
@_api(0)
def mcModuleLaunchKernel(f: Any, gridDimX: int, gridDimY: int, gridDimZ: int, blockDimX: int,
                         blockDimY: int, blockDimZ: int, sharedMemBytes: int, stream: Any,
                         kernelParams: Sequence[Any] | None, extra: Any) -> None:
    """Seed 002 §2.4.3.2: kernelParams are Python/numpy values matched to the
    PTX parameter types; extra is a packed buffer or a
    [MC_LAUNCH_PARAM_BUFFER_POINTER, buf, MC_LAUNCH_PARAM_BUFFER_SIZE, n,
    MC_LAUNCH_PARAM_END] list."""
    ctx = _ctx()
    _module.launch(ctx, f, (gridDimX, gridDimY, gridDimZ), (blockDimX, blockDimY, blockDimZ),
                   sharedMemBytes, ctx.stream(stream), kernelParams, extra)


@_api(0)
def mcLaunchKernel(func: Any, gridDim: Any, blockDim: Any, args: Sequence[Any] = (),
                   sharedMem: int = 0, stream: Any = None) -> None:
    """Seed 002 §2.4.3.1: func is an mcFunction_t; dims are ints or tuples."""
    ctx = _ctx()
    _module.launch(ctx, func, _dim3("gridDim", gridDim), _dim3("blockDim", blockDim), sharedMem,
                   ctx.stream(stream), list(args), None)


__all__ = ['mcModuleLaunchKernel', 'mcLaunchKernel']
