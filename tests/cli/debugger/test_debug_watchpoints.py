"""`gpudbg debug --batch`: watch, rwatch and awatch on device memory (global,
shared, local, -G variables, *(T *)ADDR), told as gdb tells hardware
watchpoints, with the CUDA lanes that touched the bytes."""
from __future__ import annotations

import re
import textwrap

WK = r'''
extern "C" __global__ void wk(int *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int buf[4];
    for (int k = 0; k < 4; ++k) buf[k] = i + k;  // FILL
    __shared__ float sdata[32];
    sdata[threadIdx.x] = i * 0.5f;  // SHARE
    __syncthreads();
    if (i == 37) out[n] = buf[i % 4] + 1;  // ONE
    out[i] = (int)sdata[31 - threadIdx.x];  // ALL
    if (i == 3) out[n + 1] = out[n];  // COPY
}
'''

BODY = 'd = gpudbg.zeros(66, np.int32)\nmodule.wk[2, 32](d, 64)\nprint("out", d.to_host().tolist()[60:])'
FOCUS = "cuda block 1 thread 5"


def line_of(marker: str) -> int:
    for n, text in enumerate(textwrap.dedent(WK).splitlines(), start=1):
        if marker in text:
            return n
    raise AssertionError(marker)


def _run(gdb, host, *commands):
    prog = host(WK, BODY, name="wk.cu", options=("-G",))
    return gdb(prog, f"break wk.cu:{line_of('FILL')}", "run", FOCUS, *commands)


def _stops(out: str) -> list[str]:
    """The text of each watchpoint stop, from its `hit` line to the next command's output."""
    return re.findall(r'Thread 1 "python" hit Hardware.*?(?=\nContinuing\.|\Z)', out, re.S)


def test_watch_global_expression_reports_old_and_new_value_and_the_writing_thread(gdb, host):
    status, out, err = _run(gdb, host, "watch out[n]", "continue", "continue")
    assert "Hardware watchpoint 2: out[n]" in out, out
    (hit,) = _stops(out)
    assert hit.startswith('Thread 1 "python" hit Hardware watchpoint 2: out[n]\n\nOld value = 0\nNew value = 39\n')
    assert "  by thread (5,0,0) in block (1,0,0) [sm 1, warp 0, lane 5]" in hit
    assert re.search(rf"in wk<<<\(2,1,1\),\(32,1,1\)>>> \(.*\) at wk.cu:{line_of('ONE')}\n"
                     rf"{line_of('ONE')}\t    if \(i == 37\) out\[n\] = buf", hit), hit
    # the COPY line writes out[n + 1] and reads out[n]: neither stops a write watchpoint
    assert "out [17, 17, 16, 16, 39, 39]" in out
    assert re.search(r"\[Inferior 1 \(process \d+\) exited normally\]", out)
    assert status == 0 and err == ""


def test_rwatch_on_a_g_local_array_element_stops_only_its_thread_reading_it(gdb, host):
    _, out, err = _run(gdb, host, "rwatch buf[1]", "info watchpoints", "continue", "continue")
    assert "Hardware read watchpoint 2: buf[1]" in out
    assert re.search(r"^2\s+read watchpoint keep y\s+buf\[1\]\n\tlocal memory of thread \(5,0,0\) in block "
                     r"\(1,0,0\)$", out, re.M), out
    (hit,) = _stops(out)                  # the FILL loop writes buf[1]: a read watchpoint ignores it
    assert hit.startswith('Thread 1 "python" hit Hardware read watchpoint 2: buf[1]\n\nValue = 38\n'), hit
    assert "by thread (5,0,0) in block (1,0,0)" in hit and hit.count("  by ") == 1
    # the thread's local memory ends with the grid, and so does the watchpoint
    assert "\nWatchpoint 2 deleted because the program has left the block in\nwhich its expression is valid.\n" in out
    assert err == ""


def test_awatch_on_shared_memory_sees_the_write_then_the_read_of_the_focused_block(gdb, host):
    _, out, err = _run(gdb, host, "awatch sdata[3]", "continue", "continue", "continue")
    assert "Hardware access (read/write) watchpoint 2: sdata[3]" in out
    write, read = _stops(out)
    assert "\n\nOld value = 0\nNew value = 17.5\n  by thread (3,0,0) in block (1,0,0)" in write, write
    assert f"at wk.cu:{line_of('SHARE')}" in write or f"at wk.cu:{line_of('SHARE') + 1}" in write
    assert "\n\nValue = 17.5\n  by thread (28,0,0) in block (1,0,0)" in read, read
    assert f"at wk.cu:{line_of('ALL')}" in read
    assert re.search(r"\[Switching focus to CUDA kernel 0, grid \d+, block \(1,0,0\), thread \(28,0,0\)", out)
    assert err == ""


def test_condition_address_cast_and_location_forms(gdb, host):
    _, out, err = _run(gdb, host, "awatch sdata[3] if threadIdx.x == 28", "set $p = (long)(out + 65)",
                       "watch -l *(int *)$p", "info breakpoints", "continue", "continue", "continue")
    assert "Hardware watchpoint 3: -location *(int *)$p" in out
    assert re.search(r"^2\s+acc watchpoint\s+keep y\s+sdata\[3\]\n\tshared memory of block \(1,0,0\)\n"
                     r"\tstop only if threadIdx.x == 28$", out, re.M), out
    read, copy = _stops(out)
    assert "Value = 17.5\n  by thread (28,0,0) in block (1,0,0)" in read     # the write by thread 3 did not stop
    assert "Hardware watchpoint 3: -location *(int *)$p\n\nOld value = 0\nNew value = 39\n" \
           "  by thread (3,0,0) in block (0,0,0)" in copy, copy
    assert err == ""


def test_deleted_and_disabled_watchpoints_stop_nothing(gdb, host):
    _, out, err = _run(gdb, host, "watch out[n]", "awatch sdata[3]", "rwatch buf[1]", "delete 2",
                       "disable 3", "delete 9", "info watchpoints", "enable 4", "disable 4", "continue")
    assert "No breakpoint number 9." in out
    assert not re.search(r"^2\s+hw watchpoint", out, re.M)
    assert re.search(r"^3\s+acc watchpoint\s+keep n\s+sdata\[3\]$", out, re.M), out
    assert not _stops(out)
    assert "out [17, 17, 16, 16, 39, 39]" in out
    assert re.search(r"\[Inferior 1 \(process \d+\) exited normally\]", out)
    assert err == ""


def test_a_register_variable_or_constant_cannot_be_watched(gdb, host):
    _, out, err = _run(gdb, host, "watch i", "watch 5", "watch", "info watchpoints", "continue")
    assert "Cannot watch i: it is held in a register, not in device memory" in err
    assert "Cannot watch constant value `5'." in err
    assert "Argument required (expression to compute)." in err
    assert "No watchpoints." in out


def test_next_over_the_write_stops_at_the_watchpoint(gdb, host):
    prog = host(WK, BODY, name="wk.cu", options=("-G",))
    one = line_of("ONE")
    _, out, err = gdb(prog, f"break wk.cu:{one}", "run", FOCUS, "watch out[n]", "next", "next", "continue")
    hit = out[out.index('Thread 1 "python" hit Hardware watchpoint 2'):]
    assert hit.startswith('Thread 1 "python" hit Hardware watchpoint 2: out[n]\n\nOld value = 0\n'
                          'New value = 39\n  by thread (5,0,0) in block (1,0,0)'), hit
    # the first `next` ended at the store (mid-line), the second went on to the next line
    assert re.search(rf"^0x[0-9a-f]+ in wk<<<.*at wk.cu:{one}\n{one}\t.*\n{one + 1}\t    out\[i\] =", hit, re.M), hit
    assert "out [17, 17, 16, 16, 39, 39]" in out and err == ""


def test_one_store_of_many_lanes_reports_each_watchpoint_it_touched(gdb, host):
    prog = host(WK, BODY, name="wk.cu", options=("-G",))
    _, out, err = gdb(prog, f"break wk.cu:{line_of('ONE')}", "run", "watch out[0]@8", "watch out[40]", "continue",
                      "continue")
    (hit,) = _stops(out)
    assert hit.startswith('Thread 1 "python" hit Hardware watchpoint 2: out[0]@8\n\n'
                          "Old value = {0, 0, 0, 0, 0, 0, 0, 0}\nNew value = {15, 15, 14, 14, 13, 13, 12, 12}\n"
                          "  by thread (0,0,0) in block (0,0,0) [sm 0, warp 0, lane 0]\n"), hit
    assert "  by thread (3,0,0) in block (0,0,0) [sm 0, warp 0, lane 3]\n  and 4 more threads\n" in hit
    assert "\nHardware watchpoint 3: out[40]\n\nOld value = 0\nNew value = 27\n" \
           "  by thread (8,0,0) in block (1,0,0) [sm 1, warp 0, lane 8]\n" in hit
    assert f"at wk.cu:{line_of('COPY')}" in hit and err == ""
