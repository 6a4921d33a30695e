"""`gpudbg debug --batch` on a -G build of a wmma kernel: it loads, runs to
a breakpoint after mma_sync, and its fragment variables print per lane with
the values the documented fragment layout puts there (sim/ops/fragments.py:
lane l holds rows l/4 and l/4 + 8, columns 2*(l%4) + {0, 1} and + 8)."""
from __future__ import annotations

import re

import numpy as np

from test_debug_batch import line_of

WMMA = r'''
#include <mma.h>
using namespace nvcuda;
extern "C" __global__ void tile(const half *a, const half *b, float *c) {
    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::fill_fragment(acc, 0.0f);
    wmma::load_matrix_sync(fa, a, 16);
    wmma::load_matrix_sync(fb, b, 16);
    wmma::mma_sync(acc, fa, fb, acc);
    wmma::store_matrix_sync(c, acc, 16, wmma::mem_row_major);  // STORE
}
'''

BODY = '''
a = (np.arange(256) % 7).astype(np.float16)
da, db = gpudbg.to_device(a), gpudbg.to_device(np.ones(256, np.float16))
dc = gpudbg.zeros(256, np.float32)
module.tile[1, 32](da, db, dc)
print("c", dc.to_host().reshape(16, 16)[:, 0].tolist())
'''

A = np.arange(256).reshape(16, 16) % 7
ROWSUM = A.sum(axis=1)          # B is all ones: C[i, j] = sum_k A[i, k]


def fragment_of(lane: int) -> list[int]:
    """acc.x of `lane`: (g, 2t), (g, 2t+1), (g+8, ..), then 8 columns on."""
    g = lane >> 2
    return [int(ROWSUM[g + 8 * ((i >> 1) & 1)]) for i in range(8)]


def test_wmma_fragments_print_per_lane_in_a_G_build(gdb, host):
    prog = host(WMMA, BODY, name="tile.cu", options=("-G",))
    _, out, err = gdb(prog, f"break tile.cu:{line_of(WMMA, 'STORE')}", "run", "print acc", "print fa.x[4]",
                      "cuda lane 13", "print acc.x", "print fa.x[2]", "continue")
    assert "hit Breakpoint 1, tile<<<(1,1,1),(32,1,1)>>>" in out, out + err
    x = fragment_of(0)
    assert f"$1 = {{{{x = {{{', '.join(map(str, x))}}}}}}}" in out
    # fa.x[4] of lane 0 is A[0, 8] = 8 % 7 = 1 -> half 1.0 (bits 0x3c00)
    assert "$2 = {__x = 15360}" in out
    assert re.search(r"\[Switching focus to CUDA .*lane 13\]", out)
    assert f"$3 = {{{', '.join(map(str, fragment_of(13)))}}}" in out
    # fa.x[2] of lane 13 (g=3, t=1) is A[11, 2] = (176 + 2) % 7 = 3 -> 3.0 (0x4200)
    assert "$4 = {__x = 16896}" in out
    assert f"c {ROWSUM.astype(float).tolist()}" in out
    assert "exited normally" in out


def test_fragment_registers_per_lane_in_an_optimized_build(gdb, host):
    """Without -G the fragments live in ordinary PTX registers: `info
    registers` of lane 5 shows its accumulator elements (rows 1 and 9, four
    each) and its A fragment packed two halves per .b32 register."""
    prog = host(WMMA, BODY, name="tile.cu")
    _, out, err = gdb(prog, f"break tile.cu:{line_of(WMMA, 'STORE')}", "run", "cuda lane 5", "info registers",
                      "continue")
    regs = out[out.index("lane 5]"):]
    floats = re.findall(r"^%f\d+\s+0x[0-9a-f]+\s+(\S+)$", regs, re.M)
    for v in (ROWSUM[1], ROWSUM[9]):
        assert floats.count(str(int(v))) == 4, (v, floats)
    # A fragment of lane 5 (g=1, t=1): a0,a1 = A[1, 2:4] -> halves 4.0 (0x4400) and 5.0 (0x4500)
    g, t = 1, 1
    lo, hi = (np.float16(A[g, 2 * t + e]).view(np.uint16) for e in range(2))
    assert re.search(rf"^%r\d+\s+0x{(int(hi) << 16) | int(lo):x}\s", regs, re.M), regs
    assert "exited normally" in out
