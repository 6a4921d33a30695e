"""The analyzer's summary (text and JSON) and the `gpudbg dump show` CLI."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from dump_paths import msm_file  # noqa: E402

from gpudbg.driver import commands as C
from gpudbg.dump.devcoredump import (
    BufferObject, Devcoredump, DumpTime, FaultInfo, Layout, Revision, Ringbuffer, parse, parse_file, write,
)
from gpudbg.dump.devcoredump.analyzer import analyze, locate, to_dict
from gpudbg.dump.devcoredump.report import format_text


def test_text_summary_of_real_dump():
    text = format_text(analyze(parse_file(msm_file("crash.devcore")), packets=3))
    assert "Adreno 630, chip id 6.3.0.2" in text and "crashit: ./crashit IB1 4 5" in text
    assert "1593887022.767858793 (2020-07-04 18:23:42 UTC)" in text
    assert "rbbm-status: 0x00800005 (from register RBBM_STATUS" in text
    assert "fences:   last 1, retired 0 (1 outstanding)" in text
    assert "rptr 40, wptr 56: 16 dwords, 4 commands pending" in text
    assert ">> [   37] pkt7 CP_INDIRECT_BUFFER (3f) count 3" in text
    assert "IB1 -> 0x100000000, 12 dwords, in bo 0x100000000 (+0x0); CP_IB1_BASE points here" in text
    assert "before rptr (last 3 of 10" in text


def test_json_summary_is_the_same_facts():
    s = analyze(parse_file(msm_file("crash_prefetch.devcore")), packets=2)
    d = json.loads(json.dumps(to_dict(s)))
    assert d["gpu_id"] == 618 and d["chip_id"] == "6.1.8.0" and d["comm"] == "deqp-vk"
    ring = d["rings"][0]
    assert (ring["last_fence"], ring["retired_fence"], ring["rptr"], ring["wptr"]) == (252991, 252990, 12, 83)
    assert ring["pending_dwords"] == 71 and ring["idle"] is False and len(ring["history"]) <= 2
    assert d["bo_count"] == 37 and d["key_registers"]["CP_IB1_BASE"] == 0x10022D000


def test_fault_location_in_or_near_a_bo():
    bos = [BufferObject(0x1000, 0x100), BufferObject(0x4000, 0x40)]
    assert locate(0x1010, bos).description == "16 bytes into bo at 0x1000 (size 256)"
    assert locate(0x1108, bos).description == "8 bytes past the end of bo at 0x1000 (size 256)"
    assert locate(0x3ff0, bos).description == "16 bytes before bo at 0x4000 (size 64)"
    dump = Devcoredump(kernel="6.1", time=DumpTime(1, 0), revision=Revision.from_parts(630, 6, 3, 0, 2),
                       fault_info=FaultInfo([("ttbr0", "0"), ("iova", "0000000000001108"), ("dir", "WRITE"),
                                             ("type", "TRANSLATION"), ("source", "CP")]),
                       rbbm_status=0, ringbuffers=[], bos=bos, layout=Layout.A6XX, gpu_initialized=1)
    s = analyze(parse(write(dump)))
    assert s.fault.address == 0x1108 and s.fault.buffer.relation == "past-end"
    assert "8 bytes past the end of bo at 0x1000" in format_text(s)


def _gpudbg_dump() -> Devcoredump:
    desc = C.encode_descriptor(code_address=0x7000, grid_x=4, grid_y=1, grid_z=1, block_x=128, block_y=1,
                               block_z=1, shared_bytes=0, param_address=0x9000, param_size=16, grid_id=3, host_tid=0)
    cmds = [C.make(C.Opcode.NOP), C.make(C.Opcode.LAUNCH, descriptor=0x8000),
            C.make(C.Opcode.SEM_RELEASE, address=0x6000, value=2),
            C.make(C.Opcode.LAUNCH, descriptor=0x8000), C.make(C.Opcode.SEM_RELEASE, address=0x6000, value=3)]
    words = C.encode_all(cmds)
    ring = np.zeros(64, dtype=np.uint32)
    ring[:len(words)] = words
    rptr = 1 + 3 + 5          # the second LAUNCH is running
    return Devcoredump(module="gpudbg", kernel="gpudbg 0.1.0", time=DumpTime(5, 1), comm="python",
                       cmdline="python oob.py", revision=Revision.from_parts(1, 1, 0, 0, 0), rbbm_status=1,
                       ringbuffers=[Ringbuffer(0, 0x5000, 3, 2, rptr, len(words), 256, ring.tobytes())],
                       bos=[BufferObject(0x8000, len(desc), desc)], layout=Layout.ADRENO)


def test_gpudbg_dumps_decode_our_ring_commands():
    s = analyze(parse(write(_gpudbg_dump())))
    ring = s.rings[0]
    assert ring.format == "gpudbg" and s.device.startswith("gpudbg simulated GPU")
    assert ring.executing.offset == 9 and ring.executing.text.startswith("LAUNCH(descriptor=0x8000)")
    assert "grid (4,1,1) block (128,1,1) code 0x7000" in ring.executing.text
    assert [c.text.split("(")[0] for c in ring.history] == ["NOP", "LAUNCH", "SEM_RELEASE"]
    assert [c.text.split("(")[0] for c in ring.pending] == ["SEM_RELEASE"]
    assert ring.pending_commands == 2 and ring.outstanding_fences == 1
    assert "<- executing" in format_text(s)


def _cli(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2] / "src"))
    return subprocess.run([sys.executable, "-m", "gpudbg", "dump", *args], capture_output=True, text=True,
                          env=env, timeout=60)


def test_cli_show_text_json_and_errors(tmp_path):
    real = str(msm_file("crash.devcore"))
    r = _cli("show", real, "--packets", "2")
    assert r.returncode == 0, r.stderr
    assert "ring 0 at 0x0001000000001000" in r.stdout and "last 2 of 10" in r.stdout
    r = _cli("show", "--json", real)
    assert r.returncode == 0 and json.loads(r.stdout)["rings"][0]["wptr"] == 56
    bad = tmp_path / "bad.devcore"
    bad.write_text("---\nkernel: 1\nmodule: msm\ntime: 1.000000000\nrbbm-status: 0xzz\n")
    r = _cli("show", str(bad))
    assert r.returncode == 2 and "line 5: rbbm-status: expected 0x-prefixed hex" in r.stderr
    dpu = tmp_path / "dpu.devcore"
    dpu.write_text("---\nkernel: 6.1\nmodule: msm\ndpu devcoredump\n")
    r = _cli("show", str(dpu))
    assert r.returncode == 2 and "display-engine" in r.stderr
    r = _cli("show", str(tmp_path / "missing"))
    assert r.returncode == 2 and "No such file" in r.stderr
