"""Section parsers: one function per section header, body lines -> model.

Each parser receives the section's indented body (already split into Lines)
and returns the model value, raising DevcoredumpError at the offending line.
Nested a6xx/a7xx/a8xx sections (shader-blocks, clusters) are parsed by
indentation depth, not by a fixed schema, because the nesting grew a level
with every generation (bank -> pipe/sp/usptp -> pipe/location/sp/ctx) while
the rules stayed the same: `- key: value` opens a level, `size:` closes an
entry, and `data:` is always at indent 4. Warnings for input the kernel is
known to vary on are appended to the list passed in.
"""
from __future__ import annotations

import re
from typing import Callable

from gpudbg.dump.devcoredump import lexer as lx
from gpudbg.dump.devcoredump.errors import DevcoredumpError
from gpudbg.dump.devcoredump.model import (
    BufferObject, Cluster, ClusterContext, DebugbusBlock, FaultForm, FaultInfo, GmuBuffer,
    IndexedRegisters, ParseWarning, Register, Ringbuffer, ShaderBlock, ShaderEntry, VmLogEntry,
)

Warnings = list[ParseWarning]
_VMLOG = re.compile(r"- ([A-Za-z_]+):(-?\d{1,10}): 0x([0-9a-fA-F]{1,16})-0x([0-9a-fA-F]{1,16})")
_QUEUE_HISTORY = re.compile(r"queue-history\[(\d{1,9})\]")
# The kernel's rings are 32 KiB (MSM_GPU_RINGBUFFER_SZ); a declared ring
# larger than this is refused rather than walked dword by dword.
MAX_RING_BYTES = 1 << 22
# fault-info keys whose values are hex without 0x and must parse as numbers
_FAULT_HEX_KEYS = ("ttbr0", "iova", "far")


def ringbuffer(body: list[lx.Line], warnings: Warnings) -> list[Ringbuffer]:
    known = ("id", "iova", "last-fence", "retired-fence", "rptr", "wptr", "size")
    rings: list[Ringbuffer] = []
    for item in lx.flat_list(body, "ringbuffer"):
        what = f"ringbuffer element at line {item.line.no}"
        rb = Ringbuffer(
            id=item.udec("id", what), iova=item.hex("iova", what),
            last_fence=item.dec("last-fence", what), retired_fence=item.dec("retired-fence", what),
            rptr=item.udec("rptr", what), wptr=item.udec("wptr", what), size=item.udec("size", what),
            extra=_extra(item, known, what, warnings))
        if rb.size % 4 or rb.size == 0:
            raise DevcoredumpError(item.fields["size"][1].no,
                                   f"ringbuffer {rb.id}: size {rb.size} is not a positive multiple of 4")
        if rb.size > MAX_RING_BYTES:
            raise DevcoredumpError(item.fields["size"][1].no, f"ringbuffer {rb.id}: size {rb.size} is over "
                                   f"the {MAX_RING_BYTES} bytes this reader walks (the kernel's rings "
                                   f"are 32768)")
        for key, ptr in (("rptr", rb.rptr), ("wptr", rb.wptr)):
            if ptr >= rb.size_dwords:
                raise DevcoredumpError(item.fields[key][1].no, f"ringbuffer {rb.id}: {key} {ptr} is "
                                       f"outside the ring of {rb.size_dwords} dwords")
        if item.data is not None:
            lx.check_length(item.data, rb.size, item.data_line, f"ringbuffer {rb.id}")
            rb.data = item.data
            rb.__post_init__()
        if any(r.id == rb.id for r in rings):
            raise DevcoredumpError(item.line.no, f"duplicate ringbuffer id {rb.id}")
        rings.append(rb)
    return rings


def bos(body: list[lx.Line], warnings: Warnings) -> list[BufferObject]:
    out: list[BufferObject] = []
    for item in lx.flat_list(body, "bos"):
        what = f"bo at line {item.line.no}"
        bo = BufferObject(iova=item.hex("iova", what), size=item.udec("size", what, bits=63),  # %zd
                          extra=_extra(item, ("iova", "size", "flags", "name"), what, warnings))
        if item.has("flags"):
            bo.flags = item.hex("flags", what)
        if item.has("name"):
            bo.name = item.text("name", what)
        if item.data is not None:
            lx.check_length(item.data, bo.size, item.data_line, f"bo 0x{bo.iova:x}")
            bo.data = item.data
            bo.__post_init__()
        out.append(bo)
    return out


def _extra(item: lx.Item, known: tuple[str, ...], what: str, warnings: Warnings) -> list[tuple[str, str]]:
    extra = []
    for key, (value, line) in item.fields.items():
        if key not in known:
            warnings.append(ParseWarning(line.no, f"{what}: unknown field {lx.show(key)} kept as text"))
            extra.append((key, value or ""))
    return extra


def registers(body: list[lx.Line], warnings: Warnings, what: str = "registers") -> list[Register]:
    regs: list[Register] = []
    slice_: int | None = None
    for line in body:
        if line.indent == 2 and lx.is_register(line) and slice_ is None:
            regs.append(lx.register(line))
        elif line.indent == 2 and line.text.startswith("- slice:"):
            _, value = lx.split_kv(line, what)
            slice_ = lx.hex0x(line, value, f"{what} slice", 32)
        elif line.indent == 4 and slice_ is not None and lx.is_register(line):
            regs.append(lx.register(line, slice_))
        else:
            raise DevcoredumpError(line.no, f"{what}: unexpected line {lx.show(line.text, 80)} at indent {line.indent}")
    return regs


def fault_info(body: list[lx.Line], warnings: Warnings, what: str = "fault-info") -> FaultInfo:
    items: list[tuple[str, str]] = []
    form: FaultForm | None = None
    for line in body:
        if line.indent != 2 or not line.text.startswith("- "):
            raise DevcoredumpError(line.no, f"{what}: expected '  - key=value' or '  - key: value', "
                                   f"got {lx.show(line.text, 80)}")
        text = line.text[2:]
        eq, colon = text.find("="), text.find(": ")
        if eq > 0 and (colon < 0 or eq < colon):
            key, value, this = text[:eq], text[eq + 1:], FaultForm.EQUALS
        elif colon > 0:
            key, value, this = text[:colon], text[colon + 2:], FaultForm.COLON
        else:
            raise DevcoredumpError(line.no, f"{what}: item {lx.show(line.text, 80)} is neither key=value nor key: value")
        if form is None:
            form = this
        elif form is not this:
            warnings.append(ParseWarning(line.no, f"{what}: mixes 'key=value' and 'key: value' items"))
        if key in _FAULT_HEX_KEYS:
            lx.bare_hex(line, value, f"{what} {key}")
        items.append((key, value))
    return FaultInfo(items, form or FaultForm.EQUALS)


def vm_log(body: list[lx.Line], warnings: Warnings) -> list[VmLogEntry]:
    out = []
    for line in body:
        m = _VMLOG.fullmatch(line.text)
        if line.indent != 2 or m is None:
            raise DevcoredumpError(line.no, f"vm-log: expected '  - op:queue: 0x<start>-0x<end>', "
                                   f"got {lx.show(line.text, 80)}")
        out.append(VmLogEntry(m.group(1), int(m.group(2)), int(m.group(3), 16), int(m.group(4), 16)))
    return out


def gmu(body: list[lx.Line], warnings: Warnings, what: str) -> GmuBuffer:
    buf = GmuBuffer()
    seen: dict[str, int] = {}
    i = 0
    while i < len(body):
        line = body[i]
        if line.indent != 4 or line.text.startswith("- "):
            raise DevcoredumpError(line.no, f"{what}: fields are indented 4 spaces with no '- ', "
                                   f"got {lx.show(line.text, 80)} at indent {line.indent}")
        key, value = lx.split_kv(line, what)
        if key in seen:
            raise DevcoredumpError(line.no, f"{what}: duplicate {lx.show(key + ':')} (first at line {seen[key]})")
        seen[key] = line.no
        m = _QUEUE_HISTORY.fullmatch(key)
        if key == "iova":
            buf.iova = lx.hex0x(line, value, f"{what} iova")
        elif key == "size":
            buf.size = lx.udec(line, value, f"{what} size")
        elif m is not None:
            history = buf.queue_history if buf.queue_history is not None else []
            if int(m.group(1)) != len(history):
                raise DevcoredumpError(line.no, f"{what}: {key} out of order (expected "
                                       f"queue-history[{len(history)}])")
            history.append([lx.dec(line, v, f"{what} {key}") for v in (value or "").split()])
            buf.queue_history = history
        elif key == "data":
            data, i = lx.read_blob(body, i, what)
            if buf.size is None:
                raise DevcoredumpError(line.no, f"{what}: data before 'size:'")
            lx.check_length(data, buf.size, line.no, what)
            buf.data = data
            buf.__post_init__()
            continue
        else:
            raise DevcoredumpError(line.no, f"{what}: unknown field {lx.show(key)}")
        i += 1
    return buf


def indexed_registers(body: list[lx.Line], warnings: Warnings) -> list[IndexedRegisters]:
    out = []
    for item in lx.flat_list(body, "indexed-registers"):
        what = f"indexed-registers element at line {item.line.no}"
        ir = IndexedRegisters(item.text("regs-name", what), item.udec("dwords", what))
        for key in item.fields:
            if key not in ("regs-name", "dwords", "pipe", "slice"):
                raise DevcoredumpError(item.fields[key][1].no, f"{what}: unknown field {lx.show(key)}")
        if item.has("pipe"):
            ir.pipe = item.udec("pipe", what)
        if item.has("slice"):
            ir.slice = item.udec("slice", what)
        if item.data is not None:
            lx.check_length(item.data, ir.dwords_count * 4, item.data_line, f"indexed-registers {ir.name}")
            ir.data = item.data
            ir.__post_init__()
        out.append(ir)
    return out


def debugbus(body: list[lx.Line], warnings: Warnings) -> list[DebugbusBlock]:
    out = []
    for item in lx.flat_list(body, "debugbus"):
        what = f"debugbus element at line {item.line.no}"
        block = DebugbusBlock(item.text("debugbus-block", what), item.udec("count", what))
        for key in item.fields:
            if key not in ("debugbus-block", "count"):
                raise DevcoredumpError(item.fields[key][1].no, f"{what}: unknown field {lx.show(key)}")
        if item.data is not None:
            lx.check_length(item.data, block.count * 4, item.data_line, f"debugbus {block.name}")
            block.data = item.data
            block.__post_init__()
        out.append(block)
    return out


def shader_blocks(body: list[lx.Line], warnings: Warnings) -> list[ShaderBlock]:
    blocks: list[ShaderBlock] = []
    path: list[tuple[str, str]] = []
    i = 0
    while i < len(body):
        line = body[i]
        if line.indent == 2 and line.text.startswith("- "):
            key, value = lx.split_kv(line, "shader-blocks")
            if key != "type" or value is None:
                raise DevcoredumpError(line.no, f"shader-blocks: items start '- type: NAME', got {lx.show(line.text, 80)}")
            blocks.append(ShaderBlock(value))
            path = []
            i += 1
            continue
        if not blocks:
            raise DevcoredumpError(line.no, "shader-blocks: line before the first '- type:'")
        block = blocks[-1]
        if line.text.startswith("data:") and line.indent == 4:
            if not block.entries or block.entries[-1].data:
                raise DevcoredumpError(line.no, "shader-blocks: data without a preceding 'size:'")
            data, i = lx.read_blob(body, i, f"shader block {block.type}")
            entry = block.entries[-1]
            lx.check_length(data, entry.size * 4, line.no, f"shader block {block.type} {entry.path}")
            entry.data = data
            entry.__post_init__()
            continue
        if line.text.startswith("- ") and line.indent >= 4 and line.indent % 2 == 0:
            level = (line.indent - 4) // 2
            if level > len(path):
                raise DevcoredumpError(line.no, f"shader-blocks: {lx.show(line.text, 80)} is nested "
                                       f"{level - len(path)} level(s) too deep")
            key, value = lx.split_kv(line, "shader-blocks")
            del path[level:]
            path.append((key, value or ""))
            i += 1
            continue
        if line.text.startswith("size:"):
            expected = 4 + 2 * len(path)
            if line.indent != expected or not path:
                raise DevcoredumpError(line.no, f"shader-blocks: 'size:' at indent {line.indent}, "
                                       f"expected {expected} under {path or 'no - bank/- sp line'}")
            _, value = lx.split_kv(line, "shader-blocks")
            block.entries.append(ShaderEntry(tuple(path), lx.udec(line, value, "shader-blocks size")))
            i += 1
            continue
        raise DevcoredumpError(line.no, f"shader-blocks: unexpected line {lx.show(line.text, 80)} at indent {line.indent}")
    return blocks


def clusters(body: list[lx.Line], warnings: Warnings) -> list[Cluster]:
    out: list[Cluster] = []
    ctx_indent = -1
    for line in body:
        if lx.is_register(line):
            if not out or not out[-1].contexts or line.indent != ctx_indent + 2:
                raise DevcoredumpError(line.no, "clusters: register line not directly under a '- context:' "
                                       f"(indent {line.indent})")
            out[-1].contexts[-1].registers.append(lx.register(line))
            continue
        if not line.text.startswith("- ") or line.indent % 2:
            raise DevcoredumpError(line.no, f"clusters: unexpected line {lx.show(line.text, 80)} at indent {line.indent}")
        key, value = lx.split_kv(line, "clusters")
        level = (line.indent - 2) // 2
        if key == "context":
            if not out or level != len(out[-1].path):
                raise DevcoredumpError(line.no, f"clusters: '- context:' at indent {line.indent} does not "
                                       "follow a cluster header")
            out[-1].contexts.append(ClusterContext(lx.udec(line, value, "clusters context")))
            ctx_indent = line.indent
            continue
        if level == 0:
            out.append(Cluster(((key, value or ""),)))
            continue
        if not out or level > len(out[-1].path):
            raise DevcoredumpError(line.no, f"clusters: {lx.show(line.text, 80)} is nested too deep")
        current = out[-1]
        if current.contexts or level < len(current.path):
            out.append(Cluster(current.path[:level] + ((key, value or ""),)))
        else:
            current.path = current.path + ((key, value or ""),)
    return out


SectionParser = Callable[[list[lx.Line], Warnings], object]

# header -> (model attribute, parser)
SECTIONS: dict[str, tuple[str, SectionParser]] = {
    "fault-info": ("fault_info", fault_info),
    "pgtable-fault-info": ("pgtable_fault_info",
                           lambda b, w: fault_info(b, w, "pgtable-fault-info")),
    "vm-log": ("vm_log", vm_log),
    "ringbuffer": ("ringbuffers", ringbuffer),
    "bos": ("bos", bos),
    "registers": ("registers", registers),
    "registers-hlsq": ("registers_hlsq", lambda b, w: registers(b, w, "registers-hlsq")),
    "registers-gmu": ("registers_gmu", lambda b, w: registers(b, w, "registers-gmu")),
    "gmu-log": ("gmu_log", lambda b, w: gmu(b, w, "gmu-log")),
    "gmu-hfi": ("gmu_hfi", lambda b, w: gmu(b, w, "gmu-hfi")),
    "gmu-debug": ("gmu_debug", lambda b, w: gmu(b, w, "gmu-debug")),
    "indexed-registers": ("indexed_registers", indexed_registers),
    "shader-blocks": ("shader_blocks", shader_blocks),
    "clusters": ("clusters", clusters),
    "debugbus": ("debugbus", debugbus),
}
