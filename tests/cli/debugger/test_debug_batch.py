"""`gpudbg debug --batch -ex ...`: end-to-end debugging sessions on small
kernels, asserting on what cuda-gdb would print."""
from __future__ import annotations

import re

from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


def switched(out: str, text: str) -> bool:
    """Whether `[Switching focus to CUDA <text>]` was printed; the grid id
    is the process's launch counter, so `grid N` matches any number."""
    pattern = re.escape(f"[Switching focus to CUDA {text}]").replace("grid\\ N", r"grid\ \d+")
    return re.search(pattern, out) is not None


def line_of(source: str, marker: str) -> int:
    """1-based line of `marker` in the kernel text as the host program
    writes it (the source starts with a newline)."""
    import textwrap
    for n, text in enumerate(textwrap.dedent(source).splitlines(), start=1):
        if marker in text:
            return n
    raise AssertionError(f"{marker!r} not in source")


DIVERGE = r'''
extern "C" __global__ void branchy(int *out) {
    int t = threadIdx.x;
    int v = -t;
    if (t % 4 == 0) {
        v = t * 10;  // TAKEN
    }
    out[t] = v;
}
'''

LOCALS = r'''
extern "C" __global__ void locals(int *out) {
    int t = threadIdx.x + blockIdx.x * blockDim.x;
    int x = t * 3 + 1;
    out[t] = x * 2;  // USE
}
'''

SYNC = r'''
extern "C" __global__ void stage(int *out) {
    __shared__ int buf[256];
    int t = threadIdx.x;
    buf[t] = t * 2;  // STORE
    __syncthreads();  // BARRIER
    out[t] = buf[255 - t];  // AFTER
}
'''

SHARED = r'''
extern "C" __global__ void blocks(int *out) {
    __shared__ int sdata[32];
    int t = threadIdx.x;
    sdata[t] = t + 1000 * blockIdx.x;
    __syncthreads();
    out[blockIdx.x * 32 + t] = sdata[31 - t];  // READ
}
'''

PRINT_OUT = 'print("out", d.to_host().tolist())'


def test_breakpoint_on_kernel_name_before_run(gdb):
    status, out, err = gdb(str(EXAMPLES / "saxpy.py"), "break saxpy", "run", "continue", args=("1024",))
    assert "Breakpoint 1 (saxpy) pending." in out
    assert switched(out, "kernel 0, grid N, block (0,0,0), thread (0,0,0), device 0, sm 0, "
                    "warp 0, lane 0")
    assert re.search(r'Thread 1 "python" hit Breakpoint 1, saxpy<<<\(4,1,1\),\(256,1,1\)>>> \(.*=1024, '
                     r'.*=2.5, .*\) at saxpy.cu:\d+', out)
    assert re.search(r"^\d+\t    int i = blockIdx.x \* blockDim.x \+ threadIdx.x;$", out, re.M)
    assert "saxpy: n=1024" in out and "PASSED" in out
    assert re.search(r"\[Inferior 1 \(process \d+\) exited normally\]", out)
    assert status == 0, err


def test_divergent_branch_shows_only_reaching_lanes_active(gdb, host):
    prog = host(DIVERGE, f"d = gpudbg.zeros(64, np.int32)\nmodule.branchy[1, 64](d)\n{PRINT_OUT}",
                name="div.cu", options=("-G",))
    line = line_of(DIVERGE, "TAKEN")
    _, out, err = gdb(prog, f"break div.cu:{line}", "run", "info cuda lanes", "continue")
    table = out[out.index("Ln  State"):]
    rows = re.findall(r"^[* ]\s+(\d+)\s+(active|divergent)\s+0x[0-9a-f]+\s+\((\d+),0,0\)", table, re.M)
    assert len(rows) == 32, out
    for ln, state, tid in rows:
        assert int(ln) == int(tid)
        assert state == ("active" if int(ln) % 4 == 0 else "divergent")
    assert "Device 0 SM 0 Warp 0" in table
    assert "out [0, -1, -2, -3, 40," in out


def test_next_across_syncthreads_in_a_256_thread_block(gdb, host):
    prog = host(SYNC, f"d = gpudbg.zeros(256, np.int32)\nmodule.stage[1, 256](d)\n{PRINT_OUT}", name="sync.cu")
    store, barrier, after = (line_of(SYNC, m) for m in ("STORE", "BARRIER", "AFTER"))
    _, out, err = gdb(prog, f"break sync.cu:{store}", "run", "next", "next",
                      "x/2dw (@shared int *)0", "x/1dw (@shared int *)1020", "info cuda threads", "continue")
    assert re.search(rf"^{barrier}\t    __syncthreads\(\);", out, re.M), out
    assert re.search(rf"^{after}\t    out\[t\] = buf\[255 - t\];", out, re.M), out
    assert re.search(r"^0x0:\t0\t2$", out, re.M), out
    # the last warp stored its value: stepping over the barrier let the whole block reach it
    assert re.search(r"^0x3fc:\t510$", out, re.M), out
    assert "out [510, 508," in out
    assert err == ""


def test_warp_focus_switching_then_lane(gdb, host):
    prog = host(DIVERGE, f"d = gpudbg.zeros(64, np.int32)\nmodule.branchy[1, 64](d)\n{PRINT_OUT}", name="div.cu")
    _, out, err = gdb(prog, "break branchy", "run", "cuda warp 1", "cuda lane 3", "print threadIdx.x",
                      "cuda block thread", "cuda device sm warp lane", "continue")
    assert switched(out, "kernel 0, grid N, block (0,0,0), thread (32,0,0), device 0, sm 0, "
                    "warp 1, lane 0")
    assert switched(out, "kernel 0, grid N, block (0,0,0), thread (35,0,0), device 0, sm 0, "
                    "warp 1, lane 3")
    assert "$1 = 35" in out
    assert "block (0,0,0), thread (35,0,0)\n" in out
    assert "device 0, sm 0, warp 1, lane 3\n" in out


def test_local_variable_of_three_threads_with_G(gdb, host):
    prog = host(LOCALS, f"d = gpudbg.zeros(64, np.int32)\nmodule.locals[1, 64](d)\n{PRINT_OUT}",
                name="loc.cu", options=("-G",))
    _, out, err = gdb(prog, f"break loc.cu:{line_of(LOCALS, 'USE')}", "run", "print x", "cuda thread 5",
                      "print x", "cuda thread 40", "print x", "info locals", "continue")
    assert "$1 = 1" in out
    assert "$2 = 16" in out
    assert "$3 = 121" in out
    assert "thread (40,0,0), device 0, sm 0, warp 1, lane 8]" in out
    assert re.search(r"^x = 121$", out, re.M)
    assert re.search(r"hit Breakpoint 1, locals<<<\(1,1,1\),\(64,1,1\)>>> \(out=\(int \*\) 0x[0-9a-f]+\)", out)


def test_shared_memory_of_two_blocks(gdb, host):
    prog = host(SHARED, f"d = gpudbg.zeros(64, np.int32)\nmodule.blocks[2, 32](d)\n{PRINT_OUT}", name="sh.cu")
    line = line_of(SHARED, "READ")
    _, out, err = gdb(prog, f"break sh.cu:{line}", "run", "x/4dw (@shared int *)0", "cuda block 1",
                      "cuda block", "x/4dw (@shared int *)0", "print *(@shared int *)4", "continue")
    first, second = out.index("0x0:\t0\t1\t2\t3\n"), out.index("0x0:\t1000\t1001\t1002\t1003\n")
    assert first < out.index("block (1,0,0), thread (0,0,0), device 0, sm 1") < second, out
    assert re.search(r"^block \(1,0,0\)$", out, re.M)
    assert re.search(r"^\$1 = 1001$", out, re.M)
    assert "out [31, 30," in out


def test_writing_a_variable_changes_the_result(gdb, host):
    prog = host(LOCALS, f"d = gpudbg.zeros(64, np.int32)\nmodule.locals[1, 64](d)\n{PRINT_OUT}",
                name="loc.cu", options=("-G",))
    _, out, err = gdb(prog, f"break loc.cu:{line_of(LOCALS, 'USE')}", "run", "cuda thread 2",
                      "set var x = 50", "print x", "delete", "continue")
    assert "$1 = 50" in out, out + err
    values = eval(out[out.index("out [") + 4:].splitlines()[0])
    assert values[2] == 100 and values[1] == 8 and values[3] == 20


def test_writing_a_register_round_trips(gdb, host):
    prog = host(LOCALS, f"d = gpudbg.zeros(64, np.int32)\nmodule.locals[1, 64](d)\n{PRINT_OUT}", name="loc.cu")
    _, out, err = gdb(prog, "break locals", "run", "info registers", "print $r1 = 77", "print $r1",
                      "print/x $r1", "kill")
    assert re.search(r"^%r1\s+0x[0-9a-f]+\s+-?\d+$", out, re.M), out
    assert "$1 = 77" in out and "$2 = 77" in out and "$3 = 0x4d" in out
    assert re.search(r"\[Inferior 1 \(process \d+\) killed\]", out)


def test_exception_stop_names_lane_and_address(gdb):
    _, out, err = gdb(str(EXAMPLES / "oob.py"), "run", "print $errorpc", "info cuda lanes lane 7", "kill")
    assert "CUDA Exception: Lane Illegal Address" in out
    assert re.search(r"The exception was triggered at PC 0x[0-9a-f]+ \(oob.cu:5\)", out)
    assert "0 bytes past the end of the 4000-byte allocation" in out
    assert "by thread (103,0,0) in block (7,0,0) [sm 7, warp 3, lane 7]" in out
    assert re.search(r"address 0x[0-9a-f]+ \(4 bytes, global\)", out)
    assert 'Thread 1 "python" received signal CUDA_EXCEPTION_1, Lane Illegal Address.' in out
    assert switched(out, "kernel 0, grid N, block (7,0,0), thread (103,0,0), device 0, sm 7, "
                    "warp 3, lane 7")
    assert re.search(r"^0x[0-9a-f]{16} in forward_difference<<<\(8,1,1\),\(128,1,1\)>>> \(.*\) at oob.cu:5$",
                     out, re.M)
    assert re.search(r"^\*\s+7\s+active\s+0x[0-9a-f]+\s+\(103,0,0\)\s+LANE_ILLEGAL_ADDRESS$", out, re.M), out
    assert re.search(r"\$1 = \(void \(\*\)\(\)\) 0x[0-9a-f]+", out)


def test_info_cuda_table_shapes(gdb):
    _, out, err = gdb(str(EXAMPLES / "saxpy.py"), "break saxpy", "run", "info cuda devices", "info cuda kernels",
                      "info cuda warps", "info cuda threads", "info cuda blocks", "info cuda sms",
                      "info cuda contexts", "info cuda launch trace", "continue", args=("1024",))
    assert re.search(r"Dev\s+PCI Bus/Dev ID\s+Name\s+Description\s+SM Type\s+SMs\s+Warps/SM\s+Lanes/Warp\s+"
                     r"Max Regs/Lane\s+Active SMs Mask", out)
    assert re.search(r"Kernel\s+Parent\s+Dev\s+Grid\s+Status\s+SMs Mask\s+GridDim\s+BlockDim\s+Invocation", out)
    assert re.search(r"^\*\s+0\s+-\s+0\s+\d+\s+Active\s+0x[0-9a-f]+\s+\(4,1,1\)\s+\(256,1,1\)\s+saxpy\(", out, re.M)
    assert re.search(r"Wp\s+Active Lanes Mask\s+Divergent Lanes Mask\s+Active Physical PC\s+Kernel\s+BlockIdx"
                     r"\s+First Active ThreadIdx", out)
    assert re.search(r"^\*\s+0\s+0xffffffff\s+0x00000000\s+0x[0-9a-f]{16}\s+0\s+\(0,0,0\)\s+\(0,0,0\)$", out, re.M)
    assert re.search(r"BlockIdx\s+ThreadIdx\s+To BlockIdx\s+ThreadIdx\s+Count\s+Virtual PC\s+Filename\s+Line", out)
    # all 1024 threads sit at the breakpoint: one coalesced row
    assert re.search(r"^\*\s+\(0,0,0\)\s+\(0,0,0\)\s+\(3,0,0\)\s+\(255,0,0\)\s+1024\s+0x[0-9a-f]{16}\s+saxpy.cu"
                     r"\s+\d+$", out, re.M), out
    assert re.search(r"^Kernel 0$", out, re.M)
    assert re.search(r"^\*\s+\(0,0,0\)\s+\(3,0,0\)\s+4\s+running$", out, re.M)
    assert re.search(r"^Device 0$", out, re.M) and "Active Warps Mask" in out
    assert re.search(r"Context\s+Dev\s+State", out)
    assert re.search(r"Lvl\s+Kernel\s+Dev\s+Grid\s+Status\s+GridDim\s+BlockDim\s+Invocation", out)


def test_tbreak_is_deleted_after_hit(gdb):
    _, out, err = gdb(str(EXAMPLES / "saxpy.py"), "tbreak saxpy", "run", "info breakpoints", "continue",
                      args=("512",))
    assert "Temporary breakpoint 1 (saxpy) pending." in out
    assert 'Thread 1 "python" hit Temporary breakpoint 1, saxpy<<<' in out
    assert "No breakpoints or watchpoints." in out
    assert "exited normally" in out


def test_disabled_and_deleted_breakpoints_do_not_stop(gdb):
    _, out, err = gdb(str(EXAMPLES / "saxpy.py"), "break saxpy", "break saxpy.cu:5", "disable 1", "delete 2",
                      "info breakpoints", "run", args=("512",))
    assert re.search(r"^1\s+breakpoint\s+keep n\s+<PENDING>\s+saxpy$", out, re.M), out
    assert not re.search(r"^2\s+breakpoint", out, re.M)
    assert "hit Breakpoint" not in out
    assert "exited normally" in out


def test_condition_on_thread_index(gdb):
    _, out, err = gdb(str(EXAMPLES / "oob.py"), "break oob.cu:5 if threadIdx.x == 3", "run",
                      "print threadIdx.x", "info breakpoints", "kill")
    assert "thread (3,0,0), device 0, sm 0, warp 0, lane 3]" in out
    assert "$1 = 3" in out
    assert "\tstop only if threadIdx.x == 3" in out
    assert "\tbreakpoint already hit 1 time" in out


def test_break_on_launch_stops_at_the_first_kernel_instruction(gdb):
    _, out, err = gdb(str(EXAMPLES / "saxpy.py"), "set cuda break_on_launch application", "run",
                      "info breakpoints", "print $pc", "continue", args=("256",))
    assert switched(out, "kernel 0, grid N, block (0,0,0), thread (0,0,0), device 0, sm 0, warp 0, lane 0")
    assert "No breakpoints or watchpoints." in out
    m = re.search(r"\$1 = \(void \(\*\)\(\)\) 0x([0-9a-f]+)", out)
    assert m and int(m.group(1), 16) % 0x1000 == 0, out
    assert "exited normally" in out


def test_api_failures_stop_parks_the_program(gdb, host):
    prog = host("extern \"C\" __global__ void k() {}", "from gpudbg import mc\n"
                "err, = mc.mcFree(12345)\nprint('after', err.name)", name="api.cu")
    _, out, err = gdb(prog, "set cuda api_failures stop", "run", "continue")
    assert re.search(r"Cuda API error detected: mcFree returned mc\w+ \(0x[0-9a-f]+\)", out), out
    assert out.index("Cuda API error detected") < out.index("after mcError")
    assert "exited normally" in out


def test_execution_commands_need_a_program(gdb):
    _, out, err = gdb(str(EXAMPLES / "saxpy.py"), "continue", "next", "info cuda warps", "print 6 * 7")
    assert "The program is not being run." in err
    assert "Focus not set on any active CUDA kernel." in err
    assert "$1 = 42" in out


def test_coredump_of_an_exception_opens_in_core(gdb, tmp_path):
    core = tmp_path / "oob.nvcudmp"
    _, out, err = gdb(str(EXAMPLES / "oob.py"), "run", f"generate-core-file {core}", "kill")
    assert f"Saved corefile {core}" in out, out + err
    status, out, err = gdb(str(core), "info cuda lanes lane 7", "continue", "cuda block thread", core=True)
    assert "CUDA Exception: Lane Illegal Address" in out
    assert re.search(r"\[Current focus set to CUDA kernel 0, grid \d+, block \(7,0,0\), thread \(103,0,0\), "
                     r"device 0, sm 7, warp 3, lane 7\]", out), out
    assert re.search(r"^\*\s+7\s+active\s+0x[0-9a-f]+\s+\(103,0,0\)\s+LANE_ILLEGAL_ADDRESS$", out, re.M), out
    assert "The program is not being run." in err
    assert "block (7,0,0), thread (103,0,0)\n" in out


CALLS = r'''
__device__ __noinline__ int helper(int a) {
    int b = a * 2;  // HELPER
    return b + 1;
}
extern "C" __global__ void caller(int *out) {
    int t = threadIdx.x;
    int r = helper(t);  // CALL
    out[t] = r;
}
'''


def test_backtrace_and_finish_through_a_device_function(gdb, host):
    prog = host(CALLS, f"d = gpudbg.zeros(32, np.int32)\nmodule.caller[1, 32](d)\n{PRINT_OUT}",
                name="fn.cu", options=("-G",))
    call = line_of(CALLS, "CALL")
    _, out, err = gdb(prog, "break caller", "run", "break helper", "continue", "cuda thread 3", "bt",
                      "finish", "continue")
    assert re.search(rf"hit Breakpoint 2, helper \(a=0\) at fn.cu:{line_of(CALLS, 'HELPER')}", out), out
    assert re.search(r"^#0  helper \(a=3\) at fn.cu:\d+$", out, re.M), out
    # an outer frame shows its own arguments, read in its frame (gdb does)
    assert re.search(rf"^#1  0x[0-9a-f]{{16}} in caller<<<\(1,1,1\),\(32,1,1\)>>> \(out=\(int \*\) 0x[0-9a-f]+\) "
                     rf"at fn.cu:{call}$", out, re.M), out
    assert "Run till exit from #0  helper (a=3)" in out
    assert re.search(rf"^0x[0-9a-f]{{16}} in caller<<<.*>>> \(out=.*\) at fn.cu:{call}$", out, re.M), out
    assert "out [1, 3, 5, 7," in out


def test_run_after_kill_starts_a_fresh_process(gdb):
    """A second `run` must not inherit the killed launch's sticky error or
    the kill itself: the breakpoint hits again and the program ends well."""
    _, out, err = gdb(str(EXAMPLES / "saxpy.py"), "break saxpy", "run", "kill", "run", "info breakpoints",
                      "delete", "continue", args=("512",))
    assert out.count('hit Breakpoint 1, saxpy<<<') == 2, out + err
    assert "killed" in out
    assert "breakpoint already hit 2 times" in out
    assert out.rstrip().endswith("exited normally]"), out + err
    assert "killed by the debugger" not in err


def test_print_a_shared_array_by_name(gdb):
    _, out, err = gdb(str(EXAMPLES / "rotate.py"), "break rotate.cu:8", "run", "print tile[3]",
                      "cuda block 1", "print tile[3]", "print &tile[1]", "delete", "continue")
    assert "$1 = 9" in out and "$2 = 1009" in out, out + err
    assert "$3 = (@shared int *) 0x4" in out
    assert "neighbour differences PASSED" in out


def test_whatis_and_ptype(gdb):
    _, out, err = gdb(str(EXAMPLES / "rotate.py"), "break rotate.cu:8", "run", "whatis tile", "whatis &tile[0]",
                      "ptype threadIdx", "whatis", "kill")
    assert "type = int [256]" in out and "type = @shared int *" in out, out + err
    assert "type = struct uint3 {\n    unsigned int x;\n    unsigned int y;\n    unsigned int z;\n}" in out
    assert "Argument required" in out + err
