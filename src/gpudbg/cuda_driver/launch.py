"""Kernel launches in the driver API: cuLaunchKernel, cuLaunchKernelEx
(CUlaunchConfig and its CUlaunchAttribute list), cuLaunchCooperativeKernel,
cuLaunchCooperativeKernelMultiDevice and cuLaunchHostFunc, with their
`_ptsz` variants.

The one idea for arguments: `kernelParams[i]` points at exactly the size
of the kernel's i-th PTX `.param` (the loaded kernel knows each size and
offset), so each is read as raw bytes and handed to the engine's launch
(driver/module.py), which lays them out in the parameter buffer; no type
knowledge is needed. `extra` is the CU_LAUNCH_PARAM_BUFFER_POINTER /
CU_LAUNCH_PARAM_BUFFER_SIZE / CU_LAUNCH_PARAM_END list: the packed buffer
is read at its given size. The function may be a CUfunction or a CUkernel.

Launch attributes: COOPERATIVE makes a cooperative launch; a CLUSTER_
DIMENSION is validated (each dimension divides the grid, at most 8 blocks)
and shapes the launch's thread-block clusters (sim/cluster.py); PROGRAMMATIC_EVENT and
LAUNCH_COMPLETION_EVENT record their event after the kernel in stream
order (the latest moment CUDA allows, so never early); priority, access
policy, synchronization policy, memory sync domains, scheduling policy,
preferred cluster size, carveout, programmatic serialization and NVLink
scheduling are validated hints the simulator may ignore, as a GPU may.
DEVICE_UPDATABLE_KERNEL_NODE is for graphs only (CUDA_ERROR_INVALID_VALUE
outside a capture); unknown ids are CUDA_ERROR_INVALID_VALUE.
"""
from __future__ import annotations

import ctypes
import struct
from dataclasses import dataclass, field
from typing import Any

from gpudbg import cabi
from gpudbg.cabi import handles
from gpudbg.cuda_driver._base import (HandleKind, R, current_context, entry, fail, object_of, per_thread_variant,
                                      require_init, stream_of)
from gpudbg.cuda_driver.module import function_of, need
from gpudbg.driver import callbacks
from gpudbg.driver import cooperative as _coop
from gpudbg.driver import module as _module
from gpudbg.driver.event import check_event
from gpudbg.driver.types import LaunchParams

__all__ = ["cuLaunchKernel", "cuLaunchKernel_ptsz", "cuLaunchKernelEx", "cuLaunchKernelEx_ptsz",
           "cuLaunchCooperativeKernel", "cuLaunchCooperativeKernel_ptsz", "cuLaunchCooperativeKernelMultiDevice",
           "cuLaunchHostFunc", "cuLaunchHostFunc_ptsz"]

INVALID = R.CUDA_ERROR_INVALID_VALUE
PARAM_END, PARAM_BUFFER_POINTER, PARAM_BUFFER_SIZE = 0x0, 0x1, 0x2
MAX_EXTRA_ENTRIES = 64
HOST_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
PORTABLE_CLUSTER_SIZE = 8


# ------------------------------------------------------------------ arguments
def kernel_args(function: Any, kernelParams: int) -> list[bytes] | None:
    """Each `kernelParams[i]` read as the bytes of the kernel's i-th
    parameter; None when kernelParams is NULL."""
    if not kernelParams:
        return None
    params = function.kernel.params
    pointers = cabi.load_array(kernelParams, "u64", len(params), "kernelParams") if params else []
    return [cabi.read(need(p, f"kernelParams[{i}]"), param.size, f"kernelParams[{i}]")
            for i, (p, param) in enumerate(zip(pointers, params))]


def extra_buffer(extra: int) -> bytes | None:
    """The packed parameter buffer an `extra` list names; None when NULL."""
    if not extra:
        return None
    buf_ptr = size_ptr = None
    for i in range(0, 2 * MAX_EXTRA_ENTRIES, 2):
        key = cabi.load(extra + 8 * i, "u64", "extra")
        if key == PARAM_END:
            break
        value = cabi.load(extra + 8 * (i + 1), "u64", "extra")
        if key == PARAM_BUFFER_POINTER:
            buf_ptr = value
        elif key == PARAM_BUFFER_SIZE:
            size_ptr = value
        else:
            raise fail(INVALID, f"extra[{i}] = 0x{key:x} is not CU_LAUNCH_PARAM_BUFFER_POINTER, "
                                f"CU_LAUNCH_PARAM_BUFFER_SIZE or CU_LAUNCH_PARAM_END")
    else:
        raise fail(INVALID, f"extra has no CU_LAUNCH_PARAM_END within {MAX_EXTRA_ENTRIES} entries")
    if buf_ptr is None or size_ptr is None:
        raise fail(INVALID, "extra needs both CU_LAUNCH_PARAM_BUFFER_POINTER and CU_LAUNCH_PARAM_BUFFER_SIZE")
    size = cabi.load(need(size_ptr, "extra's CU_LAUNCH_PARAM_BUFFER_SIZE value"), "u64")
    return cabi.read(need(buf_ptr, "extra's CU_LAUNCH_PARAM_BUFFER_POINTER value"), size, "extra buffer")


# ------------------------------------------------------------------ launches
@dataclass
class Launch:
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    shared: int
    cooperative: bool = False
    events: list[tuple[Any, int]] = field(default_factory=list)   # (Event, record flags) after the kernel
    cluster: tuple[int, int, int] | None = None                   # CLUSTER_DIMENSION


def _launch(ctx: Any, function: Any, spec: Launch, stream: Any, kernelParams: int, extra: int) -> None:
    args, packed = kernel_args(function, kernelParams), extra_buffer(extra)
    if spec.cooperative:
        if packed is not None:
            raise fail(INVALID, "a cooperative launch takes kernelParams, not extra")
        _coop.launch_cooperative(ctx, function, spec.grid, spec.block, spec.shared, stream, args)
    else:
        _module.launch(ctx, function, spec.grid, spec.block, spec.shared, stream, args, packed,
                       cluster=spec.cluster)
    for event, flags in spec.events:
        event.record(stream, flags)


def _launch_kernel(f: int, gx: int, gy: int, gz: int, bx: int, by: int, bz: int, shared: int, hStream: int,
                   kernelParams: int, extra: int, cooperative: bool) -> None:
    ctx = current_context()
    function = function_of(f, ctx)
    stream = stream_of(ctx, hStream)
    spec = Launch((int(gx), int(gy), int(gz)), (int(bx), int(by), int(bz)), int(shared), cooperative)
    _launch(ctx, function, spec, stream, kernelParams, extra)


@entry
def cuLaunchKernel(f: int, gridDimX: int, gridDimY: int, gridDimZ: int, blockDimX: int, blockDimY: int,
                   blockDimZ: int, sharedMemBytes: int, hStream: int, kernelParams: int, extra: int) -> None:
    """Launch f (a CUfunction or CUkernel) on hStream; arguments through
    kernelParams or extra (not both)."""
    _launch_kernel(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes, hStream,
                   kernelParams, extra, False)


@entry
def cuLaunchCooperativeKernel(f: int, gridDimX: int, gridDimY: int, gridDimZ: int, blockDimX: int,
                              blockDimY: int, blockDimZ: int, sharedMemBytes: int, hStream: int,
                              kernelParams: int) -> None:
    """A grid whose blocks are all co-resident (CUDA_ERROR_COOPERATIVE_
    LAUNCH_TOO_LARGE when they cannot be)."""
    _launch_kernel(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes, hStream,
                   kernelParams, 0, True)


cuLaunchKernel_ptsz = per_thread_variant(cuLaunchKernel, "cuLaunchKernel_ptsz", 8)
cuLaunchCooperativeKernel_ptsz = per_thread_variant(cuLaunchCooperativeKernel, "cuLaunchCooperativeKernel_ptsz", 8)


# ------------------------------------------------------------------ cuLaunchKernelEx
class CUlaunchConfig(ctypes.Structure):
    _fields_ = [("gridDimX", ctypes.c_uint), ("gridDimY", ctypes.c_uint), ("gridDimZ", ctypes.c_uint),
                ("blockDimX", ctypes.c_uint), ("blockDimY", ctypes.c_uint), ("blockDimZ", ctypes.c_uint),
                ("sharedMemBytes", ctypes.c_uint), ("hStream", ctypes.c_void_p), ("attrs", ctypes.c_void_p),
                ("numAttrs", ctypes.c_uint)]


ATTRIBUTE_BYTES = 72      # CUlaunchAttribute: id, pad to 8, 64-byte value union
(A_IGNORE, A_ACCESS_POLICY_WINDOW, A_COOPERATIVE, A_SYNCHRONIZATION_POLICY, A_CLUSTER_DIMENSION,
 A_CLUSTER_SCHEDULING_POLICY_PREFERENCE, A_PROGRAMMATIC_STREAM_SERIALIZATION, A_PROGRAMMATIC_EVENT, A_PRIORITY,
 A_MEM_SYNC_DOMAIN_MAP, A_MEM_SYNC_DOMAIN, A_PREFERRED_CLUSTER_DIMENSION, A_LAUNCH_COMPLETION_EVENT,
 A_DEVICE_UPDATABLE_KERNEL_NODE, A_PREFERRED_SHARED_MEMORY_CARVEOUT) = range(15)
A_NVLINK_UTIL_CENTRIC_SCHEDULING = 16


def _i32(value: bytes, at: int = 0) -> int:
    return struct.unpack_from("<i", value, at)[0]


def _check_range(i: int, what: str, v: int, lo: int, hi: int) -> None:
    if not lo <= v <= hi:
        raise fail(INVALID, f"attrs[{i}] {what} = {v} is outside {lo}..{hi}")


def check_cluster(i: int, dims: tuple[int, int, int], grid: tuple[int, int, int], what: str) -> None:
    """A cluster shape must divide the grid and fit the portable size."""
    if any(d < 1 for d in dims):
        raise fail(INVALID, f"attrs[{i}] {what} {dims} has a zero dimension")
    for axis, (d, g) in enumerate(zip(dims, grid)):
        if g % d:
            raise fail(INVALID, f"attrs[{i}] {what} {'xyz'[axis]}={d} does not divide the grid's {g}")
    if dims[0] * dims[1] * dims[2] > PORTABLE_CLUSTER_SIZE:
        raise fail(R.CUDA_ERROR_INVALID_CLUSTER_SIZE, f"attrs[{i}] {what} {dims} has more than "
                                                      f"{PORTABLE_CLUSTER_SIZE} blocks (the portable cluster size)")


def _event_attr(ctx: Any, i: int, value: bytes, what: str) -> tuple[Any, int]:
    handle, flags = struct.unpack_from("<Qi", value, 0)
    event = check_event(ctx, object_of(HandleKind.EVENT, handle))
    if flags != 0:
        raise fail(INVALID, f"attrs[{i}] {what} flags 0x{flags:x}: only CU_EVENT_RECORD_DEFAULT is allowed")
    return event, 0


def parse_attributes(ctx: Any, config: CUlaunchConfig, spec: Launch, stream: Any) -> None:
    """Apply and validate config.attrs (see the module docstring)."""
    if not config.numAttrs:
        return
    base = need(config.attrs or 0, "config->attrs")
    for i in range(config.numAttrs):
        raw = cabi.read(base + i * ATTRIBUTE_BYTES, ATTRIBUTE_BYTES, "config->attrs")
        ident, value = struct.unpack_from("<I", raw, 0)[0], raw[8:]
        if ident == A_IGNORE:
            continue
        if ident == A_COOPERATIVE:
            spec.cooperative = _i32(value) != 0
        elif ident == A_CLUSTER_DIMENSION:
            dims = struct.unpack_from("<III", value, 0)
            check_cluster(i, dims, spec.grid, "cluster dimension")
            spec.cluster = dims
        elif ident == A_PREFERRED_CLUSTER_DIMENSION:
            check_cluster(i, struct.unpack_from("<III", value, 0), spec.grid, "preferred cluster dimension")
        elif ident in (A_PROGRAMMATIC_EVENT, A_LAUNCH_COMPLETION_EVENT):
            spec.events.append(_event_attr(ctx, i, value, "programmatic event" if ident == A_PROGRAMMATIC_EVENT
                                           else "launch completion event"))
        elif ident == A_ACCESS_POLICY_WINDOW:
            _base_ptr, _nbytes, hit_ratio, hit_prop, miss_prop = struct.unpack_from("<QQfii", value, 0)
            if not 0.0 <= hit_ratio <= 1.0:
                raise fail(INVALID, f"attrs[{i}] accessPolicyWindow.hitRatio {hit_ratio} is outside [0, 1]")
            _check_range(i, "accessPolicyWindow.hitProp", hit_prop, 0, 2)
            _check_range(i, "accessPolicyWindow.missProp", miss_prop, 0, 2)
        elif ident == A_SYNCHRONIZATION_POLICY:
            _check_range(i, "syncPolicy", _i32(value), 1, 4)
        elif ident == A_CLUSTER_SCHEDULING_POLICY_PREFERENCE:
            _check_range(i, "clusterSchedulingPolicyPreference", _i32(value), 0, 2)
        elif ident == A_MEM_SYNC_DOMAIN:
            _check_range(i, "memSyncDomain", _i32(value), 0, 1)
        elif ident == A_PREFERRED_SHARED_MEMORY_CARVEOUT:
            carveout = _i32(value)
            if carveout != -1:
                _check_range(i, "sharedMemCarveout", carveout, 0, 100)
        elif ident == A_DEVICE_UPDATABLE_KERNEL_NODE:
            if stream.capture is None:
                raise fail(INVALID, f"attrs[{i}] CU_LAUNCH_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE is only valid "
                                    f"for graph kernel nodes (the stream is not capturing)")
        elif ident not in (A_PROGRAMMATIC_STREAM_SERIALIZATION, A_PRIORITY, A_MEM_SYNC_DOMAIN_MAP,
                           A_NVLINK_UTIL_CENTRIC_SCHEDULING):
            raise fail(INVALID, f"config->attrs[{i}].id {ident} is not a CUlaunchAttributeID")


def _launch_ex(config: int, f: int, kernelParams: int, extra: int, per_thread: bool) -> None:
    cfg = cabi.struct_at(need(config, "config"), CUlaunchConfig, "config")
    ctx = current_context()
    function = function_of(f, ctx)
    stream = stream_of(ctx, cfg.hStream or 0, per_thread)
    spec = Launch((cfg.gridDimX, cfg.gridDimY, cfg.gridDimZ), (cfg.blockDimX, cfg.blockDimY, cfg.blockDimZ),
                  int(cfg.sharedMemBytes))
    parse_attributes(ctx, cfg, spec, stream)
    _launch(ctx, function, spec, stream, kernelParams, extra)


@entry
def cuLaunchKernelEx(config: int, f: int, kernelParams: int, extra: int) -> None:
    """Launch with a CUlaunchConfig (grid, block, shared bytes, stream,
    attributes)."""
    _launch_ex(config, f, kernelParams, extra, False)


@entry
def cuLaunchKernelEx_ptsz(config: int, f: int, kernelParams: int, extra: int) -> None:
    _launch_ex(config, f, kernelParams, extra, True)


# ------------------------------------------------------------------ multi-device
class CUDA_LAUNCH_PARAMS(ctypes.Structure):
    _fields_ = [("function", ctypes.c_void_p), ("gridDimX", ctypes.c_uint), ("gridDimY", ctypes.c_uint),
                ("gridDimZ", ctypes.c_uint), ("blockDimX", ctypes.c_uint), ("blockDimY", ctypes.c_uint),
                ("blockDimZ", ctypes.c_uint), ("sharedMemBytes", ctypes.c_uint), ("hStream", ctypes.c_void_p),
                ("kernelParams", ctypes.c_void_p)]


@entry
def cuLaunchCooperativeKernelMultiDevice(launchParamsList: int, numDevices: int, flags: int) -> None:
    """One cooperative grid per device, each entry's function a CUfunction
    of a context on that device (its hStream a stream of that context)."""
    engine = require_init()
    n = int(numDevices)
    if n < 1:
        raise fail(INVALID, f"numDevices must be >= 1, got {n}")
    size = ctypes.sizeof(CUDA_LAUNCH_PARAMS)
    need(launchParamsList, "launchParamsList")
    parts = []
    for i in range(n):
        p = cabi.struct_at(launchParamsList + i * size, CUDA_LAUNCH_PARAMS, "launchParamsList")
        if handles.kind_of(p.function or 0) != HandleKind.FUNCTION:
            raise fail(R.CUDA_ERROR_INVALID_HANDLE, f"launchParamsList[{i}].function is not a CUfunction")
        function = function_of(p.function)
        ctx = function.module.context
        number = int(p.hStream or 0)
        s = number if number in (0, 1, 2) else handles.lookup(HandleKind.STREAM, number)
        args = kernel_args(function, p.kernelParams or 0)
        parts.append(LaunchParams(function, (p.gridDimX, p.gridDimY, p.gridDimZ),
                                  (p.blockDimX, p.blockDimY, p.blockDimZ), args or [], int(p.sharedMemBytes),
                                  ctx.stream(s)))
    _coop.launch_multi_device(engine, parts, n, int(flags))


# ------------------------------------------------------------------ host functions
@entry
def cuLaunchHostFunc(hStream: int, fn: int, userData: int) -> None:
    """fn(userData) in stream order on the context's host worker thread;
    skipped once the context has an error (unlike stream callbacks)."""
    ctx = current_context()
    host_fn = HOST_FN(need(fn, "fn"))

    def deliver(data: Any) -> None:
        host_fn(data or None)

    callbacks.enqueue(stream_of(ctx, hStream), callbacks.HostKind.HOST_FUNC, deliver, int(userData), int(hStream))


cuLaunchHostFunc_ptsz = per_thread_variant(cuLaunchHostFunc, "cuLaunchHostFunc_ptsz", 0)
