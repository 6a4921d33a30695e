"""NVIDIA's cuda-gdb 11.8 opens a core the simulator wrote and shows the
same facts the simulator had: exception and focus, kernel, dims, per-lane
registers, $pc/$errorpc and the faulting buffer's bytes.

cuda-gdb comes from Debian bookworm's non-free `nvidia-cuda-gdb`, installed
into the git-ignored .tools/ folder with a private apt sources list (the
COREDUMP-FORMAT.md recipe); it is kept there, so later runs start at once.
When it cannot be fetched the test is skipped with the reason."""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[3]
TOOLS = ROOT / ".tools"
CUDA_GDB = TOOLS / "cudagdb" / "usr" / "bin" / "cuda-gdb"
SOURCES = Path("/etc/apt/sources.list.d/debian.sources")


def install_cuda_gdb() -> tuple[Path | None, str]:
    """(cuda-gdb path, "") or (None, why it could not be installed)."""
    if CUDA_GDB.exists():
        return CUDA_GDB, ""
    if shutil.which("apt-get") is None or shutil.which("dpkg") is None:
        return None, "apt-get/dpkg not available to fetch nvidia-cuda-gdb"
    uri = "http://deb.debian.org/debian"
    if SOURCES.exists():
        m = re.search(r"^URIs:\s*(\S+)", SOURCES.read_text(), re.M)
        if m:
            uri = m.group(1)
    apt = TOOLS / "apt"
    (apt / "lists" / "partial").mkdir(parents=True, exist_ok=True)
    (apt / "nf.sources").write_text(
        f"Types: deb\nURIs: {uri}\nSuites: bookworm\nComponents: contrib non-free\n"
        "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n")
    opts = ["-oDir::Etc::SourceList=/dev/null", f"-oDir::Etc::SourceParts={apt}",
            f"-oDir::State::Lists={apt / 'lists'}"]
    steps = [(["apt-get", *opts, "update"], ROOT), (["apt-get", *opts, "download", "nvidia-cuda-gdb"], TOOLS)]
    for cmd, cwd in steps:
        try:
            p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=300)
        except (OSError, subprocess.TimeoutExpired) as e:
            return None, f"{' '.join(cmd[:1] + cmd[-1:])} failed: {e}"
        if p.returncode != 0:
            return None, f"{cmd[0]} {cmd[-1]} failed: {(p.stderr or p.stdout).strip()[-300:]}"
    debs = sorted(TOOLS.glob("nvidia-cuda-gdb_*.deb"))
    if not debs:
        return None, "apt-get download produced no nvidia-cuda-gdb package"
    p = subprocess.run(["dpkg", "-x", str(debs[-1]), str(TOOLS / "cudagdb")], capture_output=True, text=True)
    if p.returncode != 0 or not CUDA_GDB.exists():
        return None, f"dpkg -x failed: {p.stderr.strip()[-300:]}"
    return CUDA_GDB, ""


@pytest.fixture(scope="module")
def cuda_gdb() -> Path:
    path, why = install_cuda_gdb()
    if path is None:
        pytest.skip(f"cuda-gdb 11.8 unavailable: {why}")
    return path


def _oob_source() -> str:
    text = (ROOT / "examples" / "oob.py").read_text()
    return text.split('SOURCE = r"""', 1)[1].split('"""', 1)[0]


def test_cuda_gdb_opens_our_core(cuda_gdb, tmp_path, monkeypatch, capsys):
    import gpudbg
    import gpudbg.dump.coredump as coredump
    from gpudbg.dump.coredump.snapshot import register_map

    seen = {}
    real_hook = coredump.on_kernel_fault

    def recording_hook(gpu, fault):
        """What the simulator had in the faulting lane, read from the wave itself."""
        X, r = fault.wave, fault.report
        L = X.layout
        slot = int(np.flatnonzero((L.sm == r.sm) & (L.warp == r.warp) & (L.lane == r.lane))[0])
        prog = X.program
        seen["regs"] = {prog.reg_names[k][1]: X.regs[k][slot].copy() for k in prog.registers_of(r.function)}
        seen["map"] = register_map(prog, r.function)
        return real_hook(gpu, fault)

    monkeypatch.setattr(coredump, "on_kernel_fault", recording_hook)
    monkeypatch.setenv("GPUDBG_COREDUMP_ON_EXCEPTION", "1")
    monkeypatch.setenv("GPUDBG_COREDUMP_FILE", str(tmp_path / "core_%t_%p.nvcudmp"))
    n = 1000
    values = np.arange(n, dtype=np.float32) ** 2
    module = gpudbg.compile(_oob_source(), name="oob.cu")
    d_in = gpudbg.to_device(values)
    d_out = gpudbg.zeros(n, np.float32)
    module.forward_difference[(n + 127) // 128, 128](d_in, d_out, n)
    with pytest.raises(gpudbg.KernelFaultError) as ei:
        d_out.to_host()
    r = ei.value.report
    core = Path(r.details["coredump"])
    assert core.parent == tmp_path and core.exists()

    words = [(name, first) for name, dt, cls, first, nw in seen["map"]
             if cls == "R" and nw == 1 and first >= 0]
    tail = int(r.address) - 16  # the last four floats of the buffer read past
    cmds = ["disable pretty-printer", f"target cudacore {core}", "info cuda devices", "info cuda sms",
            "info cuda warps", "info cuda lanes", "info cuda kernels", "info cuda blocks",
            "info cuda threads", "p $pc", "p $errorpc", "p blockIdx", "p threadIdx", "p blockDim",
            "p gridDim", "p/x $R0"] + [f"p/x $R{first}" for _, first in words] + \
           [f"x/4wx (@global int*)0x{tail:x}"]
    args = [str(cuda_gdb), "-nx", "-batch"]
    for c in cmds:
        args += ["-ex", c]
    p = subprocess.run(args, capture_output=True, text=True, timeout=120, cwd=tmp_path)
    out = p.stdout + p.stderr
    print(out)
    assert "Could not open" not in out and "Error" not in out.split("info cuda")[0]
    assert "CUDA Exception: Warp Illegal Address" in out
    assert f"The exception was triggered at PC 0x{r.pc:x} (oob.cu:{r.source_line})" in out
    bx, by, bz = r.block
    tx, ty, tz = r.thread
    assert (f"[Current focus set to CUDA kernel 0, grid {r.grid_id}, block ({bx},{by},{bz}), "
            f"thread ({tx},{ty},{tz}), device 0, sm {r.sm}, warp {r.warp}, lane {r.lane}]") in out
    assert re.search(r"^\*\s+0\s+-\s+0\s+%d\s+Active\s+\S+\s+\(8,1,1\)\s+\(128,1,1\)\s+forward_difference\(\)"
                     % r.grid_id, out, re.M)
    assert re.search(r"sm_90\s+132\s+64\s+32", out)
    assert re.search(rf"^\*\s+{r.lane}\s+active\s+0x0*{r.pc & 0xfff:x}\s+\({tx},{ty},{tz}\)\s+Warp Illegal Address",
                     out, re.M)
    results = dict(re.findall(r"^\$(\d+) = (.*)$", out, re.M))
    assert results["1"] == results["2"] == f"(void (*)(void)) 0x{r.pc:x} <forward_difference()+{r.pc & 0xfff:d}>"
    assert results["3"] == f"{{x = {bx}, y = {by}, z = {bz}}}" and results["4"] == f"{{x = {tx}, y = {ty}, z = {tz}}}"
    assert results["5"] == "{x = 128, y = 1, z = 1}" and results["6"] == "{x = 8, y = 1, z = 1}"
    for i, (name, _first) in enumerate(words):
        want = int(np.asarray(seen["regs"][name]).view(np.uint32 if seen["regs"][name].itemsize == 4 else
                                                      np.uint16 if seen["regs"][name].itemsize == 2 else np.uint8))
        assert results[str(8 + i)] == f"0x{want:x}", name
    assert any(int(np.asarray(v)) == 999 for k, v in seen["regs"].items() if k.startswith("%r"))
    want_mem = r"\s+".join(f"0x{w:08x}" for w in values[-4:].view(np.uint32))
    assert re.search(f"^0x{tail:x}:\\s+{want_mem}\\s*$", out, re.M)

    # `gpudbg core` on the same file shows the same facts
    from gpudbg.cli.main import main as gpudbg_main
    ours_cmds = ["info cuda kernels", "info cuda lanes", "p $pc", "p $errorpc", "p blockIdx", "p threadIdx",
                 "p blockDim", "p gridDim"] + [f"p/x ${name[1:]}" for name, _ in words] + \
                [f"x/4wx (@global int*)0x{tail:x}"]
    capsys.readouterr()
    gpudbg_main(["core", "--batch", *[a for c in ours_cmds for a in ("-ex", c)], str(core)])
    ours = capsys.readouterr().out
    print(ours)
    assert (f"[Current focus set to CUDA kernel 0, grid {r.grid_id}, block ({bx},{by},{bz}), "
            f"thread ({tx},{ty},{tz}), device 0, sm {r.sm}, warp {r.warp}, lane {r.lane}]") in ours
    assert "CUDA Exception: Lane Illegal Address" in ours
    assert f"The exception was triggered at PC 0x{r.pc:x} (oob.cu:{r.source_line})" in ours
    assert re.search(rf"^\*\s+{r.lane}\s+active\s+0x0*{r.pc & 0xfff:x}\s+\({tx},{ty},{tz}\)\s+LANE_ILLEGAL_ADDRESS",
                     ours, re.M)
    mine = dict(re.findall(r"^\$(\d+) = (.*)$", ours, re.M))
    assert mine["1"].endswith(f"0x{r.pc:x}") and mine["2"].endswith(f"0x{r.pc:x}")
    for k in ("3", "4", "5", "6"):
        assert mine[k] == results[k]
    for i, (name, _first) in enumerate(words):
        assert mine[str(7 + i)] == results[str(8 + i)], name
    assert re.search(f"^0x{tail:x}:\\s+{want_mem}\\s*$", ours, re.M)

