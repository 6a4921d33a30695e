"""Serialize a Devcoredump model to text exactly as the kernel prints it.

Format-driven: LAYOUTS lists, per Layout (which show() function), the
sections in the kernel's print order, and EMITTERS maps each section to the
function that prints it with the kernel's indentation and printf widths. A
model is written by walking its layout's list, so any instance round-trips
(parse(write(m)) == m) and a real dump is reproduced byte for byte.
Unknown sections are written back verbatim after the key they followed.
Blobs are encoded one dword at a time (`z` for zero), trailing zero dwords
dropped, and an all-zero blob prints no `data:` pair. It refuses a model
whose sections its layout never prints rather than reordering silently.
`write_file` puts the text on disk as every dump writer does (files.py):
atomically, mode 0600, never over an existing file.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Callable

from gpudbg.dump import ascii85
from gpudbg.dump.files import OnExisting, publish
from gpudbg.dump.devcoredump.model import (
    Devcoredump, FaultForm, FaultInfo, GmuBuffer, Layout, Register,
)

_ADRENO_BODY = ("revision", "fault-info", "pgtable-fault-info", "vm-log", "rbbm-status",
                "ringbuffer", "bos")
LAYOUTS: dict[Layout, tuple[str, ...]] = {
    Layout.ADRENO: _ADRENO_BODY + ("registers",),
    Layout.A5XX: _ADRENO_BODY + ("registers", "registers-hlsq"),
    Layout.A6XX: ("gpu-initialized",) + _ADRENO_BODY + (
        "gmu-log", "gmu-hfi", "gmu-debug", "registers", "registers-gmu", "indexed-registers",
        "shader-blocks", "clusters", "debugbus"),
}
HEADER = ("kernel", "module", "time", "comm", "cmdline")
# section key -> model attribute
ATTRS: dict[str, str] = {
    "kernel": "kernel", "module": "module", "time": "time", "comm": "comm", "cmdline": "cmdline",
    "gpu-initialized": "gpu_initialized", "revision": "revision", "fault-info": "fault_info",
    "pgtable-fault-info": "pgtable_fault_info", "vm-log": "vm_log", "rbbm-status": "rbbm_status",
    "ringbuffer": "ringbuffers", "bos": "bos", "registers": "registers",
    "registers-hlsq": "registers_hlsq", "gmu-log": "gmu_log", "gmu-hfi": "gmu_hfi",
    "gmu-debug": "gmu_debug", "registers-gmu": "registers_gmu",
    "indexed-registers": "indexed_registers", "shader-blocks": "shader_blocks",
    "clusters": "clusters", "debugbus": "debugbus",
}


class DevcoredumpWriteError(ValueError):
    """A model the kernel format cannot express."""


def _blob(out: list[str], data: bytes, payload_indent: int) -> None:
    if not data:
        return
    dwords = ascii85.trim_trailing_zeros(ascii85.dwords_from_bytes(data))
    if not dwords.size:
        return
    out.append("    data: !!ascii85 |")
    out.append(" " * payload_indent + ascii85.encode(dwords))


def _registers(out: list[str], regs: list[Register], digits: int, indent: int = 2) -> None:
    pad = " " * indent
    current_slice: int | None = None
    for r in regs:
        if not 0 <= r.value <= 0xFFFF_FFFF or r.offset < 0:
            raise DevcoredumpWriteError(f"register 0x{r.offset:x}={r.value!r} out of range")
        if r.slice is not None:
            if r.slice != current_slice:
                out.append(f"{pad}- slice: 0x{r.slice:06x}")
                current_slice = r.slice
            out.append(f"{pad}  - {{ offset: 0x{r.offset:0{digits}x}, value: 0x{r.value:08x} }}")
        else:
            out.append(f"{pad}- {{ offset: 0x{r.offset:0{digits}x}, value: 0x{r.value:08x} }}")


def _fault(out: list[str], info: FaultInfo) -> None:
    sep = "=" if info.form is FaultForm.EQUALS else ": "
    for k, v in info.items:
        out.append(f"  - {k}{sep}{v}")


def _gmu(out: list[str], buf: GmuBuffer) -> None:
    if buf.iova is not None:
        out.append(f"    iova: 0x{buf.iova:016x}")
    if buf.size is not None:
        out.append(f"    size: {buf.size}")
    for n, hist in enumerate(buf.queue_history or ()):
        out.append(f"    queue-history[{n}]: " + " ".join(str(v) for v in hist))
    _blob(out, buf.data, 5)


def _ringbuffer(out: list[str], d: Devcoredump) -> None:
    for rb in d.ringbuffers or ():
        out += [f"  - id: {rb.id}", f"    iova: 0x{rb.iova:016x}", f"    last-fence: {rb.last_fence}",
                f"    retired-fence: {rb.retired_fence}", f"    rptr: {rb.rptr}",
                f"    wptr: {rb.wptr}", f"    size: {rb.size}"]
        out += [f"    {k}: {v}" for k, v in rb.extra]
        _blob(out, rb.data, 5)


def _bos(out: list[str], d: Devcoredump) -> None:
    for bo in d.bos or ():
        out += [f"  - iova: 0x{bo.iova:016x}", f"    size: {bo.size}"]
        if bo.flags is not None:
            out.append(f"    flags: 0x{bo.flags:x}")
        if bo.name is not None:
            out.append(f"    name: {bo.name:<32}")
        out += [f"    {k}: {v}" for k, v in bo.extra]
        _blob(out, bo.data, 5)


def _indexed(out: list[str], d: Devcoredump) -> None:
    for ir in d.indexed_registers or ():
        out += [f"  - regs-name: {ir.name}", f"    dwords: {ir.dwords_count}"]
        if ir.pipe is not None:
            out.append(f"    pipe: {ir.pipe}")
        if ir.slice is not None:
            out.append(f"    slice: {ir.slice}")
        _blob(out, ir.data, 6)


def _shader_blocks(out: list[str], d: Devcoredump) -> None:
    for block in d.shader_blocks or ():
        out.append(f"  - type: {block.type}")
        previous: tuple[tuple[str, str], ...] = ()
        for entry in block.entries:
            if not entry.path:
                raise DevcoredumpWriteError(f"shader block {block.type}: entry without a bank/sp path")
            same = 0
            while same < min(len(previous), len(entry.path)) and previous[same] == entry.path[same]:
                same += 1
            if same == len(entry.path):   # identical path: reprint the innermost level
                same -= 1
            for level in range(same, len(entry.path)):
                k, v = entry.path[level]
                out.append(" " * (4 + 2 * level) + f"- {k}: {v}")
            out.append(" " * (4 + 2 * len(entry.path)) + f"size: {entry.size}")
            _blob(out, entry.data, 6)
            previous = entry.path


def _clusters(out: list[str], d: Devcoredump) -> None:
    for cluster in d.clusters or ():
        if not cluster.path:
            raise DevcoredumpWriteError("cluster without a cluster-name/pipe path")
        for level, (k, v) in enumerate(cluster.path):
            out.append(" " * (2 + 2 * level) + f"- {k}: {v}")
        indent = 2 + 2 * len(cluster.path)
        for ctx in cluster.contexts:
            out.append(" " * indent + f"- context: {ctx.context}")
            _registers(out, ctx.registers, 6, indent + 2)


def _debugbus(out: list[str], d: Devcoredump) -> None:
    for block in d.debugbus or ():
        out += [f"  - debugbus-block: {block.name}", f"    count: {block.count}"]
        _blob(out, block.data, 6)


def _vm_log(out: list[str], d: Devcoredump) -> None:
    for e in d.vm_log or ():
        out.append(f"  - {e.op}:{e.queue}: 0x{e.start:016x}-0x{e.end:016x}")


# scalar key -> its value as printed after "key: "
SCALARS: dict[str, Callable[[Devcoredump], str]] = {
    "kernel": lambda d: str(d.kernel),
    "module": lambda d: str(d.module),
    "time": lambda d: str(d.time),
    "comm": lambda d: str(d.comm),
    "cmdline": lambda d: str(d.cmdline),
    "gpu-initialized": lambda d: str(d.gpu_initialized),
    "revision": lambda d: str(d.revision),
    "rbbm-status": lambda d: f"0x{d.rbbm_status:08x}",
}
# section key -> body emitter (the "key:" header line is printed by _emit)
EMITTERS: dict[str, Callable[[list[str], Devcoredump], None]] = {
    "fault-info": lambda out, d: _fault(out, d.fault_info),  # type: ignore[arg-type]
    "pgtable-fault-info": lambda out, d: _fault(out, d.pgtable_fault_info),  # type: ignore[arg-type]
    "vm-log": _vm_log,
    "ringbuffer": _ringbuffer,
    "bos": _bos,
    "registers": lambda out, d: _registers(out, d.registers or [], d.offset_digits),
    "registers-hlsq": lambda out, d: _registers(out, d.registers_hlsq or [], d.offset_digits),
    "registers-gmu": lambda out, d: _registers(out, d.registers_gmu or [], 6),
    "gmu-log": lambda out, d: _gmu(out, d.gmu_log),  # type: ignore[arg-type]
    "gmu-hfi": lambda out, d: _gmu(out, d.gmu_hfi),  # type: ignore[arg-type]
    "gmu-debug": lambda out, d: _gmu(out, d.gmu_debug),  # type: ignore[arg-type]
    "indexed-registers": _indexed,
    "shader-blocks": _shader_blocks,
    "clusters": _clusters,
    "debugbus": _debugbus,
}


def _emit(out: list[str], key: str, d: Devcoredump) -> bool:
    if getattr(d, ATTRS[key]) is None:
        return False
    if key in SCALARS:
        value = SCALARS[key](d)
        out.append(f"{key}: {value}" if value else f"{key}:")
    else:
        out.append(f"{key}:")
        EMITTERS[key](out, d)
    return True


def write(dump: Devcoredump) -> str:
    """The dump's text, ending with a newline."""
    order = LAYOUTS[dump.layout]
    stray = [k for k, a in ATTRS.items()
             if k not in order and k not in HEADER and getattr(dump, a) is not None]
    if stray:
        raise DevcoredumpWriteError(f"the {dump.layout.value} layout never prints {stray}")
    unknown: dict[str | None, list[list[str]]] = {}
    for section in dump.unknown_sections:
        unknown.setdefault(section.after, []).append(section.lines)
    out: list[str] = []
    if dump.debugfs_title is not None:
        out.append(f"{dump.debugfs_title} Status:")
        keys: tuple[str, ...] = order
    else:
        out.append("---")
        keys = HEADER + order
    for block in unknown.pop(None, []):
        out += block
    for key in keys:
        if _emit(out, key, dump):
            for block in unknown.pop(key, []):
                out += block
    for blocks in unknown.values():       # followed a key this model no longer has
        for block in blocks:
            out += block
    return "\n".join(out) + "\n"


def write_file(dump: Devcoredump, path: str | os.PathLike[str],
               on_existing: OnExisting = OnExisting.NUMBER) -> Path:
    """Write a new file, atomically and with mode 0600 (dump/files.py): a
    taken name becomes NAME.1.devcore, ... (or FileExistsError with
    REFUSE); an existing file is never replaced. Returns the path written."""
    return publish(Path(os.path.abspath(path)), write(dump).encode("utf-8"), on_existing)
