"""The simulator's instruction set: importing this package registers every
op builder (see base.py for the registry and the operand model)."""
from gpudbg.sim.ops import (  # noqa: F401  (imported for registration)
    arithmetic,
    async_copy,
    compare,
    control,
    hints,
    logic,
    matrix_moves,
    mbarrier_ops,
    memory_ops,
    moves,
    surface,
    tensor,
    texture,
    warp,
)
from gpudbg.sim.ops.base import registry  # noqa: F401
