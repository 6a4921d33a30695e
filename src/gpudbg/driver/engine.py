"""Process-global driver state: initialization, devices, and the context
that the calling thread is using.

Lazy, as seed 003 §3 describes: `init()` only enumerates devices (their
DeviceModel), creating no GPU and no context; a device's SimGPU (memory plus
its device thread) appears when its primary context is first needed, and the
primary context is retained on first use. The current context is per host
thread (a stack); the runtime's "current device" is the device of the top
of that stack, or the device chosen by set_device before any context
exists. The default-stream mode (legacy or per-thread, seed 002 §1.1) is
fixed at init from GPUDBG_DEFAULT_STREAM or the engine option. A process
has one Engine (`get_engine()`); tests replace it with `reset_engine()` to
inject a fake executor or more devices.
"""
from __future__ import annotations

import os
import threading
from typing import Any, Callable

from gpudbg.sim import debug_port
from gpudbg.driver.context import Context, ThreadState
from gpudbg.driver.memory import UVARegistry
from gpudbg.driver.status import CUresult, EngineError
from gpudbg.sim.device_model import DeviceModel
from gpudbg.sim.gpu import SimGPU
from gpudbg.sim.memory.host_mapping import HostReservationError

DRIVER_VERSION = 12080   # 1000*major + 10*minor: the CUDA 12.8 feature level
RUNTIME_VERSION = 12080
CUDA_DRIVER_VERSION = 13000   # what the drop-in libcuda.so.1 reports: its clients are CUDA 13 programs
MAX_DEVICES = 16


class Device:
    def __init__(self, ordinal: int, model: DeviceModel, engine: "Engine"):
        self.ordinal = ordinal
        self.model = model
        self.engine = engine
        self._gpu: SimGPU | None = None
        self.primary: Context | None = None
        self.primary_retains = 0        # cuDevicePrimaryCtxRetain count (driver API)
        self.runtime_holds = False      # the runtime API uses the primary context (its implicit retain)
        self.created: list[Context] = []   # contexts made by cuCtxCreate, until destroyed
        self.lock = threading.RLock()

    @property
    def gpu(self) -> SimGPU:
        with self.lock:
            if self._gpu is None:
                try:
                    self._gpu = SimGPU(self.model, self.ordinal, executor=self.engine.executor)
                except HostReservationError as e:   # the device address range is taken in this process
                    raise EngineError(CUresult.CUDA_ERROR_OPERATING_SYSTEM, str(e)) from None
                self.engine.uva.add_gpu(self._gpu)
            return self._gpu

    @property
    def gpu_started(self) -> bool:
        return self._gpu is not None

    def primary_context(self) -> Context:
        with self.lock:
            if self.primary is None or self.primary.destroyed:
                self.primary = Context(self, self.engine)
                self.primary.is_primary = True
            return self.primary

    @property
    def primary_active(self) -> bool:
        return self.primary is not None and not self.primary.destroyed

    def retain_primary(self) -> Context:
        """cuDevicePrimaryCtxRetain: the primary context, made on first use."""
        with self.lock:
            ctx = self.primary_context()
            self.primary_retains += 1
            return ctx

    def release_primary(self) -> None:
        """cuDevicePrimaryCtxRelease: the last release destroys the primary
        context, unless the runtime API still uses it."""
        with self.lock:
            if self.primary_retains <= 0:
                raise EngineError(CUresult.CUDA_ERROR_INVALID_CONTEXT,
                                  f"the primary context of device {self.ordinal} is not retained")
            self.primary_retains -= 1
            if self.primary_retains == 0 and not self.runtime_holds:
                self.reset()

    def create_context(self, flags: int) -> Context:
        """cuCtxCreate: a context of its own (not the primary one)."""
        with self.lock:
            ctx = Context(self, self.engine, flags)
            self.created.append(ctx)
            return ctx

    def destroy_context(self, ctx: Context) -> None:
        with self.lock:
            if ctx in self.created:
                self.created.remove(ctx)
        ctx.destroy()

    def reset(self) -> None:
        """Destroy the primary context; the next use creates a fresh one."""
        with self.lock:
            if self.primary is not None:
                self.primary.destroy()
                self.primary = None

    def __repr__(self) -> str:
        return f"<mcDevice {self.ordinal}: {self.model.name}>"


def _device_count_from_env() -> int:
    raw = os.environ.get("GPUDBG_DEVICES", os.environ.get("GPUDBG_SIM_DEVICES", "1"))
    try:
        n = int(raw)
    except ValueError:
        raise EngineError(CUresult.CUDA_ERROR_NOT_INITIALIZED,
                          f"GPUDBG_DEVICES={raw!r} is not an integer") from None
    if not 0 <= n <= MAX_DEVICES:
        raise EngineError(CUresult.CUDA_ERROR_NOT_INITIALIZED,
                          f"GPUDBG_DEVICES={n} must be between 0 and {MAX_DEVICES}")
    return n


def _default_stream_from_env() -> bool:
    """GPUDBG_DEFAULT_STREAM=legacy|per-thread: seed 002 §1.1.1's compile-time
    switch (--default-stream), fixed per program, so read once at init."""
    return _parse_default_stream(os.environ.get("GPUDBG_DEFAULT_STREAM", "legacy"), "GPUDBG_DEFAULT_STREAM")


def _parse_default_stream(raw: str, source: str) -> bool:
    value = raw.strip().lower()
    if value in ("legacy", "null", ""):
        return False
    if value == "per-thread":
        return True
    raise EngineError(CUresult.CUDA_ERROR_NOT_INITIALIZED,
                      f"{source}={raw!r} must be 'legacy', 'null' or 'per-thread'")


class Engine:
    def __init__(self, num_devices: int | None = None, executor: Callable[..., Any] | None = None,
                 model: DeviceModel | None = None, default_stream: str | None = None):
        self._num_devices = num_devices
        self._default_stream = default_stream
        self.per_thread_default_stream = False   # decided by init()
        self.executor = executor
        self.model = model or DeviceModel()
        self.devices: list[Device] = []
        self.initialized = False
        self.uva = UVARegistry()
        self.threads = ThreadState()
        self.lock = threading.RLock()
        # every context's first device fault, kept after the context is
        # destroyed (tools report faults a program reset away)
        self.fault_log: list[tuple[Any, Any]] = []

    # ------------------------------------------------------------ init
    def init(self, flags: int = 0) -> None:
        if flags != 0:
            raise EngineError(CUresult.CUDA_ERROR_INVALID_VALUE, f"init flags must be 0, got {flags!r}")
        with self.lock:
            if self.initialized:
                return
            n = self._num_devices if self._num_devices is not None else _device_count_from_env()
            self.per_thread_default_stream = (
                _default_stream_from_env() if self._default_stream is None
                else _parse_default_stream(self._default_stream, "default_stream"))
            self.devices = [Device(i, self.model.for_ordinal(i), self) for i in range(n)]
            self.initialized = True

    def ensure_init(self) -> None:
        if not self.initialized:
            self.init(0)

    # ------------------------------------------------------------ devices
    def device_count(self) -> int:
        self.ensure_init()
        return len(self.devices)

    def device(self, ordinal: Any) -> Device:
        self.ensure_init()
        if not self.devices:
            raise EngineError(CUresult.CUDA_ERROR_NO_DEVICE, "no simulated devices (GPUDBG_SIM_DEVICES=0)")
        if isinstance(ordinal, bool) or not isinstance(ordinal, int) \
                or not 0 <= ordinal < len(self.devices):
            raise EngineError(CUresult.CUDA_ERROR_INVALID_DEVICE,
                              f"device {ordinal!r} is not in 0..{len(self.devices) - 1}")
        return self.devices[ordinal]

    # ------------------------------------------------------------ current context
    def current_device(self) -> Device:
        st = self.threads
        if st.stack and not st.stack[-1].destroyed:
            return st.stack[-1].device
        return self.device(st.device if st.device is not None else 0)

    def set_device(self, ordinal: int) -> None:
        dev = self.device(ordinal)
        st = self.threads
        if st.stack and st.stack[-1] is st.stack[-1].device.primary:
            st.stack.pop()
        st.device = dev.ordinal

    def current_context(self) -> Context:
        """The calling thread's context, retaining the primary one on first use."""
        st = self.threads
        if st.stack:
            top = st.stack[-1]
            if not top.destroyed:
                return top
            st.stack.pop()
            st.device = top.device.ordinal
        dev = self.current_device()
        ctx = dev.primary_context()
        dev.runtime_holds = True
        st.stack.append(ctx)
        return ctx

    def push_context(self, ctx: Context) -> None:
        self.threads.stack.append(ctx)
        debug_port.notify("context_event", ctx.gpu, "push", ctx.id)

    def pop_context(self) -> Context:
        if not self.threads.stack:
            raise EngineError(CUresult.CUDA_ERROR_INVALID_VALUE, "the context stack is empty")
        ctx = self.threads.stack.pop()
        debug_port.notify("context_event", ctx.gpu, "pop", ctx.id)
        return ctx

    def reset_device(self) -> None:
        dev = self.current_device()
        dev.reset()
        dev.runtime_holds = False
        st = self.threads
        st.stack = [c for c in st.stack if not c.destroyed]
        st.device = dev.ordinal

    def resolve_pointer(self, ptr: int):
        return self.uva.resolve(ptr)

    # ------------------------------------------------------------ teardown
    def shutdown(self) -> None:
        for d in self.devices:
            for c in list(d.created):
                c.destroy()
            if d.primary is not None:
                d.primary.destroy()
            if d.gpu_started:
                d.gpu.shutdown()


_engine: Engine | None = None
_engine_lock = threading.Lock()


def get_engine() -> Engine:
    global _engine
    engine = _engine
    if engine is not None:     # made already (every call but the first): one read, no lock
        return engine
    with _engine_lock:
        if _engine is None:
            _engine = Engine()
        return _engine


def reset_engine(num_devices: int | None = None, executor: Callable[..., Any] | None = None,
                 model: DeviceModel | None = None, default_stream: str | None = None) -> Engine:
    """Shut the process engine down and start a fresh, uninitialized one.
    default_stream ('legacy' or 'per-thread') overrides GPUDBG_DEFAULT_STREAM."""
    global _engine
    with _engine_lock:
        old, _engine = _engine, Engine(num_devices, executor, model, default_stream)
    if old is not None:
        old.shutdown()
    return _engine
