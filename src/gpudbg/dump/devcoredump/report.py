"""Render an analyzer Summary as text for people.

Kept apart from analyzer.py so the facts (Summary, also the JSON) and their
presentation change independently; this module computes nothing new, it
only lays out what the Summary holds: header facts first, then per ring
the fences and pointers, the commands before rptr, the executing one
marked with `>>`, the pending ones, and any IB contents indented under the
call that reached them.
"""
from __future__ import annotations

from gpudbg.dump.devcoredump.analyzer import CommandView, IbView, RingSummary, Summary

_IB_LINES = 24      # packets shown per IB before eliding


def _hex_words(words: list[int], limit: int = 6) -> str:
    shown = " ".join(f"{w:08x}" for w in words[:limit])
    return shown + (" ..." if len(words) > limit else "")


def _command(out: list[str], cv: CommandView, indent: str, address: bool = False) -> None:
    mark = ">>" if cv.marker == "executing" else "  "
    where = f"0x{cv.offset:012x}" if address else f"[{cv.offset:5d}]"
    line = f"{indent}{mark} {where} {cv.text:<48} {_hex_words(cv.words)}"
    if cv.marker == "executing":
        line += "   <- executing"
    out.append(line.rstrip())
    if cv.ib is not None:
        _ib(out, cv.ib, indent + "      ")


def _ib(out: list[str], ib: IbView, indent: str) -> None:
    where = f"in bo 0x{ib.bo_iova:x} (+0x{ib.target - ib.bo_iova:x})" if ib.bo_iova is not None \
        else "not inside any dumped bo"
    head = f"{indent}IB{ib.level} -> 0x{ib.target:x}, {ib.size_dwords} dwords, {where}"
    if ib.active:
        head += f"; {ib.active} points here"
        if ib.remaining_dwords:
            head += (f", {ib.remaining_dwords} dwords not yet fetched (estimate: executing near "
                     f"0x{ib.target + 4 * (ib.size_dwords - ib.remaining_dwords):x})")
    out.append(head)
    if ib.bo_iova is not None and not ib.dumped:
        out.append(f"{indent}  (bo contents not in the dump)")
    for cv in ib.packets[:_IB_LINES]:
        _command(out, cv, indent, address=True)
    if len(ib.packets) > _IB_LINES or ib.truncated:
        out.append(f"{indent}  ... {len(ib.packets) - _IB_LINES if len(ib.packets) > _IB_LINES else 'more'}"
                   " packets not shown")


def _ring(out: list[str], r: RingSummary) -> None:
    state = "idle" if r.idle else "BUSY (work pending or fences outstanding)"
    out.append(f"ring {r.id} at 0x{r.iova:016x}, {r.size_dwords} dwords, {r.format} commands: {state}")
    out.append(f"  fences:   last {r.last_fence}, retired {r.retired_fence}"
               f" ({r.outstanding_fences} outstanding)")
    out.append(f"  pointers: rptr {r.rptr}, wptr {r.wptr}: {r.pending_dwords} dwords, "
               f"{r.pending_commands} commands pending")
    for note in r.notes:
        out.append(f"  note: {note}")
    if r.history or r.executing or r.pending:
        out.append(f"  before rptr (last {len(r.history)} of {r.history_total}, scanned from "
                   f"{r.scan_start}, {r.skipped_dwords} undecodable dwords skipped):")
        for cv in r.history:
            _command(out, cv, "    ")
        if r.executing is not None:
            _command(out, r.executing, "    ")
        out.append("  pending (rptr..wptr):" if r.pending else "  pending: none")
        for cv in r.pending:
            _command(out, cv, "    ")


def format_text(s: Summary, title: str | None = None) -> str:
    out: list[str] = []
    if title:
        out.append(f"devcoredump {title}")
    out.append(f"  device:   {s.device}")
    out.append(f"  module:   {s.module}" + (f", kernel {s.kernel}" if s.kernel else ""))
    if s.time:
        out.append(f"  time:     {s.time} ({s.time_utc})")
    if s.comm is not None or s.cmdline is not None:
        out.append(f"  process:  {s.comm or '?'}" + (f": {s.cmdline}" if s.cmdline else ""))
    if s.rbbm_status is not None:
        out.append(f"  rbbm-status: 0x{s.rbbm_status:08x} (from {s.rbbm_status_source})")
    if s.fault is None:
        out.append("  fault:    none recorded (a hang dump: no fault-info)")
    else:
        addr = "unknown" if s.fault.address is None else f"0x{s.fault.address:016x}"
        extra = ", ".join(f"{k}={v}" for k, v in s.fault.items.items() if k not in ("iova", "far"))
        out.append(f"  fault:    address {addr} ({extra})")
        if s.fault.buffer is not None:
            out.append(f"            {s.fault.buffer.description}")
        elif s.fault.address is not None:
            out.append("            no bos in the dump to place it")
    if s.key_registers:
        regs = ", ".join(f"{k}=0x{v:x}" for k, v in s.key_registers.items())
        out.append(f"  registers: {s.register_count} dumped; {regs}")
    else:
        out.append(f"  registers: {s.register_count} dumped")
    out.append(f"  bos:      {s.bo_count} ({s.bos_with_data} with contents)")
    out.append(f"  sections: {', '.join(s.sections)}")
    if s.unknown_sections:
        out.append(f"  unknown sections (kept verbatim): {', '.join(s.unknown_sections)}")
    for w in s.warnings:
        out.append(f"  warning:  {w}")
    for r in s.rings:
        _ring(out, r)
    return "\n".join(out) + "\n"
