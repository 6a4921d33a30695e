"""Where a block's reserved shared memory lies: the region the
`%reserved_smem_offset_*` special registers name.

Hardware keeps `reserved_shared_per_block` bytes (1 KiB on sm_80+, the
device model's figure, which occupancy already charges) of every block's
shared memory for the system; CUDA code reaches it only through those
special registers -- cooperative_groups puts its multi-warp scratch
(barriers and one exchange word per warp, at most 288 bytes) at
`%reserved_smem_offset_1`, which every `-G` build of a kernel using
`tiled_partition` reads.

The one idea: the simulator lays the region out right after the block's
static and dynamic shared memory (16-byte aligned), so reserved offsets are
ordinary offsets of the block's shared segment -- loads, stores, atomics,
the sanitizer and the debugger treat them like any shared address. It is
split in two halves: `_0` starts the first (system use), `_1` the second
(the cooperative-groups scratch).

What it deliberately does not do: extend the segment of kernels that never
name the region, so an access just past a kernel's declared shared memory
still faults there as the user expects.
"""
from __future__ import annotations

ALIGN = 16
# the ISA's `%reserved_smem_offset_<2>`: two offsets into the region
OFFSET_REGISTERS = 2


def uses_reserved(program) -> bool:
    """Whether any instruction of `program` reads a %reserved_smem_* register
    (set by the special-register translation)."""
    return bool(getattr(program, "reserved_smem_used", False))


def mark_used(program) -> None:
    program.reserved_smem_used = True


def user_shared(function, dynamic_bytes: int) -> int:
    """Static plus dynamic shared bytes of one block."""
    return int(function.static_shared) + int(dynamic_bytes)


def region(function, model, dynamic_bytes: int) -> tuple[int, int]:
    """(begin offset, size) of the reserved region of a block; size 0 when
    the kernel's program never names it."""
    if not uses_reserved(function.program):
        return user_shared(function, dynamic_bytes), 0
    begin = -(-user_shared(function, dynamic_bytes) // ALIGN) * ALIGN
    return begin, int(model.reserved_shared_per_block)


def segment_bytes(function, model, dynamic_bytes: int) -> int:
    """Bytes of a block's shared segment: its shared memory, plus the
    reserved region when the kernel names it."""
    begin, cap = region(function, model, dynamic_bytes)
    return begin + cap if cap else user_shared(function, dynamic_bytes)


def offset_register(begin: int, cap: int, which: str) -> int:
    """The value of %reserved_smem_offset_<which> for a region."""
    if which == "begin":
        return begin
    if which == "end":
        return begin + cap
    if which == "cap":
        return cap
    k = int(which)
    return begin + k * (cap // OFFSET_REGISTERS)
