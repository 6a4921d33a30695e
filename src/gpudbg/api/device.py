"""Devices and streams of the Pythonic layer, as thin handles over mc* calls.

A Device is only an ordinal: every property and operation is an mc* query
made when asked, so the object never disagrees with the runtime. Operations
on a device other than the current one switch the calling thread's current
device for the duration of the call and switch back (`on_device`), which is
what a CUDA program does with cudaSetDevice. A reset replaces the device's
generation token, which DeviceArrays, Modules and Streams remember, so
memory of a destroyed context is never freed twice into a fresh one.
"""
from __future__ import annotations

import contextlib
from typing import Any, Iterator

from gpudbg.api.errors import GPUError, call, error_for
from gpudbg.driver.engine import get_engine
from gpudbg.runtime import mc
from gpudbg.runtime.errors import mcError_t
from gpudbg.runtime.types import mcDeviceAttribute_t, mcDeviceProp

class _Generation:
    """A token that changes when device state made earlier becomes invalid."""


_state: dict[str, Any] = {"engine": None, "tokens": {}}


def generation(ordinal: int) -> _Generation:
    """The device's current token: replaced by Device.reset() and whenever
    the process's driver engine is replaced (its identity is all this reads)."""
    engine = get_engine()
    if _state["engine"] is not engine:
        _state["engine"] = engine
        _state["tokens"] = {}
    token = _state["tokens"].get(ordinal)
    if token is None:       # (not setdefault: that would make a token on every call)
        token = _state["tokens"].setdefault(ordinal, _Generation())
    return token


def _new_generation(ordinal: int) -> None:
    generation(ordinal)
    _state["tokens"][ordinal] = _Generation()


def current_ordinal() -> int:
    err, ordinal = mc.mcGetDevice()     # call(mc.mcGetDevice), without its generic unpacking
    if err:
        raise error_for(mcError_t(err), "mcGetDevice")
    return ordinal


@contextlib.contextmanager
def on_device(ordinal: int | None) -> Iterator[None]:
    """Make `ordinal` current for the block (None: leave it as it is)."""
    if ordinal is None:
        yield
        return
    previous = current_ordinal()
    if previous == ordinal:
        yield
        return
    call(mc.mcSetDevice, ordinal)
    try:
        yield
    finally:
        call(mc.mcSetDevice, previous)


class Device:
    """One simulated device, by ordinal."""

    def __init__(self, ordinal: int = 0):
        if isinstance(ordinal, bool) or not isinstance(ordinal, int):
            raise TypeError(f"device ordinal must be an int, not {type(ordinal).__name__}")
        count = Device.count()
        if not 0 <= ordinal < count:
            raise GPUError(mcError_t.mcErrorInvalidDevice,
                           f"device {ordinal} does not exist (devices: 0..{count - 1})")
        self.ordinal = ordinal
        self._stack: list[int] = []

    @staticmethod
    def count() -> int:
        return call(mc.mcGetDeviceCount)

    @classmethod
    def current(cls) -> "Device":
        return cls(current_ordinal())

    @property
    def properties(self) -> mcDeviceProp:
        return call(mc.mcGetDeviceProperties, self.ordinal)

    @property
    def name(self) -> str:
        return self.properties.name

    @property
    def compute_capability(self) -> tuple[int, int]:
        p = self.properties
        return (p.major, p.minor)

    @property
    def total_memory(self) -> int:
        return self.properties.totalGlobalMem

    def attribute(self, attr: mcDeviceAttribute_t | int) -> int:
        return call(mc.mcDeviceGetAttribute, attr, self.ordinal)

    def memory_info(self) -> tuple[int, int]:
        """(free, total) bytes of device memory."""
        with on_device(self.ordinal):
            return call(mc.mcMemGetInfo)

    def synchronize(self) -> None:
        """Wait for all work on this device; raises the first device fault."""
        from gpudbg.api.memory import drain_pending_frees

        with on_device(self.ordinal):
            call(mc.mcDeviceSynchronize)
            drain_pending_frees()

    def reset(self) -> None:
        """Destroy the device's context (clearing a sticky fault); every
        DeviceArray, Module and Stream made before it becomes invalid."""
        with on_device(self.ordinal):
            call(mc.mcDeviceReset)
        _new_generation(self.ordinal)

    def make_current(self) -> None:
        call(mc.mcSetDevice, self.ordinal)

    def __enter__(self) -> "Device":
        self._stack.append(current_ordinal())
        self.make_current()
        return self

    def __exit__(self, *exc: Any) -> None:
        call(mc.mcSetDevice, self._stack.pop())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Device) and other.ordinal == self.ordinal

    def __hash__(self) -> int:
        return hash(("gpudbg.Device", self.ordinal))

    def __repr__(self) -> str:
        return f"<gpudbg.Device {self.ordinal}: {self.name}>"


def stream_handle(stream: Any) -> Any:
    """The mcStream_t for a `stream=` argument: a gpudbg.Stream, None or 0
    (the default stream), or 1/2 (the legacy and per-thread default streams,
    as the CUDA Array Interface and CUstream number them)."""
    if stream is None or (isinstance(stream, int) and not isinstance(stream, bool) and stream in (0, 1, 2)):
        return stream
    if isinstance(stream, Stream):
        return stream._live()
    raise TypeError(f"stream must be a gpudbg.Stream, 0, 1, 2 or None, not {stream!r}")


def synchronize() -> None:
    """Wait for all work of the current device (mcDeviceSynchronize).
    Device.current().synchronize() without its three look-ups of the
    device it is already on (the current device is valid by definition)."""
    from gpudbg.api.memory import drain_pending_frees

    call(mc.mcDeviceSynchronize)
    drain_pending_frees()


class Stream:
    """An mcStream_t created on the current device; usable as a context
    manager that synchronizes and destroys it on exit."""

    def __init__(self, non_blocking: bool = False):
        flags = 0x1 if non_blocking else 0x0
        self.handle: Any = call(mc.mcStreamCreateWithFlags, flags)
        self.device = current_ordinal()
        self._token = generation(self.device)
        self.destroyed = False

    def _live(self) -> Any:
        if self.destroyed:
            raise ValueError("the stream was destroyed")
        if self._token is not generation(self.device):
            raise ValueError("the stream belongs to a device context that was reset")
        return self.handle

    def synchronize(self) -> None:
        with on_device(self.device):
            call(mc.mcStreamSynchronize, self._live())

    def query(self) -> bool:
        """True when all work queued on the stream has finished."""
        with on_device(self.device):
            err = mc.mcStreamQuery(self._live())[0]
        if err == mcError_t.mcErrorNotReady:
            return False
        if err != mcError_t.mcSuccess:
            from gpudbg.api.errors import error_for
            raise error_for(mcError_t(err), "mcStreamQuery")
        return True

    def wait_event(self, event: Any) -> None:
        """Later work of this stream waits (on the device) for `event`."""
        event.wait(self)

    def record(self, event: Any = None) -> Any:
        """Record `event` (a new gpudbg.Event if None) here and return it."""
        from gpudbg.api.events import Event
        return (event if event is not None else Event()).record(self)

    def destroy(self) -> None:
        if self.destroyed or self._token is not generation(self.device):
            self.destroyed = True
            return
        with on_device(self.device):
            call(mc.mcStreamDestroy, self.handle)
        self.destroyed = True

    def __enter__(self) -> "Stream":
        return self

    def __exit__(self, exc_type: Any, *exc: Any) -> None:
        try:
            if exc_type is None:
                self.synchronize()
        finally:
            try:
                self.destroy()
            except GPUError:
                if exc_type is None:
                    raise

    def __repr__(self) -> str:
        state = "destroyed" if self.destroyed else f"device {self.device}"
        return f"<gpudbg.Stream {state}>"
