"""Session: the one debug API, policy-free and machine-oriented (seed 000's
model), over any DebugBackend.

The one idea: the Session is the backend's listener and the tool's API at
once. Upward, it turns what the backend reports (module loads, launches,
stops, faults) into queued Events and re-resolves breakpoints on every
module load; downward, every query and control call is checked and passed
to the backend in device coordinates. It keeps only debugger state:
breakpoints, watchpoints (debug/watchpoints.py), the event queue,
launch-notification mode, per-device memory for UPDATE device-info
answers, and cached DebugInfo per program. Source stepping
(step_line/finish) is built here from warp single-steps and the line
table, so every backend that can single-step gets it.

`Session.attach()` is in-process attach to this program's simulated
devices; attaching to another process is a different backend behind the
same interface.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any, Iterable

import numpy as np

from gpudbg.debug.backend import (
    BackendError, DebugBackend, DeviceProperties, GridView, LaneCoords, LaneView, MemorySpace,
    RegisterValue, StopReason, WarpView,
)
from gpudbg.debug.breakpoints import Breakpoint, BreakpointTable, Condition, matching_lanes
from gpudbg.debug.device_info import DeviceInfoBuilder
from gpudbg.debug.events import Event, EventKind, EventQueue, LaunchNotify
from gpudbg.debug import registers, source_steps
from gpudbg.debug.watchpoints import WatchpointsMixin

STOP_WAIT_S = 30.0


class DebugError(Exception):
    """A debug request that cannot be carried out. `code` is a short
    CUDBGResult-like name ("INVALID_WARP", "RUNNING", ...)."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True)
class VariableValue:
    variable: Any              # dwarf VisibleVariable
    data: bytes
    address: int | None
    space: MemorySpace | None


def _wrap(fn):
    def call(*a, **k):
        try:
            return fn(*a, **k)
        except BackendError as e:
            raise DebugError(e.code, e.message) from None
    call.__name__, call.__doc__, call.__wrapped__ = fn.__name__, fn.__doc__, fn
    return call


class Session(WatchpointsMixin):
    def __init__(self, backend: DebugBackend):
        self.backend = backend
        self.events = EventQueue()
        self.table = BreakpointTable()
        self.launch_notify = LaunchNotify.EVENT
        self.break_on_launch = False
        self.value_extrapolation = False   # show dead registers' last stored values (register_value)
        self._deferred: list[GridView] = []
        self._debug_info: dict[int, Any] = {}
        self._devinfo = DeviceInfoBuilder()
        self._lock = threading.RLock()
        self._last_hit: dict[int, list[Breakpoint]] = {}
        self._block_dims: dict[tuple[int, int], tuple[int, int, int]] = {}
        self.attached = True
        backend.set_listener(self)

    # ------------------------------------------------------------ attach
    @staticmethod
    def _sim_backend():
        from gpudbg.driver.engine import get_engine
        from gpudbg.sim.debug_backend import SimBackend

        def devices():
            engine = get_engine()       # attaching starts the driver, as cuInit would
            engine.ensure_init()
            return engine.devices
        backend = SimBackend(devices)
        backend.attach()
        return backend

    @classmethod
    def attach(cls) -> "Session":
        """In-process attach to this program's simulated GPUs."""
        backend = cls._sim_backend()
        s = cls(backend)
        s._in_process = True
        s._resolve()
        for dev in range(backend.device_count()):     # what was loaded before the attach
            for prog in backend.programs(dev):
                s.events.emit(EventKind.ELF_IMAGE_LOADED, wait_ack=False, dev=dev, program=prog,
                              module_name=prog.module.filename)
        s.events.emit(EventKind.ATTACH_COMPLETE)
        return s

    def new_process(self) -> None:
        """Start over as a new process would (a debugger's second `run` in
        this process): kill what runs, reset the driver engine (no
        contexts, modules or sticky errors left) and attach afresh.
        Breakpoints are kept; they are pending until their code loads."""
        if not getattr(self, "_in_process", False):
            raise DebugError("NOT_SUPPORTED", "only an in-process session can start a new process")
        from gpudbg.driver.engine import reset_engine
        self.backend.kill()
        self.backend.detach()
        self.backend.set_listener(None)
        reset_engine()
        self._debug_info.clear()
        self._block_dims.clear()
        self._devinfo = DeviceInfoBuilder()
        self.events.drain()
        self.backend = self._sim_backend()
        self.backend.set_listener(self)
        self._resolve()
        for w in [w for w in self.watchpoints() if w.grid_id is not None]:
            self._watch_table().pop(w.id, None)     # their grids are gone with the process
        self._push_watchpoints()

    def detach(self) -> None:
        if not self.attached:
            return
        self.attached = False
        for bp in self.table.all():
            self.table.remove(bp)
        self._push_breakpoints()
        self._watch_table().clear()
        self._push_watchpoints()
        self.events.release_all()
        if hasattr(self.backend, "detach"):
            self.backend.detach()
        self.backend.set_listener(None)
        self.events.emit(EventKind.DETACH_COMPLETE)

    def __enter__(self) -> "Session":
        return self

    def __exit__(self, *exc) -> None:
        self.detach()

    # ------------------------------------------------------------ events
    def next_event(self, timeout: float | None = 0.0) -> Event | None:
        return self.events.next(timeout)

    def wait_for(self, kinds: Iterable[EventKind], timeout: float | None = None) -> Event | None:
        import time
        kinds = set(kinds)
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            ev = self.events.next(left)
            if ev is None:
                return None
            if ev.kind in kinds:
                return ev
            self.events.acknowledge(ev)

    def acknowledge(self, event: Event) -> None:
        self.events.acknowledge(event)

    def set_ack_required(self, kinds: Iterable[EventKind]) -> None:
        self.events.ack_required = set(kinds)

    @property
    def ack_required(self) -> frozenset[EventKind]:
        return frozenset(self.events.ack_required)

    def set_launch_notify(self, mode: LaunchNotify) -> None:
        self.launch_notify = LaunchNotify(mode)

    def deferred_launches(self) -> list[GridView]:
        with self._lock:
            out, self._deferred = self._deferred, []
        return out

    # ------------------------------------------------------------ listener (backend threads)
    def module_loaded(self, dev: int, program: Any, name: str) -> None:
        self._resolve()
        self.events.emit(EventKind.ELF_IMAGE_LOADED, dev=dev, program=program, module_name=name)

    def module_unloaded(self, dev: int, program: Any, name: str) -> None:
        self._debug_info.pop(id(program), None)
        self._resolve(exclude=program)
        self.events.emit(EventKind.ELF_IMAGE_UNLOADED, dev=dev, program=program, module_name=name)

    def context_event(self, dev: int, kind: str, context_id: int) -> None:
        self.events.emit(EventKind["CTX_" + kind.upper()], dev=dev, context_id=context_id)

    def kernel_ready(self, dev: int, grid: GridView) -> None:
        self._block_dims[(dev, grid.grid_id)] = grid.block_dim
        if self.break_on_launch:
            self.break_at_address(grid.entry_address, temporary=True)
        if self.launch_notify is LaunchNotify.DEFER:
            with self._lock:
                self._deferred.append(grid)
            return
        self.events.emit(EventKind.KERNEL_READY, dev=dev, grid=grid, context_id=grid.context_id)

    def kernel_finished(self, dev: int, grid: GridView) -> None:
        self._watch_grid_ended(dev, grid.grid_id)
        self.events.emit(EventKind.KERNEL_FINISHED, dev=dev, grid=grid, context_id=grid.context_id)

    def breakpoint_filter(self, dev: int, address: int, lanes: LaneCoords) -> np.ndarray:
        with self._lock:
            bps = self.table.at(address)
        stop, hit = matching_lanes(bps, lanes)
        with self._lock:
            for bp in hit:
                bp.hits += 1
            self._last_hit[dev] = hit
            temps = [bp for bp in hit if bp.temporary]
        if temps:
            for bp in temps:
                self.table.remove(bp)
            self._push_breakpoints()
        return stop

    def stopped(self, dev: int, reason: StopReason, info: dict) -> None:
        report = info.get("report")
        hit = self._last_hit.pop(dev, []) if reason is StopReason.BREAKPOINT else []
        grid = next(iter(self._safe(self.backend.grids, dev)), None)
        self.events.emit(
            EventKind.STOPPED, dev=dev, reason=reason, address=info.get("address"), grid=grid,
            breakpoints=tuple(bp.id for bp in hit), warps=tuple(tuple(w) for w in info.get("warps", ())),
            lanes=tuple(tuple(x) for x in info.get("lanes", ())),
            exception=report.kind if report is not None and report.hang is None else None,
            message=report.format() if report is not None else "", report=report,
            watch_hits=tuple(info.get("watch_hits", ())))

    def resumed(self, dev: int) -> None:
        pass

    def page_fault(self, dev: int, address: int, reason: str, info: dict) -> None:
        self.events.emit(EventKind.PAGE_FAULT, dev=dev, address=address, message=reason,
                         lanes=tuple(tuple(x) for x in info.get("lanes", ())), report=info.get("report"))

    def internal_error(self, dev: int, message: str) -> None:
        self.events.emit(EventKind.INTERNAL_ERROR, wait_ack=False, dev=dev, message=message)

    def timeout(self, dev: int, message: str) -> None:
        """The driver's hang detection gave up on a fence (GPUDBG_HANG_TIMEOUT)."""
        self.events.emit(EventKind.TIMEOUT, wait_ack=False, dev=dev, message=message)

    @staticmethod
    def _safe(fn, *args):
        try:
            return fn(*args)
        except BackendError:
            return []

    # ------------------------------------------------------------ breakpoints
    def _programs(self, exclude: Any = None) -> list[Any]:
        out = []
        for dev in range(self.backend.device_count()):
            out += [p for p in self.backend.programs(dev) if p is not exclude]
        return out

    def _resolve(self, exclude: Any = None) -> None:
        with self._lock:
            self.table.resolve(self._programs(exclude), lambda p: self.debug_info(p).lines)
        self._push_breakpoints()

    def _push_breakpoints(self) -> None:
        addrs = self.table.addresses()
        for dev in range(self.backend.device_count()):
            if self.backend.can_execute:
                self.backend.set_breakpoints(dev, addrs)

    def _add(self, kind: str, condition: Condition | None, temporary: bool, **fields) -> Breakpoint:
        with self._lock:
            bp = self.table.add(kind, condition=condition, temporary=temporary, **fields)
        self._resolve()
        return bp

    def break_at_address(self, address: int, condition: Condition | None = None,
                         temporary: bool = False) -> Breakpoint:
        return self._add("address", condition, temporary, address=int(address))

    def break_at_kernel(self, name: str, condition: Condition | None = None,
                        temporary: bool = False) -> Breakpoint:
        return self._add("kernel", condition, temporary, kernel=name)

    def break_at_line(self, file: str, line: int, condition: Condition | None = None,
                      temporary: bool = False) -> Breakpoint:
        if int(line) <= 0:
            raise DebugError("INVALID_ARGS", f"line number {line} must be positive")
        return self._add("line", condition, temporary, file=file, line=int(line))

    def delete_breakpoint(self, bp: Breakpoint | int) -> None:
        try:
            with self._lock:
                self.table.remove(bp)
        except KeyError as e:
            raise DebugError("INVALID_ARGS", str(e.args[0])) from None
        self._push_breakpoints()

    def enable_breakpoint(self, bp: Breakpoint | int, enabled: bool = True) -> None:
        try:
            self.table.get(bp).enabled = bool(enabled)
        except KeyError as e:
            raise DebugError("INVALID_ARGS", str(e.args[0])) from None
        self._push_breakpoints()

    def breakpoints(self) -> list[Breakpoint]:
        return self.table.all()

    # ------------------------------------------------------------ control
    def _executing(self) -> None:
        if not self.backend.can_execute:
            raise DebugError("NOT_SUPPORTED", "The program is not being run.")

    @_wrap
    def suspend(self, dev: int = 0) -> None:
        self._executing()
        self.backend.suspend(dev)

    @_wrap
    def resume(self, dev: int = 0) -> None:
        self._executing()
        self.backend.hold_threads(dev, None, None, None, False)
        self.backend.resume(dev)

    def is_stopped(self, dev: int = 0) -> bool:
        return bool(self.backend.is_stopped(dev)) if self.backend.can_execute else True

    def wait_stopped(self, dev: int = 0, timeout: float | None = None) -> bool:
        import time
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self.is_stopped(dev):
            if deadline is not None and time.monotonic() >= deadline:
                return False
            time.sleep(0.002)
        return True

    @_wrap
    def single_step_warp(self, dev: int, sm: int, wp: int, nsteps: int = 1) -> int:
        self._executing()
        if nsteps < 1:
            raise DebugError("INVALID_ARGS", f"nsteps must be at least 1, got {nsteps}")
        return self.backend.single_step_warp(dev, sm, wp, nsteps)

    @_wrap
    def resume_warps_until_pc(self, dev: int, sm: int, warp_mask: int, address: int) -> None:
        self._executing()
        self.backend.resume_warps_until_pc(dev, sm, warp_mask, address)

    @_wrap
    def interrupt_threads(self, dev: int = 0, sm: int | None = None, wp: int | None = None,
                          ln: int | None = None) -> int:
        """Hold the matching threads (zet interrupt): they stop, the others run."""
        self._executing()
        n = self.backend.hold_threads(dev, sm, wp, ln, True)
        if n:
            lanes = tuple((w.sm, w.wp, lv.ln) for w in self.backend.warps(dev) for lv in w.lanes
                          if lv.held and (sm is None or w.sm == sm) and (wp is None or w.wp == wp)
                          and (ln is None or lv.ln == ln))
            self.events.emit(EventKind.STOPPED, dev=dev, reason=StopReason.THREADS_HELD,
                             warps=tuple(sorted({x[:2] for x in lanes})), lanes=lanes)
        return n

    @_wrap
    def resume_threads(self, dev: int = 0, sm: int | None = None, wp: int | None = None,
                       ln: int | None = None) -> int:
        """Let the matching threads run again (zet resume). On a device
        stopped as a whole, the others stay stopped (they become held)."""
        self._executing()
        b = self.backend
        if b.is_stopped(dev) and getattr(b, "stop_reason", lambda d: None)(dev) != "THREADS_HELD":
            b.hold_threads(dev, None, None, None, True)
            n = b.hold_threads(dev, sm, wp, ln, False)
            b.resume(dev)
            return n
        n = b.hold_threads(dev, sm, wp, ln, False)
        if b.is_stopped(dev):
            b.resume(dev)
        return n

    def kill(self) -> None:
        self._executing()
        self.backend.kill()

    def step_line(self, dev: int, sm: int, wp: int, over_calls: bool) -> None:
        """Source `step` (over_calls False) or `next` of one warp."""
        self._executing()
        self.warp(dev, sm, wp)           # a bad warp is an error, not a no-op
        source_steps.step_line(self, dev, sm, wp, over_calls)

    def finish(self, dev: int, sm: int, wp: int) -> None:
        self._executing()
        self.warp(dev, sm, wp)
        try:
            source_steps.finish(self, dev, sm, wp)
        except BackendError as e:
            raise DebugError(e.code, e.message) from None

    def until(self, dev: int, sm: int, wp: int, addresses: Iterable[int] | None = None,
              any_frame: bool = False) -> None:
        """gdb's until (no addresses: leave the line without iterating a
        loop) / until LOCATION / advance LOCATION (any_frame) of one warp."""
        self._executing()
        self.warp(dev, sm, wp)
        try:
            if addresses is None:
                source_steps.until_next(self, dev, sm, wp)
            else:
                source_steps.run_to(self, dev, sm, wp, {int(a) for a in addresses}, any_frame)
        except BackendError as e:
            raise DebugError(e.code, e.message) from None

    def resolve_location(self, kind: str, **fields: Any) -> set[int]:
        """The code addresses a breakpoint of `kind` ("line", "kernel",
        "address") would have now, without setting one."""
        from gpudbg.debug.breakpoints import resolve_one
        with self._lock:
            return resolve_one(Breakpoint(0, kind, **fields), self._programs(),
                               lambda p: self.debug_info(p).lines)

    # ------------------------------------------------------------ state
    def devices(self) -> list[DeviceProperties]:
        return [self.backend.device(d) for d in range(self.backend.device_count())]

    @_wrap
    def device(self, dev: int) -> DeviceProperties:
        return self.backend.device(dev)

    @_wrap
    def grids(self, dev: int = 0) -> list[GridView]:
        return self.backend.grids(dev)

    @_wrap
    def grid(self, dev: int, grid_id: int) -> GridView:
        for g in self.backend.grids(dev):
            if g.grid_id == grid_id:
                return g
        raise DebugError("INVALID_GRID", f"no grid {grid_id} on device {dev}")

    @_wrap
    def warps(self, dev: int = 0) -> list[WarpView]:
        return self.backend.warps(dev)

    @_wrap
    def warp(self, dev: int, sm: int, wp: int) -> WarpView:
        props = self.backend.device(dev)
        if not 0 <= sm < props.num_sms:
            raise DebugError("INVALID_SM", f"SM {sm} does not exist (device {dev} has {props.num_sms})")
        if not 0 <= wp < props.num_warps:
            raise DebugError("INVALID_WARP", f"warp {wp} does not exist (SMs have {props.num_warps} warp slots)")
        one = getattr(self.backend, "warp", None)
        if one is not None:
            w = one(dev, sm, wp)
            if w is not None:
                return w
            raise DebugError("INVALID_WARP", f"warp {wp} on SM {sm} of device {dev} is not valid")
        for w in self.backend.warps(dev):
            if w.sm == sm and w.wp == wp:
                return w
        raise DebugError("INVALID_WARP", f"warp {wp} on SM {sm} of device {dev} is not valid")

    def lane(self, dev: int, sm: int, wp: int, ln: int) -> LaneView:
        w = self.warp(dev, sm, wp)
        try:
            return w.lane(ln)
        except BackendError as e:
            raise DebugError(e.code, e.message) from None

    def broken_warps(self, dev: int = 0) -> list[WarpView]:
        return [w for w in self.warps(dev) if w.broken]

    @_wrap
    def registers(self, dev: int, sm: int, wp: int, ln: int) -> list[RegisterValue]:
        return self.backend.registers(dev, sm, wp, ln)

    def read_register(self, dev: int, sm: int, wp: int, ln: int, name: str) -> Any:
        regs = self.registers(dev, sm, wp, ln)
        want = name if name.startswith("%") else "%" + name
        for r in [r for r in regs if r.name == name] + [r for r in regs if r.name == want]:
            return self.register_value(r)
        lv = self.lane(dev, sm, wp, ln)
        raise DebugError("INVALID_REGISTER", f"{lv.function} has no register {want}")

    def register_value(self, r: RegisterValue) -> Any:
        """`r`'s value; DebugError OPTIMIZED_OUT when optimized code may
        have dropped it at the lane's pc, unless value_extrapolation is on
        (then the register file's content, possibly older: cuda-gdb's
        `set cuda value_extrapolation`)."""
        if r.available or self.value_extrapolation:
            return r.value
        raise DebugError("OPTIMIZED_OUT", f"{r.name} is not live at this pc in optimized code "
                                          f"(<optimized out>; compile with -G to keep every register)")

    @_wrap
    def write_register(self, dev: int, sm: int, wp: int, ln: int, name: str, value: Any) -> None:
        self.backend.write_register(dev, sm, wp, ln, name, value)

    def register_map(self, dev: int, sm: int, wp: int, ln: int) -> list[tuple]:
        """The cuda-gdb R/P numbering of the lane's function (debug/registers.py)."""
        return registers.register_map(self.registers(dev, sm, wp, ln))

    def read_register_r(self, dev: int, sm: int, wp: int, ln: int, regno: int) -> int:
        if not 0 <= regno < registers.MAX_R:
            raise DebugError("INVALID_ARGS", f"register R{regno} does not exist (R0..R254)")
        return registers.read_r(self.registers(dev, sm, wp, ln), regno)

    def write_register_r(self, dev: int, sm: int, wp: int, ln: int, regno: int, value: int) -> None:
        target = registers.write_r(self.registers(dev, sm, wp, ln), regno, value)
        if target is None:
            raise DebugError("INVALID_ARGS", f"R{regno} holds no register of this function")
        self.write_register(dev, sm, wp, ln, *target)

    def read_predicate(self, dev: int, sm: int, wp: int, ln: int, predno: int) -> int:
        return registers.read_p(self.registers(dev, sm, wp, ln), predno)

    def allocations(self, dev: int = 0) -> list:
        """The device's user-visible allocations (MemoryRegion), by address;
        [] for a backend that keeps no allocation list."""
        fn = getattr(self.backend, "allocations", None)
        return list(fn(dev)) if fn is not None else []

    def images(self, dev: int = 0) -> list:
        """The device's live texture/surface objects as (handle, descriptor),
        by handle; [] for a backend without a texture unit."""
        fn = getattr(self.backend, "images", None)
        return list(fn(dev)) if fn is not None else []

    @_wrap
    def read_memory(self, dev: int, space: MemorySpace, address: int, size: int,
                    sm: int | None = None, wp: int | None = None, ln: int | None = None) -> bytes:
        return self.backend.read_memory(dev, MemorySpace(space), int(address), int(size), sm, wp, ln)

    @_wrap
    def write_memory(self, dev: int, space: MemorySpace, address: int, data: bytes,
                     sm: int | None = None, wp: int | None = None, ln: int | None = None) -> None:
        self.backend.write_memory(dev, MemorySpace(space), int(address), bytes(data), sm, wp, ln)

    # ------------------------------------------------------------ code and source
    @_wrap
    def programs(self, dev: int = 0) -> list[Any]:
        """The loaded programs (modules) of a device."""
        return self.backend.programs(dev)

    def program_at(self, dev: int, address: int) -> Any | None:
        return self.backend.program_of_address(dev, address)

    def debug_info(self, program: Any) -> Any:
        di = self._debug_info.get(id(program))
        if di is None or di.program is not program:
            from gpudbg.debug.dwarf.api import DebugInfo
            di = self._debug_info[id(program)] = DebugInfo(program)
        return di

    def source_line(self, dev: int, address: int) -> tuple[str, int] | None:
        prog = self.program_at(dev, address)
        if prog is None:
            return None
        e = self.debug_info(prog).lines.at(prog.pc_of_address(address))
        return (e.file, e.line) if e is not None else None

    def function_at(self, dev: int, address: int) -> tuple[str, int] | None:
        prog = self.program_at(dev, address)
        if prog is None:
            return None
        pc = prog.pc_of_address(address)
        info = prog.function_list[int(prog.function_of_pc[pc])]
        return info.name, address - prog.code_address(info.entry_pc)

    def variables(self, dev: int, sm: int, wp: int, ln: int, frame: int = 0) -> list[Any]:
        """Variables visible in frame `frame` of the lane (0: innermost;
        a caller's at its call instruction)."""
        if frame == 0:
            lv = self.lane(dev, sm, wp, ln)
            prog = self.program_at(dev, lv.pc)
            if prog is None:
                return []
            return self.debug_info(prog).variables_at(prog.pc_of_address(lv.pc))
        from gpudbg.debug import frame_state
        fs = frame_state.frame(self, dev, sm, wp, ln, frame)
        return self.debug_info(fs.program).variables_at(fs.lookup_pc)

    def read_variable(self, dev: int, sm: int, wp: int, ln: int, name: str, frame: int = 0) -> VariableValue:
        from gpudbg.debug import variables
        return variables.read(self, dev, sm, wp, ln, name, frame)

    def frames(self, dev: int, sm: int, wp: int, ln: int) -> list[Any]:
        """The lane's frames, innermost first (debug/frame_state.py)."""
        from gpudbg.debug import frame_state
        return frame_state.chain(self, dev, sm, wp, ln)

    def frame_registers(self, dev: int, sm: int, wp: int, ln: int, frame: int) -> list[RegisterValue]:
        """Frame `frame`'s registers as that activation has them."""
        from gpudbg.debug import frame_state
        return frame_state.registers(self, dev, sm, wp, ln, frame)

    def write_frame_register(self, dev: int, sm: int, wp: int, ln: int, frame: int, name: str,
                             value: Any) -> None:
        from gpudbg.debug import frame_state
        frame_state.write_register(self, dev, sm, wp, ln, frame, name, value)

    # ------------------------------------------------------------ batched info, dumps
    def device_info_sizes(self, dev: int):
        from gpudbg.debug.cudbg.devinfo import device_info_sizes
        p = self.device(dev)
        return device_info_sizes(p.num_sms, p.num_warps, p.num_lanes)

    def device_info(self, dev: int, query) -> bytes:
        p = self.device(dev)
        dims = {g: bd for (d, g), bd in self._block_dims.items() if d == dev}
        for g in self.grids(dev):
            dims[g.grid_id] = g.block_dim
        return self._devinfo.build(dev, p.num_sms, self.warps(dev), query, dims)

    @_wrap
    def generate_coredump(self, path: str, flags: int = 0, dev: int = 0) -> str:
        gen = getattr(self.backend, "generate_coredump", None)
        if gen is None:
            raise DebugError("NOT_SUPPORTED", "this backend cannot write coredumps")
        return str(gen(dev, path, flags))
