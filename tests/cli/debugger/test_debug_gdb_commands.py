"""`gpudbg debug --batch`: display/undisplay, until/advance, printf/dprintf,
rbreak/trbreak, info cuda managed, and the `set cuda` settings, each the
way a user types them."""
from __future__ import annotations

import re
import textwrap
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"

LOOP = r'''
__device__ __noinline__ int sq(int v) {
    return v * v;  // SQ
}
extern "C" __global__ void loop(int *out) {
    int t = threadIdx.x;
    int s = 0;
    for (int i = 0; i < 4; i++) {  // FOR
        s += i * t;  // BODY
    }
    s += sq(t);  // CALLSQ
    out[t] = s;  // AFTER
}
'''

TWO = r'''
extern "C" __global__ void kern_a(int *out) { out[threadIdx.x] += 1; }  // A
extern "C" __global__ void kern_b(int *out) { out[threadIdx.x] += 2; }  // B
extern "C" __global__ void other(int *out) { out[threadIdx.x] += 4; }
'''

MANAGED = r'''
struct Pt { int x; float y; };
__managed__ int counter = 5;
__managed__ float weights[3] = {1.0f, 2.5f, -1.0f};
__managed__ Pt origin = {7, 0.5f};
extern "C" __global__ void bump(int *out) {
    atomicAdd(&counter, 1);
    out[threadIdx.x] = counter;  // USE
}
'''

OUT = 'print("out", d.to_host().tolist())'


def line_of(source: str, marker: str) -> int:
    for n, text in enumerate(textwrap.dedent(source).splitlines(), start=1):
        if marker in text:
            return n
    raise AssertionError(marker)


def loop(host):
    return host(LOOP, f"d = gpudbg.zeros(32, np.int32)\nmodule.loop[1, 32](d)\n{OUT}", name="loop.cu",
                options=("-G",))


def two_kernels(host):
    return host(TWO, "d = gpudbg.zeros(32, np.int32)\nmodule.kern_a[1, 32](d)\nmodule.kern_b[1, 32](d)\n"
                f"module.other[1, 32](d)\n{OUT}", name="two.cu")


def test_display_shows_at_every_stop_in_its_function(gdb, host):
    body = line_of(LOOP, "BODY")
    _, out, err = gdb(loop(host), f"break loop.cu:{body}", "run", "cuda thread 3", "display s",
                      "display/x threadIdx.x", "display/i $pc", "info display", "next", "undisplay 3",
                      "step", "display", "undisplay", "info display", "undisplay 9", "kill")
    assert "1: s = 0\n2: /x threadIdx.x = 0x3\n3: x/i $pc\n=> 0x" in out, out + err
    assert re.search(r"^Auto-display expressions now in effect:\nNum Enb Expression\n1:   y  s\n"
                     r"2:   y  /x threadIdx.x\n"
                     r"3:   y  /i \$pc$", out, re.M), out
    # after `next`: all three, in order, below the new line
    assert re.search(rf"^{line_of(LOOP, 'FOR')}\t.*\n1: s = 0\n2: /x threadIdx.x = 0x3\n3: x/i \$pc\n=> 0x", out, re.M)
    # `step` goes round to the body again (s = 0 * 3), without the undisplayed x/i
    assert re.search(rf"^{body}\t.*\n1: s = 0\n2: /x threadIdx.x = 0x3\n(?!3:)", out, re.M), out
    assert "There are no auto-display expressions now." in out
    assert "No display number 9." in out
    assert err == ""


def test_display_enable_disable_and_delete_display(gdb, host):
    _, out, err = gdb(loop(host), "display t", "display/x t", "disable display 1", "info display", "break loop",
                      "run", "enable display", "delete display 2", "info display", "next", "kill")
    assert "1:   n  t\n2:   y  /x t" in out, out + err
    first_stop = out[out.index("hit Breakpoint 1"):out.index("Auto-display", out.index("hit Breakpoint 1"))]
    assert "2: /x t = 0x0" in first_stop and "1: t" not in first_stop     # made before run: shown at the stop
    assert re.search(r"^Num Enb Expression\n1:   y  t$", out, re.M)
    after_next = out[out.rindex("Auto-display"):]
    assert "1: t = 0" in after_next and "2: /x" not in after_next


def test_display_of_a_local_is_only_shown_in_its_function(gdb, host):
    sq = line_of(LOOP, "SQ")
    _, out, err = gdb(loop(host), f"break loop.cu:{line_of(LOOP, 'CALLSQ')}", "run", "display s",
                      "display v", "step", "display v", "finish", "info display", "kill")
    assert "1: s = 0" in out
    assert 'No symbol "v" in current context.' in err     # refused where v is unknown, as gdb does
    in_sq = out[out.index(f"{sq}\t    return v * v;"):out.index("Run till exit")]
    assert "2: v = 0" in in_sq and "1: s" not in in_sq     # s is loop's: not shown inside sq
    back = out[out.index("Run till exit"):]
    assert "1: s = 0" in back and "2: v" not in back.split("Auto-display")[0]
    assert "2:   y  v" in back


def test_until_leaves_a_loop_and_until_location_stops_there(gdb, host):
    body, for_line, call = line_of(LOOP, "BODY"), line_of(LOOP, "FOR"), line_of(LOOP, "CALLSQ")
    after = line_of(LOOP, "AFTER")
    _, out, err = gdb(loop(host), f"break loop.cu:{body}", "run", "cuda thread 2", "delete", "next", "until",
                      "print s", f"until loop.cu:{after}", "print s", "continue")
    lines = re.findall(r"^(\d+)\t", out, re.M)
    # next: the loop line; until: past the loop (not back into its body), then AFTER
    assert lines[-3:] == [str(for_line), str(call), str(after)], out
    assert "$1 = 12" in out and "$2 = 16" in out          # 2*(0+1+2+3), then + sq(2)
    assert "exited normally" in out and err == ""


def test_advance_stops_in_a_callee_and_until_at_its_end_returns(gdb, host):
    _, out, err = gdb(loop(host), f"break loop.cu:{line_of(LOOP, 'BODY')}", "run", "delete", "advance sq", "bt",
                      "until", "advance", "continue")
    assert re.search(rf"^sq \(v=0\) at loop.cu:{line_of(LOOP, 'SQ')}$", out, re.M), out + err
    assert re.search(r"^#1  0x[0-9a-f]{16} in loop<<<", out, re.M)
    assert re.search(rf"^0x[0-9a-f]{{16}} in loop<<<.*>>> \(out=.*\) at loop.cu:{line_of(LOOP, 'CALLSQ')}$",
                     out, re.M), out
    assert "Argument required (a location)." in err
    assert "exited normally" in out


def test_printf_formats_expressions_of_the_focus(gdb, host):
    _, out, err = gdb(loop(host), f"break loop.cu:{line_of(LOOP, 'BODY')}", "run", "cuda thread 7",
                      'printf "t=%d hex=%#06x f=%.2f s=%s c=%c %%\\n", t, t * 16, t / 2.0, "ok", 65 + t',
                      'printf "%d\\n"', 'printf "%s\\n", t', "kill")
    assert "t=7 hex=0x0070 f=3.50 s=ok c=H %\n" in out, out + err
    assert "Wrong number of arguments for specified format-string" in err
    assert "can't be converted to a string for %s" in err


def test_dprintf_prints_for_each_lane_and_does_not_stop(gdb, host):
    body = line_of(LOOP, "BODY")
    _, out, err = gdb(loop(host), f'dprintf loop.cu:{body},"t=%d i=%d s=%d\\n", t, i, s', "info breakpoints",
                      "run", "info breakpoints")
    assert re.search(rf"^Dprintf 1 \(loop.cu:{body}\) pending\.$", out, re.M), out + err
    assert re.search(rf'^1\s+dprintf\s+keep y\s+<PENDING>\s+loop.cu:{body}\n\s+printf "t=%d i=%d s=%d\\n", t, i, s$',
                     out, re.M), out
    for t in range(32):
        for i in range(4):
            assert f"t={t} i={i} s={t * (0 + 1 + 2 + 3) * 0 + t * sum(range(i))}\n" in out
    assert "hit Breakpoint" not in out and "exited normally" in out
    assert "breakpoint already hit 4 times" in out       # one hit per loop iteration of the warp


def test_rbreak_sets_a_breakpoint_per_matching_function(gdb, host):
    prog = two_kernels(host)
    _, out, err = gdb(prog, "break kern_a", "run", "rbreak ^kern_", "rbreak nothing_matches", "rbreak (",
                      "info breakpoints", "delete 1", "continue", "continue")
    assert re.search(r"^Breakpoint 2 at 0x[0-9a-f]+: file two.cu, line \d+\.\nkern_a; \(kernel kern_a\)\n"
                     r"Breakpoint 3 at 0x[0-9a-f]+: file two.cu, line \d+\.\nkern_b; \(kernel kern_b\)$",
                     out, re.M), out
    assert 'No loaded function matches "nothing_matches"' in out
    assert "Invalid regexp" in err
    assert not re.search(r"^4\s+breakpoint", out, re.M)     # `other` did not match
    assert re.search(r'hit Breakpoint 3, kern_b<<<', out)
    assert "out [7, 7," in out


def test_trbreak_catches_kernels_by_pattern_once(gdb, host):
    prog = two_kernels(host)
    _, out, err = gdb(prog, "break kern_a", "run", "trbreak _b$|^oth", "rbreak -t kern_a", "delete 1",
                      "info breakpoints", "continue", "continue", "info breakpoints", "continue")
    assert re.search(r"^Temporary breakpoint 2 at .*\nkern_b; \(kernel kern_b\)\nTemporary breakpoint 3 at .*\n"
                     r"other; \(kernel other\)\nTemporary breakpoint 4 at .*\nkern_a; \(kernel kern_a\)$",
                     out, re.M), out
    assert 'hit Temporary breakpoint 2, kern_b<<<' in out and 'hit Temporary breakpoint 3, other<<<' in out
    listing = out.split("hit Temporary breakpoint 3")[1]
    assert re.search(r"^4\s+breakpoint\s+del  y", listing, re.M)    # kern_a's ran already: never hit
    assert not re.search(r"^[23]\s+breakpoint", listing, re.M)
    assert "out [7, 7," in out


def test_rbreak_shows_dwarf_signatures(gdb, host):
    _, out, err = gdb(loop(host), "break loop", "run", "rbreak ^sq", "continue", "kill")
    assert re.search(r"^Breakpoint 2 at 0x[0-9a-f]+: file loop.cu, line \d+\.\nint sq\(int\);$", out, re.M), out
    assert re.search(r"hit Breakpoint 2, sq \(v=0\)", out)


def test_info_cuda_managed_lists_variables_and_allocations(gdb, host):
    body = (f"from gpudbg import mc\nerr, extra = mc.mcMallocManaged(4096, 1)\nd = gpudbg.zeros(4, np.int32)\n"
            f"module.bump[1, 4](d)\n{OUT}")
    prog = host(MANAGED, body, name="man.cu", options=("-G",))
    _, out, err = gdb(prog, f"break man.cu:{line_of(MANAGED, 'USE')}", "run", "info cuda managed", "delete",
                      "continue", "info cuda managed")
    assert re.search(r"^Static managed variables on device 0 are:\ncounter = 9\nweights = \{1, 2.5, -1\}\n"
                     r"origin = \{x = 7, y = 0.5\}\nManaged allocations are:\n"
                     r"  0x[0-9a-f]+ \(4096 bytes\) on device 0$",
                     out, re.M), out + err
    assert "Static managed variables on host are:\ncounter = 9" in out      # after the program: no focus


def test_info_cuda_managed_without_debug_info_uses_ptx_types(gdb, host):
    body = f"d = gpudbg.zeros(4, np.int32)\nmodule.bump[1, 4](d)\n{OUT}"
    prog = host(MANAGED, body, name="man.cu")
    _, out, err = gdb(prog, f"break man.cu:{line_of(MANAGED, 'USE')}", "run", "info cuda managed", "kill")
    assert "counter = 9\n" in out, out + err
    assert "weights = {0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x20, 0x40, 0x00, 0x00, 0x80, 0xbf}" in out


def test_break_on_launch_values(gdb, host):
    prog = two_kernels(host)
    _, out, err = gdb(prog, "show cuda break_on_launch", "set cuda break_on_launch system",
                      "show cuda break_on_launch", "run")
    assert "break_on_launch: none" in out and "break_on_launch: system" in out
    assert "hit" not in out and "exited normally" in out and "out [7," in out   # no system kernels here
    _, out, err = gdb(prog, "set cuda break_on_launch all", "run", "continue", "set cuda break_on_launch none",
                      "continue")
    assert out.count("[Switching focus to CUDA kernel") == 2, out        # kern_a, kern_b; then none
    assert "exited normally" in out
    _, out, err = gdb(prog, "set cuda break_on_launch sometimes")
    assert 'Undefined value for break_on_launch: "sometimes".  Valid choices: all, application, none, system.' in err


def test_kernel_events_and_refused_settings(gdb, host):
    prog = two_kernels(host)
    _, out, err = gdb(prog, "set cuda kernel_events application", "set cuda launch_blocking on",
                      "set cuda no_such_thing on", "show cuda ptx_cache", "run")
    assert re.search(r"^\[Launch of CUDA Kernel 0 \(kern_a<<<\(1,1,1\),\(32,1,1\)>>>\) on Device 0, level 0\]$",
                     out, re.M)
    assert re.search(r"^\[Termination of CUDA Kernel 2 \(other<<<\(1,1,1\),\(32,1,1\)>>>\) on Device 0, level 0\]$",
                     out, re.M), out
    assert "set cuda launch_blocking is not supported by gpudbg: launches stay asynchronous" in err
    assert 'Undefined set cuda setting: "no_such_thing".' in err
    assert "ptx_cache: on (not supported by gpudbg)" in out


def test_coalescing_off_lists_every_thread(gdb, host):
    prog = two_kernels(host)
    _, out, err = gdb(prog, "break kern_a", "run", "info cuda threads", "set cuda coalescing off",
                      "info cuda threads", "kill")
    assert re.search(r"^\*\s+\(0,0,0\)\s+\(0,0,0\)\s+\(0,0,0\)\s+\(31,0,0\)\s+32\s", out, re.M), out
    assert re.search(r"^\s+\(0,0,0\)\s+\(31,0,0\)\s+\(0,0,0\)\s+\(31,0,0\)\s+1\s", out, re.M), out


def test_memcheck_reports_an_illegal_access_like_cuda_gdb(gdb):
    _, out, err = gdb(str(EXAMPLES / "oob.py"), "set cuda memcheck on", "show cuda memcheck", "run", "kill")
    assert "memcheck: on" in out
    assert re.search(r"^Memcheck detected an illegal access to address \(@global\)0x[0-9a-f]+\n\nCUDA Exception: "
                     r"Lane Illegal Address$", out, re.M), out + err
    assert "by thread (103,0,0) in block (7,0,0) [sm 7, warp 3, lane 7]" in out
    assert "LEAK SUMMARY" not in out + err           # a killed program's memory is not a leak


def test_memcheck_off_reports_without_it(gdb):
    _, out, err = gdb(str(EXAMPLES / "oob.py"), "run", "kill")
    assert "Memcheck detected" not in out and "CUDA Exception: Lane Illegal Address" in out


def test_memcheck_runs_the_sanitizers_host_checks_and_leak_check(gdb, host):
    leaky = host('extern "C" __global__ void k() {}', "from gpudbg import mc\nerr, kept = mc.mcMalloc(1024)\n"
                 "err, p = mc.mcMalloc(64)\nmc.mcFree(p)\nmc.mcFree(p)\nprint('done')", name="leak.cu")
    _, out, err = gdb(leaky, "set cuda memcheck on", "run")
    text = out + err
    assert "Double free of 0x" in text
    assert re.search(r"Leaked 1024 bytes at 0x[0-9a-f]+", text)
    assert "LEAK SUMMARY: 1024 bytes leaked in 1 allocations" in text
    _, out, err = gdb(leaky, "run")                          # off: neither
    assert "LEAK SUMMARY" not in out + err and "Double free of" not in out + err


SEL = r'''
extern "C" __global__ void sel(int *out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (blockIdx.x > 0) {
        out[i] = i;  // SET
    }
}
'''


def test_thread_selection_logical_or_physical(gdb, host):
    """With more blocks than SMs, block 132 shares SM 0 with block 0: when
    block 0 does not stop, the lowest logical thread (block 1, on SM 1) and
    the lowest physical lane (SM 0: block 132) differ."""
    prog = host(SEL, f"d = gpudbg.zeros(32 * 134, np.int32)\nmodule.sel[134, 32](d)\n{OUT}", name="sel.cu",
                options=("-lineinfo",))
    stop = f"break sel.cu:{line_of(SEL, 'SET')}"
    _, out, err = gdb(prog, "show cuda thread_selection", stop, "run", "delete", "continue")   # no kill: the
    assert "exited normally" in out                                                     # next run shares the GPU
    assert "thread_selection: logical" in out
    assert "[Switching focus to CUDA kernel 0, grid " in out and "block (1,0,0), thread (0,0,0)" in out, out + err
    _, out, err = gdb(prog, "set cuda thread_selection physical", stop, "run", "kill")
    assert re.search(r"block \((\d+),0,0\), thread \(0,0,0\), device 0, sm 0, warp \d+, lane 0\]", out), out + err


MISALIGNED = r'''
extern "C" __global__ void skew(int *out) {
    int *p = (int *)((char *)out + 2);
    out[threadIdx.x] = *p;  // READ
}
'''


def test_memcheck_names_a_misaligned_access(gdb, host):
    prog = host(MISALIGNED, f"d = gpudbg.zeros(32, np.int32)\nmodule.skew[1, 32](d)\n{OUT}", name="skew.cu")
    _, out, err = gdb(prog, "set cuda memcheck on", "run", "kill")
    assert re.search(r"^Memcheck detected a misaligned access to address \(@global\)0x[0-9a-f]+2\n\nCUDA Exception: "
                     r"Lane Misaligned Address$", out, re.M), out + err
