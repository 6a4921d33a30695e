"""SimBackend: the simulator implementing gpudbg.debug.backend.DebugBackend
for the GPUs of this process (in-process attach).

The one idea: devices are enumerated through a provider (the driver
engine's device list, given by whoever attaches), and each simulated GPU
gets its DevicePort lazily, the first time a launch or a question reaches
it, so attaching before the program has touched a GPU works and GPUs
created later (after an engine reset) are debugged too. Everything here is
translation: coordinates are checked, views built by debug_views, control
requests posted to the port, whose device thread does the work.
"""
from __future__ import annotations

import threading
from typing import Any, Callable

from gpudbg.debug.backend import (
    BackendError, DeviceProperties, GridStatus, GridView, MemoryRegion, MemorySpace, RegionKind,
    RegisterValue, WarpView,
)
from gpudbg.sim import debug_port, debug_stepping, debug_views, debug_watch
from gpudbg.sim.debug_port import DevicePort, PortError, WaveRun


class SimBackend:
    can_execute = True

    def __init__(self, devices: Callable[[], list[Any]]):
        """`devices()` lists the driver's devices; each has `.ordinal`,
        `.model`, `.gpu_started` and `.gpu`."""
        self._devices = devices
        self.listener: Any = None
        self._ports: dict[int, DevicePort] = {}
        self._lock = threading.Lock()
        self._breakpoints: dict[int, set[int]] = {}
        self._watches: dict[int, Any] = {}

    # ------------------------------------------------------------ lifecycle
    def set_listener(self, listener: Any) -> None:
        self.listener = listener

    def attach(self) -> None:
        debug_port.attach(self)

    def detach(self) -> None:
        for port in list(self._ports.values()):
            port.set_breakpoints(set())
            port.set_watches(None)
            with port.cv:
                for run in port.runs.values():
                    run.held[:] = False
            port.resume()
        debug_port.detach(self)
        self.listener = None

    def port(self, gpu: Any) -> DevicePort:
        p = self._ports.get(id(gpu))
        if p is None or p.gpu is not gpu:
            with self._lock:
                p = self._ports.get(id(gpu))
                if p is None or p.gpu is not gpu:
                    p = DevicePort(self, gpu, int(getattr(gpu, "ordinal", 0)))
                    p.breakpoints = set(self._breakpoints.get(p.dev, set()))
                    p.watches = self._watches.get(p.dev)
                    self._ports[id(gpu)] = p
        return p

    # ------------------------------------------------------------ devices
    def _device(self, dev: int) -> Any:
        devs = self._devices()
        if not 0 <= dev < len(devs):
            raise BackendError("INVALID_DEVICE", f"device {dev} does not exist ({len(devs)} devices)")
        return devs[dev]

    def _port(self, dev: int) -> DevicePort | None:
        d = self._device(dev)
        return self.port(d.gpu) if d.gpu_started else None

    def _wave(self, dev: int, sm: int | None = None, wp: int | None = None):
        """(port, the wave run owning warp (sm, wp), or the focused one)."""
        p = self._port(dev)
        if p is None:
            return None, None
        run = p.run_for(sm, wp) if sm is not None and wp is not None else None
        return p, run or p.focus()   # an unknown warp: the focused wave names the error

    def device_count(self) -> int:
        return len(self._devices())

    def device(self, dev: int) -> DeviceProperties:
        m = self._device(dev).model
        major, minor = m.compute_capability
        return DeviceProperties(dev, m.name, "gpudbg-sim", f"sm_{major}{minor}", major, minor, m.sm_count,
                                m.warp_slots_per_sm, m.lanes, 255, 7, m.pci_bus, m.pci_device, 16,
                                int(m.global_memory))

    def grid_view(self, port: DevicePort, L: dict | None = None) -> GridView | None:
        L = L if L is not None else port.launch
        if L is None:
            return None
        f = L["function"]
        prog = f.program
        status = GridStatus.CUDBG_GRID_STATUS_TERMINATED if L["done"] else GridStatus.CUDBG_GRID_STATUS_ACTIVE
        return GridView(port.dev, L["grid_id"], f.name, f.code_address, prog.code_base,
                        0xC7000000 + port.dev, L["grid"], L["block"], L["shared"], status, L["params"],
                        L.get("cluster", (1, 1, 1)), host_tid=L["host_tid"],
                        parent_grid_id=L.get("parent_grid_id", 0))

    def grids(self, dev: int) -> list[GridView]:
        """Every grid in flight on the device, the focused one (whose stop is
        in place) first, then by launch order."""
        p = self._port(dev)
        if p is None:
            return []
        with p.cv:
            launches = list(p.launches.values())
            first = p.launch
        launches.sort(key=lambda L: (L is not first, L["grid_id"]))
        return [self.grid_view(p, L) for L in launches]

    def warps(self, dev: int) -> list[WarpView]:
        p = self._port(dev)
        if p is None:
            return []
        runs = list(p.runs.values())
        if not runs:
            return []
        key = (p.generation, tuple(id(r) for r in runs))
        cache = getattr(p, "_warp_cache", None)
        if cache is not None and cache[0] == key:
            return cache[1]
        views = [w for r in runs for w in debug_views.warp_views(r, r.X)]
        if len(runs) > 1:
            views.sort(key=lambda w: (w.sm, w.wp))
        p._warp_cache = (key, views)
        return views

    def warp(self, dev: int, sm: int, wp: int) -> WarpView | None:
        """One warp's view (None when it has no live lane), without
        building the views of every wave."""
        p, run = self._wave(dev, sm, wp)
        if run is None:
            return None
        cache = getattr(p, "_warp_cache", None)
        if cache is not None and cache[0] == (p.generation, tuple(id(r) for r in p.runs.values())):
            return next((w for w in cache[1] if w.sm == sm and w.wp == wp), None)
        views = debug_views.warp_views(run, run.X, (sm, wp))
        return views[0] if views else None

    def programs(self, dev: int) -> list[Any]:
        d = self._device(dev)
        if not d.gpu_started:
            return []
        out, seen = [], set()
        for fn in list(getattr(d.gpu, "functions", {}).values()):
            m = fn.module
            if getattr(m, "loaded", True) and id(m.program) not in seen:
                seen.add(id(m.program))
                out.append(m.program)
        return out

    def allocations(self, dev: int) -> list[MemoryRegion]:
        """User-visible allocations of the device's memory, by address. Host
        memory is in the unified address space, so the host sees it at the
        same address."""
        d = self._device(dev)
        if not d.gpu_started:
            return []
        kinds = {k.value: k for k in RegionKind}
        out = []
        for a in d.gpu.memory.allocations():
            kind = kinds.get(a.kind.value)
            if kind is not None and a.size:
                host = a.base if kind in (RegionKind.HOST_PINNED, RegionKind.HOST_REGISTERED,
                                          RegionKind.MANAGED) else None
                out.append(MemoryRegion(a.base, a.size, kind, host))
        return sorted(out, key=lambda r: r.base)

    def images(self, dev: int) -> list[tuple[int, Any]]:
        """The device's live texture and surface objects: (handle, the
        texture unit's TextureState/SurfaceState), by handle."""
        d = self._device(dev)
        if not d.gpu_started:
            return []
        from gpudbg.sim.texture.descriptors import image_table
        return image_table(d.gpu).items()

    def program_of_address(self, dev: int, address: int) -> Any | None:
        for prog in self.programs(dev):
            if prog.pc_of_address(address) is not None:
                return prog
        return None

    def registers(self, dev: int, sm: int, wp: int, ln: int) -> list[RegisterValue]:
        p, run = self._need_wave(dev, sm, wp)
        return debug_views.registers(run, run.X, sm, wp, ln)

    def write_register(self, dev: int, sm: int, wp: int, ln: int, name: str, value: Any) -> None:
        p, run = self._need_wave(dev, sm, wp)
        self._need_stopped(p, dev)
        debug_views.write_register(run, run.X, sm, wp, ln, name, value)

    def function_registers(self, dev: int, sm: int, wp: int, ln: int, function: str) -> list[RegisterValue]:
        """The lane's registers of `function`, a caller's frame (debug/frame_state.py)."""
        p, run = self._need_wave(dev, sm, wp)
        return debug_views.registers(run, run.X, sm, wp, ln, function)

    def write_function_register(self, dev: int, sm: int, wp: int, ln: int, function: str, name: str,
                                value: Any) -> None:
        p, run = self._need_wave(dev, sm, wp)
        self._need_stopped(p, dev)
        debug_views.write_register(run, run.X, sm, wp, ln, name, value, function)

    def read_memory(self, dev: int, space: MemorySpace, address: int, size: int,
                    sm: int | None = None, wp: int | None = None, ln: int | None = None) -> bytes:
        d = self._device(dev)
        p, run = self._wave(dev, sm, wp)
        return debug_views.read_memory(run if run is not None else _NoPort(), run.X if run is not None else None,
                                       d.gpu, space, address, size, sm, wp, ln)

    def write_memory(self, dev: int, space: MemorySpace, address: int, data: bytes,
                     sm: int | None = None, wp: int | None = None, ln: int | None = None) -> None:
        d = self._device(dev)
        p, run = self._wave(dev, sm, wp)
        if p is not None:
            self._need_stopped(p, dev)
        debug_views.write_memory(run if run is not None else (p if p is not None else _NoPort()),
                                 run.X if run is not None else None, d.gpu, space, address, data, sm, wp, ln)

    def _launch_function(self, dev: int):
        p = self._port(dev)
        if p is None or p.launch is None:
            raise BackendError("INVALID_CONTEXT", f"no kernel is running on device {dev}")
        return p.launch["function"]

    def param_offset(self, dev: int, name: str) -> int:
        """Offset of a kernel parameter in the running kernel's param buffer."""
        f = self._launch_function(dev)
        for prm in f.params:
            if prm.name == name:
                return int(prm.offset)
        raise BackendError("INVALID_ARGS", f"{name} is not a parameter of {f.name}")

    def shared_offset(self, dev: int, name: str) -> int:
        """Offset of a .shared variable in the running kernel's blocks."""
        f = self._launch_function(dev)
        if name not in f.shared_layout:
            raise BackendError("INVALID_ARGS", f"{name} is not a shared variable of {f.name}")
        return int(f.shared_layout[name])

    def generate_coredump(self, dev: int, path: str, flags: int = 0) -> str:
        """Write the stopped wave of `dev` as an NVIDIA-format GPU coredump."""
        from gpudbg.dump.coredump import snapshot_from_wave, write_coredump
        p, run = self._need_wave(dev)
        report = run.fault.report if run.fault is not None else None
        return str(write_coredump(path, snapshot_from_wave(run.X, report, flags), flags))

    def _need_wave(self, dev: int, sm: int | None = None, wp: int | None = None) -> tuple[DevicePort, WaveRun]:
        p, run = self._wave(dev, sm, wp)
        if run is None:
            if p is not None and p.runs and sm is not None:
                raise BackendError("INVALID_WARP", f"warp {wp} on SM {sm} is not valid")
            raise BackendError("INVALID_CONTEXT", f"no kernel is running on device {dev}")
        return p, run

    @staticmethod
    def _need_stopped(p: DevicePort, dev: int) -> None:
        runs = list(p.runs.values())
        if runs and not p.stopped and not any(r.held.any() for r in runs):
            raise BackendError("RUNNING", f"device {dev} is running; suspend it first")

    # ------------------------------------------------------------ control
    def is_stopped(self, dev: int) -> bool:
        p = self._port(dev)
        return bool(p is not None and p.stopped)

    def stop_reason(self, dev: int):
        p = self._port(dev)
        return p.stop_reason if p is not None else None

    def suspend(self, dev: int) -> None:
        self.port(self._device(dev).gpu).suspend()

    def resume(self, dev: int) -> None:
        p = self._port(dev)
        if p is not None:
            p.resume()

    def set_breakpoints(self, dev: int, addresses: set[int]) -> None:
        self._breakpoints[dev] = set(addresses)
        p = self._port(dev)
        if p is not None:
            p.set_breakpoints(addresses)

    def step_hit_watchpoint(self, dev: int) -> bool:
        """Whether the last warp-step request stopped at a watchpoint."""
        p = self._port(dev)
        return bool(p is not None and p.step_watch_hit)

    def set_watchpoints(self, dev: int, watches: tuple) -> None:
        """The enabled watches (debug.watch.DeviceWatch) of device `dev`;
        none gives the port its plain leaders back."""
        ws = debug_watch.WatchSet(watches) if watches else None
        self._watches[dev] = ws
        p = self._port(dev)
        if p is not None:
            p.set_watches(ws)

    def _call(self, dev: int, fn, need_stopped: bool = True, run: WaveRun | None = None):
        p = self._port(dev)
        if p is None:
            raise BackendError("INVALID_CONTEXT", f"no kernel is running on device {dev}")
        try:
            return p.request(fn, need_stopped=need_stopped, run=run)
        except PortError as e:
            raise BackendError(e.code, e.message) from None

    def single_step_warp(self, dev: int, sm: int, wp: int, nsteps: int) -> int:
        p = self._port(dev)
        run = p.run_for(sm, wp) if p is not None else None
        return self._call(dev, lambda r: debug_stepping.step_warp(r, r.X if r else None, sm, wp, nsteps),
                          run=run)

    def run_warp_until(self, dev: int, sm: int, wp: int, addresses: set[int], depth_max: int | None,
                       depth_min: int) -> None:
        """Step one warp to any of `addresses` (debug_stepping.run_until)."""
        p = self._port(dev)
        run = p.run_for(sm, wp) if p is not None else None

        def go(r):
            X = r.X if r else None
            pcs = set() if X is None else {pc for pc in map(X.program.pc_of_address, addresses) if pc is not None}
            return debug_stepping.run_until(r, X, sm, wp, pcs, depth_max, depth_min)
        self._call(dev, go, run=run)

    def resume_warps_until_pc(self, dev: int, sm: int, warp_mask: int, address: int) -> None:
        """Each wave owning warps of the mask on SM `sm` runs its own."""
        p = self._port(dev)
        runs = p.runs_on(sm) if p is not None else []
        if len(runs) <= 1:
            self._call(dev, lambda r: debug_stepping.run_until_pc(r, r.X if r else None, sm, warp_mask, address),
                       run=runs[0] if runs else None)
            return
        for run in runs:
            mask = sum(1 << wp for wp in range(64) if warp_mask >> wp & 1 and run.owns(sm, wp))
            if mask:
                self._call(dev, lambda r, m=mask: debug_stepping.run_until_pc(r, r.X, sm, m, address), run=run)

    def hold_threads(self, dev: int, sm: int | None, wp: int | None, ln: int | None, held: bool) -> int:
        """Hold (or release) the matching live threads of every resident
        grid; the count changed."""
        p = self._port(dev)
        if p is None:
            return 0

        def apply(run):
            if run is None:
                return 0
            import numpy as np
            X = run.X
            L = X.layout
            sel = L.valid & (X.sched < debug_views.EXITED)
            if sm is not None:
                sel &= L.sm == sm
            if wp is not None:
                sel &= L.warp == wp
            if ln is not None:
                sel &= L.lane == ln
            changed = int(np.count_nonzero(run.held[sel] != held))
            run.held[sel] = held
            p.generation += 1
            return changed
        runs = list(p.runs.values())
        if len(runs) <= 1:
            return self._call(dev, apply, need_stopped=False, run=runs[0] if runs else None)
        total = 0
        for run in runs:
            try:
                total += self._call(dev, apply, need_stopped=False, run=run)
            except BackendError as e:
                if e.code != "INVALID_WARP":    # that wave ended meanwhile
                    raise
        return total

    def kill(self) -> None:
        for p in list(self._ports.values()):
            p.kill()


class _NoPort:
    generation = 0
