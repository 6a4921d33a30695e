"""Windowed spaces (shared per resident block slot, local per thread slot)
and generic addressing over global + shared + local.

The one idea: each windowed space is one flat, never-moving uint8 buffer cut
into equal segments (stride rounded up to 64 bytes), so a lane's
(segment, offset) is a flat index and every access is one checked
gather/scatter, exactly like the global fast path. A generic address is a
window base plus a space offset; generic accesses classify lanes by window,
check every part first, raise the fault of the lowest faulting lane of the
original array, and only then touch memory.

Segments are not allocated per block: the scheduler assigns slots and sets
`limits`. Atomics on local memory are refused (PTX has no local atomics).
"""
from __future__ import annotations

import enum
from typing import Any

import numpy as np

from gpudbg.sim.faults import CUDBGException
from gpudbg.sim.memory import access, atomics
from gpudbg.sim.memory.allocations import GlobalMemory
from gpudbg.sim.memory.spaces import (
    LOCAL_WINDOW_BASE, SHARED_WINDOW_BASE, WINDOW_SIZE, AccessFault, AccessType, Space,
    access_size, as_addresses, fault_message, misaligned_phrase,
)

__all__ = ["SHARED_WINDOW_BASE", "LOCAL_WINDOW_BASE", "WINDOW_SIZE", "GenericSpace",
           "SegmentedMemory", "GenericAddressing"]
_STRIDE_ALIGN = 64


class GenericSpace(enum.IntEnum):
    """What a generic address resolves to (isspacep / cvta)."""

    NONE = 0
    GLOBAL = 1
    SHARED = 2
    LOCAL = 3


_UNIT = {Space.SHARED: "block slot", Space.LOCAL: "thread slot"}


def _lane_array(values: Any, n: int, what: str) -> np.ndarray:
    v = np.asarray(values)
    if v.ndim == 0:
        return np.full(n, int(v), dtype=np.int64)
    v = v.reshape(-1)
    if v.shape[0] != n:
        raise ValueError(f"{what} has {v.shape[0]} elements for {n} lanes")
    return v.astype(np.int64, copy=False)


class SegmentedMemory:
    """Shared or local memory of every slot, as equal segments of one buffer."""

    def __init__(self, space: Space, segment_count: int, segment_size: int):
        if space not in (Space.SHARED, Space.LOCAL):
            raise ValueError(f"segmented memory is for shared or local space, not {space.value}")
        if segment_count <= 0 or segment_size < 0 or segment_size > WINDOW_SIZE:
            raise ValueError(f"bad segment geometry: {segment_count} x {segment_size} bytes")
        self.space = space
        self.segment_count = segment_count
        self.segment_size = segment_size
        self.stride = max(_STRIDE_ALIGN, -(-segment_size // _STRIDE_ALIGN) * _STRIDE_ALIGN)
        self.buffer = np.zeros(segment_count * self.stride, dtype=np.uint8)  # calloc: lazily paged
        self._limits = np.full(segment_count, segment_size, dtype=np.int64)
        self._uniform: int | None = segment_size
        self._views: dict = {}

    @property
    def limits(self) -> np.ndarray:
        """Per-segment valid sizes. Handing the array out may mean it gets
        written, so the uniform-limit fast path is dropped until
        set_uniform_limit() is called again."""
        self._uniform = None
        return self._limits

    @property
    def space_name(self) -> str:
        return self.space.sanitizer_name

    def _words(self, dtype: np.dtype, count: int) -> np.ndarray:
        key = (dtype, count)
        w = self._views.get(key)
        if w is None:
            w = self.buffer.view(dtype)
            if count > 1:
                w = w.reshape(-1, count)
            self._views[key] = w
        return w

    def _fault(self, kind: CUDBGException, lane: int, address: int, size: int,
               verb: AccessType, phrase: str, lanes: np.ndarray | None = None) -> AccessFault:
        return AccessFault(kind, self.space, lane, address, size,
                           fault_message(self.space_name, verb, size, address, phrase), lanes)

    def resolve(self, segments: Any, offsets: Any, size: int, verb: AccessType,
                lanes: np.ndarray | None = None, report_addrs: np.ndarray | None = None
                ) -> np.ndarray:
        """Flat byte offsets into `buffer`, or the first faulting lane's fault.
        `report_addrs` are the addresses to name (generic ones, when the
        access came through a generic pointer)."""
        off = as_addresses(offsets)
        n = off.shape[0]
        seg = _lane_array(segments, n, "segments")
        if n == 0:
            return np.zeros(0, dtype=np.int64)
        if seg.min() < 0 or seg.max() >= self.segment_count:
            raise IndexError(f"{self.space.value} segment index out of range 0..{self.segment_count - 1}")
        shown = off if report_addrs is None else report_addrs

        def lane_of(k: int) -> int:
            return int(lanes[k]) if lanes is not None else k

        if verb is AccessType.ATOMIC and self.space is Space.LOCAL:
            return self._refuse_atomic(shown, size, lane_of(0))
        # fast path: every segment has the same limit (one kernel's blocks)
        # and the extreme offsets are in bounds and all are aligned
        lim0 = self._uniform_limit()
        if lim0 is not None:
            hi = int(off.max())
            if hi + size <= lim0 and (size == 1 or not int(np.bitwise_or.reduce(off)) & (size - 1)):
                return seg * np.int64(self.stride) + off.view(np.int64)
        mis = (off & np.uint64(size - 1)) != 0 if size > 1 else None
        lim = self._limits[seg].astype(np.uint64)
        inb = (off < lim) & ((lim - off) >= np.uint64(size))
        bad = ~inb if mis is None else (~inb | mis)
        if bad.any():
            k = int(np.argmax(bad))
            a = int(shown[k])
            every = np.flatnonzero(bad)                  # all faulting lanes, in the caller's numbers
            every = every if lanes is None else np.asarray(lanes)[every]
            if mis is not None and mis[k]:
                raise self._fault(CUDBGException.CUDBG_EXCEPTION_LANE_MISALIGNED_ADDRESS, lane_of(k),
                                  a, size, verb, misaligned_phrase(size), every)
            o, limit = int(off[k]), int(lim[k])
            phrase = (f"is an out-of-bounds {self.space.value} memory access (offset 0x{o:x}; "
                      f"the {limit}-byte {self.space.value} memory of {_UNIT[self.space]} "
                      f"{int(seg[k])} ends at offset 0x{limit:x})")
            raise self._fault(CUDBGException.CUDBG_EXCEPTION_LANE_ILLEGAL_ADDRESS, lane_of(k), a,
                              size, verb, phrase, every)
        return seg * np.int64(self.stride) + off.view(np.int64)

    def _uniform_limit(self) -> int | None:
        return self._uniform

    def set_uniform_limit(self, limit: int) -> None:
        """Give every segment the same limit (one kernel's blocks or
        threads); accesses then take a bounds check on the extreme offsets
        only. Change limits through this or reset(), not by writing
        `limits` in place, so the fast path stays truthful."""
        self._limits[:] = int(limit)
        self._uniform = int(limit)

    def _refuse_atomic(self, shown: np.ndarray, size: int, lane: int) -> np.ndarray:
        a = int(shown[0])
        raise self._fault(CUDBGException.CUDBG_EXCEPTION_WARP_INVALID_ADDRESS_SPACE, lane, a, size,
                          AccessType.ATOMIC,
                          "is in local memory, which does not allow atomic operations")

    # -------------------------------------------------- on resolved flat offsets

    def gather(self, flat: np.ndarray, dt: np.dtype, count: int) -> np.ndarray:
        step = dt.itemsize * count
        return self._words(dt, count)[flat >> np.int64(step.bit_length() - 1)]

    def scatter(self, flat: np.ndarray, values: np.ndarray, dt: np.dtype, count: int) -> None:
        step = dt.itemsize * count
        access.scatter_words(self._words(dt, count), flat >> np.int64(step.bit_length() - 1), values)

    def atomic_flat(self, flat: np.ndarray, opv: atomics.AtomicOp, at: atomics.AtomicType,
                    vals: np.ndarray, cmp: np.ndarray | None, ftz: bool | None) -> np.ndarray:
        ei = flat >> np.int64(at.size.bit_length() - 1)
        return atomics.atomic_update(self._words(at.storage, 1), ei, opv, vals, at, cmp, ftz)

    def reduce_flat(self, flat: np.ndarray, opv: atomics.AtomicOp, at: atomics.AtomicType,
                    vals: np.ndarray, ftz: bool | None) -> None:
        ei = flat >> np.int64(at.size.bit_length() - 1)
        atomics.reduce_update(self._words(at.storage, 1), ei, opv, vals, at, ftz)

    # -------------------------------------------------- device side

    def load(self, segments: Any, offsets: Any, dtype: Any, count: int = 1,
             lanes: np.ndarray | None = None) -> np.ndarray:
        dt, size = access_size(dtype, count)
        return self.gather(self.resolve(segments, offsets, size, AccessType.READ, lanes), dt, count)

    def store(self, segments: Any, offsets: Any, values: Any, dtype: Any, count: int = 1,
              lanes: np.ndarray | None = None) -> None:
        dt, size = access_size(dtype, count)
        flat = self.resolve(segments, offsets, size, AccessType.WRITE, lanes)
        self.scatter(flat, access.prepare_values(values, flat.shape[0], dt, count), dt, count)

    def atomic(self, op: str, segments: Any, offsets: Any, values: Any, dtype: Any,
               compare: Any = None, lanes: np.ndarray | None = None,
               ftz: bool | None = None) -> np.ndarray:
        opv, at = atomics.parse_op(op), atomics.atomic_type(dtype)
        atomics.check_op_type(opv, at)
        flat = self.resolve(segments, offsets, at.size, AccessType.ATOMIC, lanes)
        n = flat.shape[0]
        cmp = None if compare is None else access.lane_operand(compare, n, "compare")
        return self.atomic_flat(flat, opv, at, access.lane_operand(values, n), cmp, ftz)

    def reduce(self, op: str, segments: Any, offsets: Any, values: Any, dtype: Any,
               lanes: np.ndarray | None = None, ftz: bool | None = None) -> None:
        opv, at = atomics.parse_op(op), atomics.atomic_type(dtype)
        atomics.check_op_type(opv, at)
        flat = self.resolve(segments, offsets, at.size, AccessType.ATOMIC, lanes)
        self.reduce_flat(flat, opv, at, access.lane_operand(values, flat.shape[0]), ftz)

    # -------------------------------------------------- host / debugger side

    def _host_range(self, segment: int, offset: int, nbytes: int, verb: AccessType) -> int:
        if not 0 <= segment < self.segment_count:
            raise IndexError(f"{self.space.value} segment {segment} out of range 0..{self.segment_count - 1}")
        limit = int(self._limits[segment])
        if offset < 0 or nbytes < 0 or offset + nbytes > limit:
            phrase = (f"is an out-of-bounds {self.space.value} memory access (offset 0x{offset:x}; "
                      f"the {limit}-byte {self.space.value} memory of {_UNIT[self.space]} "
                      f"{segment} ends at offset 0x{limit:x})")
            raise self._fault(CUDBGException.CUDBG_EXCEPTION_LANE_ILLEGAL_ADDRESS, -1, offset,
                              nbytes, verb, phrase)
        return segment * self.stride + offset

    def read(self, segment: int, offset: int, nbytes: int) -> np.ndarray:
        start = self._host_range(segment, offset, nbytes, AccessType.READ)
        return self.buffer[start:start + nbytes].copy()

    def write(self, segment: int, offset: int, data: Any) -> None:
        src = np.ascontiguousarray(data).reshape(-1).view(np.uint8) if isinstance(data, np.ndarray) \
            else np.frombuffer(memoryview(data).cast("B"), dtype=np.uint8)
        start = self._host_range(segment, offset, src.shape[0], AccessType.WRITE)
        self.buffer[start:start + src.shape[0]] = src

    def reset(self, segment: int, zero: bool = True, limit: int | None = None) -> None:
        """Prepare a slot for a new block/thread: optionally zero it and set its size."""
        if not 0 <= segment < self.segment_count:
            raise IndexError(f"{self.space.value} segment {segment} out of range")
        if limit is not None:
            if not 0 <= limit <= self.segment_size:
                raise ValueError(f"limit {limit} exceeds the {self.segment_size}-byte segment")
            self._limits[segment] = limit
            if limit != self._uniform:
                self._uniform = None
        if zero:
            self.buffer[segment * self.stride:(segment + 1) * self.stride] = 0


class GenericAddressing:
    """Classifies generic addresses and dispatches accesses to their spaces."""

    def __init__(self, global_memory: GlobalMemory, shared: SegmentedMemory,
                 local: SegmentedMemory):
        self.gm = global_memory
        self.shared = shared
        self.local = local

    # -------------------------------------------------- classification / cvta

    def classify(self, addrs: Any) -> np.ndarray:
        a = as_addresses(addrs)
        codes = np.zeros(a.shape[0], dtype=np.int8)
        codes[(a >= np.uint64(self.gm.base)) & (a < np.uint64(self.gm.va_limit))] = GenericSpace.GLOBAL
        codes[(a >= np.uint64(SHARED_WINDOW_BASE))
              & (a < np.uint64(SHARED_WINDOW_BASE + WINDOW_SIZE))] = GenericSpace.SHARED
        codes[(a >= np.uint64(LOCAL_WINDOW_BASE))
              & (a < np.uint64(LOCAL_WINDOW_BASE + WINDOW_SIZE))] = GenericSpace.LOCAL
        return codes

    def is_space(self, addrs: Any, space: Space) -> np.ndarray:
        """isspacep.global/.shared/.local."""
        want = {Space.GLOBAL: GenericSpace.GLOBAL, Space.SHARED: GenericSpace.SHARED,
                Space.LOCAL: GenericSpace.LOCAL}.get(space)
        if want is None:
            raise ValueError(f"isspacep is not defined for {space.value}")
        return self.classify(addrs) == want

    @staticmethod
    def to_shared(addrs: Any) -> np.ndarray:
        return as_addresses(addrs) - np.uint64(SHARED_WINDOW_BASE)

    @staticmethod
    def from_shared(offsets: Any) -> np.ndarray:
        return as_addresses(offsets) + np.uint64(SHARED_WINDOW_BASE)

    @staticmethod
    def to_local(addrs: Any) -> np.ndarray:
        return as_addresses(addrs) - np.uint64(LOCAL_WINDOW_BASE)

    @staticmethod
    def from_local(offsets: Any) -> np.ndarray:
        return as_addresses(offsets) + np.uint64(LOCAL_WINDOW_BASE)

    @staticmethod
    def to_global(addrs: Any) -> np.ndarray:
        return as_addresses(addrs).copy()

    from_global = to_global

    # -------------------------------------------------- dispatch

    def _plan(self, a: np.ndarray, size: int, verb: AccessType, shared_segments: Any,
              local_segments: Any) -> list[tuple[GenericSpace, np.ndarray | None, Any]]:
        """Check every lane (all spaces) before any access happens."""
        n = a.shape[0]
        if n == 0:
            return []
        lo, hi = int(a.min()), int(a.max())
        if self.gm.contains_range(lo) and self.gm.contains_range(hi):
            return [(GenericSpace.GLOBAL, None, access.resolve(self.gm, a, size, verb))]
        codes = self.classify(a)
        parts: list[tuple[GenericSpace, np.ndarray | None, Any]] = []
        faults: list[AccessFault] = []
        for code in np.unique(codes):
            space = GenericSpace(int(code))
            sel = np.flatnonzero(codes == code)
            sub = a[sel]
            try:
                if space is GenericSpace.GLOBAL:
                    parts.append((space, sel, access.resolve(self.gm, sub, size, verb, lanes=sel)))
                elif space is GenericSpace.NONE:
                    k = int(sel[0])
                    addr = int(a[k])
                    faults.append(AccessFault(
                        CUDBGException.CUDBG_EXCEPTION_LANE_ILLEGAL_ADDRESS, Space.GENERIC, k, addr,
                        size, fault_message("__generic__", verb, size, addr,
                                            "does not map to any memory space (it is outside the "
                                            "global, shared and local windows)"), sel))
                else:
                    mem, base, segs = ((self.shared, SHARED_WINDOW_BASE, shared_segments)
                                       if space is GenericSpace.SHARED
                                       else (self.local, LOCAL_WINDOW_BASE, local_segments))
                    seg = _lane_array(segs, n, f"{mem.space.value} segments")[sel]
                    flat = mem.resolve(seg, sub - np.uint64(base), size, verb, lanes=sel,
                                       report_addrs=sub)
                    parts.append((space, sel, flat))
            except AccessFault as fault:
                faults.append(fault)
        if faults:
            first = min(faults, key=lambda f: f.lane)
            first.lanes = np.unique(np.concatenate([
                np.asarray(f.lanes if f.lanes is not None else [f.lane], dtype=np.int64)
                for f in faults]))     # every faulting lane, whatever its space
            raise first
        return parts

    def _mem(self, space: GenericSpace) -> SegmentedMemory:
        return self.shared if space is GenericSpace.SHARED else self.local

    def load(self, addrs: Any, dtype: Any, shared_segments: Any, local_segments: Any,
             count: int = 1) -> np.ndarray:
        dt, size = access_size(dtype, count)
        a = as_addresses(addrs)
        parts = self._plan(a, size, AccessType.READ, shared_segments, local_segments)
        if len(parts) == 1 and parts[0][1] is None:
            return access.gather_all(parts[0][2], a.shape[0], dt, count)
        out = np.empty((a.shape[0],) if count == 1 else (a.shape[0], count), dtype=dt)
        for space, sel, res in parts:
            out[sel] = (access.gather_all(res, sel.shape[0], dt, count) if space is GenericSpace.GLOBAL
                        else self._mem(space).gather(res, dt, count))
        return out

    def store(self, addrs: Any, values: Any, dtype: Any, shared_segments: Any,
              local_segments: Any, count: int = 1) -> None:
        dt, size = access_size(dtype, count)
        a = as_addresses(addrs)
        v = access.prepare_values(values, a.shape[0], dt, count)
        for space, sel, res in self._plan(a, size, AccessType.WRITE, shared_segments, local_segments):
            part = v if sel is None else v[sel]
            if space is GenericSpace.GLOBAL:
                access.scatter_all(res, part, dt, count)
            else:
                self._mem(space).scatter(res, part, dt, count)

    def atomic(self, op: str, addrs: Any, values: Any, dtype: Any, shared_segments: Any,
               local_segments: Any, compare: Any = None, ftz: bool | None = None) -> np.ndarray:
        opv, at = atomics.parse_op(op), atomics.atomic_type(dtype)
        atomics.check_op_type(opv, at)
        a = as_addresses(addrs)
        n = a.shape[0]
        vals = access.lane_operand(values, n)
        cmp = None if compare is None else access.lane_operand(compare, n, "compare")
        parts = self._plan(a, at.size, AccessType.ATOMIC, shared_segments, local_segments)
        out = np.zeros(n, dtype=at.storage)
        for space, sel, res in parts:
            v = vals if sel is None else vals[sel]
            c = None if cmp is None else (cmp if sel is None else cmp[sel])
            m = n if sel is None else sel.shape[0]
            old = (access.atomic_all(res, opv, at, v, c, m, ftz) if space is GenericSpace.GLOBAL
                   else self._mem(space).atomic_flat(res, opv, at, v, c, ftz))
            if sel is None:
                return old
            out[sel] = old
        return out

    def reduce(self, op: str, addrs: Any, values: Any, dtype: Any, shared_segments: Any,
               local_segments: Any, ftz: bool | None = None) -> None:
        opv, at = atomics.parse_op(op), atomics.atomic_type(dtype)
        atomics.check_op_type(opv, at)
        a = as_addresses(addrs)
        vals = access.lane_operand(values, a.shape[0])
        for space, sel, res in self._plan(a, at.size, AccessType.ATOMIC, shared_segments,
                                          local_segments):
            v = vals if sel is None else vals[sel]
            if space is GenericSpace.GLOBAL:
                access.reduce_all(res, opv, at, v, ftz)
            else:
                self._mem(space).reduce_flat(res, opv, at, v, ftz)
