"""The host's launch validation, remembered per launch shape.

Every launch is validated when it is enqueued (driver/module.py
validate_launch and launch_cluster: dimensions against the device's limits,
threads and shared memory against the kernel's, occupancy, cluster shape,
local memory). For a stream of launches of one kernel in one shape that
was the same forty-odd checks each time, with the same outcome.

The one idea: the outcome is a pure function of the shape (grid, block,
dynamic shared bytes, cluster, all plain ints) and of a few values that
can change between launches: the device model, the kernel (whose footprint,
registers, static shared and local memory and thread limit, is fixed before
its handle exists: the module's JIT options are applied while it loads, so
the kernel object stands for it), its mcFuncSetAttribute dynamic shared
limit and the context's stack size limit. A shape that passed is remembered
on the function's handle with those values, and used again only while they
are equal; the one check that also depends on the state of
the device, whether the local memory of every resident thread still fits
in the free device memory, is redone on every launch (a subtraction and a
comparison with the bytes remembered).

What it deliberately does not do: remember a refusal (a bad shape is
validated, and refused with its specific error, every time), or take
arguments that are not plain ints (bools, numpy ints, lists) anywhere but
through the full validation.
"""
from __future__ import annotations

import threading
from typing import Any, Sequence

from gpudbg.sim import launch_limits as sim_launch_limits

SHAPES_KEPT = 64     # shapes remembered per function (Function.launch_shapes; oldest forgotten first)

_lock = threading.Lock()
_INTS = {int}


class _Passed:
    """A shape that passed, with what its outcome depended on (`stamp`)."""

    __slots__ = ("stamp", "result", "local_reserve")


def _plain(dims: Any) -> bool:
    return dims.__class__ is tuple and len(dims) == 3 and dims[0].__class__ is int \
        and dims[1].__class__ is int and dims[2].__class__ is int


def _stamp(context: Any, function: Any) -> tuple:
    """What a remembered outcome depends on besides the shape (see above)."""
    c = function.launch_config
    return (context.device.model, function.kernel, None if c is None else c.max_dynamic_shared,
            context.limits.get("stack_size", 0))


def validated(context: Any, function: Any, grid: Sequence[int], block: Sequence[int], shared_bytes: int,
              cluster: Sequence[int] | None) -> tuple[tuple[int, int, int], tuple[int, int, int],
                                                      tuple[int, int, int]]:
    """(grid, block, cluster) of a launch that may be enqueued, (0, 0, 0)
    for no cluster; the validation's EngineError otherwise."""
    if grid.__class__ is tuple and block.__class__ is tuple:
        key = (grid, block, shared_bytes, cluster)
        try:
            p = function.launch_shapes.get(key)
        except Exception:       # an unhashable value inside (a list, an array): never remembered
            p = None
        # a remembered shape, found by equal values: these must also be plain ints (bools,
        # numpy ints or floats equal to the ints go through the full validation)
        if p is not None and shared_bytes.__class__ is int and set(map(type, grid + block)) == _INTS \
                and (cluster is None or _plain(cluster)) and p.stamp == _stamp(context, function):
            if p.local_reserve > sim_launch_limits.free_device_bytes(context.gpu):
                from gpudbg.driver import module as _module
                _module.validate_launch(context, function, grid, block, shared_bytes)   # says why
            return p.result
    plain = _plain(grid) and _plain(block) and shared_bytes.__class__ is int and \
        (cluster is None or _plain(cluster))
    from gpudbg.driver import module as _module    # (it imports this module)
    stamp = _stamp(context, function)
    g, b = _module.validate_launch(context, function, grid, block, shared_bytes)
    c = _module.launch_cluster(context, function, g, b, shared_bytes, cluster) or (0, 0, 0)
    if plain:
        key = (grid, block, shared_bytes, cluster)
        p = _Passed()
        p.stamp, p.result = stamp, (g, b, c)
        p.local_reserve = sim_launch_limits.local_reserve_bytes(
            stamp[0], sim_launch_limits.thread_local_bytes(function.kernel, int(stamp[3] or 0)))
        with _lock:
            shapes = function.launch_shapes
            if len(shapes) >= SHAPES_KEPT and key not in shapes:
                shapes.pop(next(iter(shapes)), None)
            shapes[key] = p
    return g, b, c
