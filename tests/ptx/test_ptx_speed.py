"""Parsing speed: a 5000-line PTX function must parse well under a second."""
from __future__ import annotations

import time

from gpudbg.ptx import parse


def _big_ptx(lines: int) -> str:
    out = [".version 8.0", ".target sm_80", ".address_size 64",
           ".visible .entry big(.param .u64 p)", "{", ".reg .b32 %r<100>;",
           ".reg .b64 %rd<10>;", ".reg .pred %p<4>;", "ld.param.u64 %rd1, [p];"]
    for i in range(lines):
        k = i % 90
        if i % 50 == 49:
            out.append(f"L{i // 50}:")
            continue
        out.append([
            f"add.s32 %r{k}, %r{k + 1}, %r{k + 2};",
            f"ld.global.v4.u32 {{%r{k}, %r{k + 1}, _, %r3}}, [%rd1+{i * 16}];",
            f"@%p1 bra L{i // 50};",
            "\t.loc 1 %d 3\n\tmov.u32 %%r1, %%tid.x; // comment" % i,
        ][i % 4])
    out += ["ret;", "}"]
    return "\n".join(out)


def test_5000_lines_parse_fast():
    text = _big_ptx(5000)
    assert text.count("\n") >= 5000
    best = float("inf")
    for _ in range(3):  # best of 3: other jobs may share the CPU
        start = time.perf_counter()
        mod = parse(text)
        best = min(best, time.perf_counter() - start)
    assert len(mod.functions["big"].instructions) > 4800
    assert best < 1.0, f"parsing 5000 lines took {best:.2f}s"
