"""The two real Adreno dumps parse, round-trip byte for byte, and agree with
what Mesa's crashdec printed for them (the reference logs beside them)."""
from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from dump_paths import msm_file  # noqa: E402

from gpudbg.dump.devcoredump import Layout, RevisionForm, parse_file, write
from gpudbg.dump.devcoredump.analyzer import analyze
from gpudbg.dump.devcoredump.model import INDEXED_RENAMES
from gpudbg.dump.devcoredump.pm4 import decoder
from gpudbg.dump.devcoredump import ringwalk

DUMPS = ["crash", "crash_prefetch"]


def _log(name: str) -> list[str]:
    return msm_file(f"{name}.log").read_text().split("\n")


def _log_scalar(lines: list[str], key: str) -> str:
    for line in lines:
        if line.startswith(key + ": "):
            return line[len(key) + 2:]
    raise AssertionError(f"{key} not in log")


def _log_rings(lines: list[str]) -> list[dict[str, str]]:
    rings, i = [], lines.index("ringbuffer:") + 1
    while lines[i].startswith(" "):
        if lines[i].startswith("  - id: "):
            rings.append({"id": lines[i].split(": ")[1]})
        else:
            k, v = lines[i].strip().split(": ", 1)
            rings[-1][k] = v
        i += 1
    return rings


def _log_bos(lines: list[str]) -> list[tuple[int, int, int]]:
    out, i = [], lines.index("bos:") + 1
    while lines[i].startswith(" "):
        m = re.fullmatch(r"  - iova: 0x([0-9a-f]+)-0x([0-9a-f]+)", lines[i])
        if m:
            out.append([int(m.group(1), 16), int(m.group(2), 16)])
        m = re.fullmatch(r"    size: (\d+) \(0x[0-9a-f]+\)", lines[i])
        if m:
            out[-1].append(int(m.group(1)))
        i += 1
    return [tuple(b) for b in out]


def _log_registers(lines: list[str]) -> dict[str, int]:
    regs = {}
    for line in lines:
        m = re.fullmatch(r"\t([0-9a-f]+)\t([A-Z0-9_]+): .*", line)
        if m and m.group(2) not in regs:
            regs[m.group(2)] = int(m.group(1), 16)
    return regs


def _log_ring_opcodes(lines: list[str]) -> list[str]:
    i = lines.index("found ring!")
    out = []
    for line in lines[i:]:
        if not line.startswith("\t") and not line.startswith("0") and line not in ("*",) \
                and not line.startswith("got ") and line != "found ring!" and ":" in line \
                and line.endswith(":") and not line.startswith(" "):
            break
        m = re.fullmatch(r"\t\topcode: ([A-Z0-9_]+) \([0-9a-f]+\) \(\d+ dwords\)", line)
        if m:
            out.append(m.group(1))
    return out


@pytest.fixture(scope="module", params=DUMPS)
def case(request):
    name = request.param
    return name, parse_file(msm_file(f"{name}.devcore")), _log(name)


def test_byte_exact_round_trip(case):
    name, dump, _ = case
    assert write(dump) == msm_file(f"{name}.devcore").read_text()


def test_header_matches_log(case):
    _, dump, log = case
    assert dump.kernel == _log_scalar(log, "kernel")
    assert dump.module == "msm"
    assert str(dump.time) == _log_scalar(log, "time")
    assert dump.comm == _log_scalar(log, "comm")
    assert dump.cmdline == _log_scalar(log, "cmdline")
    rev = _log_scalar(log, "revision")
    assert str(dump.revision) == rev and dump.revision.form is RevisionForm.DOTTED
    chip = int(next(l for l in log if l.startswith("Got chip_id=")).split("=0x")[1], 16)
    assert dump.revision.chip_id == chip
    assert dump.rbbm_status == int(_log_scalar(log, "rbbm-status"), 16)
    assert dump.layout is Layout.A6XX
    assert dump.fault_info is None and not any(l.startswith("fault-info") for l in log)
    assert dump.unknown_sections == [] and dump.warnings == []


def test_rings_match_log(case):
    _, dump, log = case
    logged = _log_rings(log)
    assert len(dump.ringbuffers) == len(logged)
    for rb, lr in zip(dump.ringbuffers, logged):
        assert rb.id == int(lr["id"])
        assert rb.iova == int(lr["iova"], 16)
        assert rb.last_fence == int(lr["last-fence"])
        assert rb.retired_fence == int(lr["retired-fence"])
        assert (rb.rptr, rb.wptr, rb.size) == (int(lr["rptr"]), int(lr["wptr"]), int(lr["size"]))


def test_bos_match_log(case):
    _, dump, log = case
    logged = _log_bos(log)
    assert [(b.iova, b.end, b.size) for b in dump.bos] == logged


def test_registers_match_log(case):
    _, dump, log = case
    logged = _log_registers(log)
    regs = analyze(dump).key_registers
    for name in ("RBBM_STATUS", "CP_RB_BASE", "CP_RB_RPTR", "CP_RB_WPTR", "CP_IB1_BASE",
                 "CP_IB1_REM_SIZE", "CP_IB2_BASE", "CP_IB2_REM_SIZE", "CP_STATUS_1", "CP_HW_FAULT"):
        assert regs[name] == logged[name], name
    # crashdec's "got rb_base=" comes from the same register
    rb_base = next(l for l in log if l.startswith("got rb_base=")).split("=")[1]
    assert regs["CP_RB_BASE"] == int(rb_base, 16) == dump.ringbuffers[0].iova


def test_indexed_and_shader_sections_match_log(case):
    _, dump, log = case
    names = [l.split(": ")[1] for l in log if l.startswith("  - regs-name: ")]
    dwords = [int(l.split(": ")[1]) for l in log if l.startswith("    dwords: ")]
    assert [(r.canonical_name, r.dwords_count) for r in dump.indexed_registers] == \
        [(INDEXED_RENAMES.get(n, n), d) for n, d in zip(names, dwords)]
    types = [l.split(": ")[1] for l in log if l.startswith("  - type: ")]
    assert [b.type for b in dump.shader_blocks] == types
    banks = sum(1 for l in log if l.startswith("    - bank: "))
    assert sum(len(b.entries) for b in dump.shader_blocks) == banks


def test_ring_packets_match_crashdec(case):
    _, dump, log = case
    rb = dump.ringbuffers[0]
    walk = ringwalk.walk(rb.dwords(), rb.wptr, rb.wptr, decoder(6), count=10_000, start=0)
    ours = [e.item.name for e in walk.history if e.item is not None and e.item.name]
    theirs = _log_ring_opcodes(log)
    assert theirs, "no ring opcodes found in the crashdec log"
    # crashdec starts somewhere before wptr; its packets are the tail of ours
    assert ours[-len(theirs):] == theirs


def test_crash_dump_specifics():
    dump = parse_file(msm_file("crash.devcore"))
    assert [b.name for b in dump.debugbus][:2] == ["A6XX_DBGBUS_CP", "A6XX_DBGBUS_RBBM"]
    assert all(not b.data for b in dump.debugbus) and dump.debugbus[-1].count == 170
    assert dump.gpu_initialized is None and dump.gmu_log is None
    s = analyze(dump)
    ring = s.rings[0]
    assert (ring.pending_dwords, ring.outstanding_fences, ring.idle) == (16, 1, False)
    assert ring.executing.text.startswith("pkt7 CP_INDIRECT_BUFFER")
    ib = ring.executing.ib
    assert ib.target == 0x100000000 and ib.size_dwords == 12 and ib.active == "CP_IB1_BASE"
    assert [p.text for p in ib.packets].count("pkt7 CP_NOP (10) count 0") == 9
    assert any("0xdeadd00d" in p.text for p in ib.packets)   # crashdec: "bad type! deadd00d"


def test_prefetch_dump_specifics():
    dump = parse_file(msm_file("crash_prefetch.devcore"))
    log = _log("crash_prefetch")
    assert dump.gpu_initialized == 1
    assert all(b.name == "" for b in dump.bos)
    hist = [l.split(": ")[1].split() for l in log if l.startswith("    queue-history[")]
    assert dump.gmu_hfi.queue_history == [[int(v) for v in h] for h in hist]
    assert dump.gmu_log.iova == 0x60009000 and dump.gmu_log.size == 4096 and not dump.gmu_log.data
    assert len(dump.ringbuffers[0].data) == 32768      # the whole ring was dumped
    s = analyze(dump)
    ring = s.rings[0]
    assert ring.scan_start == 0 and ring.skipped_dwords == 0
    assert ring.pending_dwords == 71
    ibs = [p.ib for p in ring.pending if p.ib is not None]
    assert [hex(ib.target) for ib in ibs][0] == "0x1000e3000"
    assert ibs[0].dumped
