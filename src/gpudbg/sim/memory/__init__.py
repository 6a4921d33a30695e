"""The simulated GPU's memory system: the global address space and its
allocation registry, checked vectorized accesses and atomics, the windowed
shared/local spaces with generic addressing, and the device malloc heap.

Every device-side call serves all lanes of one instruction at once and
reports the first faulting lane with all the others; freed ranges wait in
a quarantine (quarantine.py); see the submodules for the design of each
part. The device address range is reserved in the host process and pinned
and managed memory are real host pages at their device address
(host_mapping.py).
"""
from gpudbg.sim.memory.spaces import (
    AccessFault, AccessType, Allocation, AllocationKind, InvalidFree, OutOfMemory, Space,
)
from gpudbg.sim.memory.allocations import GlobalMemory
from gpudbg.sim.memory.atomics import AtomicOp, AtomicType, atomic_type
from gpudbg.sim.memory.windows import (
    LOCAL_WINDOW_BASE, SHARED_WINDOW_BASE, WINDOW_SIZE, GenericAddressing, GenericSpace,
    SegmentedMemory,
)
from gpudbg.sim.memory.heap import DeviceHeap

__all__ = [
    "AccessFault", "AccessType", "Allocation", "AllocationKind", "InvalidFree", "OutOfMemory",
    "Space", "GlobalMemory", "AtomicOp", "AtomicType", "atomic_type", "LOCAL_WINDOW_BASE",
    "SHARED_WINDOW_BASE", "WINDOW_SIZE", "GenericAddressing", "GenericSpace",
    "SegmentedMemory", "DeviceHeap",
]
