"""The values of the API fuzzer (fuzz/api.py): wrong ones of every sort,
right ones per argument kind of the validation layer, the pool of live and
stale handles a thread has made, and `tame`, which keeps a random call from
doing what no correct program survives either (waiting forever on a word
nobody writes, a legal launch of millions of blocks).
"""
from __future__ import annotations

import inspect
import itertools
import os
import random
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

if TYPE_CHECKING:
    from fuzz.api import Worker

PTX = r"""
.version 7.8
.target sm_90
.address_size 64

.visible .global .align 4 .u32 gvar[16];

.visible .entry fill(.param .u64 fill_param_0, .param .u32 fill_param_1)
{
    .reg .b32 %r<6>;
    .reg .b64 %rd<5>;
    ld.param.u64 %rd1, [fill_param_0];
    ld.param.u32 %r1, [fill_param_1];
    cvta.to.global.u64 %rd2, %rd1;
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mov.u32 %r4, %tid.x;
    mad.lo.s32 %r5, %r2, %r3, %r4;
    mul.wide.u32 %rd3, %r5, 4;
    add.s64 %rd4, %rd2, %rd3;
    st.global.u32 [%rd4], %r1;
    ret;
}
"""


# ---------------------------------------------------------------- wrong values
class _Evil:
    """An object whose every protocol method raises."""

    def __repr__(self) -> str:
        raise RuntimeError("repr")

    def __len__(self) -> int:
        raise RuntimeError("len")

    def __iter__(self):
        raise RuntimeError("iter")

    def __index__(self) -> int:
        raise RuntimeError("index")

    def __bool__(self) -> bool:
        raise RuntimeError("bool")

    def __fspath__(self) -> str:
        raise RuntimeError("fspath")

    def __call__(self, *a: Any) -> Any:
        raise RuntimeError("call")


class _Liar(list):
    def __len__(self) -> int:
        return 10**10


def _nested(depth: int) -> list:
    out: list = []
    for _ in range(depth):
        out = [out]
    return out


def _selfref() -> list:
    x: list = [1]
    x.append(x)
    return x


def _readonly() -> np.ndarray:
    a = np.zeros(64, np.uint8)
    a.flags.writeable = False
    return a


HUGE = 10**5000
SCALARS = (0, 1, -1, 7, 255, 2**31, 2**32, 2**63, 2**64, -2**63 - 1, 2**200, HUGE, True, False,
           0.5, float("nan"), float("inf"), -0.0, None, "", "x", "fill", "gvar", "a\x00b", "\x00", "x" * 5000,
           b"", b"\x00" * 16, b"abc", np.int64(-3), np.uint64(2**64 - 1), np.float32(1.5), np.bool_(True),
           np.int8(5), complex(1, 2), Ellipsis, NotImplemented, object, ...)
FACTORIES: tuple[Callable[[], Any], ...] = (
    lambda: np.zeros(64, np.uint8), lambda: np.array([object()] * 8, dtype=object),
    lambda: np.empty(64, dtype=object), lambda: np.arange(128, dtype=np.uint8)[::2], _readonly,
    lambda: np.zeros((8, 8), np.float32), lambda: np.zeros((8, 8), np.float32, order="F"),
    lambda: np.zeros(4, dtype=[("a", "i4"), ("b", "f8")]), lambda: np.zeros(0, np.uint8),
    lambda: np.array(5), lambda: np.zeros(4, dtype="U4"), lambda: np.zeros(4, dtype="M8[s]"),
    lambda: np.zeros(16, np.float16), lambda: np.zeros(8, np.bool_), lambda: bytearray(64),
    lambda: memoryview(bytearray(64))[::2], lambda: memoryview(b"12345678"), lambda: [], lambda: [1, 2, 3],
    lambda: [None], lambda: ["a"], lambda: [[1, 2]], lambda: list(range(300)), lambda: (1,), lambda: {"a": 1},
    lambda: {"func": 1, "gridDim": 1, "blockDim": 1}, lambda: {1, 2}, _selfref, lambda: _nested(3000),
    lambda: itertools.count(), lambda: (i for i in range(3)), _Evil, lambda: [_Evil()], _Liar,
    lambda: (lambda *a: None), lambda: (lambda *a: 1 / 0), lambda: object(), lambda: type("T", (), {})(),
)


def junk(rng: random.Random, pool: "Pool") -> Any:
    r = rng.random()
    if r < 0.4:
        return rng.choice(SCALARS)
    if r < 0.75:
        return rng.choice(FACTORIES)()
    return pool.any_handle(rng)


# ---------------------------------------------------------------- live and stale objects
class Pool:
    """The handles one thread has made (live) and destroyed (stale).

    A stale object (a destroyed stream, an unloaded module) stays unique, so
    using it must give an error. A freed address does not: the allocator
    hands it out again, and with several threads it may be another thread's
    live buffer by then, where a write is a use-after-free no runtime can
    refuse (CUDA neither). So `private_addresses` (a one-thread run) decides
    whether freed addresses are kept as stale values."""

    def __init__(self, tmpdir: str, private_addresses: bool = True) -> None:
        self.live: dict[str, list] = {}
        self.stale: list = []
        self.tmpdir = tmpdir
        self.registered: list = []       # host buffers kept alive while registered
        self.private_addresses = private_addresses

    def put(self, kind: str, obj: Any) -> None:
        if obj is not None:
            self.live.setdefault(kind, []).append(obj)

    def get(self, rng: random.Random, kind: str) -> Any:
        items = self.live.get(kind)
        if items and rng.random() < 0.9:
            return rng.choice(items)
        if self.stale and rng.random() < 0.5:
            return rng.choice(self.stale)
        return None

    def any_handle(self, rng: random.Random) -> Any:
        kinds = [k for k, v in self.live.items() if v]
        if kinds and rng.random() < 0.7:
            return rng.choice(self.live[rng.choice(kinds)])
        return rng.choice(self.stale) if self.stale else None

    def retire(self, obj: Any) -> None:
        """obj was freed or destroyed: no longer live under any kind (mcFree
        frees a managed or stream-ordered pointer as well as a mcMalloc one)."""
        found = False
        for items in self.live.values():
            keep = [x for x in items if not _same(x, obj)]
            found |= len(keep) != len(items)
            items[:] = keep
        if found:
            self._stale([obj])

    def retire_all(self) -> None:
        """After a device reset every handle is stale."""
        for items in self.live.values():
            self._stale(x for x in items if not _is_address(x) or x)
        self.live.clear()
        self.stale = self.stale[-200:]
        self.registered.clear()

    def _stale(self, objs: Any) -> None:
        self.stale.extend(x for x in objs if self.private_addresses or not _is_address(x))


def _is_address(x: Any) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, bool)


def _same(a: Any, b: Any) -> bool:
    """One handle: the same object, or the same address."""
    return a is b or (_is_address(a) and _is_address(b) and int(a) == int(b))


# outputs of successful calls that become pool entries: function -> kind
OUTPUT_KINDS = {
    "mcMalloc": "dptr", "mcMallocHost": "hptr", "mcHostAlloc": "hptr", "mcMallocManaged": "mptr",
    "mcExtMallocWithFlags": "dptr", "mcMallocAsync": "aptr", "mcMemAllocAsync": "aptr",
    "mcMallocFromPoolAsync": "aptr", "mcMemAllocFromPoolAsync": "aptr", "mcStreamCreate": "stream",
    "mcStreamCreateWithFlags": "stream", "mcStreamCreateWithPriority": "stream", "mcEventCreate": "event",
    "mcEventCreateWithFlags": "event", "mcModuleLoadData": "module", "mcModuleLoadDataEx": "module",
    "mcModuleLoad": "module", "mcModuleGetFunction": "function", "mcGetFuncBySymbol": "function",
    "mcLinkCreate": "link", "mcStreamEndCapture": "graph", "mcGraphInstantiate": "exec",
    "mcMemPoolCreate": "pool", "mcDeviceGetDefaultMemPool": "pool", "mcDeviceGetMemPool": "pool",
    "mcMemCreate": "vmm", "mcMemAddressReserve": "va",
}
FREES = {"mcFree": "dptr", "mcFreeHost": "hptr", "mcStreamDestroy": "stream", "mcEventDestroy": "event",
         "mcModuleUnload": "module", "mcLinkDestroy": "link", "mcGraphDestroy": "graph",
         "mcGraphExecDestroy": "exec", "mcMemPoolDestroy": "pool", "mcFreeAsync": "aptr", "mcMemFreeAsync": "aptr"}
JIT_ARGS = {"mcModuleLoadDataEx": 1, "mcLinkCreate": 0, "mcLinkAddData": 5, "mcLinkAddFile": 3}
BIG = 1 << 20      # allocations above this are freed at once (nothing may write megabytes by chance)


# ---------------------------------------------------------------- the functions
def functions() -> list[tuple[str, Callable, Any]]:
    """(name, function, plan or None) of every public mc* function."""
    from gpudbg.runtime import mc
    out = []
    for name in sorted(mc.__all__):
        fn = getattr(mc, name, None)
        if name.startswith("mc") and inspect.isfunction(fn):
            out.append((name, fn, getattr(fn, "_plan", None)))
    return out


class Kinds:
    """Right values for each argument kind of the validation layer."""

    def __init__(self) -> None:
        from gpudbg.runtime.api import _args as A
        self.A = A
        meta = lambda alias: alias.__metadata__[0]  # noqa: E731
        self.sizes = {meta(A.Size), meta(A.Count)}
        self.by_kind = {meta(A.Size): (0, 1, 4, 16, 64, 256), meta(A.Count): (0, 1, 2),
                        meta(A.Flags): (0, 0, 1, 2, 4), meta(A.Device): (0, 1), meta(A.OptionalDevice): (0, 1, None),
                        meta(A.DimX): (1, 1, 2), meta(A.Int32): (0, 1, -1, 32), meta(A.UInt32): (0, 1, 32),
                        meta(A.UInt64): (0, 1, 4096), meta(A.Int): (0, 1, 2, -1)}

    def value(self, rng: random.Random, kind: Any, name: str, pool: Pool, ctx: "Worker") -> Any:
        A = self.A
        if kind in self.by_kind:
            return rng.choice(self.by_kind[kind])
        if isinstance(kind, A.IntKind):
            return rng.choice((0, 1, 2))
        if isinstance(kind, A.EnumKind):
            return rng.choice(list(kind.cls))
        if isinstance(kind, A.MemoryKind):
            if kind.pointers and (not kind.buffers or rng.random() < 0.6):
                return pool.get(rng, rng.choice(("dptr", "dptr", "hptr", "mptr", "aptr"))) or 0
            return np.zeros(rng.choice((16, 64, 256)), np.uint8)
        if isinstance(kind, A.HandleKind):
            if "stream" in kind.need and rng.random() < 0.4:
                return rng.choice((None, 0, 1, 2))
            for cls, k in ctx.handle_kinds:
                if cls in kind.classes:
                    return pool.get(rng, k)
            return None
        if isinstance(kind, A.CallableKind):
            return ctx.callback if rng.random() < 0.9 else (lambda *a: 1 / 0)
        if isinstance(kind, A.IntOrCallableKind):
            return rng.choice((0, 128, lambda b: 0, lambda b: b * 4))
        if isinstance(kind, A.KernelParamsKind):
            return [pool.get(rng, "dptr") or 0, rng.randrange(100)]
        if isinstance(kind, A.LaunchListKind):
            return [{"func": pool.get(rng, "function"), "gridDim": 1, "blockDim": 32,
                     "args": [pool.get(rng, "dptr") or 0, 1], "sharedMem": 0, "stream": None}]
        if isinstance(kind, A.SequenceKind):
            if "device" in kind.need:
                return [0]
            if "option" in kind.need:
                return []
            return []
        if isinstance(kind, A.Dim3Kind):
            return rng.choice((1, 2, (2, 1, 1), (1, 1)))
        if isinstance(kind, A.PathKind):
            return rng.choice((ctx.ptx_path, ctx.ptx_path, os.path.join(pool.tmpdir, "missing.ptx"), pool.tmpdir))
        if isinstance(kind, A.SymbolKind):
            return "gvar"
        if isinstance(kind, A.KernelSymbolKind):
            return rng.choice(("fill", pool.get(rng, "function")))
        if isinstance(kind, A.NameKind):
            return rng.choice(("fill", "gvar", "nope", "k.ptx"))
        if isinstance(kind, A.ImageKind):
            return rng.choice((PTX, PTX.encode(), ".version 7.8\n.target sm_90\n.bogus"))
        if isinstance(kind, A.StructKind):
            try:
                return kind.classes[0]()
            except Exception:
                return None
        if isinstance(kind, A.LaunchExtraKind):
            return None
        return junk(rng, pool)


def tame(name: str, args: list, pool: Pool, w: "Worker") -> list | None:
    """Keep a random call from doing what a correct program would also
    never survive: waiting forever, or a legal launch of millions of blocks."""
    from gpudbg.runtime import mc
    if name in ("mcStreamWaitValue32", "mcStreamWaitValue64") and len(args) >= 4:
        # a wait on a word nobody writes blocks its stream for ever (in CUDA too): a live
        # pointer becomes the worker's own zero word, the value 0 and the op one 0 satisfies
        if _live_pointer(args[1]):
            args[1] = w.wait_word
        args[2] = 0
        if isinstance(args[3], (int, np.integer)) and not isinstance(args[3], bool) \
                and int(args[3]) & 0x3 == int(mc.mcStreamWaitValueFlags.mcStreamWaitValueAnd):
            args[3] = int(args[3]) & ~0x3
    if name in ("mcLaunchKernel", "mcLaunchCooperativeKernel") and len(args) >= 3:
        for i in (1, 2):
            if _volume(args[i]) > 4096:
                args[i] = 2
    if name == "mcModuleLaunchKernel" and len(args) >= 7:
        vols = [a if isinstance(a, int) and not isinstance(a, bool) else 1 for a in args[1:7]]
        if vols[0] * vols[1] * vols[2] > 64 or vols[3] * vols[4] * vols[5] > 1024:
            args[1:7] = [2, 1, 1, 32, 1, 1]
    if name in ("mcLaunchCooperativeKernelMultiDevice", "mcExtLaunchMultiKernelMultiDevice") and args:
        lst = args[0]
        if isinstance(lst, list):
            for p in lst:
                if isinstance(p, dict):
                    for k in ("gridDim", "blockDim"):
                        if _volume(p.get(k)) > 1024:
                            p[k] = 2
    if name == "mcStreamBeginCapture" and w.run.threads > 1 and args:
        # a capture in global mode, or one the legacy stream syncs with, legitimately makes
        # the other threads' calls fail: with threads, captures are thread-local on a
        # non-blocking stream of this thread's own
        if not (isinstance(args[0], str)):
            args[0] = w.capture_stream
        if len(args) > 1 and isinstance(args[1], (int, np.integer)) and not isinstance(args[1], bool) \
                and int(args[1]) == 0:
            args[1] = int(mc.mcStreamCaptureMode.mcStreamCaptureModeThreadLocal)
    if name in ("mcStreamAddCallback", "mcLaunchHostFunc"):
        args[:] = [a if not isinstance(a, itertools.count) else None for a in args]
    return args


def device_fault(message: str) -> bool:
    """Whether the current context's sticky error is a fault of the device
    itself: a kernel's (with its fault report) or a copy engine's access to
    memory that is not there."""
    from gpudbg.runtime import mc
    return (mc.fault_report() is not None or "Invalid __global__" in message
            or message.startswith(("POOL_FREE on", "POOL_ALLOC on")))   # a free the stream order did not allow


def waited_on(message: str) -> str:
    """For a hang: what the semaphore a channel waits on belongs to."""
    import re
    from gpudbg.driver.engine import get_engine
    m = re.search(r"semaphore (0x[0-9a-f]+)", message)
    if not m:
        return ""
    memory = get_engine().current_device().gpu.memory
    address = int(m.group(1), 16)
    a = memory.find(address)
    if a is not None:
        return f"(the semaphore is {a.kind.value} '{a.label}')"
    freed = memory.freed_record(address)
    if freed is not None:
        site = getattr(freed, "free_site", None)
        return f"(the semaphore is freed memory: {freed.kind.value} '{freed.label}'" + \
            (f", freed at {site})" if site else ")")
    return "(the semaphore is not allocated memory)"


def _live_pointer(v: Any) -> bool:
    from gpudbg.driver.engine import get_engine
    return isinstance(v, (int, np.integer)) and not isinstance(v, bool) and 0 < int(v) < 1 << 64 \
        and get_engine().resolve_pointer(int(v)) is not None


def as_int(v: Any) -> int:
    return int(v) if isinstance(v, (int, np.integer)) and not isinstance(v, bool) else 0


def jit_options(rng: random.Random) -> tuple[Any, Any, Any]:
    """(numOptions, options, optionValues): coherent, or subtly not."""
    from gpudbg.driver.types import CUjit_option
    n = rng.randrange(0, 4)
    codes = [rng.choice(list(CUjit_option)) if rng.random() < 0.9 else rng.choice((-1, 99, 2**40, "x", 1.0))
             for _ in range(n)]
    values = [rng.choice((0, 1, 32, 255, 256, -1, 2**64, HUGE, bytearray(64), np.zeros(32, np.uint8),
                          np.array([object()] * 4, dtype=object), np.zeros(8, np.float64)[::2], b"ro",
                          "s", None, [], ["a"], 1.5)) for _ in range(n)]
    if rng.random() < 0.2:
        n = n + rng.choice((1, -1, 2**31))
    return n, codes, values if rng.random() < 0.8 else tuple(values)


def _volume(d: Any) -> int:
    if isinstance(d, (int, np.integer)) and not isinstance(d, bool):
        return max(int(d), 0)
    if isinstance(d, (tuple, list)) and all(isinstance(x, (int, np.integer)) and not isinstance(x, bool) for x in d):
        v = 1
        for x in d:
            v *= max(int(x), 0)
        return v
    return 0


