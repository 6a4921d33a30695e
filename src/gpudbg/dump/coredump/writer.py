"""Writes a DeviceSnapshot as an `.nvcudmp` GPU coredump that NVIDIA's
cuda-gdb (tested: 11.8) opens with `target cudacore FILE`.

The file is an ELF64 ET_CORE (OSABI 0x33, ABI version 7) whose sections are
tables of fixed rows (tables.py) linked into a tree by sh_link (the parent
table's section index) and sh_info (the parent row). The writer walks the
snapshot in tree order and appends a section per table and per blob (cubin,
registers, memory), so every parent precedes its children. Rows use the r400
layouts (the 48-byte lane row 11.8 insists on); unknown-to-11.8 sections
(metadata, const banks, our JSON note) are skipped by old readers.
Generation flags are applied here as well as at capture, so a full snapshot
can be written light. Files appear atomically, with mode 0600 (a core holds
the program's memory), and never over an existing file (dump/files.py): a
taken name gets a number before the extension (core_5_7.nvcudmp ->
core_5_7.1.nvcudmp), so two faults in the same second, or a second run,
keep every dump; `gcore FILE` reports the name it used.
On-exception dumping (`on_kernel_fault`) is driven by the environment:
GPUDBG_COREDUMP_ON_EXCEPTION=1 and GPUDBG_COREDUMP_FILE (%p pid, %t time,
%h host name, %% a percent; default core_%t_%p.nvcudmp as CUDA_COREDUMP_FILE).
Where the core went (or why writing it failed) is recorded in the fault
report's details ("coredump", "coredump_error"), which `gpudbg run` and
`gpudbg check` print (`dump_notes`).
"""
from __future__ import annotations

import json
import os
import socket
import time
from pathlib import Path

import numpy as np

from gpudbg.dump.coredump import snapshot as S
from gpudbg.dump.coredump.elf import ET_CORE, Section, StringTable, write_elf
from gpudbg.dump.coredump.tables import SectionType as T, pack_rows, row_layout, WRITE_LAYOUT
from gpudbg.dump.files import OnExisting, publish

DEFAULT_PATTERN = "core_%t_%p.nvcudmp"
GENERATOR = "gpudbg simulator"


def _table(name: str, table: str, rows: list[dict], link: int = 0, info: int = 0) -> Section:
    from gpudbg.dump.coredump.tables import TABLE_SECTION
    return Section(name, int(TABLE_SECTION[table]), pack_rows(table, rows), link=link, info=info,
                   addralign=8, entsize=row_layout(table, WRITE_LAYOUT[table]).size)


def build_coredump(snap: S.DeviceSnapshot, flags: int | None = None) -> bytes:
    """The whole core file as bytes."""
    flags = int(snap.flags if flags is None else flags)
    if flags & ~S.KNOWN_FLAGS:
        raise ValueError(f"unknown CUDBGCoredumpGenerationFlags bits 0x{flags & ~S.KNOWN_FLAGS:x}")
    strtab = StringTable()
    secs: list[Section] = [Section(".strtab", 3, b"")]

    def add(s: Section) -> int:
        secs.append(s)
        return len(secs)  # its section index (index 0 is the null section)

    d = snap.dev_id
    add(_table(".cudbg.meta", "meta", [dict(
        generatorName=strtab.add(GENERATOR), flags=flags,
        timestamp=snap.timestamp & 0xFFFFFFFF)]))
    dev_row = dict(devName=strtab.add(snap.name), devType=strtab.add(snap.dev_type),
                   smType=strtab.add(snap.sm_type), devId=d, pciBusId=snap.pci_bus,
                   pciDevId=snap.pci_dev, numSMs=snap.num_sms, numWarpsPerSM=snap.warps_per_sm,
                   numLanesPerWarp=snap.lanes_per_warp, numRegsPerLane=snap.regs_per_lane,
                   numPredicatesPrLane=snap.preds_per_lane, smMajor=snap.sm_major,
                   smMinor=snap.sm_minor, instructionSize=snap.instruction_size, status=snap.status,
                   numUniformRegsPrWarp=snap.uregs_per_warp,
                   numUniformPredicatesPrWarp=snap.upreds_per_warp)
    devtbl = add(_table(".cudbg.devtbl", "device", [dev_row]))
    ctxtbl = add(_table(f".cudbg.ctxtbl.dev{d}", "context", [dict(
        contextId=c.context_id, sharedWindowBase=c.shared_window, localWindowBase=c.local_window,
        globalWindowBase=c.global_window, deviceIdx=0, tid=c.tid) for c in snap.contexts],
        devtbl, 0))
    for ci, c in enumerate(snap.contexts):
        modtbl = add(_table(f".cudbg.modtbl.dev{d}.ctx{ci}", "module",
                            [dict(moduleHandle=m.handle) for m in c.modules], ctxtbl, ci))
        for mi, m in enumerate(c.modules):
            if m.relocated is not None:
                add(Section(f".cudbg.relfimg.dev{d}.ctx{ci}", int(T.RELF_IMG), m.relocated,
                            link=modtbl, info=mi, addralign=8))
            if m.nonrelocated is not None and not flags & S.CUDBG_COREDUMP_SKIP_NONRELOCATED_ELF_IMAGES:
                add(Section(f".cudbg.elfimg.dev{d}.ctx{ci}", int(T.ELF_IMG), m.nonrelocated,
                            link=modtbl, info=mi, addralign=8))
    gridtbl = add(_table(f".cudbg.gridtbl.dev{d}", "grid", [dict(
        gridId64=g.grid_id, contextId=g.context_id, function=g.function,
        functionEntry=g.function_entry, moduleHandle=g.module_handle,
        parentGridId64=g.parent_grid_id, paramsOffset=g.params_offset, kernelType=g.kernel_type,
        origin=g.origin, gridStatus=g.status, numRegs=g.num_regs, gridDimX=g.grid_dim[0],
        gridDimY=g.grid_dim[1], gridDimZ=g.grid_dim[2], blockDimX=g.block_dim[0],
        blockDimY=g.block_dim[1], blockDimZ=g.block_dim[2], attrLaunchBlocking=g.launch_blocking,
        attrHostTid=g.host_tid) for g in snap.grids], devtbl, 0))
    for gi, g in enumerate(snap.grids):
        if g.params:
            add(Section(f".cudbg.param.dev{d}.grid{gi}", int(T.PARAM_MEM), g.params, link=gridtbl,
                        info=gi, addr=g.params_offset))
        if g.const_banks and not flags & S.CUDBG_COREDUMP_SKIP_CONSTBANK_MEMORY:
            add(_table(f".cudbg.cbankstbl.dev{d}.grid{gi}", "constbank",
                       [dict(addr=a, size=n, bankId=b) for a, n, b in g.const_banks], gridtbl, gi))
    smtbl = add(_table(f".cudbg.smtbl.dev{d}", "sm", [dict(smId=s.sm_id) for s in snap.sms],
                       devtbl, 0))
    for si, sm in enumerate(snap.sms):
        s = sm.sm_id
        ctatbl = add(_table(f".cudbg.ctatbl.dev{d}.sm{s}", "cta", [dict(
            gridId64=c.grid_id, blockIdxX=c.block_idx[0], blockIdxY=c.block_idx[1],
            blockIdxZ=c.block_idx[2]) for c in sm.ctas], smtbl, si))
        for ki, cta in enumerate(sm.ctas):
            if cta.shared is not None and not flags & S.CUDBG_COREDUMP_SKIP_SHARED_MEMORY:
                add(Section(f".cudbg.shared.dev{d}.sm{s}.cta{ki}", int(T.SHARED_MEM), cta.shared,
                            link=ctatbl, info=ki, addr=snap.contexts[0].shared_window if snap.contexts else 0))
            wptbl = add(_table(f".cudbg.wptbl.dev{d}.sm{s}.cta{ki}", "warp", [dict(
                errorPC=w.error_pc, warpId=w.warp_id, validLanesMask=w.valid_mask,
                activeLanesMask=w.active_mask, isWarpBroken=w.broken,
                errorPCValid=w.error_pc_valid) for w in cta.warps], ctatbl, ki))
            for wi, w in enumerate(cta.warps):
                _warp_sections(add, w, wptbl, wi, f"dev{d}.sm{s}.cta{ki}.wp{w.warp_id}", flags)
    for seg in snap.memory if not flags & S.CUDBG_COREDUMP_SKIP_GLOBAL_MEMORY else []:
        typ = T.MANAGED_MEM if seg.managed else T.GLOBAL_MEM
        add(Section(f".cudbg.global.0x{seg.address:x}", int(typ), seg.data, addr=seg.address))
    if snap.note:
        note = dict(snap.note, flags=flags)
        add(Section(".gpudbg.note", int(T.GPUDBG_NOTE), json.dumps(note, sort_keys=True).encode()))
    secs[0].data = strtab.bytes()
    return write_elf(secs, ET_CORE)


def _warp_sections(add, w: S.WarpState, wptbl: int, wi: int, tag: str, flags: int) -> None:
    if w.uregs is not None:
        add(Section(f".cudbg.uregs.{tag}", int(T.DEV_UREGS), np.asarray(w.uregs, np.uint32).tobytes(),
                    link=wptbl, info=wi, entsize=4))
    if w.upreds is not None:
        add(Section(f".cudbg.upred.{tag}", int(T.DEV_UPRED), np.asarray(w.upreds, np.uint32).tobytes(),
                    link=wptbl, info=wi, entsize=4))
    lntbl = add(_table(f".cudbg.lntbl.{tag}", "lane", [dict(
        virtualPC=ln.virtual_pc, physPC=ln.phys_pc, ln=ln.ln, threadIdxX=ln.thread_idx[0],
        threadIdxY=ln.thread_idx[1], threadIdxZ=ln.thread_idx[2], exception=ln.exception,
        callDepth=ln.call_depth, syscallCallDepth=ln.syscall_call_depth,
        ccRegister=ln.cc_register) for ln in w.lanes], wptbl, wi))
    for li, ln in enumerate(w.lanes):
        lt = f"{tag}.ln{ln.ln}"
        add(Section(f".cudbg.regs.{lt}", int(T.DEV_REGS), np.asarray(ln.regs, np.uint32).tobytes(),
                    link=lntbl, info=li, entsize=4))
        if ln.preds is not None and len(ln.preds):
            add(Section(f".cudbg.pred.{lt}", int(T.DEV_PRED),
                        np.asarray(ln.preds, np.uint32).tobytes(), link=lntbl, info=li, entsize=4))
        if ln.backtrace:
            add(_table(f".cudbg.bt.{lt}", "backtrace", [dict(
                returnAddress=f.return_address, virtualReturnAddress=f.virtual_return_address,
                level=f.level) for f in ln.backtrace], lntbl, li))
        if ln.local is not None and not flags & S.CUDBG_COREDUMP_SKIP_LOCAL_MEMORY:
            add(Section(f".cudbg.local.{lt}", int(T.LOCAL_MEM), ln.local, link=lntbl, info=li,
                        addr=ln.local_base))


def write_coredump(path: str | os.PathLike, snap: S.DeviceSnapshot, flags: int | None = None, *,
                   on_existing: OnExisting = OnExisting.NUMBER) -> Path:
    """Write a new file, atomically and with mode 0600 (dump/files.py); a
    taken name becomes core.1.nvcudmp, ... (or FileExistsError with REFUSE).
    Returns the path written. The directory is created if needed."""
    data = build_coredump(snap, flags)
    path = Path(path)
    directory = path.parent if str(path.parent) else Path(".")
    directory.mkdir(parents=True, exist_ok=True)
    return publish(path, data, on_existing)


def expand_pattern(pattern: str, now: float | None = None, pid: int | None = None) -> str:
    """CUDA_COREDUMP_FILE-style names: %p pid, %t time (seconds), %h host, %% percent."""
    now = time.time() if now is None else now
    out, i = [], 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "%" and i + 1 < len(pattern):
            nxt = pattern[i + 1]
            rep = {"p": str(os.getpid() if pid is None else pid), "t": str(int(now)),
                   "h": socket.gethostname(), "%": "%"}.get(nxt)
            if rep is None:
                raise ValueError(f"GPUDBG_COREDUMP_FILE pattern {pattern!r}: unknown specifier %{nxt} "
                                 f"(use %p, %t, %h or %%)")
            out.append(rep)
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def on_exception_enabled() -> bool:
    return os.environ.get("GPUDBG_COREDUMP_ON_EXCEPTION", "").strip().lower() in ("1", "true", "yes", "on")


def on_kernel_fault(gpu, fault) -> Path | None:
    """The front end's hook: if on-exception dumping is on and the fault
    carries its wave, write the core and record its path in the report.
    Never raises: a failed dump is noted in the report instead."""
    if not on_exception_enabled():
        return None
    wave = getattr(fault, "wave", None)
    report = getattr(fault, "report", None)
    if wave is None or report is None:
        return None
    try:
        snap = S.snapshot_from_wave(wave, report)
        path = Path(expand_pattern(os.environ.get("GPUDBG_COREDUMP_FILE") or DEFAULT_PATTERN))
        path = write_coredump(path, snap)
    except Exception as e:  # the fault itself must still reach the host
        report.details["coredump_error"] = f"{type(e).__name__}: {e}"
        return None
    report.details["coredump"] = str(path.resolve())
    return path
