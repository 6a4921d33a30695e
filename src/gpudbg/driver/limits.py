"""Per-context resource limits (mcDeviceSetLimit) and per-device settings
(flags, cache and shared-memory configuration), and how they reach the GPU.

The one idea: a limit is context state in the driver and channel state on
the GPU. Before a LAUNCH, `launch_commands` compares the context's limits
with what the launching channel last programmed and, when they differ,
emits one SET_LAUNCH_LIMITS command ahead of the LAUNCH (sim/launch_limits.py
executes it), so the stack, printf FIFO and heap a kernel runs with are
exactly the ones in force when it was enqueued, in stream order. The
context counts the limits set (limits_version) and a channel remembers the
count at which its limits were found current, so a launch after no change
compares one int. The same
hook notes whether a kernel uses printf or malloc/free, which is what makes
later changes of those two limits illegal, as in CUDA.

Rules (CUDA runtime, seed 002 §2.2.3.5/16): a value is a size_t; the stack
size is rounded up to 16 bytes and bounded by 512 KiB of local memory per
thread, and the stack of every thread the device holds at once, the printf
FIFO and the heap must each fit in the device memory
(mcErrorMemoryAllocation), so no accepted value can make a later launch
fail; the printf FIFO and heap sizes cannot change after a launch of a
kernel using them (mcErrorInvalidValue); mcLimitDevRuntimeSyncDepth does not exist on compute
capability 9.0 (mcErrorUnsupportedLimit); the L2 limits are hints, clamped.
Device flags follow seed 002 §2.2.3.26: they cannot change while the
primary context is active (mcErrorSetOnActiveProcess). Nothing here waits.
"""
from __future__ import annotations

import os
import weakref
from dataclasses import dataclass
from typing import Any

from gpudbg.driver import commands as C
from gpudbg.driver.status import CUresult, EngineError
from gpudbg.driver.types import CU_CTX_SCHED_MASK, CUctx_flags, CUfunc_cache, CUlimit, CUsharedconfig
from gpudbg.sim import kernel_watch, launch_settings, schedule
from gpudbg.sim import launch_limits as sim_limits
from gpudbg.sim.native import engine as native_engine
from gpudbg.sim.native import parallel as native_parallel

MAX_STACK_SIZE = 512 * 1024        # local memory per thread, compute capability 9.0
STACK_GRANULE = 16
MAX_L2_FETCH_GRANULARITY = 128
DEFAULT_L2_FETCH_GRANULARITY = 32
DEFAULT_PENDING_LAUNCH_COUNT = 2048
MAX_PENDING_LAUNCH_COUNT = 2**31 - 1   # an int in the device runtime
MAX_LIMIT_VALUE = 2**64 - 1            # a size_t
_DEVICE_FLAG_BITS = 0x1F
_INVALID = CUresult.CUDA_ERROR_INVALID_VALUE


# ------------------------------------------------------------------ limits
def _limit(limit: Any) -> CUlimit:
    if isinstance(limit, bool) or not isinstance(limit, int):
        raise EngineError(_INVALID, f"limit must be a CUlimit, got {limit!r}")
    try:
        which = CUlimit(limit)
    except ValueError:
        raise EngineError(CUresult.CUDA_ERROR_UNSUPPORTED_LIMIT, f"{limit!r} is not a CUlimit") from None
    if which not in _KEYS and which is not CUlimit.CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH:
        raise EngineError(CUresult.CUDA_ERROR_UNSUPPORTED_LIMIT,
                          f"{which.name} is not supported by the simulated device")
    return which


def _table(ctx: Any) -> dict:
    lim = ctx.limits
    if "persisting_l2_size" not in lim:     # the defaults the context does not set, once
        lim.setdefault("pending_launch_count", DEFAULT_PENDING_LAUNCH_COUNT)
        lim.setdefault("l2_fetch_granularity", DEFAULT_L2_FETCH_GRANULARITY)
        lim.setdefault("persisting_l2_size", 0)
    return lim


_KEYS = {
    CUlimit.CU_LIMIT_STACK_SIZE: "stack_size",
    CUlimit.CU_LIMIT_PRINTF_FIFO_SIZE: "printf_fifo_size",
    CUlimit.CU_LIMIT_MALLOC_HEAP_SIZE: "malloc_heap_size",
    CUlimit.CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT: "pending_launch_count",
    CUlimit.CU_LIMIT_MAX_L2_FETCH_GRANULARITY: "l2_fetch_granularity",
    CUlimit.CU_LIMIT_PERSISTING_L2_CACHE_SIZE: "persisting_l2_size",
}


def _no_sync_depth(which: CUlimit, ctx: Any) -> None:
    if which is CUlimit.CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH:
        cc = ctx.device.model.compute_capability
        raise EngineError(CUresult.CUDA_ERROR_UNSUPPORTED_LIMIT,
                          f"the device runtime sync depth limit does not exist on compute capability "
                          f"{cc[0]}.{cc[1]} (device-side synchronization was removed in 9.0)")


def get_limit(ctx: Any, limit: Any) -> int:
    which = _limit(limit)
    _no_sync_depth(which, ctx)
    return int(_table(ctx)[_KEYS[which]])


def _fits(model: Any, what: str, nbytes: int) -> None:
    if nbytes > model.global_memory:
        raise EngineError(CUresult.CUDA_ERROR_OUT_OF_MEMORY,
                          f"{what} of {nbytes} bytes does not fit in the device's {model.global_memory} "
                          f"bytes of memory")


def set_limit(ctx: Any, limit: Any, value: Any) -> None:
    """Validate, then store: a value is checked against its limit's range
    before anything is recorded, so a refused value never reaches a launch."""
    which = _limit(limit)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_LIMIT_VALUE:
        shown = value if not isinstance(value, int) or value.bit_length() <= 128 else "a huge int"
        raise EngineError(_INVALID, f"limit value must be an int in 0..2**64-1, got {shown!r}")
    _no_sync_depth(which, ctx)
    model = ctx.device.model
    used = _usage(ctx)
    lim = _table(ctx)
    if which is CUlimit.CU_LIMIT_STACK_SIZE:
        v = -(-value // STACK_GRANULE) * STACK_GRANULE
        if v > MAX_STACK_SIZE:
            raise EngineError(_INVALID, f"stack size {value} exceeds the {MAX_STACK_SIZE} bytes of "
                                        f"local memory a thread can have")
        threads = int(model.sm_count) * int(model.max_threads_per_sm)
        _fits(model, f"a {v}-byte stack for each of the {threads} threads the device holds at once "
                     f"(local memory)", v * threads)
    elif which is CUlimit.CU_LIMIT_PRINTF_FIFO_SIZE:
        if "printf" in used:
            raise EngineError(_INVALID, "the printf FIFO size cannot change after a kernel that "
                                        "uses printf was launched in this context")
        _fits(model, "a printf FIFO", value)
        v = value
    elif which is CUlimit.CU_LIMIT_MALLOC_HEAP_SIZE:
        if "heap" in used or getattr(ctx.gpu, "heap", None) is not None:
            raise EngineError(_INVALID, "the malloc heap size cannot change after a kernel that "
                                        "uses malloc/free was launched in this context")
        if value == 0:
            raise EngineError(_INVALID, "the malloc heap size must be positive")
        _fits(model, "a malloc heap", value)
        v = value
    elif which is CUlimit.CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT:
        if not 1 <= value <= MAX_PENDING_LAUNCH_COUNT:
            raise EngineError(_INVALID, f"the pending launch count must be in 1..{MAX_PENDING_LAUNCH_COUNT}, "
                                        f"got {value}")
        v = value
    elif which is CUlimit.CU_LIMIT_MAX_L2_FETCH_GRANULARITY:
        v = min(value, MAX_L2_FETCH_GRANULARITY)   # a hint, clamped as the seed allows
    else:
        v = min(value, model.persisting_l2_max)
    with ctx.lock:
        lim[_KEYS[which]] = v
        ctx.limits_version += 1      # every channel checks its programmed limits again


# ------------------------------------------------------------------ launch hook
# What a context's launched kernels used is its `limits_used` set; the (stack, printf FIFO, heap,
# pending launches) limits a channel's pushes programmed are its `launch_limits` (None: the model's
# defaults): both kept on the objects, read on every launch.


def _usage(ctx: Any) -> set:
    return ctx.limits_used


# id(kernel) -> (weak reference to it, what it uses); kernels are unhashable dataclasses
_uses_of: dict[int, tuple[Any, frozenset]] = {}


def _kernel_uses(kernel: Any) -> frozenset:
    """What of the launch limits `kernel` can use (its code never changes:
    worked out once per kernel, not per launch)."""
    key = id(kernel)
    hit = _uses_of.get(key)
    if hit is not None and hit[0]() is kernel:
        return hit[1]
    uses = _find_uses(kernel)
    try:
        ref = weakref.ref(kernel, lambda _r, key=key: _uses_of.pop(key, None))
    except TypeError:    # a kernel that takes no weak reference is walked every time
        return uses
    _uses_of[key] = (ref, uses)
    return uses


def _find_uses(kernel: Any) -> frozenset:
    prog = getattr(kernel, "program", None)
    if prog is None:
        return frozenset()
    out = set()
    for name in prog.reachable(kernel.name):
        b = prog.functions[name].builtin
        if b == "vprintf":
            out.add("printf")
        elif b in ("malloc", "free"):
            out.add("heap")
    return frozenset(out)


def check_launch_settings() -> None:
    """The environment a launch will run under (GPUDBG_INSTRUCTION_BUDGET,
    GPUDBG_SCHEDULE and GPUDBG_SEED, GPUDBG_HANG_TIMEOUT, GPUDBG_ENGINE, GPUDBG_THREADS), checked when the
    launch is enqueued: a bad value refuses the launch call with
    CUDA_ERROR_INVALID_VALUE naming the variable, instead of failing the
    launch on the device, where it would become the context's sticky error."""
    if launch_settings.current() is not None:
        return      # every value parsed (again only after one changed): nothing to refuse
    try:
        kernel_watch.check_environment()
        if os.environ.get(schedule.ENV_SCHEDULE) or os.environ.get(schedule.ENV_SEED):
            schedule.from_environment()
        native_engine.chosen()
        native_parallel.host_threads()
    except ValueError as e:
        raise EngineError(_INVALID, f"the launch was refused: {e}") from None


def launch_commands(ctx: Any, stream: Any, function: Any) -> list[C.Command]:
    """Commands to push before a LAUNCH of `function` on `stream`: a
    SET_LAUNCH_LIMITS when the channel's programmed limits are stale
    (after check_launch_settings)."""
    check_launch_settings()
    uses = function.limit_uses
    if uses is None:
        uses = function.limit_uses = _kernel_uses(function.kernel)
    if uses:
        ctx.limits_used.update(uses)
    ch = stream.channel
    version = ctx.limits_version
    if ch.limits_checked == version:
        return []            # no limit was set since this channel's limits were found current
    lim = _table(ctx)
    want = (lim["stack_size"], lim["printf_fifo_size"], lim["malloc_heap_size"], lim["pending_launch_count"])
    ch.limits_checked = version
    have = ch.launch_limits
    if have is None:         # a channel never programmed runs with the model's defaults
        d = sim_limits.defaults(ctx.device.model)
        have = ch.launch_limits = (d.stack_size, d.printf_fifo_size, d.malloc_heap_size, d.pending_launch_count)
    if have == want:
        return []
    want = ch.launch_limits = tuple(map(int, want))
    return [C.make(C.Opcode.SET_LAUNCH_LIMITS, stack_size=want[0], printf_fifo_size=want[1],
                   malloc_heap_size=want[2], pending_launch_count=want[3])]


# ------------------------------------------------------------------ device settings
@dataclass
class DeviceSettings:
    flags: int = 0
    cache_config: CUfunc_cache = CUfunc_cache.CU_FUNC_CACHE_PREFER_NONE
    shared_mem_config: CUsharedconfig = CUsharedconfig.CU_SHARED_MEM_CONFIG_DEFAULT_BANK_SIZE


_settings: "weakref.WeakKeyDictionary[Any, DeviceSettings]" = weakref.WeakKeyDictionary()


def settings(device: Any) -> DeviceSettings:
    return _settings.setdefault(device, DeviceSettings())


def _active(device: Any) -> bool:
    p = device.primary
    return p is not None and not p.destroyed


def set_flags(device: Any, flags: Any) -> None:
    if isinstance(flags, bool) or not isinstance(flags, int) or flags < 0 or flags & ~_DEVICE_FLAG_BITS:
        raise EngineError(_INVALID, f"unknown device flags {flags!r} (valid bits 0x{_DEVICE_FLAG_BITS:x})")
    sched = flags & CU_CTX_SCHED_MASK
    if sched not in (0, 1, 2, 4):
        raise EngineError(_INVALID, f"device flags 0x{flags:x} name more than one schedule mode")
    s = settings(device)
    implicit = int(CUctx_flags.CU_CTX_MAP_HOST)
    if _active(device) and (s.flags | implicit) != (flags | implicit):
        raise EngineError(CUresult.CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE,
                          f"device {device.ordinal} is already active with flags 0x{s.flags | implicit:x}; "
                          f"mcDeviceReset it before changing its flags")
    s.flags = flags


def get_flags(device: Any) -> int:
    """The stored flags; mcDeviceMapHost is implicit (seed: host mapping
    is always allowed), so it is always reported."""
    return settings(device).flags | int(CUctx_flags.CU_CTX_MAP_HOST)


def set_cache_config(device: Any, config: Any) -> None:
    try:
        value = CUfunc_cache(config) if not isinstance(config, bool) else None
    except ValueError:
        value = None
    if value is None:
        raise EngineError(_INVALID, f"{config!r} is not a CUfunc_cache")
    settings(device).cache_config = value


def set_shared_mem_config(device: Any, config: Any) -> None:
    try:
        value = CUsharedconfig(config) if not isinstance(config, bool) else None
    except ValueError:
        value = None
    if value is None:
        raise EngineError(_INVALID, f"{config!r} is not a CUsharedconfig")
    settings(device).shared_mem_config = value


def shared_mem_config(device: Any) -> CUsharedconfig:
    """The bank size in effect: the device has fixed 4-byte banks (seed
    §2.2.3.11/18), so a request for another size is recorded but has no
    effect."""
    return CUsharedconfig.CU_SHARED_MEM_CONFIG_FOUR_BYTE_BANK_SIZE


# ------------------------------------------------------------------ reset
def reset_device(engine: Any) -> None:
    """mcDeviceReset: destroy the primary context (its streams, memory,
    modules and limits), release the device heap, forget the device's
    flags and configurations."""
    dev = engine.current_device()
    engine.reset_device()
    _settings.pop(dev, None)
    if dev.gpu_started:
        gpu = dev.gpu
        with gpu.cv:
            heap = getattr(gpu, "heap", None)
            if heap is not None:
                gpu.heap = None
                gpu.free_internal(heap.allocation)
            gpu.malloc_heap_size = None
            gpu.stack_size = None
            gpu.printf_fifo_size = None
            gpu._launch_resources = None
