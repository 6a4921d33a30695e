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
This module does not decide policy (which values are legal); the driver does.
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import Any

PRINTF_RECORD_HEADER = 8


@dataclass(frozen=True)
class LaunchLimits:
    stack_size: int
    printf_fifo_size: int
    malloc_heap_size: int


def defaults(model: Any) -> LaunchLimits:
    return LaunchLimits(int(model.default_stack_size), int(model.printf_fifo_size),
                        int(model.malloc_heap_size))


_programmed: "weakref.WeakKeyDictionary[Any, LaunchLimits]" = weakref.WeakKeyDictionary()


def program(channel: Any, limits: LaunchLimits) -> None:
    """SET_LAUNCH_LIMITS executed on `channel` (device thread)."""
    _programmed[channel] = limits


def programmed(channel: Any) -> LaunchLimits | None:
    return _programmed.get(channel)


def apply(gpu: Any, channel: Any) -> None:
    """Before a LAUNCH from `channel`: make its limits the GPU's."""
    lim = _programmed.get(channel) if channel is not None else None
    if lim is None:
        lim = defaults(gpu.model)
    gpu.stack_size = lim.stack_size
    gpu.printf_fifo_size = lim.printf_fifo_size
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
