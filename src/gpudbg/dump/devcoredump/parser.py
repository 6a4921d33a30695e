"""Parse drm/msm GPU devcoredump text (a2xx-a8xx layouts) into the model.

The one idea: crashdec's rule that a section is a column-0 line followed by
every line that starts with a space. The top level is therefore a flat
sequence of (key, value, body) records, dispatched through two tables
(header scalars here, section bodies in sections.py); anything not in the
tables is kept verbatim as an UnknownSection and reported as a warning.
Strictness: anything that would make the data wrong (bad hex, bad ascii85,
more data than the declared size, broken indentation, duplicates) raises
DevcoredumpError with the line; things real kernels are known to print
differently (microsecond times, a missing final newline, unknown element
fields) parse with a ParseWarning. Display-engine (DPU/SDE) snapshots are
rejected with DpuDumpError. It does not interpret registers or commands.
"""
from __future__ import annotations

import os
import re
from typing import Callable

from gpudbg.dump.devcoredump import lexer as lx
from gpudbg.dump.devcoredump import sections
from gpudbg.dump.devcoredump.errors import DevcoredumpError, DpuDumpError
from gpudbg.dump.devcoredump.model import (
    Devcoredump, DumpTime, Layout, ParseWarning, Revision, RevisionForm, UnknownSection,
)

# bounded digit counts: no number reaches int()'s 4300-digit limit or a
# time_t/u32 overflow downstream; longer ones fail the match with its line
_TIME = re.compile(r"(\d{1,20})\.(\d+)")
_REV_DOTTED = re.compile(r"(\d{1,10}) \((\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\)")
_REV_HEX = re.compile(r"(\d{1,10}) \(([0-9a-fA-F]{8})\)")
_DPU_MARKERS = ("dpu devcoredump", "sde devcoredump")
_DPU_BLOCK = re.compile(r"=+[^=\s]+=+")
_A6XX_ONLY = ("gmu_log", "gmu_hfi", "gmu_debug", "registers_gmu", "indexed_registers",
              "shader_blocks", "clusters", "debugbus")


def _time(dump: Devcoredump, line: lx.Line, value: str | None) -> None:
    m = _TIME.fullmatch(value or "")
    if m is None:
        raise DevcoredumpError(line.no, f"time: expected <seconds>.<nanoseconds>, got {lx.show(value)}")
    frac = m.group(2)
    if len(frac) > 9:
        raise DevcoredumpError(line.no, f"time: {len(frac)} fractional digits (at most 9)")
    if len(frac) != 9:
        dump.warnings.append(ParseWarning(line.no, f"time has {len(frac)} fractional digits, "
                                          "not the kernel's 9 (nanoseconds); scaled"))
    dump.time = DumpTime(int(m.group(1)), int(frac.ljust(9, "0")))


def _revision(dump: Devcoredump, line: lx.Line, value: str | None) -> None:
    text = value or ""
    m = _REV_DOTTED.fullmatch(text)
    if m is not None:
        parts = [int(g) for g in m.groups()]
        try:
            dump.revision = Revision.from_parts(*parts)
        except ValueError as exc:
            raise DevcoredumpError(line.no, f"revision: {exc}") from None
        return
    m = _REV_HEX.fullmatch(text)
    if m is not None:
        dump.revision = Revision(int(m.group(1)), int(m.group(2), 16), RevisionForm.HEX)
        return
    raise DevcoredumpError(line.no, "revision: expected '<id> (<core>.<major>.<minor>.<patch>)' "
                           f"or '<id> (<8 hex digits>)', got {lx.show(text)}")


def _text(attr: str) -> Callable[[Devcoredump, lx.Line, str | None], None]:
    def set_text(dump: Devcoredump, line: lx.Line, value: str | None) -> None:
        setattr(dump, attr, value if value is not None else "")
    return set_text


def _gpu_initialized(dump: Devcoredump, line: lx.Line, value: str | None) -> None:
    dump.gpu_initialized = lx.udec(line, value, "gpu-initialized")


def _rbbm(dump: Devcoredump, line: lx.Line, value: str | None) -> None:
    dump.rbbm_status = lx.hex0x(line, value, "rbbm-status", 32)


SCALARS: dict[str, Callable[[Devcoredump, lx.Line, str | None], None]] = {
    "kernel": _text("kernel"),
    "module": _text("module"),
    "time": _time,
    "comm": _text("comm"),
    "cmdline": _text("cmdline"),
    "gpu-initialized": _gpu_initialized,
    "revision": _revision,
    "rbbm-status": _rbbm,
}


def _split_lines(text: str, dump: Devcoredump) -> list[str]:
    if not text:
        raise DevcoredumpError(1, "empty file")
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    else:
        dump.warnings.append(ParseWarning(len(lines), "file does not end with a newline (truncated?)"))
    for no, raw in enumerate(lines, 1):
        if "\t" in raw:
            raise DevcoredumpError(no, "tab character (the format indents with spaces only)")
        if "\r" in raw:
            raise DevcoredumpError(no, "carriage return (CRLF line ends are not the kernel's)")
    return lines


def _reject_dpu(lines: list[str]) -> None:
    for no, raw in enumerate(lines[:12], 1):
        text = raw.strip()
        if text in _DPU_MARKERS or _DPU_BLOCK.fullmatch(text) or text.startswith("timestamp "):
            raise DpuDumpError(no, f"this is a display-engine (DPU/SDE) snapshot ({text!r}), "
                               "not a GPU devcoredump")
    if any(raw.startswith("module: msm_drm") for raw in lines[:4]):
        raise DpuDumpError(1, "module msm_drm: a downstream SDE display snapshot, not a GPU devcoredump")


def _infer_layout(dump: Devcoredump) -> Layout:
    if dump.gpu_initialized is not None or any(getattr(dump, a) is not None for a in _A6XX_ONLY):
        return Layout.A6XX
    if dump.registers_hlsq is not None:
        return Layout.A5XX
    if dump.revision is not None and dump.revision.core >= 6:
        return Layout.A6XX
    if dump.revision is not None and dump.revision.core == 5:
        return Layout.A5XX
    return Layout.ADRENO


def parse(text: str | bytes) -> Devcoredump:
    """The model of one dump; raises DevcoredumpError (with a line) on damage."""
    dump = Devcoredump(module=None)
    if isinstance(text, (bytes, bytearray)):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as exc:
            line = bytes(text)[: exc.start].count(b"\n") + 1
            raise DevcoredumpError(line, f"byte 0x{bytes(text)[exc.start]:02x} is not UTF-8 text") from None
    lines = _split_lines(text, dump)
    _reject_dpu(lines)
    first = lines[0]
    if first == "---":
        pass
    elif first.endswith(" Status:") and not first.startswith(" "):
        dump.debugfs_title = first[: -len(" Status:")]
    else:
        raise DevcoredumpError(1, f"not a drm/msm devcoredump: expected '---' or '<gpu> Status:', got "
                               f"{first[:60]!r}")
    seen: dict[str, int] = {}
    last_key: str | None = None
    i = 1
    n = len(lines)
    while i < n:
        raw = lines[i]
        line = lx.make_line(i + 1, raw)
        if raw == "":
            dump.warnings.append(ParseWarning(line.no, "empty line skipped"))
            i += 1
            continue
        if line.indent:
            raise DevcoredumpError(line.no, f"indented line {line.text[:60]!r} outside any section")
        j = i + 1
        while j < n and lines[j].startswith(" "):
            j += 1
        body = [lx.make_line(k + 1, lines[k]) for k in range(i + 1, j)]
        try:
            key, value = lx.split_kv(line, "top level")
        except DevcoredumpError:
            key, value = None, None
        if key is None or (key not in SCALARS and key not in sections.SECTIONS):
            name = key if key is not None else line.text[:40]
            dump.unknown_sections.append(UnknownSection(name, lines[i:j], i + 1, j, last_key))
            dump.warnings.append(ParseWarning(line.no, f"unknown section {name!r} "
                                              f"(lines {i + 1}-{j}) kept verbatim"))
            i = j
            continue
        if key in seen:
            raise DevcoredumpError(line.no, f"duplicate {lx.show(key + ':')} (first at line {seen[key]})")
        seen[key] = line.no
        if key in SCALARS:
            if body:
                raise DevcoredumpError(body[0].no, f"indented line under the scalar {lx.show(key + ':')}")
            SCALARS[key](dump, line, value)
        else:
            if value is not None:
                raise DevcoredumpError(line.no, f"section header {lx.show(key + ':')} has a value {lx.show(value)}")
            attr, handler = sections.SECTIONS[key]
            setattr(dump, attr, handler(body, dump.warnings))
        last_key = key
        i = j
    if dump.module is not None and dump.module not in ("msm", "gpudbg"):
        dump.warnings.append(ParseWarning(seen.get("module", 1), f"unexpected module {dump.module!r}"))
    dump.layout = _infer_layout(dump)
    return dump


def parse_file(path: str | os.PathLike[str]) -> Devcoredump:
    with open(path, "rb") as f:
        return parse(f.read())
