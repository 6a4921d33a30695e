"""cp.async and cp.async.bulk: copies into and out of shared memory that
complete later (the wave's async unit, sim/async_copy.py, decides when),
their commit/wait groups, and cp.async.mbarrier.arrive.

Each builder reads the source and checks the destination at issue, so a
bad address is a precise fault of the issuing instruction; the bytes travel
in the unit until the copy completes. The forms are the PTX ISA's:

  cp.async.{ca,cg}.shared{::cta}.global{.L2::cache_hint}{.L2::{64,128,256}B}
      [dst], [src], cp-size{, src-size | ignore-src}{, cache-policy}
  cp.async.commit_group / cp.async.wait_group N / cp.async.wait_all
  cp.async.mbarrier.arrive{.noinc}.shared{::cta}.b64 [mbar]
  cp.async.bulk.shared::{cluster,cta}.global.mbarrier::complete_tx::bytes
      {.multicast::cluster} [dst], [src], size, [mbar]{, ctaMask}{, cache-policy}
  cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes
      [dst], [src], size, [mbar]
  cp.async.bulk.global.shared::cta.bulk_group [dst], [src], size{, cache-policy}
  cp.async.bulk.commit_group / cp.async.bulk.wait_group{.read} N
  cp.async.bulk.prefetch.L2.global [src], size   (a cache hint: no effect)

  cp.async.bulk.tensor.{1-5}d.shared::{cluster,cta}.global{.tile}
      .mbarrier::complete_tx::bytes [dst], [tensorMap, {coords}], [mbar]
  cp.async.bulk.tensor.{1-5}d.global.shared::cta{.tile}.bulk_group
      [tensorMap, {coords}], [src]
      (tensor maps from cuTensorMapEncodeTiled, sim/tensor_map.py; the map
      is a kernel parameter named in the instruction, or at a generic address:
      global memory or a __grid_constant__ parameter via cvta.param)

.multicast::cluster (a ctaMask operand after [mbar]) lands the bytes in
every named block of the cluster, each completing its own mbarrier.
Not supported (rejected at load with the reason): multicast of the tensor
form, cp.reduce.async.bulk, the tensor .im2col and gather/scatter modes.
"""
from __future__ import annotations

import numpy as np

from gpudbg.ptx import ir
from gpudbg.ptx.types import PTX_TYPES
from gpudbg.sim import async_copy, tensor_map
from gpudbg.sim.async_copy import BULK_GROUP, BULK_MBAR, CP_ASYNC, Copy
from gpudbg.sim.faults import CUDBGException, LaneFault
from gpudbg.sim.memory.spaces import AccessType
from gpudbg.sim.ops.base import Built, Mods, UnsupportedInstruction, op
from gpudbg.sim.ops import cluster_ops
from gpudbg.sim.ops.memory_ops import _Space
from gpudbg.sim.ops.symbols import symbol_kind, symbol_reader
from gpudbg.sim.ops.mbarrier_ops import shared_offsets

U32 = np.dtype(np.uint32)
U64 = np.dtype(np.uint64)
U8 = np.dtype(np.uint8)
_SPACES = ("global", "shared", "shared::cta", "shared::cluster")


def _slots(X, idx) -> np.ndarray:
    return X.all_slots if idx is None else idx


def _lanes(value, n: int, dtype) -> np.ndarray:
    return np.broadcast_to(np.asarray(value).astype(dtype), (n,))


def _relane(e: LaneFault, pos: np.ndarray) -> LaneFault:
    """A fault raised for a subset `pos` of the instruction's threads,
    re-indexed to the whole selection."""
    if e.lane is not None and e.lane >= 0:
        e.lane = int(pos[e.lane])
    if getattr(e, "lanes", None) is not None:
        e.lanes = pos[np.asarray(e.lanes, dtype=np.int64)]
    return e


def _immediate(operand, what: str) -> int:
    if not isinstance(operand, ir.Immediate) or not isinstance(operand.value, int):
        raise UnsupportedInstruction(f"{what} must be an integer constant")
    return int(operand.value)


# ------------------------------------------------------------------ cp.async

def _read_bytes(load, n: int, size: int, avail: np.ndarray | None) -> np.ndarray:
    """(n, size) bytes: whole 4-byte words by `load(sub, dtype, count)`
    where all `size` bytes are wanted, byte by byte where only the first
    avail[i] are (zero fill after them)."""
    out = np.zeros((n, size), dtype=U8)
    full = np.ones(n, dtype=bool) if avail is None else avail >= size
    words = size // 4
    if full.any():
        sub = np.flatnonzero(full)
        try:
            v = load(sub, 0, U32, words)
        except LaneFault as e:
            raise _relane(e, sub) from None
        out[full] = np.ascontiguousarray(np.asarray(v, dtype=U32).reshape(len(sub), words)).view(U8)
    if avail is not None:
        for k in range(size):
            want = (~full) & (avail > k)
            if not want.any():
                break
            sub = np.flatnonzero(want)
            try:
                out[want, k] = load(sub, k, U8, 1)
            except LaneFault as e:
                raise _relane(e, sub) from None
    return out


def _cp_async(inst, tc, m: Mods) -> Built:
    spaces = [s for s in inst.modifiers if s in _SPACES]
    if spaces[:1] not in (["shared"], ["shared::cta"]) or spaces[1:] != ["global"]:
        raise UnsupportedInstruction("cp.async copies .global to .shared{::cta}")
    for s in spaces:
        m.take(s)
    m.finish()
    ops = inst.operands
    size = _immediate(ops[2], "cp.async cp-size")
    if size not in (4, 8, 16):
        raise UnsupportedInstruction(f"cp.async cp-size must be 4, 8 or 16, not {size}")
    if "cg" in inst.modifiers and size != 16:
        raise UnsupportedInstruction("cp.async.cg copies 16 bytes")
    if ("ca" in inst.modifiers) == ("cg" in inst.modifiers):
        raise UnsupportedInstruction("cp.async needs one of .ca or .cg")
    rest = list(ops[3:])
    if "L2::cache_hint" in inst.modifiers:
        if not rest:
            raise UnsupportedInstruction(".L2::cache_hint needs a cache-policy operand")
        rest.pop()          # the policy: a hint
    if len(rest) > 1:
        raise UnsupportedInstruction("cp.async takes at most one of src-size and ignore-src")
    dst = _Space(tc, "shared", ops[0])
    src = _Space(tc, "global", ops[1])
    src_size = ignore = None
    if rest:
        r = rest[0]
        if isinstance(r, ir.Register) and tc.reg(r)[1] == np.bool_:
            ignore = tc.reader(r, PTX_TYPES["pred"])
        else:
            src_size = tc.reader(r, PTX_TYPES["u32"])
    pc = tc.pc

    def run(X, idx):
        slots = _slots(X, idx)
        n = len(slots)
        blocks = X.block_segments(idx)
        to = dst.addresses(X, idx)
        X.smem.load(blocks, to, U32, size // 4)       # the destination must be valid now
        avail = None
        if src_size is not None:
            avail = _lanes(src_size(X, idx), n, np.int64)
            if (avail > size).any():
                i = int(np.flatnonzero(avail > size)[0])
                raise LaneFault(CUDBGException.CUDBG_EXCEPTION_WARP_ILLEGAL_INSTRUCTION,
                                f"cp.async src-size {int(avail[i])} is larger than its cp-size {size}", i)
        if ignore is not None:
            avail = np.where(_lanes(ignore(X, idx), n, bool), 0, size)
        frm = src.addresses(X, idx)

        def load(sub, k, dtype, count):
            return X.gmem.load(frm[sub] + np.uint64(k), dtype, count)
        data = _read_bytes(load, n, size, avail)
        u = async_copy.unit(X)
        u.issue(Copy(pc, CP_ASYNC, np.array(slots, dtype=np.int64), u.stamps(n),
                     u.cp_committed[slots].copy(), True, np.array(blocks, dtype=np.int64),
                     np.array(to, dtype=U64), data))
    return Built(run, info={"space": "global", "access": "read", "async": "cp.async",
                            "memory": ((src, AccessType.READ, size),)})


def _commit(family: str) -> Built:
    def run(X, idx):
        u = async_copy.unit(X)
        counter = u.cp_committed if family == CP_ASYNC else u.bulk_committed
        counter[_slots(X, idx)] += 1
    return Built(run, info={"async": "commit"})


def _wait(family: str, allowed: int | None, read_only: bool = False) -> Built:
    def run(X, idx):
        u = X.async_unit
        if u is None:
            return
        slots = _slots(X, idx)
        if allowed is None:             # wait_all: commit, then wait for every group
            u.cp_committed[slots] += 1
            u.wait_group(X, slots, 0, family)
        elif not read_only:             # .read: sources were read at issue already
            u.wait_group(X, slots, allowed, family)
    return Built(run, info={"async": "wait"})


def _mbarrier_arrive(inst, tc, m: Mods) -> Built:
    noinc = m.flag("noinc")
    m.take("shared", "shared::cta")
    m.take("b64")
    m.finish()
    mem = _Space(tc, "shared" if ("shared" in inst.modifiers or "shared::cta" in inst.modifiers)
                 else "generic", inst.operands[0])
    pc = tc.pc

    def run(X, idx):
        from gpudbg.sim import mbarrier
        slots = _slots(X, idx)
        blocks, offs = shared_offsets(X, idx, mem)
        if not noinc:     # the later arrive-on is balanced by one more pending arrival now
            upd = mbarrier.Update(X, blocks, offs)
            for i in range(len(slots)):
                key, (phase, pending, expected, tx) = upd.live(i)
                upd.state[key] = mbarrier.pack(phase, pending + 1, expected, tx)
            upd.finish()
        async_copy.unit(X).defer_arrive(pc, np.array(slots, dtype=np.int64),
                                        np.asarray(blocks, dtype=np.int64), np.asarray(offs, dtype=np.int64))
    return Built(run, info={"async": "arrive",
                            "memory": ((mem, AccessType.ATOMIC, 8),)})


# ------------------------------------------------------------------ bulk

def _bulk_form(inst, m: Mods) -> tuple[list[str], bool, bool, list]:
    """What the bulk copies (plain and tensor) share: their state spaces
    in order, whether they complete an mbarrier's tx-count or a bulk
    group, and the operands without the optional L2 cache-hint policy."""
    spaces = [s for s in inst.modifiers if s in _SPACES]
    for s in spaces:
        m.take(s)
    tx = m.flag("mbarrier::complete_tx::bytes")
    group = m.flag("bulk_group")
    m.finish()
    ops = list(inst.operands)
    if "L2::cache_hint" in inst.modifiers:
        ops.pop()
    return spaces, tx, group, ops


def _bulk(inst, tc, m: Mods) -> Built:
    if m.flag("prefetch"):
        m.take("L2")
        m.take("global")
        m.finish()
        return Built(lambda X, idx: None, info={"hint": "prefetch"})
    multicast = m.flag("multicast::cluster")
    spaces, tx, group, ops = _bulk_form(inst, m)
    mask_r = None
    if multicast:
        if spaces != ["shared::cluster", "global"] or not tx or len(ops) != 5:
            raise UnsupportedInstruction(".multicast::cluster is a form of cp.async.bulk.shared::cluster.global"
                                         ".mbarrier::complete_tx::bytes [dst], [src], size, [mbar], ctaMask")
        mask_r = tc.reader(ops.pop(), PTX_TYPES["u16"])
    if spaces in (["shared::cluster", "global"], ["shared::cta", "global"]) and tx and len(ops) == 4:
        kind = "g2s"
    elif spaces == ["shared::cluster", "shared::cta"] and tx and len(ops) == 4:
        kind = "s2s"
    elif spaces == ["global", "shared::cta"] and group and len(ops) == 3:
        kind = "s2g"
    else:
        raise UnsupportedInstruction("unsupported cp.async.bulk form (the ISA's are .shared::cluster.global"
                                     ".mbarrier::complete_tx::bytes, .shared::cluster.shared::cta"
                                     ".mbarrier::complete_tx::bytes and .global.shared::cta.bulk_group)")
    dst = _Space(tc, "global" if kind == "s2g" else "shared", ops[0])
    src = _Space(tc, "global" if kind == "g2s" else "shared", ops[1])
    size_r = tc.reader(ops[2], PTX_TYPES["u32"])
    mbar = _Space(tc, "shared", ops[3]) if kind != "s2g" else None
    remote = spaces[0] == "shared::cluster"      # the destination (and its mbarrier) may be a peer block's
    pc = tc.pc

    def run(X, idx):
        slots = _slots(X, idx)
        n = len(slots)
        sizes = _lanes(size_r(X, idx), n, np.int64)
        bad = np.flatnonzero((sizes % 16 != 0) | (sizes <= 0))
        if len(bad):
            i = int(bad[0])
            raise LaneFault(CUDBGException.CUDBG_EXCEPTION_WARP_ILLEGAL_INSTRUCTION,
                            f"cp.async.bulk size {int(sizes[i])} is not a positive multiple of 16", i)
        blocks = np.asarray(X.block_segments(idx), dtype=np.int64)     # the source side's (own) block
        if kind == "s2g":
            dblocks, to = blocks, np.asarray(dst.addresses(X, idx), dtype=U64)
        else:
            dblocks, to = shared_offsets(X, idx, dst, remote, 16)
            to = to.astype(U64)
        frm = np.asarray(src.addresses(X, idx), dtype=U64)
        moffs = shared_offsets(X, idx, mbar, remote)[1] if mbar is not None else None
        u = async_copy.unit(X)
        for size in np.unique(sizes).tolist():
            pos = np.flatnonzero(sizes == size)
            data = np.zeros((len(pos), size), dtype=U8)
            try:
                for k in range(0, size, 16):
                    if kind == "s2g":
                        X.gmem.load(to[pos] + np.uint64(k), U32, 4)   # the destination must be valid now
                        v = X.smem.load(blocks[pos], frm[pos] + np.uint64(k), U32, 4)
                    else:
                        X.smem.load(dblocks[pos], to[pos] + np.uint64(k), U32, 4)
                        v = (X.gmem.load(frm[pos] + np.uint64(k), U32, 4) if kind == "g2s"
                             else X.smem.load(blocks[pos], frm[pos] + np.uint64(k), U32, 4))
                    data[:, k:k + 16] = np.ascontiguousarray(np.asarray(v, dtype=U32).reshape(len(pos), 4)).view(U8)
            except LaneFault as e:
                raise _relane(e, pos) from None
            sl = np.array(slots, dtype=np.int64)[pos]
            if mask_r is not None:
                masks = _lanes(mask_r(X, idx), n, np.int64)[pos]
                _multicast(X, u, pc, sl, masks, to[pos], np.asarray(moffs, dtype=np.int64)[pos], data)
                continue
            if kind == "s2g":
                u.issue(Copy(pc, BULK_GROUP, sl, u.stamps(len(pos)), u.bulk_committed[sl].copy(), False,
                             blocks[pos], to[pos], data))
            else:
                u.issue(Copy(pc, BULK_MBAR, sl, u.stamps(len(pos)), None, True, dblocks[pos], to[pos], data,
                             np.asarray(moffs, dtype=np.int64)[pos]))
    probes = ((src, AccessType.READ, 16),)
    return Built(run, info={"space": "global" if kind == "g2s" else "shared", "async": "bulk",
                            "memory": probes})


def _multicast(X, u, pc: int, slots: np.ndarray, masks: np.ndarray, offs: np.ndarray, mbars: np.ndarray,
               data: np.ndarray) -> None:
    """.multicast::cluster: each thread's bytes land at the same offset in
    every block of its cluster that `masks` names, completing on the
    mbarrier at the same offset there."""
    from gpudbg.sim import cluster
    csize = cluster.size(X.cluster_dim)
    for i, slot in enumerate(slots.tolist()):
        ranks = [r for r in range(16) if int(masks[i]) >> r & 1]
        if not ranks or ranks[-1] >= csize:
            raise LaneFault(CUDBGException.CUDBG_EXCEPTION_CLUSTER_OUT_OF_RANGE_ADDRESS,
                            f"cp.async.bulk .multicast::cluster ctaMask {int(masks[i]):#x} names no block or a "
                            f"block outside the cluster of {csize}", i)
        one = np.array([slot], dtype=np.int64)
        for r in ranks:
            seg, off = cluster_ops.resolve(X, one, cluster.join(np.array([r]), offs[i:i + 1]), 16)
            u.issue(Copy(pc, BULK_MBAR, one, u.stamps(1), None, True, np.asarray(seg, dtype=np.int64),
                         np.asarray(off, dtype=U64), data[i:i + 1], mbars[i:i + 1]))


# ------------------------------------------------------------------ tensor (TMA)

def _tensor_map_reader(tc, handle):
    """-> read(X, slot_position, idx) giving a thread's 128 map bytes: from a
    kernel parameter named in the instruction, or at a generic/global address."""
    if isinstance(handle, ir.Symbol) and symbol_kind(tc, handle.name) == "kparam":
        name = handle.name

        def from_param(X, i, idx):
            off = X.kparam_offsets[name] + handle.offset
            return bytes(X.kparams[off:off + tensor_map.MAP_BYTES])
        return from_param
    addr = tc.reader(handle, PTX_TYPES["u64"]) if isinstance(handle, ir.Register) else symbol_reader(tc, handle)

    def from_memory(X, i, idx):
        a = int(np.broadcast_to(np.asarray(addr(X, idx), dtype=U64), (X.count(idx),))[i])
        try:
            words = X.gmem.load(np.uint64(a) + np.arange(16, dtype=U64) * np.uint64(8), U64)
        except LaneFault as e:
            raise _relane(e, np.full(16, i, dtype=np.int64)) from None
        return np.asarray(words, dtype=U64).tobytes()
    return from_memory


def _bulk_tensor(inst, tc, m: Mods) -> Built:
    rank = next((int(d[0]) for d in ("1d", "2d", "3d", "4d", "5d") if m.flag(d)), None)
    if rank is None:
        raise UnsupportedInstruction("cp.async.bulk.tensor needs a dimension (.1d to .5d)")
    for mode in ("im2col", "im2col::w", "im2col::w::128", "tile::gather4", "tile::scatter4", "multicast::cluster"):
        if mode in inst.modifiers:
            raise UnsupportedInstruction(f"cp.async.bulk.tensor .{mode} is not supported (only the .tile mode)")
    m.flag("tile")
    spaces, tx, group, ops = _bulk_form(inst, m)
    load = spaces in (["shared::cluster", "global"], ["shared::cta", "global"]) and tx and len(ops) == 3
    store = spaces == ["global", "shared::cta"] and group and len(ops) == 2
    if not (load or store):
        raise UnsupportedInstruction("unsupported cp.async.bulk.tensor form (the ISA's tile forms are "
                                     ".shared::cluster.global.mbarrier::complete_tx::bytes and .global.shared::cta.bulk_group)")
    image = ops[1] if load else ops[0]
    if not isinstance(image, ir.ImageOperand) or not isinstance(image.coords, ir.Vector) \
            or len(image.coords.elements) != rank:
        raise UnsupportedInstruction(f"cp.async.bulk.tensor.{rank}d takes [tensorMap, {{{rank} coordinates}}]")
    read_map = _tensor_map_reader(tc, image.handle)
    coords = [tc.reader(c, PTX_TYPES["s32"]) for c in image.coords.elements]
    smem = _Space(tc, "shared", ops[0] if load else ops[1])
    mbar = _Space(tc, "shared", ops[2]) if load else None
    remote = spaces[0] == "shared::cluster"
    pc = tc.pc

    def run(X, idx):
        slots = np.array(_slots(X, idx), dtype=np.int64)
        n = len(slots)
        if load:
            blocks, sh = shared_offsets(X, idx, smem, remote, 16)
            sh = sh.astype(U64)
        else:
            blocks = np.asarray(X.block_segments(idx), dtype=np.int64)
            sh = np.broadcast_to(np.asarray(smem.addresses(X, idx), dtype=U64), (n,))
        cs = [np.broadcast_to(np.asarray(c(X, idx)).astype(np.int64), (n,)) for c in coords]
        moffs = shared_offsets(X, idx, mbar, remote)[1] if mbar is not None else None
        u = async_copy.unit(X)
        for i in range(n):
            try:
                tm = tensor_map.decode(read_map(X, i, idx))
            except tensor_map.TensorMapError as e:
                raise LaneFault(CUDBGException.CUDBG_EXCEPTION_WARP_ILLEGAL_INSTRUCTION, f"cp.async.bulk.tensor: {e}", i)
            if tm.rank != rank:
                raise LaneFault(CUDBGException.CUDBG_EXCEPTION_WARP_ILLEGAL_INSTRUCTION,
                                f"cp.async.bulk.tensor.{rank}d used with a rank-{tm.rank} tensor map", i)
            if int(sh[i]) % tm.alignment:
                raise LaneFault(CUDBGException.CUDBG_EXCEPTION_WARP_MISALIGNED_ADDRESS,
                                f"cp.async.bulk.tensor: shared address {int(sh[i]):#x} must be {tm.alignment}-byte "
                                f"aligned for this tensor map", i)
            addrs, inside = tensor_map.box_elements(tm, [int(c[i]) for c in cs])
            dt = tensor_map.element_dtype(tm)
            nbytes = tm.box_bytes
            order = tensor_map.swizzle_order(tm, nbytes)
            lane = np.full(len(addrs), i, dtype=np.int64)
            one = slots[i:i + 1]
            for k in range(0, nbytes, 16):      # the shared box must be valid now
                try:
                    X.smem.load(blocks[i:i + 1], sh[i:i + 1] + np.uint64(k), U32, 4)
                except LaneFault as e:
                    raise _relane(e, np.array([i])) from None
            if load:
                vals = np.full(len(addrs), tensor_map.fill_value(tm), dtype=dt)
                if inside.any():
                    try:
                        vals[inside] = X.gmem.load(addrs[inside].astype(U64), dt)
                    except LaneFault as e:
                        raise _relane(e, lane[inside]) from None
                dense = vals.view(U8).reshape(-1, 16)
                data = np.ascontiguousarray(dense[order]).reshape(1, nbytes)
                u.issue(Copy(pc, BULK_MBAR, one, u.stamps(1), None, True, blocks[i:i + 1], sh[i:i + 1], data,
                             np.asarray(moffs, dtype=np.int64)[i:i + 1]))
            else:
                raw = np.concatenate([np.asarray(X.smem.load(blocks[i:i + 1], sh[i:i + 1] + np.uint64(k), U32, 4),
                                                 dtype=U32).reshape(-1) for k in range(0, nbytes, 16)])
                chunks = raw.view(U8).reshape(-1, 16)
                dense = np.empty_like(chunks)
                dense[order] = chunks             # undo the swizzle
                vals = dense.reshape(-1).view(dt)
                if inside.any():
                    try:
                        X.gmem.load(addrs[inside].astype(U64), dt)      # the destination must be valid now
                    except LaneFault as e:
                        raise _relane(e, lane[inside]) from None
                u.issue(Copy(pc, BULK_GROUP, one, u.stamps(1), u.bulk_committed[one].copy(), False,
                             blocks[i:i + 1], addrs[:1].astype(U64), np.zeros((1, 16), dtype=U8),
                             scatter=(addrs[inside].astype(U64), vals[inside].copy())))
    return Built(run, info={"space": "global", "async": "tensor"})


@op("cp")
def build_cp(inst, tc) -> Built:
    m = Mods(inst)
    if not m.flag("async"):
        raise UnsupportedInstruction("cp is only valid as cp.async")
    bulk = m.flag("bulk")
    if bulk and m.flag("tensor"):
        return _bulk_tensor(inst, tc, m)
    if m.flag("commit_group"):
        m.finish()
        return _commit(BULK_GROUP if bulk else CP_ASYNC)
    if m.flag("wait_group"):
        read_only = m.flag("read")
        m.finish()
        n = _immediate(inst.operands[0], "wait_group's N")
        if n < 0:
            raise UnsupportedInstruction("wait_group's N must not be negative")
        return _wait(BULK_GROUP if bulk else CP_ASYNC, n, read_only and bulk)
    if not bulk and m.flag("wait_all"):
        m.finish()
        return _wait(CP_ASYNC, None)
    if not bulk and m.flag("mbarrier"):
        if not m.flag("arrive"):
            raise UnsupportedInstruction("cp.async.mbarrier needs .arrive")
        return _mbarrier_arrive(inst, tc, m)
    if bulk:
        return _bulk(inst, tc, m)
    return _cp_async(inst, tc, m)
