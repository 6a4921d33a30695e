"""Dynamic parallelism (CUDA 12's CDP2): the device runtime functions a
kernel calls to launch kernels, and the order the launched grids run in.

nvcc and NVRTC (with -rdc=true) turn `child<<<g, b, s, stream>>>(args)` in
device code into calls of the device runtime's `__cudaCDP2*` functions:
GetParameterBufferV2 hands out a buffer for the child's parameters, the
kernel stores them at the child's `.param` offsets, LaunchDeviceV2 queues
the launch. Streams are the NULL stream of the launching block, streams
made by StreamCreateWithFlags, and the two CDP2 special streams:
cudaStreamTailLaunch (0x3) and cudaStreamFireAndForget (0x4).

The one idea: CDP2 gives a parent no way to wait for its children (the
device-side cudaDeviceSynchronize is gone), and a parent grid only
completes once every child has, so running the children after the
parent's last wave, before the parent is reported finished, is one legal
schedule, and a deterministic one: first the children of every stream in
the order they were launched (NULL-stream children of a block in order, as
CUDA requires), then the tail launches, in order. A child's own children
run at its end in the same way, up to CUDA's nesting depth of 24
(cudaErrorLaunchMaxDepthExceeded beyond it, returned by the launch call);
more pending launches than cudaLimitDevRuntimePendingLaunchCount is
cudaErrorLaunchPendingCountExceeded. Errors are per thread, read by
cudaGetLastError/cudaPeekAtLastError as on the device.

It does not run a child concurrently with its parent (a parent spinning on
a flag its child sets would wait for ever here; CUDA does not promise that
either), and it implements only the device runtime calls listed in
FUNCTIONS: a module calling another one fails to load, naming it.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from gpudbg.sim import launch_limits
from gpudbg.sim.faults import CUDBGException, LaneFault
from gpudbg.sim.memory import AccessFault
from gpudbg.sim.memory.spaces import AllocationKind, OutOfMemory
from gpudbg.sim.ops.builtins import _set_return

MAX_NESTING_DEPTH = 24            # CUDA: a launch from depth 24 fails

STREAM_NULL = 0
STREAM_TAIL_LAUNCH = 0x3          # cudaStreamTailLaunch
STREAM_FIRE_AND_FORGET = 0x4      # cudaStreamFireAndForget
_FIRST_STREAM_HANDLE = 0x1000     # handles of streams the device creates


class DeviceRuntimeStatus(enum.IntEnum):
    """The cudaError_t values the device runtime returns (CUDA's numbers)."""

    cudaSuccess = 0
    cudaErrorInvalidValue = 1
    cudaErrorMemoryAllocation = 2
    cudaErrorInvalidConfiguration = 9
    cudaErrorLaunchMaxDepthExceeded = 65
    cudaErrorLaunchPendingCountExceeded = 69
    cudaErrorInvalidDeviceFunction = 98
    cudaErrorInvalidResourceHandle = 400


S = DeviceRuntimeStatus


@dataclass
class ChildLaunch:
    """One launch a kernel queued."""

    function: Any
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    shared: int
    params: bytes
    stream: int
    parent_grid_id: int
    parent_block: tuple[int, int, int]
    parent_thread: tuple[int, int, int]


@dataclass
class _Buffer:
    function: Any
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    shared: int
    allocation: Any


class DeviceLaunches:
    """The device runtime state of one grid: parameter buffers handed out,
    launches queued, streams made, and each thread's last error."""

    def __init__(self, gpu: Any, grid_id: int, depth: int):
        self.gpu = gpu
        self.grid_id = grid_id
        self.depth = depth
        self.buffers: dict[int, _Buffer] = {}
        self.queued: list[ChildLaunch] = []
        self.tail: list[ChildLaunch] = []
        self.streams: set[int] = set()
        self._next_stream = _FIRST_STREAM_HANDLE
        self.errors: dict[tuple, int] = {}

    @property
    def pending_limit(self) -> int:
        return int(getattr(self.gpu, "pending_launch_count", launch_limits.DEFAULT_PENDING_LAUNCH_COUNT))

    def release(self) -> None:
        """Free the parameter buffers (the children have run, or will not)."""
        for b in self.buffers.values():
            self.gpu.free_internal(b.allocation)
        self.buffers.clear()

    def children(self) -> list[ChildLaunch]:
        """The launches to run after the grid, in the order they run."""
        return self.queued + self.tail


def of(X: Any) -> DeviceLaunches:
    """The device runtime state of the grid wave X belongs to."""
    d = getattr(X, "device_launches", None)
    if d is None:   # a wave run outside launch_grid (tests): a grid of its own
        d = X.device_launches = DeviceLaunches(X.gpu, X.grid_id, 0)
    return d


# ------------------------------------------------------------------ per-lane helpers
def _lanes(X: Any, idx: Any) -> np.ndarray:
    return X.all_slots if idx is None else np.asarray(idx)


def _raw(X: Any, idx: Any, arg_src: Any, i: int, nbytes: int) -> np.ndarray:
    """Argument i's first `nbytes` bytes per lane (a (lanes, nbytes) array)."""
    kind = arg_src[i][0]
    if kind == "param":
        store = X.params[arg_src[i][1]]
        rows = store if idx is None else store[idx]
        return np.ascontiguousarray(rows[:, :nbytes])
    v = np.broadcast_to(np.asarray(arg_src[i][1](X, idx)), (X.count(idx),))
    dt = np.dtype(f"<u{nbytes}") if nbytes in (1, 2, 4, 8) else None
    if dt is None:
        raise ValueError(f"argument {i} of {nbytes} bytes cannot come from a register")
    return np.ascontiguousarray(v.astype(dt)).view(np.uint8).reshape(-1, nbytes)


def _u(X, idx, arg_src, i, nbytes=8) -> np.ndarray:
    return _raw(X, idx, arg_src, i, nbytes).view(np.dtype(f"<u{nbytes}"))[:, 0]


def _dim3(X, idx, arg_src, i) -> np.ndarray:
    return _raw(X, idx, arg_src, i, 12).view("<u4").reshape(-1, 3)


def _thread_key(X, slot: int) -> tuple:
    return (tuple(X.block_idx_of(slot)), tuple(X.thread_idx_of(slot)))


def _write_generic(X, lane: int, slot: int, address: int, data: bytes) -> None:
    """Store through a generic pointer argument (a precise fault if bad)."""
    from gpudbg.sim.memory import LOCAL_WINDOW_BASE, SHARED_WINDOW_BASE, WINDOW_SIZE
    try:
        if SHARED_WINDOW_BASE <= address < SHARED_WINDOW_BASE + WINDOW_SIZE:
            X.smem.write(int(X.layout.block_of[slot]), address - SHARED_WINDOW_BASE, data)
        elif LOCAL_WINDOW_BASE <= address < LOCAL_WINDOW_BASE + WINDOW_SIZE:
            X.lmem.write(slot, address - LOCAL_WINDOW_BASE, data)
        else:
            X.gmem.write(address, np.frombuffer(data, np.uint8))
    except AccessFault as e:
        raise e.relane(lane) from None
    except (ValueError, IndexError) as e:
        raise LaneFault(CUDBGException.CUDBG_EXCEPTION_LANE_ILLEGAL_ADDRESS,
                        f"device runtime: cannot write {len(data)} bytes at 0x{address:x}: {e}", lane) from None


def _in_thread_order(X, idx) -> list[tuple[int, int]]:
    """(lane index, slot) pairs in (block, thread) order, as the calls are
    made one thread after another."""
    slots = _lanes(X, idx)
    order = np.argsort(X.thread_order_key(slots), kind="stable")
    return [(int(i), int(slots[i])) for i in order]


# ------------------------------------------------------------------ the functions
def _config_error(gpu: Any, function: Any, grid, block, shared: int) -> str | None:
    m = gpu.model
    if min(grid) < 1 or any(g > lim for g, lim in zip(grid, m.max_grid_dims)):
        return f"grid {tuple(grid)} is outside 1..{m.max_grid_dims}"
    if min(block) < 1 or any(b > lim for b, lim in zip(block, m.max_block_dims)) \
            or block[0] * block[1] * block[2] > m.max_threads_per_block:
        return f"block {tuple(block)} has more than {m.max_threads_per_block} threads or exceeds {m.max_block_dims}"
    if function.static_shared + shared > m.shared_per_block_optin:
        return f"{function.static_shared + shared} bytes of shared memory exceed {m.shared_per_block_optin}"
    return None


def _param_bytes(function: Any) -> int:
    return max((p.offset + p.size for p in function.params), default=0)


def _new_buffer(X, d: DeviceLaunches, function, grid, block, shared) -> tuple[int, int]:
    """(buffer address, status) for one GetParameterBuffer call."""
    if function is None:
        return 0, S.cudaErrorInvalidDeviceFunction
    if _config_error(X.gpu, function, grid, block, shared) is not None:
        return 0, S.cudaErrorInvalidConfiguration
    try:
        a = X.gpu.alloc_internal(max(_param_bytes(function), 8), AllocationKind.DEVICE_LAUNCH,
                                 f"parameter buffer for {function.name} (device launch)", align=64)
    except OutOfMemory:
        return 0, S.cudaErrorMemoryAllocation
    d.buffers[a.base] = _Buffer(function, tuple(grid), tuple(block), int(shared), a)
    return a.base, S.cudaSuccess


def _kernel_at(X, address: int) -> Any:
    f = X.gpu.functions.get(int(address))
    return f if f is not None and getattr(f, "params", None) is not None else None


def get_parameter_buffer_v2(X, idx, arg_src, ret_names) -> None:
    d = of(X)
    funcs, grids, blocks = _u(X, idx, arg_src, 0), _dim3(X, idx, arg_src, 1), _dim3(X, idx, arg_src, 2)
    shared = _u(X, idx, arg_src, 3, 4)
    out = np.zeros(X.count(idx), np.uint64)
    for i, slot in _in_thread_order(X, idx):
        addr, status = _new_buffer(X, d, _kernel_at(X, funcs[i]), tuple(int(v) for v in grids[i]),
                                   tuple(int(v) for v in blocks[i]), int(shared[i]))
        out[i] = addr
        if status:
            d.errors[_thread_key(X, slot)] = int(status)
    _set_return(X, idx, ret_names, out, np.dtype(np.uint64))


def get_parameter_buffer(X, idx, arg_src, ret_names) -> None:
    """The CDP1-style call (alignment, size): the kernel is named only at
    LaunchDevice, so the buffer is plain device-launch memory."""
    d = of(X)
    sizes = _u(X, idx, arg_src, 1)
    out = np.zeros(X.count(idx), np.uint64)
    for i, slot in _in_thread_order(X, idx):
        try:
            a = X.gpu.alloc_internal(max(int(sizes[i]), 8), AllocationKind.DEVICE_LAUNCH,
                                     "parameter buffer (device launch)", align=64)
        except OutOfMemory:
            d.errors[_thread_key(X, slot)] = int(S.cudaErrorMemoryAllocation)
            continue
        d.buffers[a.base] = _Buffer(None, (0, 0, 0), (0, 0, 0), 0, a)
        out[i] = a.base
    _set_return(X, idx, ret_names, out, np.dtype(np.uint64))


def _queue(X, d: DeviceLaunches, slot: int, buf_addr: int, stream: int, override=None) -> int:
    buf = d.buffers.get(buf_addr)
    if buf is None:
        return S.cudaErrorInvalidValue
    function, grid, block, shared = override if override is not None else \
        (buf.function, buf.grid, buf.block, buf.shared)
    if function is None:
        return S.cudaErrorInvalidDeviceFunction
    if override is not None and _config_error(X.gpu, function, grid, block, shared) is not None:
        return S.cudaErrorInvalidConfiguration
    if stream not in (STREAM_NULL, STREAM_TAIL_LAUNCH, STREAM_FIRE_AND_FORGET) and stream not in d.streams:
        return S.cudaErrorInvalidResourceHandle
    if d.depth + 1 >= MAX_NESTING_DEPTH:
        return S.cudaErrorLaunchMaxDepthExceeded
    if len(d.queued) + len(d.tail) >= d.pending_limit:
        return S.cudaErrorLaunchPendingCountExceeded
    params = bytes(X.gmem.read(buf_addr, _param_bytes(function))) if function.params else b""
    child = ChildLaunch(function, tuple(grid), tuple(block), int(shared), params, stream, X.grid_id,
                        tuple(X.block_idx_of(slot)), tuple(X.thread_idx_of(slot)))
    (d.tail if stream == STREAM_TAIL_LAUNCH else d.queued).append(child)
    return S.cudaSuccess


def launch_device_v2(X, idx, arg_src, ret_names) -> None:
    d = of(X)
    bufs, streams = _u(X, idx, arg_src, 0), _u(X, idx, arg_src, 1)
    out = np.zeros(X.count(idx), np.uint32)
    for i, slot in _in_thread_order(X, idx):
        out[i] = _queue(X, d, slot, int(bufs[i]), int(streams[i]))
        if out[i]:
            d.errors[_thread_key(X, slot)] = int(out[i])
    _set_return(X, idx, ret_names, out, np.dtype(np.uint32))


def launch_device(X, idx, arg_src, ret_names) -> None:
    """(func, parameterBuffer, gridDim, blockDim, sharedMem, stream)."""
    d = of(X)
    funcs, bufs = _u(X, idx, arg_src, 0), _u(X, idx, arg_src, 1)
    grids, blocks = _dim3(X, idx, arg_src, 2), _dim3(X, idx, arg_src, 3)
    shared, streams = _u(X, idx, arg_src, 4, 4), _u(X, idx, arg_src, 5)
    out = np.zeros(X.count(idx), np.uint32)
    for i, slot in _in_thread_order(X, idx):
        f = _kernel_at(X, funcs[i])
        cfg = (f, tuple(int(v) for v in grids[i]), tuple(int(v) for v in blocks[i]), int(shared[i]))
        out[i] = _queue(X, d, slot, int(bufs[i]), int(streams[i]), override=cfg)
        if out[i]:
            d.errors[_thread_key(X, slot)] = int(out[i])
    _set_return(X, idx, ret_names, out, np.dtype(np.uint32))


def stream_create_with_flags(X, idx, arg_src, ret_names) -> None:
    d = of(X)
    ptrs, flags = _u(X, idx, arg_src, 0), _u(X, idx, arg_src, 1, 4)
    out = np.zeros(X.count(idx), np.uint32)
    for i, slot in _in_thread_order(X, idx):
        if int(flags[i]) & ~1:     # cudaStreamDefault / cudaStreamNonBlocking only
            out[i] = S.cudaErrorInvalidValue
        elif int(ptrs[i]) == 0:
            out[i] = S.cudaErrorInvalidValue
        else:
            handle = d._next_stream
            d._next_stream += 1
            d.streams.add(handle)
            _write_generic(X, i, slot, int(ptrs[i]), int(handle).to_bytes(8, "little"))
        if out[i]:
            d.errors[_thread_key(X, slot)] = int(out[i])
    _set_return(X, idx, ret_names, out, np.dtype(np.uint32))


def stream_destroy(X, idx, arg_src, ret_names) -> None:
    """A destroyed stream's launches still run (CUDA: destroying a stream
    does not cancel its work); the handle is no longer accepted."""
    d = of(X)
    handles = _u(X, idx, arg_src, 0)
    out = np.zeros(X.count(idx), np.uint32)
    for i, slot in _in_thread_order(X, idx):
        if int(handles[i]) in d.streams:
            d.streams.discard(int(handles[i]))
        else:
            out[i] = S.cudaErrorInvalidResourceHandle
            d.errors[_thread_key(X, slot)] = int(out[i])
    _set_return(X, idx, ret_names, out, np.dtype(np.uint32))


def _last_error(clear: bool) -> Callable:
    def run(X, idx, arg_src, ret_names) -> None:
        d = of(X)
        out = np.zeros(X.count(idx), np.uint32)
        for i, slot in _in_thread_order(X, idx):
            key = _thread_key(X, slot)
            out[i] = d.errors.pop(key, 0) if clear else d.errors.get(key, 0)
        _set_return(X, idx, ret_names, out, np.dtype(np.uint32))
    return run


def get_device(X, idx, arg_src, ret_names) -> None:
    ptrs = _u(X, idx, arg_src, 0)
    for i, slot in _in_thread_order(X, idx):
        _write_generic(X, i, slot, int(ptrs[i]), int(getattr(X.gpu, "ordinal", 0)).to_bytes(4, "little"))
    _set_return(X, idx, ret_names, np.zeros(X.count(idx), np.uint32), np.dtype(np.uint32))


FUNCTIONS: dict[str, Callable] = {
    "__cudaCDP2GetParameterBufferV2": get_parameter_buffer_v2,
    "__cudaCDP2GetParameterBuffer": get_parameter_buffer,
    "__cudaCDP2LaunchDeviceV2": launch_device_v2,
    "__cudaCDP2LaunchDeviceV2_ptsz": launch_device_v2,
    "__cudaCDP2LaunchDevice": launch_device,
    "__cudaCDP2LaunchDevice_ptsz": launch_device,
    "__cudaCDP2StreamCreateWithFlags": stream_create_with_flags,
    "__cudaCDP2StreamDestroy": stream_destroy,
    "__cudaCDP2GetLastError": _last_error(clear=True),
    "__cudaCDP2PeekAtLastError": _last_error(clear=False),
    "__cudaCDP2GetDevice": get_device,
}


def run_children(gpu: Any, d: DeviceLaunches, launch: Callable) -> None:
    """Run the grid's children in their order (module docstring), each
    through `launch(function, grid, block, shared, params, parent)`, then
    free the parameter buffers."""
    try:
        for child in d.children():
            launch(child, d.depth + 1)
    finally:
        d.release()
