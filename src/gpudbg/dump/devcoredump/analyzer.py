"""Summarize a devcoredump: what hung or faulted, where, and what was queued.

The summary is a tree of plain dataclasses so that `to_dict` (JSON) and
`format_text` (people) show the same facts. Ring contents are decoded by a
command format chosen from the dump's `module:` line (DECODERS): "msm"
dumps hold Adreno PM4 (pm4.py), "gpudbg" dumps hold our simulator's ring
commands (gpudbg.driver.commands), so one tool reads both. For PM4 the
packet executing is the one the CP fetched last (it straddles rptr or ends
at it); for our rings, rptr is the head command the front end is running.
It reports what the dump says and marks estimates as such; it does not
name registers beyond a handful of a6xx CP/RBBM ones.
"""
from __future__ import annotations

import dataclasses
import datetime
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from gpudbg.dump.devcoredump import pm4, ringwalk
from gpudbg.dump.devcoredump.model import BufferObject, Devcoredump, Ringbuffer

# a6xx register dword indices (Mesa's a6xx register database); 64-bit ones
# are lo/hi pairs
A6XX_KEY_REGISTERS: dict[str, tuple[int, int]] = {
    "RBBM_STATUS": (0x210, 32), "RBBM_STATUS3": (0x213, 32),
    "CP_RB_BASE": (0x800, 64), "CP_RB_RPTR": (0x806, 32), "CP_RB_WPTR": (0x807, 32),
    "CP_HW_FAULT": (0x821, 32), "CP_INTERRUPT_STATUS": (0x823, 32),
    "CP_PROTECT_STATUS": (0x824, 32), "CP_STATUS_1": (0x825, 32),
    "CP_IB1_BASE": (0x928, 64), "CP_IB1_REM_SIZE": (0x92A, 32),
    "CP_IB2_BASE": (0x92B, 64), "CP_IB2_REM_SIZE": (0x92D, 32),
}


@dataclass
class BufferHit:
    relation: str               # "inside", "past-end", "before"
    bo_iova: int
    bo_size: int
    distance: int               # bytes: offset inside, or gap outside
    description: str


@dataclass
class FaultSummary:
    address: int | None
    form: str
    items: dict[str, str]
    buffer: BufferHit | None


@dataclass
class CommandView:
    offset: int                 # ring dword index, or iova inside an IB
    size: int                   # dwords
    text: str
    words: list[int]
    marker: str | None = None   # "executing", "next"
    ib: "IbView | None" = None


@dataclass
class IbView:
    level: int
    target: int
    size_dwords: int
    bo_iova: int | None
    dumped: bool
    active: str | None          # "CP_IB1_BASE" when the CP register points here
    remaining_dwords: int | None
    packets: list[CommandView] = field(default_factory=list)
    truncated: bool = False


@dataclass
class RingSummary:
    id: int
    iova: int
    size_dwords: int
    last_fence: int
    retired_fence: int
    outstanding_fences: int
    rptr: int
    wptr: int
    pending_dwords: int
    pending_commands: int
    idle: bool
    format: str                 # "pm4" or "gpudbg"
    scan_start: int
    history_total: int
    skipped_dwords: int
    history: list[CommandView] = field(default_factory=list)
    executing: CommandView | None = None
    pending: list[CommandView] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass
class Summary:
    module: str | None
    kernel: str | None
    time: str | None
    time_utc: str | None
    comm: str | None
    cmdline: str | None
    device: str
    gpu_id: int | None
    chip_id: str | None
    layout: str
    rbbm_status: int | None
    rbbm_status_source: str
    fault: FaultSummary | None
    rings: list[RingSummary]
    bo_count: int
    bos_with_data: int
    register_count: int
    key_registers: dict[str, int]
    sections: list[str]
    unknown_sections: list[str]
    warnings: list[str]


def locate(address: int, bos: list[BufferObject]) -> BufferHit | None:
    """The bo holding `address`, else the closest one before or after it."""
    best: BufferHit | None = None
    for bo in bos:
        if bo.iova <= address < bo.end:
            off = address - bo.iova
            return BufferHit("inside", bo.iova, bo.size, off,
                             f"{off} bytes into bo at 0x{bo.iova:x} (size {bo.size})")
        if address >= bo.end:
            hit = BufferHit("past-end", bo.iova, bo.size, address - bo.end,
                            f"{address - bo.end} bytes past the end of bo at 0x{bo.iova:x} (size {bo.size})")
        else:
            hit = BufferHit("before", bo.iova, bo.size, bo.iova - address,
                            f"{bo.iova - address} bytes before bo at 0x{bo.iova:x} (size {bo.size})")
        if best is None or hit.distance < best.distance:
            best = hit
    return best


def _generation(dump: Devcoredump) -> int:
    if dump.revision is not None and 2 <= dump.revision.core <= 8:
        return dump.revision.core
    return 6 if dump.layout.value == "a6xx" else 5 if dump.layout.value == "a5xx" else 3


def key_registers(dump: Devcoredump) -> dict[str, int]:
    if _generation(dump) != 6 or not dump.registers:
        return {}
    out: dict[str, int] = {}
    for name, (index, bits) in A6XX_KEY_REGISTERS.items():
        v = dump.register64(index * 4) if bits == 64 else dump.register(index * 4)
        if v is not None:
            out[name] = v
    return out


def _view(entry: ringwalk.Entry, text: Callable[[Any], str]) -> CommandView:
    label = text(entry.item) if entry.item is not None else f"(not a valid header: 0x{entry.words[0]:08x})"
    return CommandView(entry.offset, entry.size, label, list(entry.words))


def _ib_view(ib: pm4.IndirectBuffer, regs: dict[str, int]) -> IbView:
    active, remaining = None, None
    name = f"CP_IB{ib.level}_BASE"
    if regs.get(name) == ib.target:
        active = name
        remaining = regs.get(f"CP_IB{ib.level}_REM_SIZE")
    view = IbView(ib.level, ib.target, ib.size_dwords, ib.bo.iova if ib.bo else None, ib.dumped,
                  active, remaining, truncated=ib.truncated)
    for sp in ib.packets:
        label = sp.packet.label() if sp.packet else f"(not a valid header: 0x{sp.words[0]:08x})"
        cv = CommandView(sp.address, len(sp.words), label, list(sp.words))
        if sp.ib is not None:
            cv.ib = _ib_view(sp.ib, regs)
        view.packets.append(cv)
    return view


def _pm4_ring(dump: Devcoredump, rb: Ringbuffer, count: int, summary: RingSummary) -> None:
    gen = _generation(dump)
    walk = pm4.walk_ring(rb.dwords(), rb.rptr, rb.wptr, gen, count, len(rb.data) // 4)
    regs = key_registers(dump)
    bos = dump.bos or []

    def view(entry: ringwalk.Entry) -> CommandView:
        cv = _view(entry, lambda p: p.label())
        if entry.item is not None:
            tgt = pm4.ib_target(entry.item, entry.words[1:], gen)
            if tgt is not None:
                cv.ib = _ib_view(pm4.follow_ib(tgt[0], tgt[1], 1, bos, gen), regs)
        return cv

    summary.scan_start, summary.history_total = walk.start, walk.history_total
    summary.skipped_dwords = walk.skipped_dwords
    summary.history = [view(e) for e in walk.history]
    summary.pending = [view(e) for e in walk.pending]
    summary.pending_commands = sum(1 for e in walk.pending if e.item is not None)
    if walk.straddling is not None:
        summary.executing = view(walk.straddling)
        summary.executing.marker = "executing"
        summary.notes.append(f"rptr {rb.rptr} is inside the packet at {walk.straddling.offset}: "
                             "the CP fetched it and is executing it")
    elif summary.history and not summary.idle:
        summary.executing = summary.history.pop()
        summary.executing.marker = "executing"
        summary.notes.append("the packet ending at rptr is the last one the CP fetched (estimate)")
    if walk.pending_truncated:
        summary.notes.append("the last pending packet runs past wptr")
    if regs.get("CP_RB_BASE") is not None and regs["CP_RB_BASE"] != rb.iova and rb.id == 0:
        summary.notes.append(f"CP_RB_BASE 0x{regs['CP_RB_BASE']:x} is not this ring's iova")


def _gpudbg_ring(dump: Devcoredump, rb: Ringbuffer, count: int, summary: RingSummary) -> None:
    from gpudbg.driver import commands as C

    def decode(words: np.ndarray, offset: int) -> tuple[int, Any] | None:
        n = len(words)
        try:
            cmd = C.decode_one(lambda i: int(words[(offset + i) % n]), offset, f"ring {rb.id}")
        except C.CommandDecodeError:
            return None
        return cmd.size_words, cmd

    def text(cmd: Any) -> str:
        label = repr(cmd)
        if cmd.opcode is C.Opcode.LAUNCH:
            bo = pm4.find_bo(dump.bos or [], cmd.descriptor)
            if bo is not None:
                start = cmd.descriptor - bo.iova
                raw = bo.window_bytes(start, C.DESCRIPTOR_BYTES)
                if len(raw) == C.DESCRIPTOR_BYTES:
                    d = C.decode_descriptor(raw)
                    label += (f" grid ({d['grid_x']},{d['grid_y']},{d['grid_z']}) block "
                              f"({d['block_x']},{d['block_y']},{d['block_z']}) code 0x{d['code_address']:x}")
        return label

    walk = ringwalk.walk(rb.dwords(), rb.rptr, rb.wptr, decode, count, len(rb.data) // 4)
    summary.scan_start, summary.history_total = walk.start, walk.history_total
    summary.skipped_dwords = walk.skipped_dwords
    summary.history = [_view(e, text) for e in walk.history]
    summary.pending = [_view(e, text) for e in walk.pending]
    summary.pending_commands = sum(1 for e in walk.pending if e.item is not None)
    if walk.straddling is not None:
        summary.notes.append(f"rptr {rb.rptr} is inside the command at {walk.straddling.offset}: "
                             "the ring is corrupt or was scanned from a wrong start")
    if summary.pending and summary.pending[0].offset == rb.rptr:
        summary.executing = summary.pending.pop(0)
        summary.executing.marker = "executing"
    for e in walk.pending:
        if e.item is None:
            summary.notes.append(f"word {e.offset} (0x{e.words[0]:08x}) is not a valid command")
            break


# module: value -> ring decoder
DECODERS: dict[str, Callable[[Devcoredump, Ringbuffer, int, RingSummary], None]] = {
    "msm": _pm4_ring,
    "gpudbg": _gpudbg_ring,
}


def _ring(dump: Devcoredump, rb: Ringbuffer, count: int) -> RingSummary:
    pending = (rb.wptr - rb.rptr) % rb.size_dwords
    idle = pending == 0 and rb.retired_fence == rb.last_fence
    fmt = "gpudbg" if dump.module == "gpudbg" else "pm4"
    s = RingSummary(rb.id, rb.iova, rb.size_dwords, rb.last_fence, rb.retired_fence,
                    (rb.last_fence - rb.retired_fence) & 0xFFFF_FFFF, rb.rptr, rb.wptr, pending, 0,
                    idle, fmt, 0, 0, 0)
    if not rb.data:
        s.notes.append("no ring contents in the dump (all zero)")
        return s
    DECODERS[fmt if fmt == "gpudbg" else "msm"](dump, rb, count, s)
    return s


def _device(dump: Devcoredump) -> str:
    rev = dump.revision
    if dump.module == "gpudbg":
        return "gpudbg simulated GPU" + (f", revision {rev}" if rev else "")
    if rev is None:
        return f"unknown Adreno ({dump.layout.value} layout)"
    name = f"Adreno {rev.gpu_id}" if rev.gpu_id else "Adreno (no legacy id)"
    return f"{name}, chip id {'.'.join(map(str, rev.parts))} ({dump.layout.value} layout)"


def analyze(dump: Devcoredump, packets: int = 16) -> Summary:
    """The summary; `packets` is how many commands before rptr to decode."""
    regs = key_registers(dump)
    if dump.layout.value == "a6xx" and "RBBM_STATUS" in regs:
        rbbm, source = regs["RBBM_STATUS"], "register RBBM_STATUS (0x840); a6xx prints rbbm-status as 0"
    else:
        rbbm, source = dump.rbbm_status, "rbbm-status line"
    fault = None
    if dump.fault_info is not None:
        addr = dump.fault_info.address
        fault = FaultSummary(addr, dump.fault_info.form.value, dict(dump.fault_info.items),
                             locate(addr, dump.bos or []) if addr is not None else None)
    utc = None
    if dump.time is not None:
        try:
            utc = datetime.datetime.fromtimestamp(dump.time.seconds, datetime.timezone.utc).strftime(
                "%Y-%m-%d %H:%M:%S UTC")
        except (OverflowError, OSError, ValueError):   # past what a date can show: seconds only
            utc = None
    present = [k for k, a in _SECTION_ATTRS if getattr(dump, a) is not None]
    return Summary(
        module=dump.module, kernel=dump.kernel, time=str(dump.time) if dump.time else None, time_utc=utc,
        comm=dump.comm, cmdline=dump.cmdline, device=_device(dump),
        gpu_id=dump.revision.gpu_id if dump.revision else None,
        chip_id=".".join(map(str, dump.revision.parts)) if dump.revision else None,
        layout=dump.layout.value, rbbm_status=rbbm, rbbm_status_source=source, fault=fault,
        rings=[_ring(dump, rb, packets) for rb in dump.ringbuffers or ()],
        bo_count=len(dump.bos or ()), bos_with_data=sum(1 for b in dump.bos or () if b.data),
        register_count=len(dump.registers or ()), key_registers=regs, sections=present,
        unknown_sections=[f"{u.name} (lines {u.start_line}-{u.end_line})" for u in dump.unknown_sections],
        warnings=[str(w) for w in dump.warnings])


_SECTION_ATTRS = (
    ("gpu-initialized", "gpu_initialized"), ("fault-info", "fault_info"),
    ("pgtable-fault-info", "pgtable_fault_info"), ("vm-log", "vm_log"), ("ringbuffer", "ringbuffers"),
    ("bos", "bos"), ("registers", "registers"), ("registers-hlsq", "registers_hlsq"),
    ("gmu-log", "gmu_log"), ("gmu-hfi", "gmu_hfi"), ("gmu-debug", "gmu_debug"),
    ("registers-gmu", "registers_gmu"), ("indexed-registers", "indexed_registers"),
    ("shader-blocks", "shader_blocks"), ("clusters", "clusters"), ("debugbus", "debugbus"),
)


def to_dict(summary: Summary) -> dict[str, Any]:
    return dataclasses.asdict(summary)
