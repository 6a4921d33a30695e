"""Reads `.nvcudmp` GPU coredumps, ours and those NVIDIA's driver writes,
into the snapshot model (snapshot.py).

Like libcudacore: sections are dispatched by sh_type (names are only a
convention), rows are read by sh_entsize with the field tables of tables.py
(so any layout version loads), and a child finds its parent through sh_link
(section index of the parent table) and sh_info (row). Tables are resolved
parents-first by type order, blobs (registers, memory, cubins) afterwards.
Unknown section types are skipped with a note in `CoreDump.notes`, never an
error; structural damage (a child pointing at a missing row or at a row of
the wrong table, rows too short for their table, ids outside the device's
geometry) raises CoredumpError naming the section, so every object of the
model is of the kind its parent expects. Global memory is per dump, not per
device. Our note (JSON) also carries each module's PTX and sources
(`module_ptx`); it is checked against its schema (note.py), and damage there
only drops the damaged part, with a line in `notes`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from gpudbg.dump.coredump import snapshot as S
from gpudbg.dump.coredump.cubin import CubinInfo, read_cubin
from gpudbg.dump.coredump.elf import (
    ET_CORE, EM_CUDA, SECTION_HEADER_SIZE, ElfError, ElfFile, Section, cstring, read_elf,
)
from gpudbg.dump.coredump.note import read_note
from gpudbg.dump.coredump.tables import SECTION_TABLE, SectionType as T, TableError, unpack_rows
from gpudbg.reader_error import ReaderError

# Device geometry a core may declare: generous bounds past any real GPU, so
# that a damaged row cannot make a view loop over billions of SMs or lanes.
MAX_SMS = 1 << 16
MAX_WARPS_PER_SM = 1 << 10
MAX_LANES_PER_WARP = 64
MAX_REGS_PER_LANE = 1 << 16


class CoredumpError(ReaderError, ValueError):
    """A file that is not a readable CUDA GPU coredump. `section` (index)
    and `offset` (of that section's header, or of the damaged header field)
    say where, when one place is to blame."""

    def __init__(self, message: str, section: int | None = None, offset: int | None = None):
        super().__init__(message)
        self.section = section
        self.offset = offset


@dataclass
class CoreDump:
    devices: list[S.DeviceSnapshot] = field(default_factory=list)
    memory: list[S.MemorySegment] = field(default_factory=list)
    meta: dict | None = None
    generator: str | None = None
    note: dict = field(default_factory=dict)   # our JSON note, when present
    notes: list[str] = field(default_factory=list)  # what the reader skipped or guessed

    def read_memory(self, address: int, size: int) -> bytes:
        for seg in self.memory:
            if seg.address <= address and address + size <= seg.address + len(seg.data):
                off = address - seg.address
                return seg.data[off:off + size]
        raise CoredumpError(f"0x{address:x}+{size} is not in any dumped global memory segment")

    def cubin(self, handle: int) -> CubinInfo | None:
        for d in self.devices:
            for c in d.contexts:
                for m in c.modules:
                    if m.handle == handle and m.relocated is not None:
                        return read_cubin(m.relocated)
        return None

    def register_names(self, module_handle: int, function: str) -> list[tuple[str, str, str, int, int]]:
        """Our register map (see snapshot.py) for a function, [] if unknown."""
        regs = self.note.get("registers", {}).get(str(module_handle), {})
        return [tuple(r) for r in regs.get(function, [])]

    def module_entry(self, module_handle: int) -> dict:
        """Our note's record of a module (embedded.py): name, symbols,
        fingerprint and, when it was available at dump time, its PTX."""
        entry = self.note.get("modules", {}).get(str(module_handle))
        return entry if isinstance(entry, dict) else {}

    def module_ptx(self, module_handle: int) -> str | None:
        """The PTX text the module was loaded from, if the core carries it."""
        text = self.module_entry(module_handle).get("ptx")
        return text if isinstance(text, str) else None

    def module_sources(self, module_handle: int) -> dict[str, str]:
        """Source file name -> text, for the files the module's line table names."""
        src = self.module_entry(module_handle).get("sources")
        return {str(k): v for k, v in src.items() if isinstance(v, str)} if isinstance(src, dict) else {}


# Parents before children; blob sections come after every table.
_TABLE_ORDER = [T.DEV_TABLE, T.CTX_TABLE, T.MOD_TABLE, T.GRID_TABLE, T.CB_TABLE, T.SM_TABLE,
                T.CTA_TABLE, T.WP_TABLE, T.LN_TABLE, T.BT, T.META_DATA]
# The kind of row each child section hangs under (COREDUMP-FORMAT.md §2).
_PARENT: dict[T, type] = {
    T.CTX_TABLE: S.DeviceSnapshot, T.SM_TABLE: S.DeviceSnapshot, T.GRID_TABLE: S.DeviceSnapshot,
    T.MOD_TABLE: S.ContextInfo, T.CB_TABLE: S.GridInfo, T.PARAM_MEM: S.GridInfo,
    T.CTA_TABLE: S.SmState, T.WP_TABLE: S.CtaState, T.SHARED_MEM: S.CtaState,
    T.LN_TABLE: S.WarpState, T.DEV_UREGS: S.WarpState, T.DEV_UPRED: S.WarpState, T.CBU_BAR: S.WarpState,
    T.BT: S.LaneState, T.DEV_REGS: S.LaneState, T.DEV_PRED: S.LaneState, T.LOCAL_MEM: S.LaneState,
    T.ELF_IMG: S.ModuleImage, T.RELF_IMG: S.ModuleImage,
}
_KIND: dict[type, str] = {
    S.DeviceSnapshot: "device", S.ContextInfo: "context", S.ModuleImage: "module", S.GridInfo: "grid",
    S.SmState: "SM", S.CtaState: "CTA", S.WarpState: "warp", S.LaneState: "lane", S.Frame: "backtrace",
}
_BLOBS = {T.MANAGED_MEM, T.GLOBAL_MEM, T.LOCAL_MEM, T.SHARED_MEM, T.DEV_REGS, T.ELF_IMG,
          T.RELF_IMG, T.DEV_PRED, T.PARAM_MEM, T.DEV_UREGS, T.DEV_UPRED, T.CBU_BAR, T.GPUDBG_NOTE}


def read_coredump(source: str | Path | bytes) -> CoreDump:
    """The model of a core (a path or its bytes); damage raises CoredumpError."""
    data = source if isinstance(source, (bytes, bytearray)) else Path(source).read_bytes()
    try:
        try:
            elf = read_elf(bytes(data), expect_type=ET_CORE, expect_machine=EM_CUDA)
        except ElfError as e:
            raise CoredumpError(f"not a CUDA GPU coredump: {e}", offset=e.offset) from None
        return _Reader(elf).run()
    except CoredumpError as e:
        if not isinstance(source, (bytes, bytearray)):
            e.file = str(source)
        raise


class _Reader:
    def __init__(self, elf: ElfFile):
        self.elf = elf
        self.core = CoreDump()
        st = elf.by_name(".strtab")
        self.strtab = st.data if st is not None else b""
        self.objs: dict[tuple[int, int], object] = {}   # (section index, row) -> model object
        self.section_of: dict[int, Section] = {}         # id(model object) -> its table section

    def s(self, off: int) -> str:
        try:
            return cstring(self.strtab, off)
        except ElfError:
            self.core.notes.append(f"string index {off} is outside .strtab")
            return ""

    def error(self, sec: Section, message: str) -> CoredumpError:
        return CoredumpError(f"section {sec.index} ({sec.name or 'unnamed'}): {message}", sec.index,
                             self.elf.shoff + sec.index * SECTION_HEADER_SIZE if self.elf.shoff else None)

    def parent(self, sec: Section, t: T):
        obj = self.objs.get((sec.link, sec.info))
        if obj is None:
            raise self.error(sec, f"links to row {sec.info} of section {sec.link}, which is not a "
                                  f"table row of this dump")
        want = _PARENT.get(t)
        if want is not None and not isinstance(obj, want):
            raise self.error(sec, f"a {t.name} section must hang under a {_KIND[want]} row, but row "
                                  f"{sec.info} of section {sec.link} is a {_KIND.get(type(obj), 'metadata')} row")
        return obj

    def run(self) -> CoreDump:
        by_type: dict[int, list[Section]] = {}
        for sec in self.elf.sections[1:]:
            by_type.setdefault(sec.type, []).append(sec)
        known = {int(t) for t in _TABLE_ORDER} | {int(t) for t in _BLOBS} | {3, 2, 1}
        for typ, secs in by_type.items():
            if typ not in known:
                for sec in secs:
                    self.core.notes.append(f"skipped section {sec.index} '{sec.name}' of unknown type "
                                           f"0x{typ:x} ({len(sec.data)} bytes)")
        for t in _TABLE_ORDER:
            for sec in by_type.get(int(t), []):
                try:
                    rows = unpack_rows(SECTION_TABLE[int(t)], sec.data, sec.entsize)
                except TableError as e:
                    raise self.error(sec, str(e)) from None
                for i, row in enumerate(rows):
                    obj = self.objs[(sec.index, i)] = self._row(t, sec, row)
                    self.section_of[id(obj)] = sec
        blobs = {int(b) for b in _BLOBS}
        for sec in self.elf.sections[1:]:
            if sec.type in blobs:
                self._blob(T(sec.type), sec)
        for d in self.core.devices:
            self._check_geometry(d)
        for d in self.core.devices:
            d.memory = self.core.memory
            d.note = self.core.note
        return self.core

    def _check_geometry(self, d: S.DeviceSnapshot) -> None:
        """Ids inside the device's declared geometry, within MAX_* bounds."""
        sec = self.section_of[id(d)]
        for what, value, lo, hi in (("numSMs", d.num_sms, 1, MAX_SMS),
                                    ("numWarpsPerSM", d.warps_per_sm, 1, MAX_WARPS_PER_SM),
                                    ("numLanesPerWarp", d.lanes_per_warp, 1, MAX_LANES_PER_WARP),
                                    ("numRegsPerLane", d.regs_per_lane, 0, MAX_REGS_PER_LANE),
                                    ("numPredicatesPrLane", d.preds_per_lane, 0, MAX_REGS_PER_LANE)):
            if not lo <= value <= hi:
                raise self.error(sec, f"device {d.dev_id}: {what} = {value} is outside [{lo}, {hi}]")
        for sm in d.sms:
            if sm.sm_id >= d.num_sms:
                raise self.error(self.section_of[id(sm)], f"SM {sm.sm_id} of device {d.dev_id}, which "
                                                          f"has {d.num_sms} SMs")
            for cta in sm.ctas:
                for w in cta.warps:
                    if w.warp_id >= d.warps_per_sm:
                        raise self.error(self.section_of[id(w)], f"warp {w.warp_id} on SM {sm.sm_id}, "
                                                                 f"which has {d.warps_per_sm} warp slots")
                    full = (1 << d.lanes_per_warp) - 1
                    if w.valid_mask & ~full or w.active_mask & ~full:
                        raise self.error(self.section_of[id(w)], f"warp {w.warp_id} on SM {sm.sm_id}: lane "
                                                                 f"masks name lanes past {d.lanes_per_warp}")
                    for lane in w.lanes:
                        if lane.ln >= d.lanes_per_warp:
                            raise self.error(self.section_of[id(lane)], f"lane {lane.ln} of warp {w.warp_id}"
                                                                        f", which has {d.lanes_per_warp} lanes")

    # ------------------------------------------------------------ tables
    def _row(self, t: T, sec: Section, r: dict):
        if t is T.DEV_TABLE:
            d = S.DeviceSnapshot(
                dev_id=r["devId"], name=self.s(r["devName"]), dev_type=self.s(r["devType"]),
                sm_type=self.s(r["smType"]), sm_major=r["smMajor"], sm_minor=r["smMinor"],
                num_sms=r["numSMs"], warps_per_sm=r["numWarpsPerSM"],
                lanes_per_warp=r["numLanesPerWarp"], regs_per_lane=r["numRegsPerLane"],
                preds_per_lane=r["numPredicatesPrLane"], pci_bus=r["pciBusId"], pci_dev=r["pciDevId"],
                instruction_size=r["instructionSize"], status=r["status"],
                uregs_per_warp=r.get("numUniformRegsPrWarp", 0),
                upreds_per_warp=r.get("numUniformPredicatesPrWarp", 0))
            self.core.devices.append(d)
            return d
        if t is T.META_DATA:
            self.core.meta = r
            self.core.generator = self.s(r["generatorName"])
            return r
        p = self.parent(sec, t)
        if t is T.CTX_TABLE:
            c = S.ContextInfo(r["contextId"], r["tid"], r["sharedWindowBase"], r["localWindowBase"],
                              r["globalWindowBase"])
            p.contexts.append(c)
            return c
        if t is T.MOD_TABLE:
            m = S.ModuleImage(r["moduleHandle"], f"module 0x{r['moduleHandle']:x}")
            p.modules.append(m)
            return m
        if t is T.GRID_TABLE:
            g = S.GridInfo(r["gridId64"], r["contextId"], r["function"], r["functionEntry"],
                           r["moduleHandle"], (r["gridDimX"], r["gridDimY"], r["gridDimZ"]),
                           (r["blockDimX"], r["blockDimY"], r["blockDimZ"]), r["numRegs"],
                           params_offset=r["paramsOffset"], parent_grid_id=r["parentGridId64"],
                           kernel_type=r["kernelType"], origin=r["origin"], status=r["gridStatus"],
                           launch_blocking=r["attrLaunchBlocking"], host_tid=r["attrHostTid"])
            p.grids.append(g)
            return g
        if t is T.CB_TABLE:
            p.const_banks.append((r["addr"], r["size"], r["bankId"]))
            return r
        if t is T.SM_TABLE:
            sm = S.SmState(r["smId"], exception=r.get("exception", 0),
                           error_pc=r.get("errorPC", 0), error_pc_valid=r.get("errorPCValid", 0))
            p.sms.append(sm)
            return sm
        if t is T.CTA_TABLE:
            c = S.CtaState(r["gridId64"], (r["blockIdxX"], r["blockIdxY"], r["blockIdxZ"]))
            p.ctas.append(c)
            return c
        if t is T.WP_TABLE:
            w = S.WarpState(r["warpId"], r["validLanesMask"], r["activeLanesMask"], r["isWarpBroken"],
                            r["errorPC"], r["errorPCValid"], r.get("numRegs"))
            p.warps.append(w)
            return w
        if t is T.LN_TABLE:
            ln = S.LaneState(r["ln"], (r["threadIdxX"], r["threadIdxY"], r["threadIdxZ"]),
                             r["virtualPC"], r["physPC"], r["exception"], r["callDepth"],
                             r["syscallCallDepth"], r["ccRegister"])
            p.lanes.append(ln)
            return ln
        if t is T.BT:
            f = S.Frame(r["level"], r["returnAddress"], r["virtualReturnAddress"])
            p.backtrace.append(f)
            return f
        raise CoredumpError(f"section {sec.index}: no reader for table type 0x{int(t):x}")

    # ------------------------------------------------------------ blobs
    def _blob(self, t: T, sec: Section) -> None:
        if t in (T.GLOBAL_MEM, T.MANAGED_MEM):
            self.core.memory.append(S.MemorySegment(sec.addr, sec.data, t is T.MANAGED_MEM))
            self.core.memory.sort(key=lambda m: m.address)
            return
        if t is T.GPUDBG_NOTE:
            self.core.note = read_note(sec.data, f"gpudbg note section {sec.index}", self.core.notes)
            return
        p = self.parent(sec, t)
        if t in (T.DEV_REGS, T.DEV_PRED, T.DEV_UREGS, T.DEV_UPRED, T.CBU_BAR):
            n = len(sec.data) // 4
            words = np.frombuffer(sec.data[:4 * n], dtype="<u4").astype(np.uint32)
            if t is T.DEV_REGS:
                p.regs = words
            elif t is T.DEV_PRED:
                p.preds = words.astype(np.uint8)
            elif t is T.DEV_UREGS:
                p.uregs = words
            elif t is T.DEV_UPRED:
                p.upreds = words
            else:
                self.core.notes.append(f"convergence barrier section '{sec.name}' read but not modelled")
        elif t is T.LOCAL_MEM:
            p.local, p.local_base = sec.data, sec.addr
        elif t is T.SHARED_MEM:
            p.shared = sec.data
        elif t is T.PARAM_MEM:
            p.params = sec.data
        elif t is T.RELF_IMG:
            p.relocated = sec.data
        elif t is T.ELF_IMG:
            p.nonrelocated = sec.data
