"""Per-function launch configuration: the attributes a program may set on a
kernel (mcFuncSetAttribute), the attributes it reads back
(mcFuncGetAttributes), and the occupancy answers (seed 002 §2.6).

The one idea: every answer comes from the same three inputs the simulator
uses to place blocks, the translated kernel's footprint (registers, static
shared memory, max threads), the device model, and
`gpudbg.sim.device_model.occupancy()`; `sim/wave.py build_waves` calls that
same function, so blocks per SM reported here equal the blocks per SM the
executor places. A configuration that a launch would refuse (too many
threads for the kernel, more dynamic shared memory than its attribute
allows) has occupancy 0. Nothing here launches.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any, Callable

from gpudbg.driver.status import Cause, CUresult, EngineError
from gpudbg.driver.types import CUfunction_attribute, CUjit_cacheMode, CUoccupancy_flags, CUshared_carveout, FunctionAttributes
from gpudbg.sim.device_model import occupancy

_INVALID = CUresult.CUDA_ERROR_INVALID_VALUE


@dataclass
class FunctionConfig:
    max_dynamic_shared: int | None = None        # None: the 48 KiB default minus static shared
    preferred_carveout: int = CUshared_carveout.CU_SHAREDMEM_CARVEOUT_DEFAULT


_config_lock = threading.Lock()


def check_function(function: Any) -> Any:
    """The Function handle, or mcErrorInvalidDeviceFunction."""
    from gpudbg.driver.module import Function
    if not isinstance(function, Function):
        raise EngineError(Cause.DEVICE_FUNCTION, f"{function!r} is not a device function")
    if function.module.unloaded:
        raise EngineError(Cause.DEVICE_FUNCTION, f"{function!r} belongs to an unloaded module")
    return function


def config(function: Any) -> FunctionConfig:
    """The function's settable attributes (kept on the handle: Function.launch_config)."""
    c = function.launch_config
    if c is None:
        with _config_lock:
            c = function.launch_config
            if c is None:
                c = function.launch_config = FunctionConfig()
    return c


def max_dynamic_shared(function: Any, model: Any) -> int:
    """The most dynamic shared memory one launch of `function` may ask for."""
    c = function.launch_config
    if c is not None and c.max_dynamic_shared is not None:
        return c.max_dynamic_shared
    return max(model.shared_per_block - function.kernel.static_shared, 0)


_SETTABLE = (CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
             CUfunction_attribute.CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT)


def set_attribute(function: Any, attr: Any, value: Any) -> None:
    model = function.module.context.device.model
    try:
        which = CUfunction_attribute(attr) if not isinstance(attr, bool) else None
    except ValueError:
        which = None
    if which not in _SETTABLE:
        raise EngineError(_INVALID, f"{attr!r} is not a settable CUfunction_attribute")
    if isinstance(value, bool) or not isinstance(value, int):
        raise EngineError(_INVALID, f"attribute value must be an int, got {value!r}")
    if which is CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
        limit = model.shared_per_block_optin - function.kernel.static_shared
        if not 0 <= value <= limit:
            raise EngineError(_INVALID, f"{function.name}: max dynamic shared memory {value} is outside "
                                        f"0..{limit} (opt-in limit {model.shared_per_block_optin} minus "
                                        f"{function.kernel.static_shared} static)")
        config(function).max_dynamic_shared = value
    else:
        if not (value == CUshared_carveout.CU_SHAREDMEM_CARVEOUT_DEFAULT or 0 <= value <= 100):
            raise EngineError(_INVALID, f"preferred shared memory carveout {value} is not -1 or 0..100 percent")
        config(function).preferred_carveout = value


def _virtual_arch(targets) -> int:
    """ptxVersion as CUDA defines it: the virtual architecture the PTX was
    generated for (`.target sm_80` -> 80), not the ISA version."""
    for t in targets:
        if t.startswith(("sm_", "compute_")):
            digits = "".join(ch for ch in t.split("_", 1)[1] if ch.isdigit())
            if digits:
                return int(digits)
    return 0


def attributes(function: Any) -> FunctionAttributes:
    k = function.kernel
    model = function.module.context.device.model
    ptx_version, const_bytes = 0, 0
    prog = getattr(k, "program", None)
    if prog is not None:
        ir_mod = prog.module
        ptx_version = _virtual_arch(ir_mod.targets)
        const_bytes = sum(_var_size(v) for v in ir_mod.globals.values() if v.space == "const")
    jit = getattr(function.module, "jit", None)
    cache_ca = int(getattr(jit, "cache_mode", None) == CUjit_cacheMode.CU_JIT_CACHE_OPTION_CA)
    cc = model.compute_capability
    cluster = (getattr(k, "directives", None) or {}).get("reqnctapercluster")
    cluster = tuple((tuple(cluster) + (1, 1))[:3]) if cluster else (0, 0, 0)
    return FunctionAttributes(
        sharedSizeBytes=int(k.static_shared), constSizeBytes=int(const_bytes),
        localSizeBytes=int(k.local_size), maxThreadsPerBlock=int(k.max_threads_per_block),
        numRegs=int(k.num_regs), ptxVersion=ptx_version, binaryVersion=cc[0] * 10 + cc[1],
        cacheModeCA=cache_ca, maxDynamicSharedSizeBytes=max_dynamic_shared(function, model),
        preferredShmemCarveout=config(function).preferred_carveout,
        clusterDimMustBeSet=int(cluster != (0, 0, 0)), requiredClusterWidth=cluster[0],
        requiredClusterHeight=cluster[1], requiredClusterDepth=cluster[2])


def _var_size(v: Any) -> int:
    from gpudbg.ptx.types import PTX_TYPES
    return PTX_TYPES[v.type].size * (v.vector or 1) * (v.element_count or 0)


# ------------------------------------------------------------------ occupancy
def _flags(flags: Any) -> None:
    if isinstance(flags, bool) or not isinstance(flags, int) or flags < 0 \
            or flags & ~int(CUoccupancy_flags.CU_OCCUPANCY_DISABLE_CACHING_OVERRIDE):
        raise EngineError(_INVALID, f"unknown occupancy flags {flags!r}")


def _positive(name: str, v: Any) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
        raise EngineError(_INVALID, f"{name} must be an int > 0, got {v!r}")
    return v


def _non_negative(name: str, v: Any) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        raise EngineError(_INVALID, f"{name} must be an int >= 0, got {v!r}")
    return v


def blocks_per_sm(function: Any, block_size: int, dynamic_shared: int, flags: int = 0) -> int:
    """Resident blocks per SM, exactly as sim/wave.py places them; 0 for a
    configuration the launch would refuse. (Caching never changes occupancy
    on this device, so CU_OCCUPANCY_DISABLE_CACHING_OVERRIDE gives the same.)"""
    _flags(flags)
    _positive("blockSize", block_size)
    _non_negative("dynamicSMemSize", dynamic_shared)
    k = function.kernel
    model = function.module.context.device.model
    if block_size > k.max_threads_per_block or dynamic_shared > max_dynamic_shared(function, model):
        return 0
    return occupancy(model, block_size, k.num_regs, k.static_shared + dynamic_shared)


def max_potential_block_size(function: Any, dynamic_shared: int | Callable[[int], int],
                             block_size_limit: int, flags: int = 0) -> tuple[int, int]:
    """(minimum grid size for full occupancy, block size): CUDA's search,
    from the largest warp-multiple block size down, keeping the size with
    the most resident threads per SM (the larger size on ties)."""
    _flags(flags)
    _non_negative("blockSizeLimit", block_size_limit)
    if callable(dynamic_shared):
        smem_of = dynamic_shared
    else:
        fixed = _non_negative("dynSharedMemPerBlk", dynamic_shared)
        smem_of = lambda _b: fixed  # noqa: E731
    k = function.kernel
    model = function.module.context.device.model
    limit = min(model.max_threads_per_block, k.max_threads_per_block)
    if block_size_limit:
        limit = min(limit, block_size_limit)
    gran = model.warp_size
    best_threads, best_block, best_blocks = 0, 0, 0
    aligned = -(-limit // gran) * gran
    while aligned > 0:
        b = min(limit, aligned)
        smem = smem_of(b)
        if isinstance(smem, bool) or not isinstance(smem, int) or smem < 0:
            raise EngineError(_INVALID, f"the dynamic shared memory function returned {smem!r} for "
                                        f"block size {b}")
        n = blocks_per_sm(function, b, smem)
        if n * b > best_threads:
            best_threads, best_block, best_blocks = n * b, b, n
        if best_threads == model.max_threads_per_sm:
            break
        aligned -= gran
    return best_blocks * model.sm_count, best_block


def available_dynamic_shared(function: Any, num_blocks: int, block_size: int) -> int:
    """The most dynamic shared memory per block that still lets `num_blocks`
    blocks of `block_size` threads be resident on one SM (0 if they cannot
    be resident at all)."""
    _positive("numBlocks", num_blocks)
    _positive("blockSize", block_size)
    k = function.kernel
    model = function.module.context.device.model
    if blocks_per_sm(function, block_size, 0) < num_blocks:
        return 0
    unit = model.shared_allocation_unit
    per_block = model.shared_per_sm // num_blocks // unit * unit - model.reserved_shared_per_block
    dyn = min(per_block - k.static_shared, max_dynamic_shared(function, model))
    dyn = max(dyn, 0)
    while dyn > 0 and blocks_per_sm(function, block_size, dyn) < num_blocks:
        dyn -= 1
    return dyn


# ------------------------------------------------------------------ cooperative launches
def check_cooperative(function: Any, grid: tuple[int, int, int], block: tuple[int, int, int],
                      shared_bytes: int) -> None:
    """All blocks of a cooperative grid must be co-resident (one wave)."""
    model = function.module.context.device.model
    threads = block[0] * block[1] * block[2]
    nblocks = grid[0] * grid[1] * grid[2]
    per_sm = blocks_per_sm(function, threads, shared_bytes)
    cap = per_sm * model.sm_count
    if nblocks > cap:
        raise EngineError(CUresult.CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE,
                          f"cooperative launch of {function.name} with {nblocks} blocks: at most "
                          f"{per_sm} blocks per SM x {model.sm_count} SMs = {cap} can be resident at once")
