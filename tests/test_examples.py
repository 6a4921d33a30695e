"""Every example runs with its default size and verifies its own result."""
from __future__ import annotations

import runpy
from pathlib import Path

import pytest

pytest.importorskip("cuda.bindings.nvrtc", reason="NVRTC (cuda-bindings) is not installed")

import gpudbg

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def _load(name: str) -> dict:
    return runpy.run_path(str(EXAMPLES / f"{name}.py"), run_name=f"example_{name}")


@pytest.mark.parametrize("name", ["saxpy", "reduction", "matmul", "histogram"])
def test_example_passes_its_numpy_check(name, capsys):
    assert _load(name)["main"]([name]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert out[-1].startswith(f"{name}: ") and out[-1].endswith("PASSED")


@pytest.mark.parametrize("name,arg", [("saxpy", "1000"), ("reduction", "77777"), ("matmul", "40"),
                                      ("histogram", "5000")])
def test_example_sizes_are_configurable(name, arg, capsys):
    assert _load(name)["main"]([name, arg]) == 0
    assert "PASSED" in capsys.readouterr().out


def test_examples_check_their_results(monkeypatch, capsys):
    """A wrong device result is reported as FAILED, not PASSED."""
    ns = _load("saxpy")
    real = gpudbg.DeviceArray.to_host
    monkeypatch.setattr(gpudbg.DeviceArray, "to_host", lambda self: real(self) + 1)
    assert ns["main"](["saxpy", "512"]) == 1
    assert "FAILED" in capsys.readouterr().out


def test_oob_example_faults_with_a_precise_report():
    try:
        with pytest.raises(gpudbg.KernelFaultError) as ei:
            _load("oob")["main"](["oob"])
        r = ei.value.report
        assert r.kernel == "forward_difference"
        assert r.source_file == "oob.cu"
        assert "0 bytes past the end of the 4000-byte allocation" in r.message
        assert r.block == (7, 0, 0) and r.thread == (103, 0, 0)
    finally:
        gpudbg.Device(0).reset()
