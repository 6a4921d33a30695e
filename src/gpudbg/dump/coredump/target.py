"""A DebugBackend over a GPU coredump: the debugger's Session opens a
`.nvcudmp` file (ours or one NVIDIA's driver wrote) and sees the same views
as when it debugs the live simulator, frozen at the moment of the fault.

The one idea: a core is the device-state tree of the CUDA debugger API
written down (snapshot.py), so every state question is a lookup by the
same hardware ids (device row, smId, warpId, ln) the live backend answers
in; what the tables alone cannot say comes from our note when the core is
ours: PTX register names and dtypes (else R0..Rn as uint32 and P0..Pn, as
cuda-gdb shows a driver core), the lane-level exception the simulator
raised (the table holds the warp-level code cuda-gdb 11.8 accepts), the
kernel name, which lanes wait at a barrier, and each module's PTX, from
which the simulator Program is rebuilt (embedded.py) so source lines,
DWARF variables and disassembly work.

What it deliberately does not do: execute. `can_execute` is False, control
requests fail with "The program is not being run." (cuda-gdb's words), and
registers and memory are read-only. Damage the reader tolerates (unknown
sections, a bad note, an unreadable cubin) degrades a view and is recorded
in `notes`; it never makes a view raise.
"""
from __future__ import annotations

import bisect
from pathlib import Path
from typing import Any

import numpy as np

from gpudbg.debug.backend import (
    BackendError, BackendListener, DeviceProperties, GridStatus, GridView, LaneView,
    MemoryRegion, MemorySpace, RegionKind, RegisterValue, WarpView,
)
from gpudbg.dump.coredump import snapshot as S
from gpudbg.dump.coredump.cubin import read_cubin
from gpudbg.dump.coredump.elf import ElfError
from gpudbg.dump.coredump.embedded import rebuild_program
from gpudbg.dump.coredump.reader import CoreDump, read_coredump
from gpudbg.dump.coredump.target_memory import CoreMemory
from gpudbg.sim.faults import CUDBGException, FaultReport, HangKind

NOT_RUNNING = "The program is not being run."
RegEntry = tuple[str, str, str, int, int]   # (name, dtype, 'R'|'P', first, words)


def open_core(path: str | Path) -> "CoreBackend":
    """Open a GPU coredump; a file that is not one raises the reader's
    CoredumpError (a ValueError) naming what is wrong."""
    return CoreBackend(read_coredump(path), Path(path))


def _exception(code: int) -> CUDBGException:
    try:
        return CUDBGException(int(code))
    except ValueError:
        return CUDBGException.CUDBG_EXCEPTION_UNKNOWN


def _triple(v: Any) -> tuple[int, int, int] | None:
    return None if v is None else (int(v[0]), int(v[1]), int(v[2]))


def _dict(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


class CoreBackend:
    """The frozen device(s) of one coredump (see the module docstring)."""

    can_execute = False

    def __init__(self, core: CoreDump, path: Path | None = None):
        self.core = core
        self.path = path
        self.notes: list[str] = list(core.notes)
        self.note = _dict(core.note)
        self._listener: BackendListener | None = None
        self._warps: list[dict[tuple[int, int], tuple[S.SmState, S.CtaState, S.WarpState]]] = []
        self._functions: list[tuple[list[int], list[tuple[int, int, str, int]]]] = []
        self._programs: dict[int, Any] = {}
        self._memory: dict[int, CoreMemory] = {}
        for d in core.devices:
            self._index_device(d)
        fault = _dict(self.note.get("fault"))   # checked by note.py: ints are ints
        self._fault_lane = None
        where = [fault.get(k) for k in ("sm", "warp", "lane", "code")]
        if fault.get("hang") is None and None not in where:
            self._fault_lane = (int(where[0]), int(where[1]), int(where[2]), _exception(int(where[3])))

    # ------------------------------------------------------------ indexing
    def _index_device(self, d: S.DeviceSnapshot) -> None:
        warps = {}
        for sm in d.sms:
            for cta in sm.ctas:
                for w in cta.warps:
                    key = (sm.sm_id, w.warp_id)
                    if key in warps:
                        self.notes.append(f"device {d.dev_id}: two rows for warp {w.warp_id} on SM "
                                          f"{sm.sm_id}; the later one is shown")
                    warps[key] = (sm, cta, w)
        self._warps.append(warps)
        ranges = []
        for c in d.contexts:
            for m in c.modules:
                if m.relocated is None:
                    continue
                try:
                    info = read_cubin(m.relocated)
                except ElfError as e:
                    self.notes.append(f"module 0x{m.handle:x}: relocated cubin unreadable ({e}); "
                                      f"its functions have no names")
                    continue
                ranges += [(s.value, s.value + max(s.size, 1), s.name, m.handle) for s in info.functions]
        ranges.sort()
        self._functions.append(([r[0] for r in ranges], ranges))

    def snapshot(self, dev: int) -> S.DeviceSnapshot:
        if not isinstance(dev, (int, np.integer)) or not 0 <= dev < len(self.core.devices):
            raise BackendError("INVALID_DEVICE", f"device {dev} is not in this coredump "
                                                 f"({len(self.core.devices)} device(s))")
        return self.core.devices[int(dev)]

    def locate_warp(self, dev: int, sm: int | None, wp: int | None,
                    what: str = "this request") -> tuple[S.CtaState, S.WarpState]:
        d = self.snapshot(dev)
        if sm is None or wp is None:
            raise BackendError("INVALID_ARGS", f"{what} needs an SM and a warp")
        if not any(s.sm_id == sm for s in d.sms):
            raise BackendError("INVALID_SM", f"SM {sm} of device {dev} has no warps in this coredump")
        hit = self._warps[dev].get((sm, wp))
        if hit is None:
            raise BackendError("INVALID_WARP", f"warp {wp} on SM {sm} of device {dev} is not valid "
                                               f"in this coredump")
        return hit[1], hit[2]

    def locate_lane(self, dev: int, sm: int | None, wp: int | None, ln: int | None,
                    what: str = "this request") -> S.LaneState:
        _cta, w = self.locate_warp(dev, sm, wp, what)
        if ln is None:
            raise BackendError("INVALID_ARGS", f"{what} needs a lane")
        for lane in w.lanes:
            if lane.ln == ln:
                return lane
        raise BackendError("INVALID_LANE", f"lane {ln} of warp {wp} on SM {sm} is not valid")

    def grid_of(self, dev: int, sm: int | None, wp: int | None) -> S.GridInfo:
        d = self.snapshot(dev)
        if sm is None and wp is None:
            if len(d.grids) == 1:
                return d.grids[0]
            raise BackendError("INVALID_ARGS", f"device {dev} has {len(d.grids)} grids in this "
                                               f"coredump; name a warp (sm, wp) to pick one")
        cta, _w = self.locate_warp(dev, sm, wp, "a param read")
        for g in d.grids:
            if g.grid_id == cta.grid_id:
                return g
        raise BackendError("INVALID_GRID", f"grid {cta.grid_id} of warp {wp} on SM {sm} has no "
                                           f"grid-table row in this coredump")

    def context_of(self, dev: int, sm: int | None, wp: int | None) -> S.ContextInfo | None:
        d = self.snapshot(dev)
        if sm is not None and wp is not None:
            try:
                g = self.grid_of(dev, sm, wp)
            except BackendError:
                g = None
            for c in d.contexts:
                if g is not None and c.context_id == g.context_id:
                    return c
        return d.contexts[0] if d.contexts else None

    def symbol_at(self, dev: int, address: int) -> tuple[str, int] | None:
        """(function name, module handle) of a code address, from the
        module images' symbols, else from a rebuilt Program."""
        starts, ranges = self._functions[dev]
        i = bisect.bisect_right(starts, address) - 1
        if i >= 0 and address < ranges[i][1]:
            return ranges[i][2], ranges[i][3]
        p = self.program_of_address(dev, address)
        if p is not None:
            info = p.function_list[int(p.function_of_pc[p.pc_of_address(address)])]
            return info.name, p.code_base
        return None

    def _function_name(self, dev: int, address: int) -> str:
        hit = self.symbol_at(dev, address)
        return hit[0] if hit is not None else ""

    # ------------------------------------------------------------ protocol: setup
    def set_listener(self, listener: BackendListener | None) -> None:
        """Like libcudacore at load: a context-create per context row and a
        module load per module whose Program the core lets us rebuild."""
        self._listener = listener
        if listener is None:
            return
        for dev, d in enumerate(self.core.devices):
            for c in d.contexts:
                listener.context_event(dev, "create", c.context_id)
            for p in self.programs(dev):
                listener.module_loaded(dev, p, p.module.filename)

    def device_count(self) -> int:
        return len(self.core.devices)

    def allocations(self, dev: int) -> list[MemoryRegion]:
        """The dumped global memory segments (a core keeps contents, not
        allocation kinds: managed segments are marked, the rest is device)."""
        self.snapshot(dev)
        return [MemoryRegion(m.address, len(m.data), RegionKind.MANAGED if m.managed else RegionKind.DEVICE,
                             m.address if m.managed else None) for m in self.core.memory if m.data]

    def device(self, dev: int) -> DeviceProperties:
        d = self.snapshot(dev)
        mem = _dict(self.note.get("device")).get("global_memory", 0)
        return DeviceProperties(
            dev=int(dev), name=d.name, type_name=d.dev_type, sm_type=d.sm_type, sm_major=d.sm_major,
            sm_minor=d.sm_minor, num_sms=d.num_sms, num_warps=d.warps_per_sm,
            num_lanes=d.lanes_per_warp, num_registers=d.regs_per_lane,
            num_predicates=d.preds_per_lane, pci_bus_id=d.pci_bus, pci_dev_id=d.pci_dev,
            instruction_size=d.instruction_size or 16,
            global_memory_size=int(mem) if isinstance(mem, int) else 0)

    # ------------------------------------------------------------ grids and warps
    def grids(self, dev: int) -> list[GridView]:
        return [self._grid_view(dev, g) for g in self.snapshot(dev).grids]

    def _grid_view(self, dev: int, g: S.GridInfo) -> GridView:
        gnote = _dict(_dict(self.note.get("grids")).get(str(g.grid_id)))
        kernel = gnote.get("kernel")
        if not isinstance(kernel, str) or not kernel:
            kernel = self._function_name(dev, g.function_entry) or f"0x{g.function_entry:x}"
        try:
            status = GridStatus(g.status)
        except ValueError:
            status = GridStatus.CUDBG_GRID_STATUS_UNDETERMINED
        shared = gnote.get("dynamic_shared", 0)
        return GridView(
            dev=int(dev), grid_id=g.grid_id, kernel=kernel, entry_address=g.function_entry,
            module_id=g.module_handle, context_id=g.context_id, grid_dim=tuple(g.grid_dim),
            block_dim=tuple(g.block_dim), shared_bytes=shared if isinstance(shared, int) else 0,
            status=status, params=bytes(g.params or b""))

    def warps(self, dev: int) -> list[WarpView]:
        self.snapshot(dev)
        return [self._warp_view(dev, sm, cta, w)
                for (_s, _w), (sm, cta, w) in sorted(self._warps[dev].items())]

    def warp(self, dev: int, sm: int, wp: int) -> WarpView:
        cta, w = self.locate_warp(dev, sm, wp)
        return self._warp_view(dev, self._warps[dev][(sm, wp)][0], cta, w)

    def _lane_exception(self, sm: int, wp: int, lane: S.LaneState) -> CUDBGException:
        if self._fault_lane is not None and self._fault_lane[:3] == (sm, wp, lane.ln) and lane.exception:
            return self._fault_lane[3]   # the simulator's lane-level original
        return _exception(lane.exception)

    def _warp_view(self, dev: int, sm: S.SmState, cta: S.CtaState, w: S.WarpState) -> WarpView:
        mask = _dict(self.note.get("at_barrier")).get(f"{sm.sm_id}/{w.warp_id}", 0)
        barrier = int(mask) if isinstance(mask, int) else 0
        lanes = []
        for lane in sorted(w.lanes, key=lambda x: x.ln):
            frames = sorted(lane.backtrace, key=lambda f: f.level)
            lanes.append(LaneView(
                ln=lane.ln, thread_idx=tuple(lane.thread_idx), pc=lane.virtual_pc,
                active=bool(w.active_mask >> lane.ln & 1),
                function=self._function_name(dev, lane.virtual_pc),
                exception=self._lane_exception(sm.sm_id, w.warp_id, lane),
                call_depth=lane.call_depth,
                return_addresses=tuple(f.virtual_return_address for f in frames),
                at_barrier=bool(barrier >> lane.ln & 1)))
        active = [lv for lv in lanes if lv.active]
        pc = active[0].pc if active else min((lv.pc for lv in lanes), default=0)
        none = CUDBGException.CUDBG_EXCEPTION_NONE
        broken = bool(w.broken) or any(lv.exception != none for lv in lanes)
        return WarpView(
            dev=int(dev), sm=sm.sm_id, wp=w.warp_id, grid_id=cta.grid_id,
            block_idx=tuple(cta.block_idx), valid_mask=w.valid_mask, active_mask=w.active_mask,
            broken=broken, pc=pc, function=self._function_name(dev, pc), lanes=tuple(lanes),
            error_pc=w.error_pc if w.error_pc_valid else None,
            at_barrier=any(lv.at_barrier for lv in active))

    # ------------------------------------------------------------ programs
    def programs(self, dev: int) -> list[Any]:
        out = []
        for c in self.snapshot(dev).contexts:
            for m in c.modules:
                p = self._program(m.handle)
                if p is not None:
                    out.append(p)
        return out

    def _program(self, handle: int) -> Any:
        if handle not in self._programs:
            entry = self.core.module_entry(handle)
            program = None
            if entry:
                try:
                    program = rebuild_program(entry, handle)
                except ValueError as e:
                    self.notes.append(f"module 0x{handle:x}: no source-level debugging: {e}")
            self._programs[handle] = program
        return self._programs[handle]

    def program_of_address(self, dev: int, address: int) -> Any | None:
        for p in self.programs(dev):
            if p.pc_of_address(address) is not None:
                return p
        return None

    def sources(self, dev: int, module_handle: int) -> dict[str, str]:
        """The module's source files as embedded at dump time (file -> text)."""
        self.snapshot(dev)
        return self.core.module_sources(module_handle)

    # ------------------------------------------------------------ registers
    def register_map(self, dev: int, sm: int, wp: int, ln: int) -> list[RegEntry]:
        """How the lane's registers lie in its R/P words: our note's map
        for the function at its pc, else R0..Rn / P0..Pn as dumped."""
        lane = self.locate_lane(dev, sm, wp, ln)
        hit = self.symbol_at(dev, lane.virtual_pc)
        if hit is not None:
            regs = _dict(_dict(self.note.get("registers")).get(str(hit[1])))
            entries = regs.get(hit[0])
            if isinstance(entries, list) and entries:
                try:
                    return [self._entry(e) for e in entries]
                except (TypeError, ValueError) as e:
                    self.notes.append(f"register map of {hit[0]} is damaged ({e}); showing R0..Rn")
        preds = 0 if lane.preds is None else len(lane.preds)
        return [(f"R{i}", "uint32", "R", i, 1) for i in range(len(lane.regs))] + \
            [(f"P{i}", "bool", "P", i, 1) for i in range(preds)]

    @staticmethod
    def _entry(e: Any) -> RegEntry:
        name, dtype, cls, first, words = e
        np.dtype(dtype)
        if cls not in ("R", "P"):
            raise ValueError(f"register class {cls!r}")
        return str(name), str(dtype), cls, int(first), int(words)

    def registers(self, dev: int, sm: int, wp: int, ln: int) -> list[RegisterValue]:
        """Registers whose words are in the dump (one past R254 or in a
        missing section is unavailable and left out, as gdb shows it)."""
        lane = self.locate_lane(dev, sm, wp, ln)
        out = []
        for name, dtype, cls, first, words in self.register_map(dev, sm, wp, ln):
            dt = np.dtype(dtype)
            if cls == "P":
                if lane.preds is None or not 0 <= first < len(lane.preds):
                    continue
                out.append(RegisterValue(name, "bool", np.bool_(bool(lane.preds[first]))))
                continue
            if first < 0 or first + words > len(lane.regs) or 4 * words < dt.itemsize:
                continue
            raw = np.asarray(lane.regs[first:first + words], dtype="<u4").tobytes()
            value = np.frombuffer(raw[:dt.itemsize], dtype=dt.newbyteorder("<"))[0]
            out.append(RegisterValue(name, dt.name, value.astype(dt)))
        return out

    def read_register(self, dev: int, sm: int, wp: int, ln: int, name: str) -> Any:
        want = name if name.startswith("%") or name[:1] in "RP" and name[1:].isdigit() else "%" + name
        for r in self.registers(dev, sm, wp, ln):
            if r.name == want:
                return r.value
        raise BackendError("INVALID_ARGS", f"no register {name} in lane {ln} of warp {wp} on SM {sm}")

    def read_register_r(self, dev: int, sm: int, wp: int, ln: int, regno: int) -> int:
        lane = self.locate_lane(dev, sm, wp, ln)
        if not 0 <= regno < len(lane.regs):
            raise BackendError("INVALID_ARGS", f"R{regno} is not in the dump ({len(lane.regs)} registers)")
        return int(lane.regs[regno])

    def read_predicate(self, dev: int, sm: int, wp: int, ln: int, predno: int) -> int:
        lane = self.locate_lane(dev, sm, wp, ln)
        n = 0 if lane.preds is None else len(lane.preds)
        if not 0 <= predno < n:
            raise BackendError("INVALID_ARGS", f"P{predno} is not in the dump ({n} predicates)")
        return int(lane.preds[predno])

    def write_register(self, dev: int, sm: int, wp: int, ln: int, name: str, value: Any) -> None:
        self.locate_lane(dev, sm, wp, ln)
        raise BackendError("NOT_SUPPORTED", f"cannot write {name}: a coredump is read-only")

    # ------------------------------------------------------------ memory
    def read_memory(self, dev: int, space: MemorySpace, address: int, size: int,
                    sm: int | None = None, wp: int | None = None, ln: int | None = None) -> bytes:
        mem = self._memory.get(dev)
        if mem is None:
            self.snapshot(dev)
            mem = self._memory[dev] = CoreMemory(self, dev)
        return mem.read(space, int(address), int(size), sm, wp, ln)

    def write_memory(self, dev: int, space: MemorySpace, address: int, data: bytes,
                     sm: int | None = None, wp: int | None = None, ln: int | None = None) -> None:
        self.snapshot(dev)
        raise BackendError("NOT_SUPPORTED", f"cannot write memory at 0x{address:x}: a coredump is read-only")

    # ------------------------------------------------------------ execution control
    def is_stopped(self, dev: int) -> bool:
        """A core is a device stopped for good."""
        self.snapshot(dev)
        return True

    def _not_running(self, *_args: Any) -> None:
        raise BackendError("NOT_SUPPORTED", NOT_RUNNING)

    def suspend(self, dev: int) -> None:
        self._not_running()

    def resume(self, dev: int) -> None:
        self._not_running()

    def set_breakpoints(self, dev: int, addresses: set[int]) -> None:
        self._not_running()

    def single_step_warp(self, dev: int, sm: int, wp: int, nsteps: int) -> int:
        raise BackendError("NOT_SUPPORTED", NOT_RUNNING)

    def resume_warps_until_pc(self, dev: int, sm: int, warp_mask: int, address: int) -> None:
        self._not_running()

    def hold_threads(self, dev: int, sm: int | None, wp: int | None, ln: int | None, held: bool) -> int:
        raise BackendError("NOT_SUPPORTED", NOT_RUNNING)

    def kill(self) -> None:
        self._not_running()

    # ------------------------------------------------------------ extras
    def fault_report(self) -> FaultReport | None:
        """The simulator's report of the fault that wrote the core, as the
        note recorded it (ours only; None for a driver core or a bad note)."""
        f = _dict(self.note.get("fault"))
        try:
            kind = CUDBGException[f["kind"]]
            hang = HangKind(f["hang"]) if f.get("hang") is not None else None
            return FaultReport(
                kind=kind, message=str(f["message"]), kernel=str(f["kernel"]),
                function=str(f["function"]), pc=int(f["pc"]), instruction=str(f["instruction"]),
                ptx_line=f.get("ptx_line"), ptx_file=f.get("ptx_file"),
                source_file=f.get("source_file"), source_line=f.get("source_line"),
                block=_triple(f.get("block")), thread=_triple(f.get("thread")), sm=f.get("sm"),
                warp=f.get("warp"), lane=f.get("lane"), address=f.get("address"),
                access_size=f.get("access_size"), space=f.get("space"), hang=hang,
                grid_id=f.get("grid_id"))
        except (KeyError, TypeError, ValueError) as e:
            if f:
                self.notes.append(f"fault record of the note is damaged ({type(e).__name__}: {e})")
            return None
