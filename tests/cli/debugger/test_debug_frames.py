"""`gpudbg debug --batch`: frames of device calls (up, down, frame N, info
frame, finish from an outer frame), a caller's locals and arguments read in
its own frame (recursion included), and a step into a call showing the
arguments passed."""
from __future__ import annotations

import re
import textwrap

CALLS = r'''
__device__ __noinline__ int helper(int a, float f) {
    int b = a * 2;  // HELPER
    return b + 1 + (int)f;
}
extern "C" __global__ void caller(int *out) {
    int t = threadIdx.x;
    int k = t + 100;
    int r = helper(k, 2.5f);  // CALL
    out[t] = r;
}
'''

RECURSE = r'''
__device__ int fact(int n) {
    int m = n * 10;
    if (n <= 1) {
        return 1;  // BASE
    }
    int r = fact(n - 1);  // RECURSE
    return n * r + (m - n * 10);
}
extern "C" __global__ void rec(int *out) {
    int t = threadIdx.x;
    int v = fact(t % 4 + 3);
    out[t] = v;
}
'''

OUT = 'print("out", d.to_host().tolist())'


def line_of(source: str, marker: str) -> int:
    for n, text in enumerate(textwrap.dedent(source).splitlines(), start=1):
        if marker in text:
            return n
    raise AssertionError(marker)


def calls(host):
    return host(CALLS, f"d = gpudbg.zeros(32, np.int32)\nmodule.caller[1, 32](d)\n{OUT}", name="fn.cu",
                options=("-G",))


def test_up_reaches_the_callers_locals_of_the_focused_lane(gdb, host):
    call = line_of(CALLS, "CALL")
    _, out, err = gdb(calls(host), "break helper", "run", "cuda thread 3", "up", "info locals", "info args",
                      "print k * 2", "print $pc", "down", "print a", "frame 1", "frame", "print t", "kill")
    assert re.search(rf"^#1  0x([0-9a-f]{{16}}) in caller<<<\(1,1,1\),\(32,1,1\)>>> \(out=\(int \*\) 0x[0-9a-f]+\) "
                     rf"at fn.cu:{call}\n{call}\t    int r = helper\(k, 2.5f\);  // CALL$", out, re.M), out + err
    ret = int(re.search(r"^#1  0x([0-9a-f]{16}) in caller", out, re.M).group(1), 16)
    assert re.search(r"^t = 3\nk = 103\nr = \d+\nout = \(int \*\) 0x[0-9a-f]+$", out, re.M), out
    assert re.search(r"^\$1 = 206$", out, re.M)
    assert f"$2 = (void (*)()) 0x{ret:x}" in out          # $pc of the caller is its return address
    assert re.search(rf"^#0  helper \(a=103, f=2.5\) at fn.cu:{line_of(CALLS, 'HELPER')}$", out, re.M), out
    assert re.search(r"^\$3 = 103$", out, re.M)
    assert re.search(r"^\$4 = 3$", out, re.M)              # `print t` in frame 1
    assert out.count("#1  0x") == 3                        # up, frame 1, frame
    assert err == ""


def test_frame_limits_and_info_frame(gdb, host):
    _, out, err = gdb(calls(host), "break helper", "run", "down", "up 5", "up", "frame 7", "frame 1",
                      "info frame", "frame 0", "info frame", "kill")
    assert "Bottom (innermost) frame selected; you cannot go down." in err
    assert "Initial frame selected; you cannot go up." in err   # `up 5` stopped at #1; `up` then fails
    assert "No frame at level 7." in err
    assert re.search(r"^Stack level 1, frame at local 0x[0-9a-f]+:\n pc = 0x[0-9a-f]{16} in caller \(fn.cu:\d+\)\n"
                     r" caller of frame at local 0x[0-9a-f]+\n source language c\+\+\.\n"
                     r" Arglist at local 0x[0-9a-f]+, args: out=\(int \*\) 0x[0-9a-f]+\n", out, re.M), out
    assert re.search(r"^Stack level 0, frame at local 0x[0-9a-f]+:\n pc = 0x[0-9a-f]{16} in helper \(fn.cu:\d+\); "
                     r"saved pc = 0x[0-9a-f]{16}\n called by frame at local", out, re.M), out
    assert "args: a=100, f=2.5" in out
    assert " kernel caller, call depth 0," in out and " device function _Z6helperif, call depth 1," in out


def test_step_into_a_call_shows_the_passed_arguments(gdb, host):
    """The step stops after the callee's prologue (gdb's rule): the
    argument registers are loaded, so the values are the passed ones."""
    call, body = line_of(CALLS, "CALL"), line_of(CALLS, "HELPER")
    _, out, err = gdb(calls(host), f"break fn.cu:{call}", "run", "cuda thread 5", "step", "info args",
                      "print a + 1", "kill")
    assert re.search(rf"^helper \(a=105, f=2.5\) at fn.cu:{body}\n{body}\t    int b = a \* 2;", out, re.M), out + err
    assert re.search(r"^a = 105\nf = 2.5$", out, re.M)
    assert "$1 = 106" in out


def test_recursive_frames_each_have_their_own_values(gdb, host):
    """Each activation of a recursive function reads its own n and m
    (the outer ones from the copies the inner activations saved), and a
    write to an outer activation's variable is what it computes with."""
    prog = host(RECURSE, f"d = gpudbg.zeros(32, np.int32)\nmodule.rec[1, 32](d)\n{OUT}", name="rec.cu",
                options=("-G",))
    rec = line_of(RECURSE, "RECURSE")
    _, out, err = gdb(prog, f"break rec.cu:{line_of(RECURSE, 'BASE')}", "run", "bt", "up", "print m", "up",
                      "print m", "set var m = 777", "print m", "up", "info locals", "frame 0", "print m",
                      "delete", "continue")
    assert re.search(rf"^#0  fact \(n=1\) at rec.cu:\d+\n#1  0x[0-9a-f]{{16}} in fact \(n=2\) at rec.cu:{rec}\n"
                     rf"#2  0x[0-9a-f]{{16}} in fact \(n=3\) at rec.cu:{rec}\n#3  0x[0-9a-f]{{16}} in "
                     rf"rec<<<\(1,1,1\),\(32,1,1\)>>> \(out=\(int \*\) 0x[0-9a-f]+\) at rec.cu:\d+$", out, re.M), out
    assert "$1 = 20" in out and "$2 = 30" in out and "$3 = 777" in out
    assert re.search(r"^t = 0\nv = \d+$", out, re.M)
    assert "$4 = 10" in out
    values = eval(out[out.index("out [") + 4:].splitlines()[0])
    # lane 0's fact(3) = 3 * fact(2) + (777 - 30); lane 4 (also fact(3)) is untouched
    assert values[0] == 6 + 747 and values[4] == 6 and values[1] == 24


def test_finish_from_an_outer_frame_returns_from_it(gdb, host):
    prog = host(RECURSE, f"d = gpudbg.zeros(32, np.int32)\nmodule.rec[1, 32](d)\n{OUT}", name="rec.cu",
                options=("-G",))
    _, out, err = gdb(prog, f"break rec.cu:{line_of(RECURSE, 'BASE')}", "run", "up", "finish", "bt", "delete",
                      "continue")
    assert re.search(r"^Run till exit from #1  0x[0-9a-f]{16} in fact \(n=2\) at rec.cu:\d+$", out, re.M), out
    assert re.search(r"^#0  fact \(n=3\) at rec.cu:\d+\n#1  0x[0-9a-f]{16} in rec<<<", out, re.M), out
    assert "out [6, 24, 120, 720," in out


ARRAYS = r'''
__device__ __noinline__ int pick(int a) {
    int arr[4];
    for (int i = 0; i < 4; i++) arr[i] = a + i;
    return arr[a % 4] * 2;  // PICK
}
extern "C" __global__ void outer(int *out) {
    int t = threadIdx.x;
    int local[3] = {t, t + 1, t + 2};
    int k = t + 100 + local[t % 3];
    out[t] = pick(k);  // CALLPICK
}
'''


def test_callers_local_array_is_read_from_its_own_local_frame(gdb, host):
    """Both frames keep arrays in local memory: the caller's sits below the
    callee's frame, and each is read at its own frame base."""
    prog = host(ARRAYS, f"d = gpudbg.zeros(32, np.int32)\nmodule.outer[1, 32](d)\n{OUT}", name="arr.cu",
                options=("-G",))
    _, out, err = gdb(prog, f"break arr.cu:{line_of(ARRAYS, 'PICK')}", "run", "cuda thread 4", "print arr",
                      "up", "print local", "print k", "set var local[1] = 9", "print local[1]", "info frame",
                      "down", "print arr", "kill")
    assert "$1 = {109, 110, 111, 112}" in out, out + err     # k = 4 + 100 + local[1] = 109
    assert "$2 = {4, 5, 6}" in out and "$3 = 109" in out and "$4 = 9" in out
    assert "$5 = {109, 110, 111, 112}" in out                # the callee's array is untouched by the write
    m = re.search(r"^Stack level 1, frame at local 0x([0-9a-f]+):\n.*\n caller of frame at local 0x([0-9a-f]+)\n",
                  out, re.M)
    assert m and int(m.group(2), 16) > int(m.group(1), 16), out   # the callee's frame is above its caller's


ONE_LINE = r'''
__device__ __noinline__ int inc(int a) { return a + 1; }  // INC
extern "C" __global__ void k(int *out) {
    int t = threadIdx.x;
    out[t] = inc(t + 50);  // CALLINC
}
'''


def test_a_one_line_function_stops_past_its_parameter_loads(gdb, host):
    """No second line to stop at: its body starts at the first column past
    the parameter loads, for `break` and for `step` alike."""
    prog = host(ONE_LINE, f"d = gpudbg.zeros(32, np.int32)\nmodule.k[1, 32](d)\n{OUT}", name="one.cu",
                options=("-G",))
    inc = line_of(ONE_LINE, "INC")
    _, out, err = gdb(prog, f"break one.cu:{line_of(ONE_LINE, 'CALLINC')}", "run", "cuda thread 4", "step",
                      "info args", "delete", "continue")
    assert re.search(rf"in inc \(a=54\) at one.cu:{inc}$", out, re.M), out + err
    assert re.search(r"^a = 54$", out, re.M)
    assert "exited normally" in out
    _, out, err = gdb(prog, "break inc", "run", "cuda thread 6", "info args", "delete", "continue")
    assert re.search(rf"hit Breakpoint 1, inc \(a=50\) at one.cu:{inc}$", out, re.M), out + err
    assert re.search(r"^a = 56$", out, re.M)
