"""The simulated GPU's identity and limits, and the CUDA occupancy rules.

One frozen record describes the hardware (numbers of a real H100 SXM5 where
one exists), so the executor places blocks, the driver validates launches and
the runtime answers property queries from the same numbers. `occupancy()` is
the CUDA occupancy calculator's rule set (warps, registers with allocation
granularity, shared memory with granularity plus the per-block reservation,
the block limit). Nothing here changes at run time; per-context limits that a
program may set (stack size, heap size) live in the driver.
"""
from __future__ import annotations

from dataclasses import dataclass

KIB = 1024
MIB = 1024 * KIB
GIB = 1024 * MIB


@dataclass(frozen=True)
class DeviceModel:
    """Hardware description of one simulated device (H100 SXM5 80 GB class)."""

    name: str = "gpudbg SIM H100-class"
    compute_capability: tuple[int, int] = (9, 0)
    sm_count: int = 132
    warp_slots_per_sm: int = 64
    lanes: int = 32
    max_threads_per_sm: int = 2048
    max_blocks_per_sm: int = 32
    registers_per_sm: int = 65536
    registers_per_block: int = 65536
    max_registers_per_thread: int = 255
    register_allocation_unit: int = 256  # registers, allocated per warp
    shared_per_sm: int = 228 * KIB
    shared_per_block: int = 48 * KIB
    shared_per_block_optin: int = 227 * KIB
    shared_allocation_unit: int = 128
    reserved_shared_per_block: int = 1 * KIB
    max_threads_per_block: int = 1024
    max_block_dims: tuple[int, int, int] = (1024, 1024, 64)
    max_grid_dims: tuple[int, int, int] = (2**31 - 1, 65535, 65535)
    global_memory: int = 80 * GIB
    clock_rate_khz: int = 1_980_000
    memory_clock_rate_khz: int = 2_619_000
    memory_bus_width: int = 5120
    l2_cache_size: int = 50 * MIB
    persisting_l2_max: int = 50 * MIB * 3 // 4  # set-aside limit: 3/4 of L2
    const_memory: int = 64 * KIB
    default_stack_size: int = 1024
    printf_fifo_size: int = 1 * MIB
    malloc_heap_size: int = 8 * MIB
    max_pitch: int = 2**31 - 1
    texture_alignment: int = 512
    texture_pitch_alignment: int = 32
    async_engine_count: int = 3
    instruction_budget: int | None = None  # thread-instructions per launch before "hang"; None: no budget
    deterministic: bool = True
    pci_domain: int = 0
    pci_bus: int = 0x1B
    pci_device: int = 0
    uuid: bytes = bytes.fromhex("67707564626773696d48313030000001")

    @property
    def warp_size(self) -> int:
        return self.lanes

    @property
    def pci_bus_id(self) -> str:
        """'0000:1b:00.0', the form mcDeviceGetPCIBusId returns."""
        return f"{self.pci_domain:04x}:{self.pci_bus:02x}:{self.pci_device:02x}.0"

    def for_ordinal(self, ordinal: int) -> "DeviceModel":
        """The same hardware in another PCI slot with its own UUID: device
        `ordinal` of a multi-GPU machine."""
        from dataclasses import replace
        uid = bytearray(self.uuid)
        uid[-1] = (uid[-1] + ordinal) & 0xFF
        return replace(self, pci_bus=self.pci_bus + ordinal, uuid=bytes(uid))


def _round_up(value: int, unit: int) -> int:
    return -(-value // unit) * unit


def occupancy(model: DeviceModel, threads_per_block: int, regs_per_thread: int,
              shared_bytes_per_block: int) -> int:
    """Resident blocks per SM for a kernel with this footprint (0: cannot run).

    `shared_bytes_per_block` is static plus dynamic shared memory; the
    per-block reservation is added here, as the hardware does."""
    if threads_per_block <= 0 or threads_per_block > model.max_threads_per_block:
        return 0
    if regs_per_thread < 0 or regs_per_thread > model.max_registers_per_thread:
        return 0
    if shared_bytes_per_block < 0 or shared_bytes_per_block > model.shared_per_block_optin:
        return 0
    warps = -(-threads_per_block // model.lanes)
    limit = min(model.max_blocks_per_sm, model.warp_slots_per_sm // warps,
                model.max_threads_per_sm // (warps * model.lanes))
    if regs_per_thread > 0:
        regs_per_warp = _round_up(regs_per_thread * model.lanes, model.register_allocation_unit)
        if regs_per_warp * warps > model.registers_per_block:
            return 0
        limit = min(limit, (model.registers_per_sm // regs_per_warp) // warps)
    shared = _round_up(shared_bytes_per_block + model.reserved_shared_per_block,
                       model.shared_allocation_unit)
    limit = min(limit, model.shared_per_sm // shared)
    return max(limit, 0)
