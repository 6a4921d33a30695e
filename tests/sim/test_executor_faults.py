"""Every fault the executor can report, provoked by a real kernel, with the
whole FaultReport checked: kind, kernel and function, block, thread, lane,
address, message, pc and instruction text, PTX line and source line (the
kernels are built with -lineinfo and with -G)."""
from __future__ import annotations

import numpy as np
import pytest

from gpudbg.sim.faults import CUDBGException, HangKind
from kernels import DEBUG, HERE, LINEINFO, Out, Ptr, kernel_ptx, run

BUILDS = pytest.mark.parametrize("opts", [LINEINFO, DEBUG], ids=["lineinfo", "G"])
E = CUDBGException
SOURCE = (HERE / "faults.cu").read_text().splitlines()


def ptx(opts):
    return kernel_ptx("faults", opts)


def line_of(snippet: str) -> int:
    """1-based line of the faults.cu line containing snippet."""
    hits = [i + 1 for i, text in enumerate(SOURCE) if snippet in text]
    assert len(hits) == 1, snippet
    return hits[0]


def check_location(r, opts, source_snippet, opcode_prefix, function=None):
    """pc, instruction text, PTX line and source line agree with each
    other and with the kernel source."""
    f = r.fault
    prog = r.module.program
    pc = prog.pc_of_address(f.pc)
    assert pc is not None
    inst = prog.code[pc].inst
    assert f.instruction == inst.text and f.instruction.startswith(opcode_prefix)
    assert f.ptx_line == inst.loc.line
    assert inst.opcode in ptx(opts).splitlines()[f.ptx_line - 1]
    assert f.function == (function or f.kernel)
    if source_snippet is not None:
        assert f.source_file.endswith("faults.cu")
        assert f.source_line == line_of(source_snippet)


def coords(f, block, thread, lane):
    assert (f.block, f.thread, f.lane) == (block, thread, lane)


@BUILDS
def test_out_of_bounds_global_read(opts):
    a = np.zeros(100, np.int32)
    r = run(ptx(opts), "oob_read", (2,), (64,), [a, Out(128, np.int32), 0], expect_fault=True)
    f = r.fault
    base = r.bases[0]
    assert f.kind is E.CUDBG_EXCEPTION_LANE_ILLEGAL_ADDRESS and f.hang is None
    assert f.kernel == "oob_read"
    coords(f, (1, 0, 0), (36, 0, 0), 4)  # global index 100, the first past the end
    assert (f.address, f.access_size, f.space) == (base + 400, 4, "global")
    assert f.message == (f"Invalid __global__ read of size 4 bytes: address 0x{base + 400:x} is 0 bytes "
                         f"past the end of the 400-byte allocation at 0x{base:x}")
    check_location(r, opts, "out[i] = a[i + n];", "ld.global.u32" if opts == LINEINFO else "ld.u32")


@BUILDS
def test_out_of_bounds_global_write_names_nearest_allocation(opts):
    r = run(ptx(opts), "oob_write", (1,), (64,), [np.zeros(64, np.int32), 9, 68], expect_fault=True)
    f, base = r.fault, r.bases[0]
    assert f.kind is E.CUDBG_EXCEPTION_LANE_ILLEGAL_ADDRESS
    coords(f, (0, 0, 0), (9, 0, 0), 9)
    assert (f.address, f.access_size) == (base + 272, 4)
    assert f.message == (f"Invalid __global__ write of size 4 bytes: address 0x{base + 272:x} is 16 bytes "
                         f"past the end of the 256-byte allocation at 0x{base:x}")
    check_location(r, opts, "a[i == bad_thread ? index : i] = i;", "st.")


@BUILDS
def test_out_of_bounds_shared_write(opts):
    r = run(ptx(opts), "oob_shared", (1,), (64,), [Out(64, np.int32), 2], expect_fault=True)
    f = r.fault
    assert f.kind is E.CUDBG_EXCEPTION_LANE_ILLEGAL_ADDRESS and f.space == "shared"
    coords(f, (0, 0, 0), (32, 0, 0), 0)  # 32 * 2 * 4 = 256: the first byte past s[64]
    assert f.message.startswith("Invalid __shared__ write of size 4 bytes: address ")
    assert f.message.endswith("is an out-of-bounds shared memory access (offset 0x100; the 256-byte shared "
                              "memory of block slot 0 ends at offset 0x100)")
    check_location(r, opts, "s[threadIdx.x * k] = threadIdx.x;", "st.")


@BUILDS
def test_misaligned_store(opts):
    r = run(ptx(opts), "misaligned", (1,), (64,), [np.zeros(80, np.int32), 13], expect_fault=True)
    f, base = r.fault, r.bases[0]
    assert f.kind is E.CUDBG_EXCEPTION_LANE_MISALIGNED_ADDRESS
    coords(f, (0, 0, 0), (13, 0, 0), 13)
    assert f.address == base + 53
    assert f.message == (f"Invalid __global__ write of size 4 bytes: address 0x{base + 53:x} is misaligned "
                         f"(not a multiple of the 4-byte access size)")
    check_location(r, opts, "*p = i;", "st.")


@BUILDS
def test_garbage_pointer_dereference(opts):
    r = run(ptx(opts), "bad_generic", (1,), (64,), [0x10, Out(64, np.int32)], expect_fault=True)
    f = r.fault
    assert f.kind is E.CUDBG_EXCEPTION_LANE_ILLEGAL_ADDRESS
    coords(f, (0, 0, 0), (2, 0, 0), 2)
    assert (f.address, f.access_size) == (0x10, 4)
    if opts == LINEINFO:  # the optimizer proves the pointer global
        assert f.message == "Invalid __global__ read of size 4 bytes: address 0x10 is not near any allocation"
    else:
        assert f.space == "generic"
        assert f.message == ("Invalid __generic__ read of size 4 bytes: address 0x10 does not map to any "
                             "memory space (it is outside the global, shared and local windows)")
    check_location(r, opts, "out[i] = *p;", "ld.")


@BUILDS
def test_trap(opts):
    r = run(ptx(opts), "trapper", (2,), (64,), [Out(128, np.int32)], expect_fault=True)
    f = r.fault
    assert f.kind is E.CUDBG_EXCEPTION_WARP_ILLEGAL_INSTRUCTION
    assert f.message == "trap instruction executed" and f.instruction == "trap"
    coords(f, (0, 0, 0), (37, 0, 0), 5)
    if opts == LINEINFO:
        check_location(r, opts, "__trap();", "trap")
    else:  # -G calls the __trap wrapper, which has no line info of its own
        check_location(r, opts, None, "trap", function="__trap")


@BUILDS
def test_assert_failure_prints_and_reports(opts):
    v = (np.arange(64) % 12).astype(np.int32)
    r = run(ptx(opts), "asserter", (1,), (64,), [v], expect_fault=True)
    f = r.fault
    line = line_of("check(x < 10);")
    assert f.kind is E.CUDBG_EXCEPTION_WARP_ASSERT
    assert f.message == f"Assertion `x < 10` failed at faults.cu:{line}"
    coords(f, (0, 0, 0), (10, 0, 0), 10)
    check_location(r, opts, "check(x < 10);", "call")
    failing = [t for t in range(64) if v[t] >= 10]
    assert r.printf == [f"faults.cu:{line}: asserter: block: [0,0,0], thread: [{t},0,0] "
                        f"Assertion `x < 10` failed.\n" for t in failing]


@BUILDS
def test_deep_recursion_overflows_the_stack(opts):
    r = run(ptx(opts), "overflow", (1,), (4,), [Out(128, np.int32), 100000], expect_fault=True)
    f = r.fault
    assert f.kind is E.CUDBG_EXCEPTION_LANE_USER_STACK_OVERFLOW
    coords(f, (0, 0, 0), (0, 0, 0), 0)
    assert f.message.startswith("call stack overflow calling _Z4deepiPVi: the thread needs more than its "
                                "1024-byte stack (call depth ")
    check_location(r, opts, "return deep(n - 1, sink)", "call", function="_Z4deepiPVi")


def test_recursion_fits_a_larger_stack():
    from gpudbg.sim.gpu import SimGPU
    gpu = SimGPU()
    gpu.stack_size = 64 * 1024
    r = run(ptx(LINEINFO), "overflow", (1,), (4,), [Out(128, np.int32), 200], gpu=gpu)
    # deep(n) = deep(n-1) + (n + ((n+3)&7 - n&7) mod 8 ...): compare with the C semantics
    def deep(n):
        local = [n + i for i in range(8)]
        return 0 if n == 0 else deep(n - 1) + local[(n + 3) & 7]
    assert r[0][:4].tolist() == [deep(200)] * 4


@BUILDS
def test_barrier_deadlock_between_named_barriers(opts):
    r = run(ptx(opts), "deadlock", (1,), (64,), [Out(64, np.int32)], expect_fault=True)
    f = r.fault
    assert f.hang is HangKind.BARRIER_DEADLOCK and f.kind is E.CUDBG_EXCEPTION_NONE
    coords(f, (0, 0, 0), (0, 0, 0), 0)
    assert f.message == ("barrier deadlock: 32 thread(s) of block (0, 0, 0) wait at barrier 0, which expects "
                         "64 thread(s) but only 32 arrived; other threads of the block wait at other "
                         "barriers (32 at barrier 1); 0 thread(s) of the block have exited")
    assert f.instruction.startswith("bar")
    check_location(r, opts, "waits for all 64 threads at barrier 0", "bar")
    assert r[0].tolist() == [0] * 64  # nobody got past


@BUILDS
def test_runaway_loop_hits_the_instruction_budget(opts):
    r = run(ptx(opts), "runaway", (1,), (64,), [np.ones(1, np.int32), Out(64, np.int32)], budget=10**6,
            expect_fault=True)
    f = r.fault
    assert f.hang is HangKind.INSTRUCTION_BUDGET
    assert f.message == ("kernel exceeded the instruction budget of 1000000 thread-instructions (runaway "
                         "loop?); set GPUDBG_INSTRUCTION_BUDGET to raise it")
    coords(f, (0, 0, 0), (0, 0, 0), 0)
    check_location(r, opts, "while (flag[0]) { n++; }", "")


def test_budget_from_environment(monkeypatch):
    monkeypatch.setenv("GPUDBG_INSTRUCTION_BUDGET", "50000")
    r = run(ptx(LINEINFO), "runaway", (1,), (32,), [np.ones(1, np.int32), Out(32, np.int32)], expect_fault=True)
    assert r.fault.hang is HangKind.INSTRUCTION_BUDGET and "budget of 50000 " in r.fault.message


def test_runaway_loop_that_ends_is_not_a_fault():
    r = run(ptx(LINEINFO), "runaway", (1,), (32,), [np.zeros(1, np.int32), Out(32, np.int32, 9)], budget=10**6)
    assert r[1].tolist() == [0] * 32


def test_fault_report_formats():
    r = run(ptx(LINEINFO), "oob_write", (1,), (64,), [np.zeros(64, np.int32), 9, 68], expect_fault=True)
    text = r.fault.format()
    assert text.splitlines()[0].startswith("========= Lane Illegal Address in kernel oob_write at ")
    assert "by thread (9,0,0) in block (0,0,0)" in text


def test_raw_pointer_argument():
    r = run(ptx(LINEINFO), "oob_read", (1,), (32,), [Ptr(0x10), Out(32, np.int32), 0], expect_fault=True)
    assert r.fault.address == 0x10 and r.fault.thread == (0, 0, 0)
