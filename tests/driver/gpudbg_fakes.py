"""Test doubles for the driver tests: kernels described like the loader's
KernelFunction, and an executor that runs Python behaviours instead of PTX,
so ring, fence and stream machinery is tested without the simulator's SMs."""
from __future__ import annotations

import itertools
import struct
import threading
from dataclasses import dataclass, field

from gpudbg.driver.module import Module
from gpudbg.sim.faults import CUDBGException, FaultReport, HangKind, KernelFault
from gpudbg.sim.loader import KernelParam

_addr = itertools.count(0x5000_0000, 0x100)
SIZES = {"u32": 4, "s32": 4, "f32": 4, "u64": 8, "s64": 8, "f64": 8, "u16": 2, "u8": 1, "b8": 1}


@dataclass
class FakeKernel:
    name: str
    params: list
    param_size: int
    num_regs: int = 16
    static_shared: int = 0
    local_size: int = 0
    max_threads_per_block: int = 1024
    code_address: int = field(default_factory=lambda: next(_addr))


def make_kernel(name: str, *types: str, **kw) -> FakeKernel:
    params, off = [], 0
    for i, t in enumerate(types):
        base, _, count = t.partition("[")
        size = SIZES[base] * (int(count[:-1]) if count else 1)
        align = min(SIZES[base], 8) if not count else 8
        off = -(-off // align) * align
        params.append(KernelParam(f"{name}_param_{i}", base, size, align, off))
        off += size
    return FakeKernel(name, params, off, **kw)


@dataclass
class FakeLoaded:
    functions: dict
    globals: dict = field(default_factory=dict)
    unloaded: bool = False

    def unload(self) -> None:
        self.unloaded = True


def launch_command(gpu, kernel: FakeKernel, grid_id: int):
    """A LAUNCH command of `kernel` (one block of 32 threads, no
    parameters) for a front end fed by hand, its descriptor in the GPU's
    memory."""
    from gpudbg.driver import commands as C
    from gpudbg.sim.memory.spaces import AllocationKind
    gpu.register_function(kernel)
    d = gpu.memory.alloc(C.DESCRIPTOR_BYTES, AllocationKind.LAUNCH)
    d.data[:] = list(C.encode_descriptor(
        code_address=kernel.code_address, grid_x=1, grid_y=1, grid_z=1, block_x=32, block_y=1,
        block_z=1, shared_bytes=0, param_address=0, param_size=0, grid_id=grid_id, host_tid=0))
    return C.make(C.Opcode.LAUNCH, descriptor=d.base)


def fake_module(ctx, *kernels: FakeKernel, globals_: dict | None = None) -> Module:
    m = Module(ctx, FakeLoaded({k.name: k for k in kernels}, globals_ or {}), "fake")
    ctx.modules.append(m)
    return m


def report(kind=CUDBGException.CUDBG_EXCEPTION_WARP_ILLEGAL_ADDRESS, hang=None) -> FaultReport:
    return FaultReport(kind=kind, message="injected fault", kernel="boom", function="boom", pc=0x10,
                       instruction="ld.global.u32 %r1, [%rd1]", ptx_line=7, ptx_file="fake.ptx",
                       hang=hang)


class FakeExecutor:
    """Behaviours by kernel name:
    store(ptr u64, value u32): writes value at ptr;
    gated(ptr, value): waits for `gate`, then stores;
    boom(): raises KernelFault; hang(): raises a hang fault;
    hello(): emits printf records; crash(): raises a plain exception."""

    def __init__(self) -> None:
        self.calls: list[tuple] = []
        self.gate = threading.Event()
        self.fault_kind = CUDBGException.CUDBG_EXCEPTION_WARP_ILLEGAL_ADDRESS

    def __call__(self, gpu, function, grid, block, shared, params, grid_id):
        self.calls.append((function.name, grid, block, shared, params, grid_id))
        name = function.name
        if name in ("store", "gated"):
            if name == "gated":
                assert self.gate.wait(10), "test gate never opened"
            ptr, value = struct.unpack_from("<QI", params)
            gpu.memory.write(ptr, struct.pack("<I", value))
        elif name == "boom":
            raise KernelFault(report(self.fault_kind))
        elif name == "hang":
            raise KernelFault(report(CUDBGException.CUDBG_EXCEPTION_NONE, HangKind.BARRIER_DEADLOCK))
        elif name == "hello":
            gpu.printf_buffer.extend([f"hello from grid {grid_id}\n", "second line\n"])
        elif name == "crash":
            raise RuntimeError("simulator bug")
        return None


KERNELS = lambda: [make_kernel("store", "u64", "u32"), make_kernel("gated", "u64", "u32"),  # noqa: E731
                   make_kernel("boom"), make_kernel("hang"), make_kernel("hello"),
                   make_kernel("crash")]


# ------------------------------------------------------------------ fixtures
import pytest  # noqa: E402

from gpudbg.driver.engine import get_engine, reset_engine  # noqa: E402
from gpudbg.runtime import mc  # noqa: E402


@pytest.fixture
def fake():
    """A fresh engine (2 devices) whose GPUs run FakeExecutor."""
    ex = FakeExecutor()
    reset_engine(num_devices=2, executor=ex)
    mc.mcGetLastError()
    yield ex
    ex.gate.set()
    reset_engine()
    mc.mcGetLastError()


@pytest.fixture
def kernels(fake):
    ctx = get_engine().current_context()
    m = fake_module(ctx, *KERNELS())
    return dict(m.functions)


@pytest.fixture
def real():
    """A fresh engine with the real executor."""
    reset_engine(num_devices=1)
    mc.mcGetLastError()
    yield
    reset_engine()
    mc.mcGetLastError()


class Hold:
    """Blocks a stream on the GPU (SEM_ACQUIRE of a host-written semaphore)
    until release(): an in-flight dependency that does not occupy the
    device thread. Shared by the driver and runtime stream tests."""

    def __init__(self, stream=None):
        import numpy as np

        from gpudbg.driver.engine import get_engine
        from gpudbg.sim.memory.spaces import AllocationKind
        self._np = np
        ctx = get_engine().current_context()
        self.gpu = ctx.gpu
        self.sem = self.gpu.alloc_internal(8, AllocationKind.SEMAPHORE, "test hold")
        ctx.stream(stream).wait_for(self.sem.base, 1)

    def release(self):
        with self.gpu.cv:
            self.sem.data[:8].view(self._np.uint64)[0] = 1
            self.gpu.cv.notify_all()
