"""Device runtime functions that PTX calls as external `.func`s: vprintf,
malloc, free and __assertfail here, the dynamic-parallelism calls
(`__cudaCDP2*`) in sim/device_runtime.py.

These are the simulator's equivalent of the device runtime library. They
run per lane (printf is I/O and assert is terminal, so there is nothing to
vectorize), in thread order, reading their arguments from the per-thread
`.param` storage the caller filled.
"""
from __future__ import annotations

import re

import numpy as np

from gpudbg.sim.faults import CUDBGException
from gpudbg.sim.ops.base import UnsupportedInstruction

_FMT = re.compile(r"%([-+ #0]*)(\*|\d+)?(?:\.(\*|\d+))?(hh|h|ll|l|z|j|t|L)?([diouxXeEfFgGaAcspn%])")


def _arg_values(X, idx, arg_src, i, dtype):
    kind = arg_src[i][0]
    if kind == "param":
        store = X.params[arg_src[i][1]]
        rows = store if idx is None else store[idx]
        return np.ascontiguousarray(rows[:, :dtype.itemsize]).view(dtype)[:, 0]
    reader, _ = arg_src[i][1], arg_src[i][2]
    return np.broadcast_to(np.asarray(reader(X, idx)).astype(dtype), (X.count(idx),))


def _set_return(X, idx, ret_names, values, dtype):
    if not ret_names or ret_names[0] is None:
        return
    store = X.params[ret_names[0]]
    raw = np.ascontiguousarray(np.asarray(values, dtype=dtype)).view(np.uint8).reshape(-1, dtype.itemsize)
    if idx is None:
        store[:, :dtype.itemsize] = raw
    else:
        store[idx, :dtype.itemsize] = raw


def format_printf(fmt: str, read_arg) -> str:
    """Render a C printf format; read_arg(size, kind) returns the next
    argument from the packed buffer ('i' signed, 'u' unsigned, 'f' double,
    's' string pointer, 'p' pointer)."""
    out = []
    pos = 0
    for mt in _FMT.finditer(fmt):
        out.append(fmt[pos:mt.start()])
        pos = mt.end()
        flags, width, prec, length, conv = mt.groups()
        if conv == "%":
            out.append("%")
            continue
        if width == "*":
            width = str(read_arg(4, "i"))
        if prec == "*":
            prec = str(read_arg(4, "i"))
        spec = "%" + flags + (width or "") + (("." + prec) if prec is not None else "")
        wide = length in ("l", "ll", "z", "j", "t")
        if conv in "di":
            out.append((spec + "d") % read_arg(8 if wide else 4, "i"))
        elif conv in "ouxX":
            v = read_arg(8 if wide else 4, "u")
            out.append((spec + conv) % v)
        elif conv == "c":
            out.append((spec + "c") % chr(read_arg(4, "u") & 0xFF))
        elif conv in "eEfFgGaA":
            v = read_arg(8, "f")
            out.append(float.hex(v) if conv in "aA" else (spec + conv) % v)
        elif conv == "s":
            out.append((spec + "s") % read_arg(8, "s"))
        elif conv == "p":
            out.append("0x%x" % read_arg(8, "u"))
        elif conv == "n":
            read_arg(8, "u")
    out.append(fmt[pos:])
    return "".join(out)


def builtin_call(tc, name: str, arg_src, ret_names):
    if name == "vprintf":
        return lambda X, idx: _vprintf(X, idx, arg_src, ret_names)
    if name == "malloc":
        return lambda X, idx: _malloc(X, idx, arg_src, ret_names)
    if name == "free":
        return lambda X, idx: _free(X, idx, arg_src)
    if name in ("__assertfail", "__assert_fail"):
        return lambda X, idx: _assertfail(X, idx, arg_src)
    from gpudbg.sim import device_runtime
    fn = device_runtime.FUNCTIONS.get(name)
    if fn is not None:
        return lambda X, idx: fn(X, idx, arg_src, ret_names)
    raise UnsupportedInstruction(f"device runtime function {name} is not supported")


def _vprintf(X, idx, arg_src, ret_names):
    u64 = np.dtype(np.uint64)
    fmts = _arg_values(X, idx, arg_src, 0, u64)
    bufs = _arg_values(X, idx, arg_src, 1, u64)
    slots = X.all_slots if idx is None else idx
    order = np.argsort(X.thread_order_key(slots), kind="stable")
    counts = np.zeros(len(slots), dtype=np.int32)
    for i in order:
        slot = int(slots[i])
        fmt = X.read_cstring(slot, int(fmts[i]))
        cursor = [int(bufs[i])]

        def read_arg(size, kind, slot=slot, cursor=cursor):
            addr = (cursor[0] + size - 1) // size * size
            cursor[0] = addr + size
            raw = X.read_generic(slot, addr, size)
            if kind == "f":
                return float(np.frombuffer(raw, np.float64)[0])
            if kind == "i":
                return int(np.frombuffer(raw, {4: np.int32, 8: np.int64}[size])[0])
            v = int(np.frombuffer(raw, {4: np.uint32, 8: np.uint64}[size])[0])
            if kind == "s":
                return X.read_cstring(slot, v) if v else "(null)"
            return v
        text = format_printf(fmt, read_arg)
        X.emit_printf(text)
        counts[i] = len(text)
    _set_return(X, idx, ret_names, counts, np.dtype(np.int32))


def _malloc(X, idx, arg_src, ret_names):
    sizes = _arg_values(X, idx, arg_src, 0, np.dtype(np.uint64))
    slots = X.all_slots if idx is None else idx
    order = np.argsort(X.thread_order_key(slots), kind="stable")
    out = np.zeros(len(slots), dtype=np.uint64)
    out[order] = X.heap.malloc(sizes[order])
    _set_return(X, idx, ret_names, out, np.dtype(np.uint64))


def _free(X, idx, arg_src):
    ptrs = _arg_values(X, idx, arg_src, 0, np.dtype(np.uint64))
    try:
        X.heap.free(ptrs[ptrs != 0])
    except Exception as e:
        from gpudbg.sim.faults import LaneFault
        raise LaneFault(CUDBGException.CUDBG_EXCEPTION_LANE_ILLEGAL_ADDRESS, f"device free: {e}", 0) from None


def _assertfail(X, idx, arg_src):
    from gpudbg.sim.faults import LaneFault
    u64 = np.dtype(np.uint64)
    msgs = _arg_values(X, idx, arg_src, 0, u64)
    files = _arg_values(X, idx, arg_src, 1, u64)
    lines = _arg_values(X, idx, arg_src, 2, np.dtype(np.uint32))
    funcs = _arg_values(X, idx, arg_src, 3, u64)
    slots = X.all_slots if idx is None else idx
    order = np.argsort(X.thread_order_key(slots), kind="stable")
    first = None
    for i in order:
        slot = int(slots[i])
        msg = X.read_cstring(slot, int(msgs[i]))
        file = X.read_cstring(slot, int(files[i]))
        func = X.read_cstring(slot, int(funcs[i]))
        b, t = X.block_idx_of(slot), X.thread_idx_of(slot)
        text = (f"{file}:{int(lines[i])}: {func}: block: [{b[0]},{b[1]},{b[2]}], "
                f"thread: [{t[0]},{t[1]},{t[2]}] Assertion `{msg}` failed.\n")
        X.emit_printf(text)
        if first is None:
            first = (int(i), msg, file, int(lines[i]))
    i, msg, file, line = first
    raise LaneFault(CUDBGException.CUDBG_EXCEPTION_WARP_ASSERT,
                    f"Assertion `{msg}` failed at {file}:{line}", i)
