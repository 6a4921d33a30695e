"""Generic addresses of kernel parameters (`cvta.param`, what nvcc emits
for the address of a `__grid_constant__` parameter, e.g. in -G code).

The one idea: a wave that converts a parameter address to a generic one
gets a read-only copy of the launch's parameter buffer in device memory
(made at its first cvta.param, freed when the wave ends), and the generic
address is that copy's base plus the parameter's offset. Loads through it
are ordinary global loads with every check; a store faults as a write to
read-only memory, which the ISA leaves undefined for kernel parameters.

What it deliberately does not do: give the copy a fixed window of its own
(the address differs between waves of a launch, which no program can tell
from a pointer it only uses while the wave runs), or support
`cvta.to.param` (a generic address back to the parameter space).
"""
from __future__ import annotations

from gpudbg.sim.memory.spaces import AllocationKind


def generic_base(X) -> int:
    """The device address of the wave's read-only parameter copy."""
    a = getattr(X, "param_copy", None)
    if a is None:
        data = X.kparams
        a = X.gmem.alloc(max(len(data), 1), AllocationKind.DEVICE, align=256, readonly=True,
                         label=f"parameters of kernel {X.function.name} (cvta.param)")
        if data:
            X.gmem.write(a.base, data)
        X.param_copy = a
    return a.base


def release(X) -> None:
    """At the wave's end: the copy goes."""
    a = getattr(X, "param_copy", None)
    if a is not None:
        X.param_copy = None
        X.gmem.free(a.base)
