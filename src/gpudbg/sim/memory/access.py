"""Checked, vectorized gather/scatter/atomics over the global allocation
registry: one call serves every lane of one instruction.

The one idea: check min/max first; when every address falls in one
allocation (the usual case) the whole access is one alignment test and one
fancy-index into a dtype view of that allocation's buffer. Otherwise
np.searchsorted on the sorted allocation bases maps lanes to allocations and
each distinct allocation touched is handled as one piece. Every check runs
before any byte is written. A fault is worded for the first faulting lane
and carries all of them; that complete mask (bad_lanes) is computed only
once a fault is certain, so accesses that do not fault pay nothing for it.
Driver memory (launch parameter copies, rings, semaphores, code, staging)
is never a valid target: its allocations carry `driver_only`, tested with
`readonly` on the fast path.

It keeps no state; the registry (GlobalMemory) owns the allocations.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from gpudbg.sim.faults import CUDBGException
from gpudbg.sim.memory import atomics
from gpudbg.sim.memory.describe import driver_memory_phrase
from gpudbg.sim.memory.spaces import (
    AccessFault, AccessType, Allocation, AllocationKind, Space, access_size, as_addresses,
    fault_message, misaligned_phrase,
)

if TYPE_CHECKING:
    from gpudbg.sim.memory.allocations import GlobalMemory


@dataclass
class Piece:
    """The lanes of one access that fall in one allocation."""

    alloc: Allocation
    lanes: np.ndarray | None   # positions in the call's arrays; None = all of them
    offsets: np.ndarray        # int64 offsets into alloc, in units of `unit` bytes
    unit: int = 1


def _fault_for_lane(gm: "GlobalMemory", k: int, addrs: np.ndarray, size: int,
                    access: AccessType, space_name: str, lanes: np.ndarray | None,
                    space: Space) -> AccessFault:
    """Why lane k faults, worded for the report."""
    a = int(addrs[k])
    lane = int(lanes[k]) if lanes is not None else k
    kind = CUDBGException.CUDBG_EXCEPTION_LANE_ILLEGAL_ADDRESS
    if a % size:
        return AccessFault(CUDBGException.CUDBG_EXCEPTION_LANE_MISALIGNED_ADDRESS, space, lane, a,
                           size, fault_message(space_name, access, size, a, misaligned_phrase(size)))
    alloc = gm.find(a)
    if alloc is None or a + size > alloc.end:
        return AccessFault(kind, space, lane, a, size,
                           fault_message(space_name, access, size, a, gm.describe(a, size)))
    if alloc.driver_only:
        phrase = driver_memory_phrase(alloc, alloc.kind.value)
        return AccessFault(kind, space, lane, a, size, fault_message(space_name, access, size, a, phrase))
    if alloc.readonly and access is not AccessType.READ:
        if access is AccessType.ATOMIC and alloc.kind is AllocationKind.MODULE_CONST:
            phrase = (f"is in __constant__ memory, which does not allow atomic operations "
                      f"(the {alloc.describe_short()})")
            return AccessFault(CUDBGException.CUDBG_EXCEPTION_WARP_INVALID_ADDRESS_SPACE, space,
                               lane, a, size, fault_message(space_name, access, size, a, phrase))
        phrase = f"is a write to read-only memory in the {alloc.describe_short()}"
        return AccessFault(kind, space, lane, a, size, fault_message(space_name, access, size, a, phrase))
    if alloc.suballocator is not None:
        phrase = alloc.suballocator.describe(a, size)
    else:
        # The table changed between the check and this explanation (the host
        # mapped or freed memory meanwhile, with engines running unlocked):
        # the access was judged against the table it saw, so it faults; say
        # where the address lies now.
        phrase = gm.describe(a, size) + " (the allocation table changed during the access)"
    return AccessFault(kind, space, lane, a, size, fault_message(space_name, access, size, a, phrase))


def bad_lanes(gm: "GlobalMemory", addrs: np.ndarray, size: int, access: AccessType) -> np.ndarray:
    """Which lanes fault (bool per lane): misaligned, outside every live
    allocation or running past its end, in driver memory, a write to
    read-only memory, or refused by the allocation's suballocator. The
    complete picture, computed only once a fault is certain."""
    n = addrs.shape[0]
    bases, sizes, ro, drv, allocs = gm.sorted_arrays()
    if bases.shape[0] == 0:
        return np.ones(n, dtype=bool)
    idx = np.searchsorted(bases, addrs, side="right").astype(np.int64) - 1
    idxc = np.maximum(idx, 0)
    off = addrs - bases[idxc]
    asz = sizes[idxc]
    bad = ~((idx >= 0) & (off < asz) & ((asz - off) >= np.uint64(size)))
    if size > 1:
        bad |= (addrs & np.uint64(size - 1)) != 0
    bad |= drv[idxc]
    if access is not AccessType.READ:
        bad |= ro[idxc]
    good = ~bad
    for ai in np.unique(idxc[good]):
        sub = allocs[int(ai)].suballocator
        if sub is not None:
            sel = np.flatnonzero(good & (idxc == ai))
            bad[sel[sub.bad_mask(off[sel].view(np.int64), size)]] = True
    return bad


def _fault(gm: "GlobalMemory", addrs: np.ndarray, size: int, access: AccessType,
           space_name: str, lanes: np.ndarray | None, space: Space) -> AccessFault:
    """The fault of an access known to fault: worded for its first bad
    lane, carrying all of them (in the caller's lane numbers)."""
    bad = np.flatnonzero(bad_lanes(gm, addrs, size, access))
    if bad.shape[0] == 0:            # cannot happen: the caller saw a bad lane
        raise AssertionError("an access reported as faulting has no faulting lane")
    fault = _fault_for_lane(gm, int(bad[0]), addrs, size, access, space_name, lanes, space)
    fault.lanes = bad if lanes is None else np.asarray(lanes)[bad]
    return fault


def resolve(gm: "GlobalMemory", addrs: np.ndarray, size: int, access: AccessType,
            space_name: str = "__global__", lanes: np.ndarray | None = None,
            space: Space = Space.GLOBAL) -> list[Piece]:
    """Map every lane to (allocation, offset) or raise the fault of the
    first faulting lane, carrying every faulting lane (`AccessFault.lanes`).

    `lanes`, when given, are the lane numbers to report (positions in an
    enclosing array, for generic accesses)."""
    n = addrs.shape[0]
    if n == 0:
        return []
    lo, hi = int(addrs.min()), int(addrs.max())
    alloc = gm.find(lo)
    if alloc is not None and hi + size <= alloc.end:
        faulty = (alloc.driver_only or (alloc.readonly and access is not AccessType.READ)
                  or (size > 1 and int(np.bitwise_or.reduce(addrs)) & (size - 1)))
        offsets = addrs.view(np.int64) - np.int64(alloc.base)
        if not faulty and alloc.suballocator is not None:
            faulty = bool(alloc.suballocator.bad_mask(offsets, size).any())
        if faulty:
            raise _fault(gm, addrs, size, access, space_name, lanes, space)
        return [Piece(alloc, None, offsets)]
    return _resolve_slow(gm, addrs, size, access, space_name, lanes, space)


def _resolve_slow(gm: "GlobalMemory", addrs: np.ndarray, size: int, access: AccessType,
                  space_name: str, lanes: np.ndarray | None, space: Space) -> list[Piece]:
    bases, sizes, ro, drv, allocs = gm.sorted_arrays()
    if bases.shape[0] == 0:
        raise _fault(gm, addrs, size, access, space_name, lanes, space)
    idx = np.searchsorted(bases, addrs, side="right").astype(np.int64) - 1
    idxc = np.maximum(idx, 0)
    off = addrs - bases[idxc]
    asz = sizes[idxc]
    bad = ~((idx >= 0) & (off < asz) & ((asz - off) >= np.uint64(size)))
    bad |= (addrs & np.uint64(size - 1)) != 0
    bad |= drv[idxc]
    if access is not AccessType.READ:
        bad |= ro[idxc]
    if bad.any():
        raise _fault(gm, addrs, size, access, space_name, lanes, space)
    pieces: list[Piece] = []
    uniq, inv = np.unique(idxc, return_inverse=True)
    for j, ai in enumerate(uniq):
        sel = np.flatnonzero(inv.reshape(-1) == j)
        alloc = allocs[int(ai)]
        offs = off[sel].view(np.int64)
        if alloc.suballocator is not None and alloc.suballocator.bad_mask(offs, size).any():
            raise _fault(gm, addrs, size, access, space_name, lanes, space)
        pieces.append(Piece(alloc, sel, offs))
    return pieces


def _element_index(piece: Piece, step: int) -> np.ndarray:
    """Offsets in elements of `step` bytes. Each piece is consumed once, so
    the conversion happens in place (saving a large temporary per access)."""
    if piece.unit != step:
        if piece.unit != 1:
            raise ValueError(f"piece already indexed in {piece.unit}-byte units")
        np.right_shift(piece.offsets, np.int64(step.bit_length() - 1), out=piece.offsets)
        piece.unit = step
    return piece.offsets


def _byte_offsets(piece: Piece) -> np.ndarray:
    return piece.offsets if piece.unit == 1 else piece.offsets * np.int64(piece.unit)


def gather(piece: Piece, dtype: np.dtype, count: int) -> np.ndarray:
    """The values at a piece's offsets: shape (m,) or (m, count)."""
    words = piece.alloc.words(dtype, count)
    step = dtype.itemsize * count
    if words is not None:
        return words[_element_index(piece, step)]
    raw = piece.alloc.data[_byte_offsets(piece)[:, None] + np.arange(step)]
    out = np.ascontiguousarray(raw).view(dtype)
    return out.reshape(-1) if count == 1 else out.reshape(-1, count)


def scatter_words(words: np.ndarray, ei: np.ndarray, values: np.ndarray) -> None:
    """words[ei] = values where, for colliding lanes, the last one wins
    (numpy does not promise an order for repeated fancy-index assignment)."""
    m = ei.shape[0]
    if m > 1 and not bool((ei[1:] > ei[:-1]).all()):
        _, first_in_reversed = np.unique(ei[::-1], return_index=True)
        keep = m - 1 - first_in_reversed
        ei, values = ei[keep], values[keep]
    words[ei] = values


def scatter(piece: Piece, values: np.ndarray, dtype: np.dtype, count: int) -> None:
    """Write values (lane order of the piece); colliding lanes: last one wins."""
    step = dtype.itemsize * count
    words = piece.alloc.words(dtype, count)
    if words is not None:
        scatter_words(words, _element_index(piece, step), values)
        return
    vb = np.ascontiguousarray(values).view(np.uint8).reshape(-1, step)
    ei = _byte_offsets(piece)
    m = ei.shape[0]
    if m > 1 and not bool((ei[1:] > ei[:-1]).all()):
        _, first_in_reversed = np.unique(ei[::-1], return_index=True)
        keep = m - 1 - first_in_reversed
        ei, vb = ei[keep], vb[keep]
    piece.alloc.data[ei[:, None] + np.arange(step)] = vb


def prepare_values(values: Any, n: int, dtype: np.dtype, count: int) -> np.ndarray:
    v = np.asarray(values)
    want = (n,) if count == 1 else (n, count)
    if v.ndim == 0 or v.shape == (count,) and count > 1 and n != count:
        v = np.broadcast_to(v, want)
    if v.shape != want:
        if v.size == n * count:
            v = v.reshape(want)
        else:
            raise ValueError(f"values of shape {v.shape} do not match {n} lanes x {count} elements")
    if v.dtype != dtype:
        if v.dtype.itemsize == dtype.itemsize and v.dtype.kind in "iu" and dtype.kind in "iu":
            v = v.view(dtype)
        else:
            v = v.astype(dtype)
    return v


def gather_all(pieces: list[Piece], n: int, dt: np.dtype, count: int) -> np.ndarray:
    if len(pieces) == 1 and pieces[0].lanes is None:
        return gather(pieces[0], dt, count)
    out = np.empty((n,) if count == 1 else (n, count), dtype=dt)
    for p in pieces:
        out[p.lanes] = gather(p, dt, count)
    return out


def scatter_all(pieces: list[Piece], v: np.ndarray, dt: np.dtype, count: int) -> None:
    for p in pieces:
        scatter(p, v if p.lanes is None else v[p.lanes], dt, count)


def _words_for(piece: Piece, at: atomics.AtomicType) -> np.ndarray:
    words = piece.alloc.words(at.storage)
    if words is None:
        raise ValueError(f"allocation at 0x{piece.alloc.base:x} is not aligned for {at.name} atomics")
    return words


def lane_operand(values: Any, n: int, what: str = "values") -> np.ndarray:
    v = np.asarray(values)
    if v.ndim == 0:
        return np.broadcast_to(v, (n,))
    v = v.reshape(-1)
    if v.shape[0] != n:
        raise ValueError(f"{what} has {v.shape[0]} elements for {n} addresses")
    return v


def atomic_all(pieces: list[Piece], opv: atomics.AtomicOp, at: atomics.AtomicType,
               vals: np.ndarray, cmp: np.ndarray | None, n: int, ftz: bool | None) -> np.ndarray:
    if len(pieces) == 1 and pieces[0].lanes is None:
        p = pieces[0]
        return atomics.atomic_update(_words_for(p, at), _element_index(p, at.size), opv,
                                     vals, at, cmp, ftz)
    out = np.zeros(n, dtype=at.storage)
    for p in pieces:
        out[p.lanes] = atomics.atomic_update(
            _words_for(p, at), _element_index(p, at.size), opv, vals[p.lanes], at,
            None if cmp is None else cmp[p.lanes], ftz)
    return out


def reduce_all(pieces: list[Piece], opv: atomics.AtomicOp, at: atomics.AtomicType,
               vals: np.ndarray, ftz: bool | None) -> None:
    for p in pieces:
        atomics.reduce_update(_words_for(p, at), _element_index(p, at.size), opv,
                              vals if p.lanes is None else vals[p.lanes], at, ftz)


def load(gm: "GlobalMemory", addrs: Any, dtype: Any, count: int = 1,
         space_name: str = "__global__", lanes: np.ndarray | None = None,
         space: Space = Space.GLOBAL) -> np.ndarray:
    dt, size = access_size(dtype, count)
    a = as_addresses(addrs)
    pieces = resolve(gm, a, size, AccessType.READ, space_name, lanes, space)
    return gather_all(pieces, a.shape[0], dt, count)


def store(gm: "GlobalMemory", addrs: Any, values: Any, dtype: Any, count: int = 1,
          space_name: str = "__global__", lanes: np.ndarray | None = None,
          space: Space = Space.GLOBAL) -> None:
    dt, size = access_size(dtype, count)
    a = as_addresses(addrs)
    v = prepare_values(values, a.shape[0], dt, count)
    scatter_all(resolve(gm, a, size, AccessType.WRITE, space_name, lanes, space), v, dt, count)


def atomic(gm: "GlobalMemory", op: str, addrs: Any, values: Any, dtype: Any,
           compare: Any = None, space_name: str = "__global__",
           lanes: np.ndarray | None = None, space: Space = Space.GLOBAL,
           ftz: bool | None = None) -> np.ndarray:
    opv = atomics.parse_op(op)
    at = atomics.atomic_type(dtype)
    atomics.check_op_type(opv, at)
    a = as_addresses(addrs)
    n = a.shape[0]
    vals = lane_operand(values, n)
    cmp = None if compare is None else lane_operand(compare, n, "compare")
    pieces = resolve(gm, a, at.size, AccessType.ATOMIC, space_name, lanes, space)
    return atomic_all(pieces, opv, at, vals, cmp, n, ftz)


def reduce(gm: "GlobalMemory", op: str, addrs: Any, values: Any, dtype: Any,
           space_name: str = "__global__", lanes: np.ndarray | None = None,
           space: Space = Space.GLOBAL, ftz: bool | None = None) -> None:
    opv = atomics.parse_op(op)
    at = atomics.atomic_type(dtype)
    atomics.check_op_type(opv, at)
    a = as_addresses(addrs)
    vals = lane_operand(values, a.shape[0])
    pieces = resolve(gm, a, at.size, AccessType.ATOMIC, space_name, lanes, space)
    reduce_all(pieces, opv, at, vals, ftz)
