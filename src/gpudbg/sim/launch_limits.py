"""Per-channel launch limits on the simulated GPU: the per-thread stack, the
printf FIFO and the device malloc heap that the driver programs with a
SET_LAUNCH_LIMITS ring command.

The one idea: the limits are channel state, as compute-class state on a
real GPFIFO channel is. The front end records what a channel last
programmed (`program`) and, right before a LAUNCH from that channel runs,
copies it onto the GPU fields the executor reads (`apply`: `gpu.stack_size`,
`gpu.printf_fifo_size`, `gpu.malloc_heap_size`). The device thread runs one
command at a time, so a launch always sees exactly its own channel's limits.
A channel that never programmed any runs with the device model's defaults.

The printf FIFO is modelled per launch (it is drained at every launch end):
each record costs an 8-byte header plus its formatted text rounded up to 8
bytes, and records that no longer fit are dropped, as CUDA drops output
beyond the FIFO. The heap size only takes effect while the heap has not
been carved (the driver refuses changes after a malloc-using launch).

Local memory has two hardware bounds, checked here for both the driver
(at enqueue, so the launch call itself fails) and the executor (before the
first wave, should anything reach it): a thread can address at most
MAX_LOCAL_PER_THREAD bytes (ptxas refuses a kernel whose frames need more;
the loader does the same), and the driver backs local memory for every
thread the device can hold at once (`sm_count * max_threads_per_sm` times
the per-thread size), which must fit in the device memory still free, else
the launch fails with CUDA_ERROR_OUT_OF_MEMORY.
This module does not decide policy (which values are legal); the driver does.
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import Any

PRINTF_RECORD_HEADER = 8
MAX_LOCAL_PER_THREAD = 512 * 1024   # bytes of local memory per thread, compute capability 9.0
LOCAL_GRANULE = 16


DEFAULT_PENDING_LAUNCH_COUNT = 2048   # cudaLimitDevRuntimePendingLaunchCount's default


@dataclass(frozen=True)
class LaunchLimits:
    stack_size: int
    printf_fifo_size: int
    malloc_heap_size: int
    pending_launch_count: int = DEFAULT_PENDING_LAUNCH_COUNT   # device launches a grid may queue


_last_defaults: tuple[Any, LaunchLimits] | None = None    # (model, its defaults): every launch asks


def defaults(model: Any) -> LaunchLimits:
    global _last_defaults
    last = _last_defaults
    if last is not None and last[0] is model:
        return last[1]       # a frozen value of a frozen model: the same for every launch
    lim = LaunchLimits(int(model.default_stack_size), int(model.printf_fifo_size), int(model.malloc_heap_size))
    _last_defaults = (model, lim)
    return lim


_programmed: "weakref.WeakKeyDictionary[Any, LaunchLimits]" = weakref.WeakKeyDictionary()


_any_programmed = False     # whether any channel ever did (else apply() skips the weak look-up)


def program(channel: Any, limits: LaunchLimits) -> None:
    """SET_LAUNCH_LIMITS executed on `channel` (device thread)."""
    global _any_programmed
    _programmed[channel] = limits
    _any_programmed = True


def programmed(channel: Any) -> LaunchLimits | None:
    return _programmed.get(channel)


def apply(gpu: Any, channel: Any) -> None:
    """Before a LAUNCH from `channel`: make its limits the GPU's."""
    lim = _programmed.get(channel) if _any_programmed and channel is not None else None
    if lim is None:
        last = _last_defaults
        lim = last[1] if last is not None and last[0] is gpu.model else defaults(gpu.model)
    gpu.stack_size = lim.stack_size
    gpu.printf_fifo_size = lim.printf_fifo_size
    gpu.pending_launch_count = lim.pending_launch_count
    if getattr(gpu, "heap", None) is None:
        gpu.malloc_heap_size = lim.malloc_heap_size


def begin_launch(gpu: Any) -> None:
    """A launch starts with an empty printf FIFO."""
    gpu.printf_fifo_used = 0


def record_cost(text: str) -> int:
    n = len(text.encode("utf-8"))
    return PRINTF_RECORD_HEADER + (n + 7) // 8 * 8


def admit_printf(gpu: Any, text: str) -> bool:
    """Whether one more printf record fits in this launch's FIFO (and, if
    so, account for it)."""
    cap = getattr(gpu, "printf_fifo_size", None)
    if cap is None:
        cap = gpu.model.printf_fifo_size
    used = getattr(gpu, "printf_fifo_used", 0)
    cost = record_cost(text)
    if used + cost > cap:
        gpu.printf_fifo_dropped = getattr(gpu, "printf_fifo_dropped", 0) + 1
        return False
    gpu.printf_fifo_used = used + cost
    return True


def thread_local_bytes(function: Any, stack_size: int) -> int:
    """Local memory a thread of kernel `function` (a loader KernelFunction)
    needs: its frames, or the stack limit when its call graph recurses."""
    prog = getattr(function, "program", None)
    recursive = prog is not None and bool(prog.recursive & prog.reachable(function.name))
    return max(int(getattr(function, "local_size", 0) or 0), int(stack_size) if recursive else 0)


def free_device_bytes(gpu: Any) -> int:
    """Device memory not allocated yet (the model's size when the GPU keeps
    no accounts)."""
    mem = getattr(gpu, "memory", None)
    capacity = getattr(mem, "capacity", None)
    if capacity is None:
        return int(gpu.model.global_memory)
    return int(capacity) - int(getattr(mem, "used", 0))


def local_reserve_bytes(model: Any, per_thread: int) -> int:
    """Device memory the local memory of every thread the device holds at
    once takes, at `per_thread` bytes each."""
    return -(-per_thread // LOCAL_GRANULE) * LOCAL_GRANULE * int(model.sm_count) * int(model.max_threads_per_sm)


def local_memory_problem(model: Any, function: Any, stack_size: int, free_bytes: int) -> str | None:
    """Why a launch of `function` cannot have its local memory backed with
    `free_bytes` of device memory free (None when it can)."""
    per_thread = thread_local_bytes(function, stack_size)
    if per_thread > MAX_LOCAL_PER_THREAD:
        return (f"kernel {function.name} needs {per_thread} bytes of local memory per thread; a thread "
                f"can have at most {MAX_LOCAL_PER_THREAD} bytes")
    threads = int(model.sm_count) * int(model.max_threads_per_sm)
    reserve = local_reserve_bytes(model, per_thread)
    if reserve > free_bytes:
        return (f"kernel {function.name} needs {per_thread} bytes of local memory per thread, {reserve} bytes "
                f"for the {threads} threads the device holds at once, but only {max(free_bytes, 0)} bytes "
                f"of device memory are free")
    return None
