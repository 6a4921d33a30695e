"""Kernel launches and function queries: nvcc's `<<<>>>` ABI
(__cudaPush/PopCallConfiguration, __cudaGetKernel, __cudaLaunchKernel),
cudaLaunchKernel, cudaLaunchKernelExC, cudaLaunchCooperativeKernel (and
their _ptsz variants), function attributes and occupancy.

A kernel is named by its host stub (or a cudaKernel_t from
__cudaGetKernel); registration.py turns it into the mcFunction_t of the
module loaded in the current context. The one idea for arguments:
`args[i]` points at exactly the size of the kernel's i-th PTX `.param`
(the loaded kernel knows each size), so each is read as raw bytes and
handed to mcLaunchKernel, which accepts bytes of a parameter's size.

cudaLaunchKernelExC (through mcLaunchKernelExC) honours
cudaLaunchAttributeCooperative and cudaLaunchAttributeClusterDimension
(thread-block clusters, sim/cluster.py); priority, access policy, synchronization
policy, memory sync domains, programmatic serialization/events and
carveout attributes are scheduling hints the simulator may ignore, as
a GPU may; unknown attribute ids are cudaErrorInvalidValue.
"""
from __future__ import annotations

import ctypes
import threading
from typing import Any

from gpudbg import cabi
from gpudbg.cabi import handles
from gpudbg.cuda_driver._base import HandleKind
from gpudbg.cuda_runtime import registration
from gpudbg.cuda_runtime._base import (E, KERNEL_KIND, call, dim3, export, fail, need, pack_dim3, per_thread,
                                       stream)
from gpudbg.runtime import mc

__all__ = ["__cudaPushCallConfiguration", "__cudaPopCallConfiguration", "__cudaGetKernel", "cudaGetKernel",
           "__cudaLaunchKernel", "__cudaLaunchKernel_ptsz", "cudaLaunchKernel", "cudaLaunchKernel_ptsz",
           "cudaLaunchKernelExC", "cudaLaunchKernelExC_ptsz", "cudaLaunchCooperativeKernel",
           "cudaLaunchCooperativeKernel_ptsz", "cudaFuncGetAttributes", "cudaFuncSetAttribute",
           "cudaFuncSetCacheConfig", "cudaFuncGetName", "cudaGetFuncBySymbol",
           "cudaOccupancyMaxActiveBlocksPerMultiprocessor",
           "cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags", "cudaOccupancyAvailableDynamicSMemPerBlock"]

_config = threading.local()


# ------------------------------------------------------------------ <<<>>>
def __cudaPushCallConfiguration(gridDim: Any, blockDim: Any, sharedMem: int, stream: int) -> int:
    """Push the configuration of the next launch of this thread; unsigned 0."""
    stack = getattr(_config, "stack", None)
    if stack is None:
        stack = _config.stack = []
    stack.append((dim3(gridDim, "gridDim"), dim3(blockDim, "blockDim"), int(sharedMem), int(stream)))
    return 0


@export
def __cudaPopCallConfiguration(gridDim: int, blockDim: int, sharedMem: int, stream: int) -> None:
    """Pop it into the caller's locals (stream is really a cudaStream_t*)."""
    stack = getattr(_config, "stack", None)
    if not stack:
        raise fail(E.mcErrorMissingConfiguration, "__cudaPopCallConfiguration without a pushed configuration")
    grid, block, shmem, s = stack.pop()
    cabi.write(need(gridDim, "gridDim"), pack_dim3(grid))
    cabi.write(need(blockDim, "blockDim"), pack_dim3(block))
    cabi.store(need(sharedMem, "sharedMem"), "u64", shmem)
    cabi.store(need(stream, "stream"), "u64", s)


@export
def __cudaGetKernel(kernel: int, hostStub: int) -> None:
    """The cudaKernel_t of a registered host stub (called once per <<<>>> site)."""
    need(kernel, "kernel")
    cabi.store(kernel, "u64", registration.kernel_of_stub(hostStub))


@export
def cudaGetKernel(kernelPtr: int, entryFuncAddr: int) -> None:
    """The public form of __cudaGetKernel."""
    need(kernelPtr, "kernelPtr")
    cabi.store(kernelPtr, "u64", registration.kernel_of_stub(entryFuncAddr))


def kernel_args(function: Any, args: int) -> list[bytes]:
    """Each `args[i]` read as the bytes of the kernel's i-th parameter."""
    params = function.kernel.params
    if not params:
        return []
    pointers = cabi.load_array(need(args, "args"), "u64", len(params), "args")
    return [cabi.read(need(p, f"args[{i}]"), param.size, f"args[{i}]")
            for i, (p, param) in enumerate(zip(pointers, params))]


def _launch(function: Any, grid: Any, block: Any, args: int, shmem: int, s: Any) -> None:
    call(mc.mcLaunchKernel, function, dim3(grid, "gridDim"), dim3(block, "blockDim"),
         kernel_args(function, args), int(shmem), s)


def _kernel_function(kernel: int) -> Any:
    if not int(kernel):
        raise fail(E.mcErrorInvalidResourceHandle, "cudaKernel_t is NULL")
    if handles.kind_of(int(kernel)) != KERNEL_KIND:
        raise fail(E.mcErrorInvalidResourceHandle, f"0x{int(kernel):x} is not a cudaKernel_t")
    return registration.function_of(kernel)


@export
def __cudaLaunchKernel(kernel: int, gridDim: Any, blockDim: Any, args: int, sharedMem: int, stream_: int) -> None:
    """<<<>>> of CUDA 13: launch a cudaKernel_t from __cudaGetKernel."""
    _launch(_kernel_function(kernel), gridDim, blockDim, args, sharedMem, stream(stream_))


@export
def __cudaLaunchKernel_ptsz(kernel: int, gridDim: Any, blockDim: Any, args: int, sharedMem: int,
                            stream_: int) -> None:
    _launch(_kernel_function(kernel), gridDim, blockDim, args, sharedMem, stream(stream_, per_thread=True))


@export
def cudaLaunchKernel(func: int, gridDim: Any, blockDim: Any, args: int, sharedMem: int, stream_: int) -> None:
    """Launch the kernel of a host stub (or a cudaKernel_t)."""
    _launch(registration.function_of(func), gridDim, blockDim, args, sharedMem, stream(stream_))


cudaLaunchKernel_ptsz = per_thread(cudaLaunchKernel, "cudaLaunchKernel_ptsz", 5)


@export
def cudaLaunchCooperativeKernel(func: int, gridDim: Any, blockDim: Any, args: int, sharedMem: int,
                                stream_: int) -> None:
    """A grid whose blocks are all co-resident (grid-wide sync allowed)."""
    f = registration.function_of(func)
    call(mc.mcLaunchCooperativeKernel, f, dim3(gridDim, "gridDim"), dim3(blockDim, "blockDim"),
         kernel_args(f, args), int(sharedMem), stream(stream_))


cudaLaunchCooperativeKernel_ptsz = per_thread(cudaLaunchCooperativeKernel, "cudaLaunchCooperativeKernel_ptsz", 5)


# ------------------------------------------------------------------ cudaLaunchKernelExC
class _LaunchConfig(ctypes.Structure):
    _fields_ = [("gridDim", ctypes.c_uint * 3), ("blockDim", ctypes.c_uint * 3),
                ("dynamicSmemBytes", ctypes.c_size_t), ("stream", ctypes.c_void_p),
                ("attrs", ctypes.c_void_p), ("numAttrs", ctypes.c_uint)]


ATTRIBUTE_BYTES = 72          # cudaLaunchAttribute: id, pad to 8, 64-byte value union
ATTR_IGNORE, ATTR_COOPERATIVE, ATTR_CLUSTER_DIMENSION = 0, 2, 4
_HINTS = {1, 3, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14}   # accepted hints (see the module docstring)


def _launch_ex(config: int, func: int, args: int, per_thread_stream: bool) -> None:
    """cudaLaunchConfig_t and its cudaLaunchAttribute array, read from C
    memory into mcLaunchKernelExC's config (which judges the attributes)."""
    cfg = cabi.struct_at(need(config, "config"), _LaunchConfig, "config")
    attrs = []
    if cfg.numAttrs:
        base = need(cfg.attrs or 0, "config->attrs")
        for i in range(cfg.numAttrs):
            raw = cabi.read(base + i * ATTRIBUTE_BYTES, ATTRIBUTE_BYTES, "config->attrs")
            ident = int.from_bytes(raw[0:4], "little")
            value = raw[8:]
            if ident == ATTR_COOPERATIVE:
                attrs.append(mc.mcLaunchAttribute_t(ident, int.from_bytes(value[0:4], "little", signed=True)))
            elif ident == ATTR_CLUSTER_DIMENSION:
                dims = tuple(int.from_bytes(value[j:j + 4], "little") for j in (0, 4, 8))
                if dims != (0, 0, 0):    # all zero: no cluster shape given
                    attrs.append(mc.mcLaunchAttribute_t(ident, dims))
            elif ident != ATTR_IGNORE and ident not in _HINTS:
                raise fail(E.mcErrorInvalidValue, f"config->attrs[{i}].id {ident} is not a cudaLaunchAttributeID")
    f = registration.function_of(func)
    s = stream(cfg.stream or 0, per_thread_stream)
    launch = mc.mcLaunchConfig_t(tuple(cfg.gridDim), tuple(cfg.blockDim), int(cfg.dynamicSmemBytes), s, attrs)
    call(mc.mcLaunchKernelExC, launch, f, kernel_args(f, args))


@export
def cudaLaunchKernelExC(config: int, func: int, args: int) -> None:
    """Launch with a cudaLaunchConfig_t (grid, block, shared bytes, stream, attributes)."""
    _launch_ex(config, func, args, False)


@export
def cudaLaunchKernelExC_ptsz(config: int, func: int, args: int) -> None:
    _launch_ex(config, func, args, True)


# ------------------------------------------------------------------ function queries
class cudaFuncAttributes(ctypes.Structure):
    """struct cudaFuncAttributes of CUDA 13's driver_types.h."""

    _fields_ = [("sharedSizeBytes", ctypes.c_size_t), ("constSizeBytes", ctypes.c_size_t),
                ("localSizeBytes", ctypes.c_size_t), ("maxThreadsPerBlock", ctypes.c_int),
                ("numRegs", ctypes.c_int), ("ptxVersion", ctypes.c_int), ("binaryVersion", ctypes.c_int),
                ("cacheModeCA", ctypes.c_int), ("maxDynamicSharedSizeBytes", ctypes.c_int),
                ("preferredShmemCarveout", ctypes.c_int), ("clusterDimMustBeSet", ctypes.c_int),
                ("requiredClusterWidth", ctypes.c_int), ("requiredClusterHeight", ctypes.c_int),
                ("requiredClusterDepth", ctypes.c_int), ("clusterSchedulingPolicyPreference", ctypes.c_int),
                ("nonPortableClusterSizeAllowed", ctypes.c_int), ("reserved", ctypes.c_int * 16)]


@export
def cudaFuncGetAttributes(attr: int, func: int) -> None:
    """The kernel's attributes (mcFuncGetAttributes); the cluster fields are
    its __cluster_dims__ (.reqnctapercluster)."""
    need(attr, "attr")
    a = call(mc.mcFuncGetAttributes, registration.function_of(func))
    out = cudaFuncAttributes()
    for name, _ in cudaFuncAttributes._fields_:
        if hasattr(a, name):
            setattr(out, name, int(getattr(a, name)))
    cabi.store_struct(attr, out, "attr")


@export
def cudaFuncSetAttribute(func: int, attr: int, value: int) -> None:
    """cudaFuncAttributeMaxDynamicSharedMemorySize (8) or
    cudaFuncAttributePreferredSharedMemoryCarveout (9), as mcFuncSetAttribute."""
    call(mc.mcFuncSetAttribute, registration.function_of(func), int(attr), int(value))


@export
def cudaFuncSetCacheConfig(func: int, cacheConfig: int) -> None:
    """A preferred L1/shared split for the kernel: validated, and a
    preference only (as on GPUs with a fixed split, it changes nothing)."""
    registration.function_of(func)
    if int(cacheConfig) not in range(4):
        raise fail(E.mcErrorInvalidValue, f"cacheConfig {int(cacheConfig)} is not a cudaFuncCache")


@export
def cudaFuncGetName(name: int, func: int) -> None:
    """The kernel's (mangled) name as a `const char*` that stays valid."""
    need(name, "name")
    f = registration.function_of(func)
    cabi.store(name, "u64", cabi.lasting_c_string(f.name))


@export
def cudaGetFuncBySymbol(functionPtr: int, symbolPtr: int) -> None:
    """The cudaFunction_t (a CUfunction handle) of a host stub's kernel in
    the current context."""
    need(functionPtr, "functionPtr")
    cabi.store(functionPtr, "u64", handles.handle(HandleKind.FUNCTION, registration.function_of(symbolPtr)))


# ------------------------------------------------------------------ occupancy
@export
def cudaOccupancyMaxActiveBlocksPerMultiprocessor(numBlocks: int, func: int, blockSize: int,
                                                  dynamicSMemSize: int) -> None:
    need(numBlocks, "numBlocks")
    n = call(mc.mcOccupancyMaxActiveBlocksPerMultiprocessor, registration.function_of(func), int(blockSize),
             int(dynamicSMemSize))
    cabi.store(numBlocks, "i32", n)


@export
def cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(numBlocks: int, func: int, blockSize: int,
                                                           dynamicSMemSize: int, flags: int) -> None:
    need(numBlocks, "numBlocks")
    n = call(mc.mcOccupancyMaxActiveBlocksPerMultiprocessorWithFlags, registration.function_of(func),
             int(blockSize), int(dynamicSMemSize), int(flags))
    cabi.store(numBlocks, "i32", n)


@export
def cudaOccupancyAvailableDynamicSMemPerBlock(dynamicSmemSize: int, func: int, numBlocks: int,
                                              blockSize: int) -> None:
    need(dynamicSmemSize, "dynamicSmemSize")
    n = call(mc.mcOccupancyAvailableDynamicSMemPerBlock, registration.function_of(func), int(numBlocks),
             int(blockSize))
    cabi.store(dynamicSmemSize, "u64", n)
