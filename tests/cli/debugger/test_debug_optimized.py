"""`info registers` and `print $r` at a stop in optimized native code: a
kernel built without -G, with no breakpoint in it when it launched, runs
the compiled code an undebugged launch runs, so at its fault the
registers dead at the faulting pc read `<optimized out>`, and with
`set cuda value_extrapolation on` cuda-gdb's `(possibly)` value."""
from __future__ import annotations

import re

import pytest

import gpudbg

CRASH = r'''
extern "C" __global__ void crash(int *out, int *bad) {
    int t = threadIdx.x;
    out[t] = t * 7;
    bad[t * 1000000] = t;  // FAULT
}
'''

BODY = '''
d = gpudbg.zeros(64, np.int32)
bad = gpudbg.zeros(4, np.int32)
module.crash[1, 64](d, bad)
gpudbg.Device().synchronize()
'''


@pytest.fixture
def native(monkeypatch):
    monkeypatch.setenv("GPUDBG_ENGINE", "native")


def _register_lines(out: str) -> list[str]:
    return [line for line in out.splitlines() if re.match(r"^%\w+\s", line)]


def test_dead_registers_at_a_fault_read_optimized_out(gdb, host, native):
    prog = host(CRASH, BODY, name="crash.cu")
    _, out, err = gdb(prog, "run", "info registers", "set cuda value_extrapolation on", "info registers", "kill")
    assert "CUDA Exception: Lane Illegal Address" in out, out + err
    regs = _register_lines(out)
    first, second = regs[:len(regs) // 2], regs[len(regs) // 2:]
    gone = [line.split()[0] for line in first if "<optimized out>" in line]
    assert gone, out                   # t * 7 is dead once stored
    assert not any("<optimized out>" in line for line in second)
    assert [line.split()[0] for line in second if "(possibly)" in line] == gone
    # the faulting store's own operands are live: shown as values
    assert any(re.match(r"^%r\d+\s+0x[0-9a-f]+\s+-?\d+$", line) for line in first), out


def test_printing_an_optimized_out_register_says_so(gdb, host, native):
    prog = host(CRASH, BODY, name="crash.cu")
    _, out, err = gdb(prog, "run", "info registers", "kill")
    gone = [line.split()[0] for line in _register_lines(out) if "<optimized out>" in line]
    assert gone, out
    gpudbg.Device(0).reset()           # the fault's sticky error
    _, out, err = gdb(prog, "run", f"print ${gone[0].lstrip('%')}", "kill")
    assert "value has been optimized out" in out + err, out + err


def test_a_kernel_built_with_g_keeps_every_register(gdb, host, native):
    prog = host(CRASH, BODY, name="crash.cu", options=("-G",))
    _, out, err = gdb(prog, "run", "info registers", "kill")
    assert "CUDA Exception: Lane Illegal Address" in out, out + err
    regs = _register_lines(out)
    assert regs and not any("<optimized out>" in line for line in regs), out
