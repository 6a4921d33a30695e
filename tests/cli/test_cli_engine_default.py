"""`gpudbg run`, `check` and `debug` on the default engine (auto, no
GPUDBG_ENGINE): a launch of engine.AUTO_THREADS threads compiles its
program and compiled code really runs (counted calls, not timing), under
the sanitizer (synccheck: every segment without a barrier) and under the
debugger (the variant that stores every register, with a breakpoint still
stopping at its line and printing the interpreter's value); a small launch
stays interpreted."""
from __future__ import annotations

import re
import textwrap

import pytest

pytest.importorskip("cuda.bindings.nvrtc", reason="NVRTC (cuda-bindings) is not installed")

import gpudbg
from gpudbg.cli.main import main
from gpudbg.sim.native import engine

KERNEL = r'''
extern "C" __global__ void mix(const int *in, int *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int h = i * 37 + 11;
    h ^= h << 3;
    h = h * 5 - (h >> 2);  // HASHED
    if (i < n)
        out[i] = in[i] + h;
}
'''

PROGRAM = '''
import sys
import numpy as np
import gpudbg

n = int(sys.argv[1])
m = gpudbg.compile(r"""{kernel}""", name="mix.cu", options={options!r})
src = gpudbg.to_device(np.arange(n, dtype=np.int32))
out = gpudbg.zeros(n, np.int32)
m.mix[(n + 255) // 256, 256](src, out, n)
got = out.to_host()
i = np.arange(n, dtype=np.int64)
h = (i * 37 + 11) & 0xFFFFFFFF
h = (h ^ (h << 3)) & 0xFFFFFFFF
h = h.astype(np.uint32).view(np.int32).astype(np.int64)
h = (h * 5 - (h >> 2)).astype(np.int64)
want = ((i + h) & 0xFFFFFFFF).astype(np.uint32).view(np.int32)
print("PASSED" if np.array_equal(got, want) else "FAILED")
'''


def _line(marker: str) -> int:
    for n, text in enumerate(KERNEL.splitlines(), start=1):
        if marker in text:
            return n
    raise AssertionError(marker)


@pytest.fixture
def program(tmp_path, monkeypatch):
    monkeypatch.delenv(engine.ENV_ENGINE, raising=False)     # the default: auto

    def make(options: tuple = ()) -> str:
        path = tmp_path / "mix_host.py"
        path.write_text(textwrap.dedent(PROGRAM).format(kernel=KERNEL, options=list(options)))
        return str(path)
    yield make
    gpudbg.Device(0).reset()


@pytest.fixture
def compiled_calls(monkeypatch):
    """(program, succeeded) of every compiled segment or region call."""
    calls: list[tuple[object, bool]] = []
    original = engine.NativeSegment.run

    def run(self, X, idx):
        ok = original(self, X, idx)
        calls.append((X.program, ok))
        return ok
    monkeypatch.setattr(engine.NativeSegment, "run", run)
    return calls


BIG = str(engine.AUTO_THREADS)          # one launch this large compiles (auto)
SMALL = "1024"


def test_run_compiles_a_large_launch_and_runs_it_natively(program, compiled_calls, capsys):
    assert main(["run", program(), BIG]) == 0
    assert "PASSED" in capsys.readouterr().out
    progs = {id(p): p for p, ok in compiled_calls if ok}
    assert progs, "no compiled code ran"
    assert all(p.native_ready for p in progs.values())


def test_run_keeps_a_small_launch_interpreted(program, compiled_calls, capsys):
    assert main(["run", program(), SMALL]) == 0
    assert "PASSED" in capsys.readouterr().out
    assert compiled_calls == []


def test_check_runs_compiled_code_under_a_tool_with_the_same_report(program, compiled_calls, capsys):
    assert main(["check", "--tool", "synccheck", program(), BIG]) == 0
    out = capsys.readouterr().out
    assert "PASSED" in out and out.rstrip().endswith("ERROR SUMMARY: 0 errors")
    assert any(ok for _p, ok in compiled_calls), "no compiled code ran under synccheck"
    assert all(p.native_ready for p, _ok in compiled_calls)


def test_debug_runs_the_register_keeping_variant_and_still_stops_at_the_line(program, compiled_calls, capsys):
    line = _line("HASHED")
    status = main(["debug", "--batch", "-ex", f"break mix.cu:{line}", "-ex", "run", "-ex", "cuda thread 5",
                   "-ex", "print h", "-ex", "delete", "-ex", "continue", program(("-G",)), BIG])
    out, _err = capsys.readouterr()
    assert status == 0, out
    h = ((5 * 37 + 11) ^ ((5 * 37 + 11) << 3))
    assert re.search(rf"^\$1 = {h}$", out, re.M), out          # h before the line runs
    assert "PASSED" in out
    progs = {id(p): p for p, ok in compiled_calls if ok}
    assert progs, "no compiled code ran under the debugger"
    assert all(p.native_full_ready for p in progs.values())
