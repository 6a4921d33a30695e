"""Dump writers never overwrite a file and write private files: a second
coredump to the same name gets core.1.nvcudmp (an existing file kept its
bytes but had its mode changed from 0600 to 0644 before), devcoredumps
likewise, REFUSE raises instead, and `gpudbg run` says where the coredump
of a fault went or why it could not be written."""
from __future__ import annotations

import errno
import os
import stat
import textwrap
from pathlib import Path

import numpy as np
import pytest

import gpudbg
from gpudbg.dump.coredump import snapshot as S
from gpudbg.dump.coredump.reader import read_coredump
from gpudbg.dump.coredump.writer import write_coredump
from gpudbg.dump.devcoredump import Devcoredump, DumpTime, parse, write_file
from gpudbg.dump.files import OnExisting, numbered, publish

OOB_PTX = r"""
.version 8.0
.target sm_80
.address_size 64
.visible .entry oob(.param .u64 out)
{
    .reg .b32 %r<2>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [out];
    cvta.to.global.u64 %rd2, %rd1;
    mov.u32 %r1, %tid.x;
    add.s64 %rd3, %rd2, 268435456;
    st.global.u32 [%rd3], %r1;
    ret;
}
"""


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _snapshot() -> S.DeviceSnapshot:
    lane = S.LaneState(0, (0, 0, 0), 0x1000, regs=np.zeros(2, np.uint32))
    warp = S.WarpState(0, 1, 1, lanes=[lane])
    return S.DeviceSnapshot(0, "GPU", "t", "sm_80", 8, 0, 1, 4, 32, 2, 1,
                            sms=[S.SmState(0, [S.CtaState(1, (0, 0, 0), warps=[warp])])])


def _devcore(kernel: str) -> Devcoredump:
    return parse(f"---\nkernel: {kernel}\nmodule: msm\ntime: 1.000000000\n")


@pytest.fixture
def umask_022():
    old = os.umask(0o022)
    yield
    os.umask(old)


def test_a_second_coredump_gets_a_new_name_and_both_stay_private(tmp_path, umask_022):
    path = tmp_path / "core.nvcudmp"
    first = write_coredump(path, _snapshot())
    before = path.read_bytes()
    second = write_coredump(path, _snapshot())
    assert (first, second) == (path, tmp_path / "core.1.nvcudmp")
    assert write_coredump(path, _snapshot()) == tmp_path / "core.2.nvcudmp"
    assert path.read_bytes() == before and read_coredump(second).devices
    assert {_mode(p) for p in tmp_path.iterdir()} == {0o600}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["core.1.nvcudmp", "core.2.nvcudmp", "core.nvcudmp"]


def test_an_existing_file_is_never_touched(tmp_path, umask_022):
    path = tmp_path / "core.nvcudmp"
    path.write_bytes(b"precious")
    os.chmod(path, 0o600)
    with pytest.raises(FileExistsError, match="never overwrites"):
        write_coredump(path, _snapshot(), on_existing=OnExisting.REFUSE)
    assert write_coredump(path, _snapshot()) == tmp_path / "core.1.nvcudmp"
    assert path.read_bytes() == b"precious" and _mode(path) == 0o600
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_devcoredump_files_are_numbered_private_and_never_replaced(tmp_path, umask_022):
    path = tmp_path / "devcd.devcore"
    assert write_file(_devcore("a"), path) == path
    assert write_file(_devcore("b"), path) == tmp_path / "devcd.1.devcore"
    with pytest.raises(FileExistsError):
        write_file(_devcore("c"), path, OnExisting.REFUSE)
    assert parse(path.read_bytes()).kernel == "a"
    assert parse((tmp_path / "devcd.1.devcore").read_bytes()).kernel == "b"
    assert {_mode(p) for p in tmp_path.iterdir()} == {0o600}


def test_capture_skips_a_name_taken_by_someone_else(tmp_path):
    from gpudbg.dump.devcoredump import capture
    taken = tmp_path / f"devcd-{os.getpid()}-{capture._counter + 1}.devcore"
    taken.write_text("someone else's file\n")
    written = capture.write_dump(_devcore("x"), tmp_path)
    assert written != taken and taken.read_text() == "someone else's file\n"
    assert parse(written.read_bytes()).kernel == "x"


def test_without_hard_links_the_name_is_created_exclusively(tmp_path, monkeypatch):
    def no_links(src, dst):
        raise OSError(errno.EPERM, "Operation not permitted")
    monkeypatch.setattr(os, "link", no_links)
    path = tmp_path / "x.bin"
    path.write_bytes(b"old")
    assert publish(path, b"new") == tmp_path / "x.1.bin"
    assert path.read_bytes() == b"old" and (tmp_path / "x.1.bin").read_bytes() == b"new"
    assert _mode(tmp_path / "x.1.bin") == 0o600
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_numbered_names():
    assert numbered(Path("/d/core_1_2.nvcudmp"), 3) == Path("/d/core_1_2.3.nvcudmp")
    assert numbered(Path("core"), 1) == Path("core.1")
    assert numbered(Path("a.b"), 0) == Path("a.b")


def _fault_twice(monkeypatch, pattern: str) -> list[dict]:
    monkeypatch.setenv("GPUDBG_COREDUMP_ON_EXCEPTION", "1")
    monkeypatch.setenv("GPUDBG_COREDUMP_FILE", pattern)
    details = []
    for _ in range(2):
        try:
            m = gpudbg.Module.from_ptx(OOB_PTX, name="oob.ptx")
            m.oob[1, 32](gpudbg.zeros(32, np.int32))
            gpudbg.synchronize()
        except gpudbg.KernelFaultError as e:
            details.append(dict(e.report.details))
        finally:
            gpudbg.Device(0).reset()
    return details


def test_two_faults_with_one_coredump_name_keep_both_dumps(tmp_path, monkeypatch, umask_022):
    details = _fault_twice(monkeypatch, str(tmp_path / "core_fixed.nvcudmp"))
    paths = [Path(d["coredump"]) for d in details]
    assert paths == [(tmp_path / "core_fixed.nvcudmp").resolve(), (tmp_path / "core_fixed.1.nvcudmp").resolve()]
    assert all(read_coredump(p).devices and _mode(p) == 0o600 for p in paths)


def test_gpudbg_run_says_where_the_coredump_went(tmp_path, monkeypatch, capsys):
    from gpudbg.cli.run import run_program
    prog = tmp_path / "prog.py"
    prog.write_text(textwrap.dedent(f"""
        import numpy as np, gpudbg
        m = gpudbg.Module.from_ptx({OOB_PTX!r}, name="oob.ptx")
        out = gpudbg.zeros(32, np.int32)
        m.oob[1, 32](out)
        out.to_host()
    """))
    monkeypatch.setenv("GPUDBG_COREDUMP_ON_EXCEPTION", "1")
    monkeypatch.setenv("GPUDBG_COREDUMP_FILE", str(tmp_path / "run.nvcudmp"))
    try:
        assert run_program(str(prog), []) == 1
    finally:
        gpudbg.Device(0).reset()
    err = capsys.readouterr().err
    assert f"=========     coredump written to {(tmp_path / 'run.nvcudmp').resolve()}" in err
    blocker = tmp_path / "file"
    blocker.write_text("x")
    monkeypatch.setenv("GPUDBG_COREDUMP_FILE", str(blocker / "run.nvcudmp"))
    try:
        assert run_program(str(prog), []) == 1
    finally:
        gpudbg.Device(0).reset()
    err = capsys.readouterr().err
    assert "=========     coredump failed: " in err and "Traceback" not in err


def test_devcoredump_time_is_kept_by_write_file(tmp_path):
    d = _devcore("k")
    d.time = DumpTime(5, 6)
    assert parse(write_file(d, tmp_path / "t.devcore").read_bytes()).time == DumpTime(5, 6)
