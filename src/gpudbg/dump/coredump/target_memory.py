"""Memory of a GPU coredump by debugger space: the dumped bytes, addressed
the way the live backend addresses them (backend.MemorySpace).

The one idea: every space is a list of (address, bytes) segments plus a
rule that picks the list from the coordinates: global and const read the
dump's global segments (const only inside a const bank), code reads the
relocated cubins' code sections, shared the CTA of (sm, wp), local the
lane, param the warp's grid. A read may span adjacent segments; any byte
outside them fails as cuda-gdb does ("Cannot access memory at address").
Generic addresses go to shared or local inside the context's windows and
to global otherwise. Writes are refused: a core is a record, not a device.
"""
from __future__ import annotations

import bisect
from dataclasses import dataclass

from gpudbg.debug.backend import BackendError, MemorySpace
from gpudbg.dump.coredump.elf import EM_CUDA, SHF_EXECINSTR, ElfError, read_elf

# cuda-gdb's rule for driver cores (COREDUMP-FORMAT.md §4); our cores use
# the simulator's generic windows (sim.memory.spaces.WINDOW_SIZE)
DRIVER_WINDOW_SIZE = 16 << 20


def mapping_failed(address: int) -> BackendError:
    return BackendError("MEMORY_MAPPING_FAILED", f"Cannot access memory at address 0x{address:x}")


@dataclass
class Segments:
    """Sorted, non-overlapping (address, data) runs."""

    starts: list[int]
    blobs: list[bytes]

    @classmethod
    def of(cls, runs: list[tuple[int, bytes]]) -> "Segments":
        runs = sorted((a, bytes(d)) for a, d in runs if d)
        return cls([a for a, _ in runs], [d for _, d in runs])

    def read(self, address: int, size: int, report_at: int | None = None) -> bytes:
        """`size` bytes from `address`; a gap raises naming `report_at`
        (the address as the user wrote it) or `address`."""
        out = bytearray()
        cur, end = address, address + size
        while cur < end:
            i = bisect.bisect_right(self.starts, cur) - 1
            if i < 0 or cur >= self.starts[i] + len(self.blobs[i]):
                raise mapping_failed(address if report_at is None else report_at)
            off = cur - self.starts[i]
            take = min(end - cur, len(self.blobs[i]) - off)
            out += self.blobs[i][off:off + take]
            cur += take
        return bytes(out)

    def covers(self, address: int) -> bool:
        i = bisect.bisect_right(self.starts, address) - 1
        return i >= 0 and address < self.starts[i] + len(self.blobs[i])


def code_sections(cubin: bytes) -> list[tuple[int, bytes]]:
    """The executable sections of a relocated cubin at their addresses."""
    elf = read_elf(cubin, expect_type=None, expect_machine=EM_CUDA, expect_ident=False)
    return [(s.addr, s.data) for s in elf.sections if s.flags & SHF_EXECINSTR and s.data]


def read_blob(blob: bytes | None, offset: int, size: int, report_at: int) -> bytes:
    if blob is None or offset < 0 or offset + size > len(blob):
        raise mapping_failed(report_at)
    return blob[offset:offset + size]


class CoreMemory:
    """The address spaces of one device of a core. `target` supplies the
    coordinate lookups (CoreBackend), so this holds only the byte rules."""

    def __init__(self, target, dev: int):
        self.target = target
        self.dev = dev
        snap = target.snapshot(dev)
        self.global_ = Segments.of([(m.address, m.data) for m in snap.memory])
        banks = [(a, n) for g in snap.grids for a, n, _b in g.const_banks]
        self.banks = sorted(banks)
        runs = []
        for c in snap.contexts:
            for m in c.modules:
                if m.relocated is None:
                    continue
                try:
                    runs += code_sections(m.relocated)
                except ElfError as e:
                    target.notes.append(f"module 0x{m.handle:x}: relocated cubin unreadable ({e}); "
                                        f"its code is not readable")
        self.code = Segments.of(runs)
        ours = snap.note.get("generator") == "gpudbg"
        from gpudbg.sim.memory.spaces import WINDOW_SIZE
        self.window = WINDOW_SIZE if ours else DRIVER_WINDOW_SIZE

    def read(self, space: MemorySpace, address: int, size: int,
             sm: int | None, wp: int | None, ln: int | None) -> bytes:
        if not isinstance(space, MemorySpace):
            raise BackendError("INVALID_MEMORY_SEGMENT", f"{space!r} is not a MemorySpace")
        if size < 0 or address < 0:
            raise BackendError("INVALID_ARGS", f"read of {size} bytes at {address:#x}: "
                                               f"address and size must not be negative")
        if size == 0:
            return b""
        if space is MemorySpace.GLOBAL:
            return self.global_.read(address, size)
        if space is MemorySpace.CONST:
            for base, n in self.banks:
                if base <= address and address + size <= base + n:
                    return self.global_.read(address, size)
            raise mapping_failed(address)
        if space is MemorySpace.CODE:
            return self.code.read(address, size)
        if space is MemorySpace.SHARED:
            cta, _w = self.target.locate_warp(self.dev, sm, wp, "shared memory")
            return read_blob(cta.shared, address, size, address)
        if space is MemorySpace.LOCAL:
            lane = self.target.locate_lane(self.dev, sm, wp, ln, "local memory")
            return read_blob(lane.local, address, size, address)
        if space is MemorySpace.PARAM:
            grid = self.target.grid_of(self.dev, sm, wp)
            return read_blob(grid.params, address, size, address)
        return self._generic(address, size, sm, wp, ln)

    def _generic(self, address: int, size: int, sm, wp, ln) -> bytes:
        ctx = self.target.context_of(self.dev, sm, wp)
        if ctx is not None:
            for base, kind in ((ctx.shared_window, "shared"), (ctx.local_window, "local")):
                if base and base <= address < base + self.window:
                    off = address - base
                    if kind == "shared":
                        cta, _w = self.target.locate_warp(self.dev, sm, wp, "a generic shared address")
                        return read_blob(cta.shared, off, size, address)
                    lane = self.target.locate_lane(self.dev, sm, wp, ln, "a generic local address")
                    return read_blob(lane.local, off, size, address)
        return self.global_.read(address, size)
