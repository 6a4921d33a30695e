"""Launch templates: what a launch derives from its shape alone, computed
once per shape instead of once per launch.

A stream of small launches repeats the same (kernel, grid, block, dynamic
shared bytes, cluster) over and over, and every launch used to recompute
the same wave plan (occupancy), SM-pool block shape, shared segment size,
reserved shared region and local-memory size before running a single
instruction. The one idea: these are pure functions of the shape, the
kernel's attributes, the device model and the stack limit, so a template
keyed by the shape keeps them, and is used only while everything it was
derived from is still the same object with the same values (checked on
every look-up: the kernel's program, register count, static shared and
local sizes, whether its code names the reserved shared region, the
device model, the stack limit). Anything else is made afresh.

What it deliberately does not do: keep anything that a launch changes
(registers, memories, barriers: sim/launch_resources.py LaunchResources owns the
reusable arrays and decides when they may be reused), or keep an error
(a shape that cannot run is refused on every launch).
"""
from __future__ import annotations

import threading
import weakref

from gpudbg.sim import cluster as _cluster
from gpudbg.sim import launch_limits, reserved_smem, sm_pool
from gpudbg.sim.launch_resources import stack_limit_of
from gpudbg.sim.wave_plan import WavePlan, build_waves

TEMPLATES_KEPT = 64      # shapes remembered per GPU (oldest forgotten first)
WAVES_LISTED = 64        # a template lists the block ranges of at most this many waves


class LaunchTemplate:
    """One launch shape's derived values (read-only once made)."""

    __slots__ = ("function", "program", "model", "stack_limit", "num_regs", "static_shared", "local_attr",
                 "reserved", "plan", "shape", "nwaves", "csize", "segment_bytes", "region", "local_size",
                 "grid", "block", "shared_bytes", "resources_key", "waves")

    def __init__(self, gpu, function, grid, block, shared_bytes: int, cluster, stack_limit: int):
        model = gpu.model
        self.grid, self.block, self.shared_bytes = grid, block, shared_bytes     # plain ints
        self.function = weakref.ref(function)     # a template keeps no unloaded module alive
        self.program = weakref.ref(function.program)
        self.model = model
        self.stack_limit = stack_limit
        self.num_regs = function.num_regs
        self.static_shared = function.static_shared
        self.local_attr = getattr(function, "local_size", 0)
        self.reserved = reserved_smem.uses_reserved(function.program)
        plan = self.plan = build_waves(model, function, grid, block, shared_bytes, cluster)
        self.shape = sm_pool.BlockShape.of(model, plan.threads_per_block, function.num_regs,
                                           function.static_shared + shared_bytes, plan.blocks_per_sm)
        self.nwaves = len(plan.waves)
        # the waves' block ranges, listed once for a launch of a few waves
        # (a huge grid's stay computed on demand: plan.waves)
        self.waves = tuple(plan.waves) if self.nwaves <= WAVES_LISTED else plan.waves
        self.csize = _cluster.size(plan.cluster)
        self.segment_bytes = reserved_smem.segment_bytes(function, model, shared_bytes)
        self.region = reserved_smem.region(function, model, shared_bytes)
        self.local_size = launch_limits.thread_local_bytes(function, stack_limit)
        # what LaunchResources.for_launch keys its reusable arrays by
        self.resources_key = (id(function.program), function.name, plan.largest_wave, plan.slots_per_block,
                              self.segment_bytes, self.local_size)

    def current(self, gpu, function, stack_limit: int) -> bool:
        """Whether everything the template was derived from is unchanged."""
        program = function.program
        return (self.function() is function and self.program() is program and self.model is gpu.model
                and self.stack_limit == stack_limit and self.num_regs == function.num_regs
                and self.static_shared == function.static_shared
                and self.local_attr == getattr(function, "local_size", 0)
                and self.reserved == reserved_smem.uses_reserved(program))


_lock = threading.Lock()


def ints(dims) -> tuple[int, ...]:
    """`dims` as a tuple of ints: itself when it already is one (what the
    front end passes), without a generator per launch."""
    if dims.__class__ is tuple and len(dims) == 3 and dims[0].__class__ is int and dims[1].__class__ is int \
            and dims[2].__class__ is int:
        return dims
    return tuple(int(d) for d in dims)


def for_launch(gpu, function, grid, block, shared_bytes: int,
               cluster: tuple[int, int, int] | None) -> LaunchTemplate:
    """The template of this launch shape, made (and remembered on the GPU)
    when there is none or the one kept is stale. Raises what build_waves
    raises for a shape that cannot run. `grid`, `block` and `shared_bytes`
    may be any integers (numpy's too) or sequences of them: the template is
    found under them as given (equal values hash alike), and its own `grid`,
    `block` and `shared_bytes` are plain ints, what the launch then uses."""
    if cluster is None:
        cluster = _NO_CLUSTER
    elif cluster.__class__ is not tuple:
        cluster = tuple(cluster)
    stack_limit = stack_limit_of(gpu)
    kept = gpu.__dict__.get("_launch_templates")
    if kept is None:
        with _lock:
            kept = gpu.__dict__.setdefault("_launch_templates", {})
    key = (id(function), grid, block, shared_bytes, cluster)
    try:
        t = kept.get(key)
    except TypeError:       # a list as a dimension: found under its canonical key
        t, key = None, None
    if t is not None and t.current(gpu, function, stack_limit):
        return t
    grid, block, shared_bytes, cluster = ints(grid), ints(block), int(shared_bytes), ints(cluster)
    canonical = (id(function), grid, block, shared_bytes, cluster)
    t = kept.get(canonical)
    if t is None or not t.current(gpu, function, stack_limit):
        t = LaunchTemplate(gpu, function, grid, block, shared_bytes, cluster, stack_limit)
    with _lock:
        for k in (canonical, key):
            if k is not None:
                if len(kept) >= TEMPLATES_KEPT and k not in kept:
                    kept.pop(next(iter(kept)), None)
                kept[k] = t
    return t


_NO_CLUSTER = (1, 1, 1)


__all__ = ["LaunchTemplate", "WavePlan", "for_launch", "TEMPLATES_KEPT"]
