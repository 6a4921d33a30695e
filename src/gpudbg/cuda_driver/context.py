"""Contexts: primary contexts (retain/release/reset/flags), contexts of
their own (cuCtxCreate), the calling thread's context stack, and the
per-context settings (flags, limits, cache and shared-memory configuration,
stream priorities, exec affinity).

A CUcontext is a handle (cabi.handles, kind CUcontext) of an engine
Context; the engine keeps every context's state and each thread's stack
(driver/engine.py ThreadState). The one idea that makes primary contexts
behave as in NVIDIA's driver: the engine's Device counts driver-API
retains (the runtime API's implicit use counts as one more), the last
release destroys the context, and a reset destroys it while the retains
stand, so the next use of the device's primary context (current on a
thread, or by its old handle) continues in a fresh one. Primary-context
flags are the device's flags (driver/limits.py), shared with the runtime's
mcSetDeviceFlags. Exec affinity and CIG contexts are refused: the simulator
cannot confine a context to a subset of SMs (no MPS) and has no graphics
interop.
"""
from __future__ import annotations

import ctypes
from typing import Any

from gpudbg import cabi
from gpudbg.cuda_driver._base import (HandleKind, R, current_context, entry, fail, handle_of, handles,
                                      object_of, require_init)
from gpudbg.cuda_driver.device import device_of
from gpudbg.driver import limits as _limits
from gpudbg.driver.stream import PRIORITY_GREATEST, PRIORITY_LEAST

__all__ = ["cuDevicePrimaryCtxRetain", "cuDevicePrimaryCtxRelease", "cuDevicePrimaryCtxRelease_v2",
           "cuDevicePrimaryCtxReset", "cuDevicePrimaryCtxReset_v2", "cuDevicePrimaryCtxGetState",
           "cuDevicePrimaryCtxSetFlags", "cuDevicePrimaryCtxSetFlags_v2",
           "cuCtxCreate_v2", "cuCtxCreate_v3", "cuCtxCreate_v4", "cuCtxDestroy_v2",
           "cuCtxPushCurrent_v2", "cuCtxPopCurrent_v2", "cuCtxSetCurrent", "cuCtxGetCurrent",
           "cuCtxGetDevice", "cuCtxGetDevice_v2", "cuCtxGetFlags", "cuCtxSetFlags", "cuCtxGetId",
           "cuCtxSynchronize", "cuCtxSynchronize_v2", "cuCtxSetLimit", "cuCtxGetLimit",
           "cuCtxGetCacheConfig", "cuCtxSetCacheConfig", "cuCtxGetSharedMemConfig",
           "cuCtxSetSharedMemConfig", "cuCtxGetApiVersion", "cuCtxGetStreamPriorityRange",
           "cuCtxResetPersistingL2Cache", "cuCtxGetExecAffinity", "cuCtxEnablePeerAccess",
           "cuCtxDisablePeerAccess", "cuCtxCreate", "cuCtxDestroy", "cuCtxPushCurrent", "cuCtxPopCurrent"]

INVALID = R.CUDA_ERROR_INVALID_VALUE
CU_CTX_SCHED_MASK = 0x07
CU_CTX_FLAGS_MASK = 0xFF
CU_CTX_MAP_HOST = 0x08
API_VERSION = 3020          # every context made through the _v2 and later entry points
CU_EXEC_AFFINITY_TYPE_SM_COUNT = 0


class CUexecAffinityParam(ctypes.Structure):
    """cuda.h's CUexecAffinityParam_v1 (type + union of one unsigned)."""

    _fields_ = [("type", ctypes.c_int), ("smCount", ctypes.c_uint)]


class CUctxCreateParams(ctypes.Structure):
    """cuda.h's CUctxCreateParams."""

    _fields_ = [("execAffinityParams", ctypes.c_void_p), ("numExecAffinityParams", ctypes.c_int),
                ("cigParams", ctypes.c_void_p)]


def _need(ptr: int, name: str) -> int:
    if not ptr:
        raise fail(INVALID, f"{name} is NULL")
    return int(ptr)


def context_of(number: int) -> Any:
    """The live engine Context a CUcontext names; a retained primary
    context that was reset continues as the device's fresh one."""
    require_init()
    ctx = object_of(HandleKind.CONTEXT, number)
    if ctx.destroyed and ctx.is_primary and ctx.device.primary_retains > 0:
        ctx = ctx.device.primary_context()
    if ctx.destroyed:
        raise fail(R.CUDA_ERROR_CONTEXT_IS_DESTROYED, f"{ctx!r} was destroyed")
    return ctx


def _ctx_or_current(number: int) -> Any:
    return current_context() if not number else context_of(number)


def _check_flags(flags: int) -> int:
    flags = int(flags)
    if flags < 0 or flags & ~CU_CTX_FLAGS_MASK:
        raise fail(INVALID, f"unknown context flags 0x{flags:x} (valid bits 0x{CU_CTX_FLAGS_MASK:x})")
    if (flags & CU_CTX_SCHED_MASK) not in (0, 1, 2, 4):
        raise fail(INVALID, f"context flags 0x{flags:x} name more than one CU_CTX_SCHED_* mode")
    return flags


def context_flags(ctx: Any) -> int:
    """A context's flags (a primary context's are its device's)."""
    return _limits.settings(ctx.device).flags if ctx.is_primary else ctx.flags


# ------------------------------------------------------------------ primary contexts
@entry
def cuDevicePrimaryCtxRetain(pctx: int, dev: int) -> None:
    """The device's primary context, made on first retain; not made current."""
    _need(pctx, "pctx")
    ctx = device_of(dev).retain_primary()
    cabi.store(pctx, "u64", handle_of(HandleKind.CONTEXT, ctx))


def _release(dev: int) -> None:
    device_of(dev).release_primary()


@entry
def cuDevicePrimaryCtxRelease(dev: int) -> None:
    _release(dev)


@entry
def cuDevicePrimaryCtxRelease_v2(dev: int) -> None:
    """The last release destroys the primary context (its memory, streams,
    modules), unless the runtime API uses it too."""
    _release(dev)


def _reset(dev: int) -> None:
    device_of(dev).reset()


@entry
def cuDevicePrimaryCtxReset(dev: int) -> None:
    _reset(dev)


@entry
def cuDevicePrimaryCtxReset_v2(dev: int) -> None:
    """Destroy every resource of the primary context now; retains stand,
    and its next use starts a fresh context."""
    _reset(dev)


@entry
def cuDevicePrimaryCtxGetState(dev: int, flags: int, active: int) -> None:
    _need(flags, "flags")
    _need(active, "active")
    device = device_of(dev)
    cabi.store(flags, "u32", _limits.settings(device).flags)
    cabi.store(active, "i32", int(device.primary_active))


def _set_primary_flags(dev: int, flags: int, while_active: bool) -> None:
    device = device_of(dev)
    flags = _check_flags(flags)
    settings = _limits.settings(device)
    if not while_active and device.primary_active and settings.flags != flags:
        raise fail(R.CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE,
                   f"the primary context of device {device.ordinal} is active with flags "
                   f"0x{settings.flags:x}")
    settings.flags = flags


@entry
def cuDevicePrimaryCtxSetFlags(dev: int, flags: int) -> None:
    """The CUDA 7 form: CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE once the primary
    context is active with other flags."""
    _set_primary_flags(dev, flags, while_active=False)


@entry
def cuDevicePrimaryCtxSetFlags_v2(dev: int, flags: int) -> None:
    """Set the primary context's flags, active or not."""
    _set_primary_flags(dev, flags, while_active=True)


# ------------------------------------------------------------------ contexts of their own
def _create(pctx: int, flags: int, dev: int, affinity: int, num_affinity: int) -> None:
    _need(pctx, "pctx")
    device = device_of(dev)
    flags = _check_flags(flags)
    if num_affinity < 0:
        raise fail(INVALID, f"numParams must be >= 0, got {num_affinity}")
    if num_affinity:
        params = [cabi.struct_at(_need(affinity, "paramsArray") + i * ctypes.sizeof(CUexecAffinityParam),
                                 CUexecAffinityParam, "paramsArray") for i in range(num_affinity)]
        for p in params:
            if p.type != CU_EXEC_AFFINITY_TYPE_SM_COUNT:
                raise fail(INVALID, f"{p.type} is not a CUexecAffinityType")
        raise fail(R.CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY,
                   "contexts cannot be limited to a number of SMs on the simulator (no MPS)")
    ctx = device.create_context(flags)
    device.engine.push_context(ctx)
    cabi.store(pctx, "u64", handle_of(HandleKind.CONTEXT, ctx))


@entry
def cuCtxCreate_v2(pctx: int, flags: int, dev: int) -> None:
    """A new context on dev, current to the calling thread (pushed)."""
    _create(pctx, flags, dev, 0, 0)


@entry
def cuCtxCreate_v3(pctx: int, paramsArray: int, numParams: int, flags: int, dev: int) -> None:
    """As _v2; execution affinity is CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY."""
    _create(pctx, flags, dev, paramsArray, int(numParams))


@entry
def cuCtxCreate_v4(pctx: int, ctxCreateParams: int, flags: int, dev: int) -> None:
    """As _v2 with a CUctxCreateParams (may be NULL): affinity as _v3, a
    CIG (graphics interop) context is CUDA_ERROR_NOT_SUPPORTED."""
    affinity, count = 0, 0
    if ctxCreateParams:
        p = cabi.struct_at(ctxCreateParams, CUctxCreateParams, "ctxCreateParams")
        affinity, count = p.execAffinityParams or 0, p.numExecAffinityParams
        if p.cigParams:
            if count:
                raise fail(INVALID, "ctxCreateParams sets both exec affinity and CIG parameters")
            device_of(dev)
            raise fail(R.CUDA_ERROR_NOT_SUPPORTED, "CUDA in graphics (CIG) contexts need D3D12 or Vulkan")
    _create(pctx, flags, dev, affinity, count)


@entry
def cuCtxDestroy_v2(ctx: int) -> None:
    """Destroy a context made by cuCtxCreate, popping it if it is the
    calling thread's current one; a primary context is released with
    cuDevicePrimaryCtxRelease instead (CUDA_ERROR_INVALID_CONTEXT)."""
    c = context_of(ctx)
    if c.is_primary:
        raise fail(R.CUDA_ERROR_INVALID_CONTEXT,
                   f"{c!r} is a primary context; release it with cuDevicePrimaryCtxRelease")
    engine = c.engine
    stack = engine.threads.stack
    if stack and stack[-1] is c:
        engine.pop_context()
    c.device.destroy_context(c)
    handles.forget(HandleKind.CONTEXT, ctx)


# ------------------------------------------------------------------ the thread's stack
@entry
def cuCtxPushCurrent_v2(ctx: int) -> None:
    c = context_of(ctx)
    c.engine.push_context(c)


@entry
def cuCtxPopCurrent_v2(pctx: int) -> None:
    """Pop the calling thread's current context (pctx, if not NULL, gets it)."""
    engine = require_init()
    if not engine.threads.stack:
        raise fail(R.CUDA_ERROR_INVALID_CONTEXT, "the calling thread has no current context to pop")
    c = engine.pop_context()
    if pctx:
        cabi.store(pctx, "u64", handle_of(HandleKind.CONTEXT, c))


@entry
def cuCtxSetCurrent(ctx: int) -> None:
    """Replace the top of the stack with ctx (push onto an empty one);
    NULL unbinds the current context."""
    engine = require_init()
    stack = engine.threads.stack
    if not ctx:
        if stack:
            engine.pop_context()
        return
    c = context_of(ctx)
    if stack:
        engine.pop_context()
    engine.push_context(c)


@entry
def cuCtxGetCurrent(pctx: int) -> None:
    """The calling thread's current context, or NULL."""
    _need(pctx, "pctx")
    stack = require_init().threads.stack
    cabi.store(pctx, "u64", handle_of(HandleKind.CONTEXT, stack[-1]) if stack else 0)


@entry
def cuCtxGetDevice(device: int) -> None:
    _need(device, "device")
    cabi.store(device, "i32", current_context().device.ordinal)


@entry
def cuCtxGetDevice_v2(device: int, ctx: int) -> None:
    """The device of ctx (NULL: the current context)."""
    _need(device, "device")
    cabi.store(device, "i32", _ctx_or_current(ctx).device.ordinal)


@entry
def cuCtxGetId(ctx: int, ctxId: int) -> None:
    """A 64-bit id unique among the process's contexts (NULL: current)."""
    _need(ctxId, "ctxId")
    cabi.store(ctxId, "u64", _ctx_or_current(ctx).id)


@entry
def cuCtxSynchronize() -> None:
    """Wait for all work of the current context; report its sticky error."""
    current_context().synchronize()


@entry
def cuCtxSynchronize_v2(ctx: int) -> None:
    c = _ctx_or_current(ctx)
    c.check()
    c.synchronize()


@entry
def cuCtxGetApiVersion(ctx: int, version: int) -> None:
    _need(version, "version")
    _ctx_or_current(ctx)
    cabi.store(version, "u32", API_VERSION)


# ------------------------------------------------------------------ settings
@entry
def cuCtxGetFlags(flags: int) -> None:
    _need(flags, "flags")
    cabi.store(flags, "u32", context_flags(current_context()))


@entry
def cuCtxSetFlags(flags: int) -> None:
    """Replace the current context's flags."""
    ctx = current_context()
    flags = _check_flags(flags)
    if ctx.is_primary:
        _limits.settings(ctx.device).flags = flags
    ctx.flags = flags


@entry
def cuCtxSetLimit(limit: int, value: int) -> None:
    """driver/limits.py: the stack, printf FIFO and heap bound the simulator."""
    _limits.set_limit(current_context(), int(limit), int(value))


@entry
def cuCtxGetLimit(pvalue: int, limit: int) -> None:
    _need(pvalue, "pvalue")
    cabi.store(pvalue, "u64", _limits.get_limit(current_context(), int(limit)))


@entry
def cuCtxGetCacheConfig(pconfig: int) -> None:
    _need(pconfig, "pconfig")
    cabi.store(pconfig, "i32", int(_limits.settings(current_context().device).cache_config))


@entry
def cuCtxSetCacheConfig(config: int) -> None:
    """A preference only (recorded; it never changes occupancy here)."""
    _limits.set_cache_config(current_context().device, int(config))


@entry
def cuCtxGetSharedMemConfig(pConfig: int) -> None:
    """Always four-byte banks: the simulated device's banks are fixed."""
    _need(pConfig, "pConfig")
    cabi.store(pConfig, "i32", int(_limits.shared_mem_config(current_context().device)))


@entry
def cuCtxSetSharedMemConfig(config: int) -> None:
    _limits.set_shared_mem_config(current_context().device, int(config))


@entry
def cuCtxGetStreamPriorityRange(leastPriority: int, greatestPriority: int) -> None:
    """Either pointer may be NULL."""
    current_context()
    if leastPriority:
        cabi.store(leastPriority, "i32", PRIORITY_LEAST)
    if greatestPriority:
        cabi.store(greatestPriority, "i32", PRIORITY_GREATEST)


@entry
def cuCtxResetPersistingL2Cache() -> None:
    """The simulated memory system has no L2 cache lines to demote: the
    persisting set-aside (CU_LIMIT_PERSISTING_L2_CACHE_SIZE) is a limit only."""
    current_context()


@entry
def cuCtxGetExecAffinity(pExecAffinity: int, type: int) -> None:  # noqa: A002
    """CU_EXEC_AFFINITY_TYPE_SM_COUNT: every context may use all the SMs."""
    _need(pExecAffinity, "pExecAffinity")
    ctx = current_context()
    if int(type) != CU_EXEC_AFFINITY_TYPE_SM_COUNT:
        raise fail(INVALID, f"{type!r} is not a CUexecAffinityType")
    cabi.store_struct(pExecAffinity, CUexecAffinityParam(CU_EXEC_AFFINITY_TYPE_SM_COUNT,
                                                         ctx.device.model.sm_count), "pExecAffinity")


# ------------------------------------------------------------------ peers
@entry
def cuCtxEnablePeerAccess(peerContext: int, Flags: int) -> None:
    """Kernels cannot reach another simulated device's memory
    (cuDeviceCanAccessPeer answers 0): CUDA_ERROR_PEER_ACCESS_UNSUPPORTED."""
    ctx = current_context()
    peer = context_of(peerContext)
    if int(Flags) != 0:
        raise fail(INVALID, f"Flags must be 0, got {Flags!r}")
    if peer.device is ctx.device:
        raise fail(INVALID, "peerContext is on the current context's own device")
    raise fail(R.CUDA_ERROR_PEER_ACCESS_UNSUPPORTED,
               f"device {ctx.device.ordinal} cannot access the memory of device {peer.device.ordinal}")


@entry
def cuCtxDisablePeerAccess(peerContext: int) -> None:
    """Peer access is never enabled: CUDA_ERROR_PEER_ACCESS_NOT_ENABLED."""
    current_context()
    context_of(peerContext)
    raise fail(R.CUDA_ERROR_PEER_ACCESS_NOT_ENABLED, "peer access was not enabled")


# The CUDA 3.x/4.0 exports of the context functions take the same arguments
# and, now that every context belongs to a thread stack, do the same.
@entry
def cuCtxCreate(pctx: int, flags: int, dev: int) -> None:
    _create(pctx, flags, dev, 0, 0)


@entry
def cuCtxDestroy(ctx: int) -> int:
    return cuCtxDestroy_v2(ctx)


@entry
def cuCtxPushCurrent(ctx: int) -> int:
    return cuCtxPushCurrent_v2(ctx)


@entry
def cuCtxPopCurrent(pctx: int) -> int:
    return cuCtxPopCurrent_v2(pctx)
