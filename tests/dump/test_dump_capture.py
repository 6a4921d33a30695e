"""Devcoredumps of the simulated GPU: a faulting kernel, a hung stream and a
runaway kernel each write a dump that parses, decodes and explains itself."""
from __future__ import annotations

import os
import struct
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from gpudbg.cli.main import main as cli
from gpudbg.driver import commands as C
from gpudbg.driver.channel import Channel
from gpudbg.dump.devcoredump import analyzer, capture, parse, parse_file, write
from gpudbg.dump.devcoredump.report import format_text
from gpudbg.sim import registers as R
from gpudbg.sim.gpu import SimGPU
from gpudbg.sim.memory.spaces import AllocationKind

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

OOB = r"""
extern "C" __global__ void forward_difference(const float *in, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = in[i + 1] - in[i];
}
"""
SPIN = r"""
extern "C" __global__ void spin(volatile int *flag) {
    while (*flag == 0) { }
}
"""


def nvrtc():
    pytest.importorskip("cuda.bindings.nvrtc", reason="NVRTC (cuda-bindings) is not installed")
    import gpudbg
    return gpudbg


@pytest.fixture
def dump_dir(tmp_path, monkeypatch):
    d = tmp_path / "dumps"
    monkeypatch.setenv(capture.ENV_DIR, str(d))
    monkeypatch.delenv("GPUDBG_COREDUMP_ON_EXCEPTION", raising=False)
    yield d
    capture.disable()


def only_dump(directory: Path) -> Path:
    files = sorted(directory.glob("devcd-*.devcore"))
    assert len(files) == 1, files
    assert files[0].name.startswith(f"devcd-{os.getpid()}-")
    return files[0]


def reg(dump, name: str) -> int:
    value = dump.register(R.offset_of(name))
    assert value is not None, name
    return value


def reg64(dump, name: str) -> int:
    return reg(dump, f"{name}_HI") << 32 | reg(dump, f"{name}_LO")


def assert_round_trips(path: Path) -> None:
    text = path.read_text()
    model = parse(text)
    assert not model.warnings
    assert write(model) == text
    assert parse(write(model)) == model


# ---------------------------------------------------------------- a faulting kernel
@pytest.fixture
def oob_fault(dump_dir):
    gpudbg = nvrtc()
    import numpy as np
    from gpudbg.driver.engine import get_engine
    n = 1000
    module = gpudbg.compile(OOB, name="capture_oob.cu")
    d_in = gpudbg.to_device(np.arange(n, dtype=np.float32))
    d_out = gpudbg.zeros(n, np.float32)
    module.forward_difference[(n + 127) // 128, 128](d_in, d_out, n)
    try:
        with pytest.raises(gpudbg.KernelFaultError) as ei:
            gpudbg.synchronize()
        gpu = get_engine().devices[0].gpu
        yield ei.value.report, d_in, gpu, only_dump(dump_dir)
    finally:
        gpudbg.Device(0).reset()


def test_fault_dump_matches_the_driver_state(oob_fault):
    report, d_in, gpu, path = oob_fault
    assert report.details["devcoredump"] == str(path)
    dump = parse_file(path)
    assert dump.module == "gpudbg" and dump.kernel.startswith("gpudbg ")
    assert str(dump.revision) == "900 (9.0.0.0)" and dump.comm and dump.cmdline
    channels = gpu.frontend.channels
    assert len(dump.ringbuffers) == len(channels)
    faulted = None
    for rb, ch in zip(dump.ringbuffers, channels):
        assert (rb.iova, rb.size, rb.wptr, rb.last_fence) == (ch.ring.base, 4 * ch.ring.size, ch.ring.put,
                                                               ch.semaphore.issued)
        assert reg(dump, f"CH{rb.id}_RB_RPTR") == rb.rptr and reg(dump, f"CH{rb.id}_RB_WPTR") == rb.wptr
        assert reg(dump, f"CH{rb.id}_FENCE_RETIRED") == rb.retired_fence
        if rb.rptr != rb.wptr:
            faulted = rb
    assert faulted is not None
    # the ring holds what the driver encoded: commands up to wptr, LAUNCH at rptr
    words = [int(w) for w in faulted.dwords()[: faulted.wptr]]
    cmds, off = {}, 0
    for cmd in C.decode_words(words, "dump"):
        cmds[off] = cmd
        off += cmd.size_words
    launch = cmds[faulted.rptr]
    assert launch.opcode is C.Opcode.LAUNCH
    release = cmds[faulted.rptr + launch.size_words]
    assert release.opcode is C.Opcode.SEM_RELEASE and release.value == faulted.last_fence
    assert faulted.retired_fence == faulted.last_fence - 1
    # fault registers and fault-info agree with the FaultReport
    assert reg64(dump, "FAULT_ADDR") == report.address == dump.fault_info.address
    assert reg64(dump, "FAULT_PC") == report.pc and reg(dump, "FAULT_KIND") == report.kind
    assert reg(dump, "FAULT_RING") == faulted.id
    assert reg64(dump, "FAULT_CMD_ADDR") == faulted.iova + 4 * faulted.rptr
    assert dump.fault_info.get("dir") == "READ" and dump.fault_info.get("type") == report.kind.name
    assert dump.rbbm_status & R.RbbmStatus.SM_BUSY and dump.rbbm_status & R.RbbmStatus.FAULT
    # bos: descriptor, parameters, code image, and the faulting allocation
    names = {bo.name.strip(): bo for bo in dump.bos}
    assert names["launch descriptor forward_difference"].iova == launch.descriptor
    assert any(n.startswith("kernel parameters forward_difference") for n in names)
    assert any(n.startswith("code forward_difference") for n in names)
    hit = [bo for bo in dump.bos if bo.iova == d_in.ptr]
    assert hit and hit[0].size == d_in.nbytes and hit[0].contents()[:8] == struct.pack("<2f", 0.0, 1.0)
    assert_round_trips(path)


def test_analyzer_marks_the_launch_and_places_the_fault(oob_fault, capsys):
    report, d_in, _gpu, path = oob_fault
    summary = analyzer.analyze(parse_file(path))
    busy = [r for r in summary.rings if r.executing is not None]
    assert len(busy) == 1 and busy[0].executing.text.startswith("LAUNCH(")
    assert "grid (8,1,1) block (128,1,1)" in busy[0].executing.text
    assert summary.fault.address == report.address
    assert summary.fault.buffer.bo_iova == d_in.ptr and summary.fault.buffer.relation == "past-end"
    assert cli(["dump", "show", str(path)]) == 0
    out = capsys.readouterr().out
    ring = busy[0]
    assert f"ring {ring.id} at 0x{ring.iova:016x}" in out
    assert f"fences:   last {ring.last_fence}, retired {ring.retired_fence} (1 outstanding)" in out
    assert f"pointers: rptr {ring.rptr}, wptr {ring.wptr}" in out
    line = next(t for t in out.splitlines() if "<- executing" in t)
    assert line.lstrip().startswith(f">> [{ring.rptr:5d}] LAUNCH(")
    assert f"0 bytes past the end of bo at 0x{d_in.ptr:x} (size 4000)" in out
    assert "type=CUDBG_EXCEPTION_LANE_ILLEGAL_ADDRESS" in out and "process:" in out


# ---------------------------------------------------------------- hangs
def test_hang_example_under_gpudbg_run_writes_a_dump_naming_the_blocked_command(tmp_path, monkeypatch,
                                                                                   capsys):
    nvrtc()
    monkeypatch.setenv("GPUDBG_HANG_TIMEOUT", "0.3")
    monkeypatch.delenv(capture.ENV_DIR, raising=False)
    d = tmp_path / "cli-dumps"
    try:
        assert cli(["run", "--devcoredump", str(d), str(EXAMPLES / "hang.py")]) == 1
    finally:
        capture.disable()
    err = capsys.readouterr().err
    path = only_dump(d)
    assert "mcErrorLaunchTimeout" in err and "GPU hang" in err and "WAIT_VALUE at ring word 0" in err
    assert f"devcoredump: {path}" in err
    dump = parse_file(path)
    assert dump.fault_info is None and dump.rbbm_status & R.RbbmStatus.HANG
    summary = analyzer.analyze(dump)
    hung = [r for r in summary.rings if r.executing is not None]
    assert len(hung) == 1 and hung[0].executing.text.startswith("WAIT_VALUE(")
    assert hung[0].pending_commands == 4 and any(p.text.startswith("LAUNCH(") and "grid (16,1,1)" in p.text
                                                  for p in hung[0].pending)
    assert reg(dump, "HANG_KIND") == R.HangCode.FENCE_TIMEOUT and reg(dump, "FAULT_RING") == hung[0].id
    rb = dump.ringbuffers[hung[0].id]
    assert reg64(dump, "FAULT_CMD_ADDR") == rb.iova + 4 * rb.rptr
    wait = C.decode_words([int(w) for w in rb.dwords()[rb.rptr: rb.rptr + 7]])[0]
    assert reg64(dump, "FAULT_ADDR") == wait.address and dump.find_bo(wait.address) is not None
    text = format_text(summary)
    assert f"fences:   last {rb.last_fence}, retired {rb.retired_fence}" in text
    assert "WAIT_VALUE(address=" in next(t for t in text.splitlines() if "<- executing" in t)
    assert_round_trips(path)


def test_instruction_budget_hang_writes_a_dump(dump_dir, monkeypatch):
    gpudbg = nvrtc()
    import numpy as np
    monkeypatch.setenv("GPUDBG_INSTRUCTION_BUDGET", "20000")
    module = gpudbg.compile(SPIN, name="capture_spin.cu")
    flag = gpudbg.zeros(1, np.int32)
    try:
        module.spin[1, 32](flag)
        with pytest.raises(gpudbg.KernelFaultError) as ei:
            gpudbg.synchronize()
        report = ei.value.report
        assert ei.value.code == gpudbg.mcError_t.mcErrorLaunchTimeout and report.hang is not None
    finally:
        gpudbg.Device(0).reset()
    dump = parse_file(only_dump(dump_dir))
    assert dump.fault_info is None
    assert reg(dump, "HANG_KIND") == R.HangCode.INSTRUCTION_BUDGET and reg(dump, "FAULT_KIND") == 0
    assert reg64(dump, "FAULT_PC") == report.pc and reg64(dump, "INSTR_BUDGET") == 20000
    rings = [r for r in analyzer.analyze(dump).rings if r.executing is not None]
    assert len(rings) == 1 and rings[0].executing.text.startswith("LAUNCH(")


# ---------------------------------------------------------------- configuration
def test_no_dump_unless_enabled_but_the_fault_is_latched(tmp_path, monkeypatch):
    monkeypatch.delenv(capture.ENV_DIR, raising=False)
    capture.disable()
    assert capture.dump_directory() is None
    gpu = SimGPU(executor=lambda *a: None)
    try:
        ch = Channel(gpu, 1)
        from gpudbg.sim.faults import CUDBGException, FaultReport
        r = FaultReport(CUDBGException.CUDBG_EXCEPTION_WARP_ASSERT, "assert", "k", "k", 0x40, "trap", None, None)
        assert capture.on_device_fault(gpu, ch, r) is None
        assert "devcoredump" not in r.details and list(tmp_path.iterdir()) == []
        assert R.read(gpu, "FAULT_KIND") == CUDBGException.CUDBG_EXCEPTION_WARP_ASSERT
    finally:
        gpu.shutdown()


def test_enable_overrides_the_environment_and_rejects_bad_directories(tmp_path, monkeypatch):
    monkeypatch.setenv(capture.ENV_DIR, str(tmp_path / "env"))
    try:
        assert capture.enable(tmp_path / "cli") == (tmp_path / "cli").resolve()
        assert capture.dump_directory() == (tmp_path / "cli").resolve() and (tmp_path / "cli").is_dir()
    finally:
        capture.disable()
    assert capture.dump_directory() == (tmp_path / "env").resolve()
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(capture.DevcoredumpConfigError, match="not a directory|cannot create"):
        capture.enable(blocker)
    with pytest.raises(capture.DevcoredumpConfigError, match="empty"):
        capture.enable("")
    assert cli(["run", "--devcoredump", str(blocker), str(EXAMPLES / "hang.py")]) == 2


def test_a_failing_dump_never_hides_the_fault(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    monkeypatch.setenv(capture.ENV_DIR, str(blocker))
    gpu = SimGPU(executor=lambda *a: None)
    try:
        ch = Channel(gpu, 1)
        from gpudbg.sim.faults import CUDBGException, FaultReport
        r = FaultReport(CUDBGException.CUDBG_EXCEPTION_WARP_ASSERT, "assert", "k", "k", 0x40, "trap", None, None)
        assert capture.on_device_fault(gpu, ch, r) is None
        assert "not a directory" in r.details["devcoredump_error"] or "cannot create" in r.details["devcoredump_error"]
    finally:
        gpu.shutdown()


def test_dump_names_count_up_and_never_overwrite(tmp_path):
    gpu = SimGPU(executor=lambda *a: None)
    try:
        Channel(gpu, 1)
        dump = capture.build(gpu)
        first = capture.write_dump(dump, tmp_path)
        second = capture.write_dump(dump, tmp_path)
        assert first != second and first.read_text() == second.read_text()
        assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []
    finally:
        gpu.shutdown()


# ---------------------------------------------------------------- round trip
@settings(max_examples=15, deadline=None)
@given(rings=st.lists(st.lists(st.sampled_from(["nop", "write", "wait"]), max_size=6), min_size=1, max_size=3),
       bo_words=st.integers(1, 300))
def test_capture_write_parse_round_trip(rings, bo_words):
    gpu = SimGPU(executor=lambda *a: None)
    try:
        flag = gpu.memory.alloc(8, AllocationKind.DEVICE)
        flag.data[:] = 0
        buf = gpu.memory.alloc(4 * bo_words, AllocationKind.DEVICE)
        buf.data[:] = 0xA5
        chans = []
        for spec in rings:
            ch = Channel(gpu, 1)
            chans.append(ch)
            cmds = []
            for what in spec:
                if what == "nop":
                    cmds.append(C.make(C.Opcode.NOP))
                elif what == "write":
                    cmds.append(C.make(C.Opcode.WRITE_VALUE, address=buf.base, value=7, flags=0, width=4))
                else:
                    cmds.append(C.make(C.Opcode.WAIT_VALUE, address=flag.base, value=1, flags=0, width=4))
            ch.push(cmds)
        with gpu.cv:
            gpu.cv.wait_for(lambda: gpu.frontend.blocked_heads() is not None, 5)
            dump = capture.build(gpu, chans[0])
        text = write(dump)
        assert parse(text) == dump and write(parse(text)) == text
        assert [rb.rptr for rb in dump.ringbuffers] == [ch.ring.get for ch in chans]
    finally:
        flag.data[:] = 1
        with gpu.cv:
            gpu.cv.notify_all()
        gpu.shutdown()
