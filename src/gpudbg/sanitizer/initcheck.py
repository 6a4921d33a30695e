"""initcheck: reads of device memory that nothing has written.

The one idea: a shadow byte per byte of memory that can be uninitialized
(1: written, 0: never written), kept as numpy arrays and checked and set
a whole instruction at a time. Two kinds of shadow:

- global memory, per allocation made while the tool is installed: device
  allocations (mcMalloc, pitched, `gpudbg.device_array`) and the device
  malloc heap start unwritten; host writes into them (copies from the host,
  memsets, stream write-value: the registry's host_write), device-to-device
  copies (host_copy: the source's shadow travels with the data, so copying
  unwritten bytes leaves them unwritten) and kernel WRITE/ATOMIC accesses set
  it. Every other allocation is initialized as far as this tool knows:
  memory the host program maps directly (pinned, registered and managed
  memory, which it writes without telling anyone), module globals and
  constants (the loader fills them), the driver's own memory, and whatever
  existed before the tool was installed.
- shared memory, per wave: one row per resident block (blocks x shared
  bytes), all unwritten when the wave starts, set by WRITE/ATOMIC accesses.

A READ or ATOMIC (which reads) touching any unwritten byte is a finding,
worded as compute-sanitizer words it ("Uninitialized __global__ memory read
of size 4 bytes", the pc and source line, the first thread, the address and
the allocation it lies in), one finding per pc and space per launch, its
count the number of threads that made such reads, reported at launch end.

Cost: shadow checks go word-wise (the widest of 8/4/2/1 bytes that divides
the access size and every offset, compared against 0x0101...), and an
allocation known to be fully written (a host copy over all of it, or found
so once per launch) is skipped without looking at its shadow.

With `--track-unused-memory`, an allocation freed (or still live at the end
of the program) with bytes never written is a warning: "Unused memory in
allocation 0x... of size N bytes" with the unwritten ranges and the share
of the allocation they make up.

What it deliberately does not do: track local memory (a thread's stack),
constant banks, or VMM mappings and stream-ordered pool blocks (mapped
without an allocation event; treated as initialized), and it keeps one
notion of "written" for both checks (bytes a copy filled from unwritten
source bytes count as unused too).
"""
from __future__ import annotations

import bisect
import threading
from dataclasses import dataclass
from typing import Any

import numpy as np

from gpudbg.sanitizer import sites
from gpudbg.sanitizer.config import CheckConfig
from gpudbg.sanitizer.findings import DeviceSite, Finding, Severity, ToolName
from gpudbg.sanitizer.report import Reporter
from gpudbg.sim.instrument import Launch, MemoryAccess, Tool
from gpudbg.sim.memory.spaces import AccessType, AllocationKind, Space

# allocations whose bytes start unwritten; every other kind is initialized
UNINITIALIZED_KINDS = frozenset({AllocationKind.DEVICE, AllocationKind.PITCHED,
                                 AllocationKind.DEVICE_HEAP})
# kinds whose never-written bytes --track-unused-memory reports
UNUSED_TRACKED_KINDS = frozenset({AllocationKind.DEVICE, AllocationKind.PITCHED})
UNUSED_RANGES_SHOWN = 8

_WORD_DTYPES = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
_WRITTEN = {w: _WORD_DTYPES[w](int.from_bytes(b"\x01" * w, "little")) for w in _WORD_DTYPES}
_SHIFTS = {w: np.uint64(w.bit_length() - 1) for w in _WORD_DTYPES}
_SPACE_NAMES = {Space.GLOBAL: "__global__", Space.SHARED: "__shared__"}
_KINDS = {Space.GLOBAL: "uninitialized_global_read", Space.SHARED: "uninitialized_shared_read"}


def _padded(n: int) -> int:
    return max(8, (n + 7) & ~7)


def _word_indices(offsets: np.ndarray, size: int) -> tuple[int, np.ndarray]:
    """The shadow word (the widest of 8/4/2/1 bytes dividing the access
    size: PTX accesses are naturally aligned, and misaligned ones fault
    before a tool sees them) and the word index of each access, one
    column per word when an access spans several. Shifts and views only:
    uint64 division and casts cost ten times as much."""
    w = min(size & -size, 8)
    idx = offsets if w == 1 else offsets >> _SHIFTS[w]
    idx = idx.view(np.int64)
    k = size // w
    if k > 1:
        idx = idx[:, None] + np.arange(k, dtype=np.int64)
    return w, idx


def unwritten(shadow: np.ndarray, offsets: np.ndarray, size: int) -> np.ndarray:
    """Per access: whether any of its `size` bytes at `offsets` (uint64
    byte offsets into the flat uint8 `shadow`) was never written."""
    w, idx = _word_indices(offsets, size)
    bad = np.take(shadow.view(_WORD_DTYPES[w]), idx) != _WRITTEN[w]
    return bad if bad.ndim == 1 else bad.any(axis=1)


def mark_written(shadow: np.ndarray, offsets: np.ndarray, size: int) -> None:
    w, idx = _word_indices(offsets, size)
    shadow.view(_WORD_DTYPES[w])[idx] = _WRITTEN[w]


def unwritten_ranges(shadow: np.ndarray) -> list[tuple[int, int]]:
    """(offset, length) of each run of unwritten bytes."""
    z = np.concatenate(([0], (shadow == 0).view(np.int8), [0]))
    d = np.diff(z)
    starts, ends = np.flatnonzero(d == 1), np.flatnonzero(d == -1)
    return [(int(s), int(e - s)) for s, e in zip(starts, ends)]


class _Tracked:
    """One allocation's shadow."""

    __slots__ = ("alloc", "shadow", "clean", "checked", "host_site")

    def __init__(self, alloc: Any, host_site: list[str]):
        self.alloc = alloc
        self.shadow = np.zeros(_padded(alloc.size), dtype=np.uint8)
        self.shadow[alloc.size:] = 1        # padding counts as written
        self.clean = alloc.size == 0        # known to be fully written
        self.checked = -1                   # launch that last re-examined `clean`
        self.host_site = host_site

    def refresh(self, launch_no: int) -> bool:
        """Whether every byte is written, re-examined at most once per launch."""
        if not self.clean and self.checked != launch_no:
            self.checked = launch_no
            self.clean = bool(self.shadow.all())
        return self.clean


class _Registry:
    """The tracked allocations of one GlobalMemory, sorted by base. Every
    change replaces `state` (bases, items, base array, end array) as a
    whole, so the device thread always reads one consistent snapshot."""

    def __init__(self, memory: Any):
        self.memory = memory
        self.state: tuple[list[int], list[_Tracked], np.ndarray, np.ndarray] = (
            [], [], np.zeros(0, np.uint64), np.zeros(0, np.uint64))

    def _set(self, items: list[_Tracked]) -> None:
        bases = [t.alloc.base for t in items]
        self.state = (bases, items, np.array(bases, dtype=np.uint64),
                      np.array([t.alloc.base + t.alloc.size for t in items], dtype=np.uint64))

    @property
    def items(self) -> list[_Tracked]:
        return self.state[1]

    def add(self, t: _Tracked) -> None:
        bases, items = self.state[0], self.state[1]
        i = bisect.bisect_left(bases, t.alloc.base)
        self._set(items[:i] + [t] + items[i:])

    def remove(self, alloc: Any) -> _Tracked | None:
        bases, items = self.state[0], self.state[1]
        i = bisect.bisect_left(bases, alloc.base)
        if i < len(items) and items[i].alloc is alloc:
            self._set(items[:i] + items[i + 1:])
            return items[i]
        return None

    def find(self, address: int, nbytes: int = 1) -> _Tracked | None:
        bases, items = self.state[0], self.state[1]
        i = bisect.bisect_right(bases, address) - 1
        if i >= 0:
            t = items[i]
            if address + nbytes <= t.alloc.base + t.alloc.size:
                return t
        return None


@dataclass
class _Pending:
    """The uninitialized reads of one pc and space in the current launch."""

    space: Space
    size: int
    site: DeviceSite
    address_line: str
    count: int = 0
    seen: np.ndarray | None = None       # wave slots that read unwritten bytes (current wave)
    address: int = 0


class _Run:
    """One launch's device-side state (on its GPU's front-end thread):
    the pending findings and the current wave's shared-memory shadow."""

    __slots__ = ("pending", "shared", "row_base")

    def __init__(self) -> None:
        self.pending: dict[tuple[int, Space], _Pending] = {}
        self.shared: np.ndarray | None = None      # (blocks x padded row), flat
        self.row_base: np.ndarray | None = None    # per wave slot: its block's row offset

    def fold_waves(self) -> None:
        """The wave's threads into each pending finding's count."""
        for p in self.pending.values():
            if p.seen is not None:
                p.count += int(np.count_nonzero(p.seen))
                p.seen = None


class InitcheckTool(Tool):
    """compute-sanitizer's initcheck over the instrumentation interface."""

    name = "initcheck"

    def __init__(self, config: CheckConfig | None = None, reporter: Reporter | None = None):
        self.config = config or CheckConfig(tool=ToolName.INITCHECK)
        self.reporter = reporter or Reporter()
        self.track_unused = bool(self.config.track_unused_memory)
        self._registries: dict[int, _Registry] = {}
        self._lock = threading.Lock()
        self._launch_no = 0
        self._runs = threading.local()    # each GPU's front-end thread runs its own launch

    # ------------------------------------------------------------------ host side

    def _registry(self, memory: Any) -> _Registry:
        reg = self._registries.get(id(memory))
        if reg is None or reg.memory is not memory:
            reg = self._registries[id(memory)] = _Registry(memory)
        return reg

    def allocated(self, memory: Any, allocation: Any) -> None:
        if allocation.kind not in UNINITIALIZED_KINDS:
            return
        where = sites.host_site() if self.track_unused else []
        with self._lock:
            self._registry(memory).add(_Tracked(allocation, where))

    def freed(self, memory: Any, allocation: Any) -> None:
        reg = self._registries.get(id(memory))
        if reg is None:
            return
        with self._lock:
            t = reg.remove(allocation)
        if t is not None and self.track_unused:
            self._report_unused(t)

    def host_write(self, memory: Any, address: int, nbytes: int) -> None:
        reg = self._registries.get(id(memory))
        if reg is None or nbytes <= 0:
            return
        t = reg.find(address, nbytes)
        if t is None or t.clean:
            return
        off = address - t.alloc.base
        if off == 0 and nbytes >= t.alloc.size:
            t.clean = True
        else:
            t.shadow[off:off + nbytes] = 1

    def host_copy(self, memory: Any, dst: int, src: int, nbytes: int) -> None:
        """Device to device (after host_write marked all of dst written):
        dst's bytes are as written as src's were."""
        reg = self._registries.get(id(memory))
        if reg is None or nbytes <= 0:
            return
        s = reg.find(src, nbytes)
        if s is None or s.clean:
            return                        # the source is fully written
        d = reg.find(dst, nbytes)
        if d is None:
            return
        so, do = src - s.alloc.base, dst - d.alloc.base
        part = s.shadow[so:so + nbytes].copy()
        if d.clean:
            if part.all():
                return
            d.clean = False
            d.checked = -1
        d.shadow[do:do + nbytes] = part

    # ------------------------------------------------------------------ device side

    def _run(self) -> _Run:
        r = getattr(self._runs, "run", None)
        if r is None:
            r = self._runs.run = _Run()
        return r

    def launch_begin(self, launch: Launch) -> None:
        self._launch_no += 1
        self._runs.run = _Run()

    def wave_begin(self, X: Any) -> None:
        r = self._run()
        per_block = int(X.shared_per_block)
        if per_block > 0:
            row = _padded(per_block)
            r.shared = np.zeros(len(X.block_live) * row, dtype=np.uint8)
            r.row_base = X.layout.block_of.astype(np.uint64) * np.uint64(row)
        else:
            r.shared = None

    def wave_end(self, X: Any) -> None:
        r = self._run()
        r.fold_waves()
        r.shared = None

    def launch_end(self, launch: Launch, fault: BaseException | None) -> None:
        r = self._run()
        r.fold_waves()
        self._runs.run = None
        for p in r.pending.values():
            self._report_read(p)

    def memory(self, X: Any, access: MemoryAccess) -> None:
        if access.space is Space.GLOBAL:
            self._global(X, access)
        elif access.space is Space.SHARED:
            r = self._run()
            if r.shared is not None:
                self._shared_access(X, access, r)

    def _global(self, X: Any, a: MemoryAccess) -> None:
        reg = self._registries.get(id(X.gmem))
        if reg is None or not len(a.addresses):
            return
        bases, items, base_arr, end_arr = reg.state
        if not items:
            return
        addrs = a.addresses
        lo = int(addrs.min())
        hi = int(addrs.max()) + a.size
        i = bisect.bisect_right(bases, lo) - 1
        end_i = items[i].alloc.base + items[i].alloc.size if i >= 0 else 0
        if i >= 0 and hi <= end_i:                       # one allocation (the usual case)
            self._check(X, a, items[i], addrs, a.slots)
            return
        if bisect.bisect_left(bases, hi) <= i + 1 and lo >= end_i:
            return                                       # no tracked allocation in range
        which = np.searchsorted(base_arr, addrs, side="right").astype(np.int64) - 1
        for k in np.unique(which):
            if k < 0:
                continue
            sel = (which == k) & (addrs < end_arr[k])
            if sel.any():
                self._check(X, a, items[int(k)], addrs[sel], a.slots[sel])

    def _check(self, X: Any, a: MemoryAccess, t: _Tracked, addrs: np.ndarray,
               slots: np.ndarray) -> None:
        if a.kind is AccessType.WRITE:
            if not t.clean:
                mark_written(t.shadow, addrs - np.uint64(t.alloc.base), a.size)
            return
        if t.refresh(self._launch_no):
            return
        offsets = addrs - np.uint64(t.alloc.base)
        bad = unwritten(t.shadow, offsets, a.size)
        if a.kind is AccessType.ATOMIC:
            mark_written(t.shadow, offsets, a.size)
        if bad.any():
            self._note(X, a, slots[bad], addrs[bad], t)

    def _shared_access(self, X: Any, a: MemoryAccess, r: _Run) -> None:
        if not len(a.slots):
            return
        rows = r.row_base if len(a.slots) == len(r.row_base) else np.take(r.row_base, a.slots)
        flat = rows + a.addresses
        if a.kind is AccessType.WRITE:
            mark_written(r.shared, flat, a.size)
            return
        bad = unwritten(r.shared, flat, a.size)
        if a.kind is AccessType.ATOMIC:
            mark_written(r.shared, flat, a.size)
        if bad.any():
            self._note(X, a, a.slots[bad], a.addresses[bad], None)

    def _note(self, X: Any, a: MemoryAccess, slots: np.ndarray, addrs: np.ndarray,
              t: _Tracked | None) -> None:
        key = (a.pc, a.space)
        pending = self._run().pending
        p = pending.get(key)
        if p is None:
            slot, address = int(slots[0]), int(addrs[0])
            site = sites.device_site(X, a.pc, slot)
            if t is not None:
                sub = getattr(t.alloc, "suballocator", None)
                phrase = sub.describe(address, a.size) if sub is not None and hasattr(sub, "describe") \
                    else X.gmem.describe(address, a.size)
                line = f"Address 0x{address:x} {phrase}"
            else:
                line = (f"Address 0x{address:x} is {address} bytes inside the "
                        f"{int(X.shared_per_block)}-byte __shared__ memory of block "
                        f"({','.join(map(str, X.block_idx_of(slot)))})")
            p = pending[key] = _Pending(a.space, a.size, site, line, address=address)
        if p.seen is None or len(p.seen) != X.n:
            p.seen = np.zeros(X.n, dtype=bool)
        p.seen[slots] = True

    # ------------------------------------------------------------------ findings

    def _report_read(self, p: _Pending) -> None:
        space = _SPACE_NAMES[p.space]
        details = [f"at {p.site.where}"]
        if p.site.who:
            details.append(f"by {p.site.who}")
        details.append(p.address_line)
        if p.count > 1:
            details.append(f"{p.count} threads read uninitialized {space} memory at this instruction")
        self.reporter.add(Finding(
            tool=ToolName.INITCHECK, kind=_KINDS[p.space],
            title=f"Uninitialized {space} memory read of size {p.size} bytes",
            details=details, site=p.site, address=p.address, size=p.size, count=max(p.count, 1)))

    def _report_unused(self, t: _Tracked) -> None:
        a = t.alloc
        if a.kind not in UNUSED_TRACKED_KINDS or t.clean or a.size == 0:
            return
        ranges = unwritten_ranges(t.shadow[:a.size])
        if not ranges:
            return
        unused = sum(n for _, n in ranges)
        details = [f"Not written {n} bytes at offset 0x{off:x} (0x{a.base + off:x})"
                   for off, n in ranges[:UNUSED_RANGES_SHOWN]]
        if len(ranges) > UNUSED_RANGES_SHOWN:
            rest = ranges[UNUSED_RANGES_SHOWN:]
            details.append(f"... and {len(rest)} more unwritten ranges ({sum(n for _, n in rest)} bytes)")
        pct = 100.0 * unused / a.size
        shown = f"{pct:.0f}" if pct >= 1 or pct == 0 else f"{pct:.2g}"
        details.append(f"{shown}% of allocation were unused.")
        self.reporter.add(Finding(
            tool=ToolName.INITCHECK, kind="unused_memory", severity=Severity.WARNING,
            title=f"Unused memory in allocation 0x{a.base:x} of size {a.size} bytes",
            details=details, address=a.base, size=a.size, host_site=list(t.host_site),
            extra={"unused_bytes": unused}))

    def finish(self) -> None:
        """Program end: with --track-unused-memory, every live allocation
        with unwritten bytes."""
        if not self.track_unused:
            return
        with self._lock:
            live = [t for reg in self._registries.values() for t in reg.items]
            self._registries = {}
        for t in live:
            if not t.alloc.freed:
                self._report_unused(t)
