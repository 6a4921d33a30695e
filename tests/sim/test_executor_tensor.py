"""Tensor cores on NVRTC-compiled kernels (kernels/tensor.cu, plain and -G):
wmma GEMMs in f16 (f32 and f16 accumulators, every shape), tf32 (with and
without __float_to_tf32), bf16, s8/u8 and f64; mma.sync through inline PTX
(int8 with and without .satfinite, f16 and bf16 fed by ldmatrix, tf32, f16
accumulators, f64); ldmatrix/movmatrix layouts; and precise faults. Results
are compared with tensor_ref, a numpy model of the documented arithmetic
(products exact, f32 accumulation in k order, one rounding per step)."""
from __future__ import annotations

import numpy as np
import pytest

from kernels import DEBUG, OPTIMIZED, Out, kernel_ptx, run
from gpudbg.sim.faults import CUDBGException as E
from tensor_ref import bf16_bits, mma_f32_ref, tf32_round, tf32_trunc

BUILDS = pytest.mark.parametrize("opts", [OPTIMIZED, DEBUG], ids=["O", "G"])


def ptx(opts):
    return kernel_ptx("tensor", opts)


def halves(rs, *shape, scale=1.0):
    return (rs.standard_normal(shape) * scale).astype(np.float16)


@BUILDS
def test_wmma_f16_gemm_64x64x64(opts):
    rs = np.random.RandomState(0)
    M = N = K = 64
    A, B = halves(rs, M, K), halves(rs, K, N)
    Bt = np.ascontiguousarray(B.T)                       # col-major B
    r = run(ptx(opts), "wmma_f16_gemm", (4,), (128,), [A, Bt, Out(M * N, np.float32), M, N, K])
    got = r[2].reshape(M, N)
    ref = mma_f32_ref(A.astype(np.float64), B.astype(np.float64), np.zeros((M, N)), k_step=16)
    assert np.array_equal(got, ref)
    assert np.allclose(got, A.astype(np.float64) @ B.astype(np.float64), rtol=1e-5, atol=1e-4)


@BUILDS
def test_shared_memory_tiled_wmma_gemm_with_padded_rows(opts):
    """cudaTensorCoreGemm's structure: skewed shared tiles (16-byte aligned
    row starts), wmma from shared memory, an elementwise epilogue on the
    accumulator fragment (alpha * acc + beta * c)."""
    rs = np.random.RandomState(13)
    n = 64
    A, B = halves(rs, n, n), halves(rs, n, n)
    C = rs.standard_normal((n, n)).astype(np.float32)
    alpha, beta = 0.5, -2.0
    r = run(ptx(opts), "wmma_shared_tiled", (2, 2), (128,), [A, B, C, Out(n * n, np.float32), n, alpha, beta])
    acc = mma_f32_ref(A.astype(np.float64), B.astype(np.float64), np.zeros((n, n)))
    ref = (np.float32(alpha) * acc + np.float32(beta) * C).astype(np.float32)
    # the epilogue may be contracted to an fma: equal up to its last-bit rounding
    assert np.allclose(r[3].reshape(n, n), ref, rtol=1e-6, atol=1e-6)


@BUILDS
@pytest.mark.parametrize("shape", [(32, 8, 16), (8, 32, 16)], ids=["m32n8k16", "m8n32k16"])
def test_wmma_half_accumulators_col_major(opts, shape):
    M, N, K = shape
    rs = np.random.RandomState(1)
    A, B, C = halves(rs, M, K), halves(rs, K, N), halves(rs, M, N)
    kernel = f"wmma_half_m{M}n{N}k{K}"
    r = run(ptx(opts), kernel, (1,), (32,), [np.ascontiguousarray(A.T), B, np.ascontiguousarray(C.T),
                                             Out(M * N, np.float16)])
    got = r[3].reshape(N, M).T
    # accumulation in f32, one rounding to f16 at the end
    ref = mma_f32_ref(A.astype(np.float64), B.astype(np.float64), C.astype(np.float64)).astype(np.float16)
    assert np.array_equal(got, ref)


@BUILDS
@pytest.mark.parametrize("convert", [0, 1], ids=["truncated", "float_to_tf32"])
def test_wmma_tf32_gemm(opts, convert):
    rs = np.random.RandomState(2)
    K = 32
    A = rs.standard_normal((16, K)).astype(np.float32)
    B = rs.standard_normal((K, 16)).astype(np.float32)
    r = run(ptx(opts), "wmma_tf32_gemm", (1,), (32,), [A, B, Out(256, np.float32), K, convert])
    got = r[2].reshape(16, 16)
    cut = tf32_round if convert else tf32_trunc
    ref = mma_f32_ref(cut(A), cut(B), np.zeros((16, 16)))
    assert np.array_equal(got, ref)
    # the inputs really lost precision: a plain f32 GEMM differs
    assert not np.array_equal(got, (A.astype(np.float64) @ B).astype(np.float32))


@BUILDS
def test_wmma_bf16_accumulates_into_c(opts):
    rs = np.random.RandomState(3)
    A, B = bf16_bits(rs.standard_normal((16, 16))), bf16_bits(rs.standard_normal((16, 16)))
    C = rs.standard_normal((16, 16)).astype(np.float32)
    r = run(ptx(opts), "wmma_bf16", (1,), (32,), [A, B, C.copy()])
    widen = lambda u: (u.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    assert np.array_equal(r[2].reshape(16, 16), mma_f32_ref(widen(A), widen(B), C.astype(np.float64)))


@BUILDS
@pytest.mark.parametrize("kind", ["s8", "u8"])
def test_wmma_int8_exact(opts, kind):
    rs = np.random.RandomState(4)
    dt = np.int8 if kind == "s8" else np.uint8
    info = np.iinfo(dt)
    A = rs.randint(info.min, info.max + 1, (16, 16)).astype(dt)
    B = rs.randint(info.min, info.max + 1, (16, 16)).astype(dt)
    C = rs.randint(-2**20, 2**20, (16, 16)).astype(np.int32)
    r = run(ptx(opts), f"wmma_{kind}", (1,), (32,), [A, np.ascontiguousarray(B.T), C.copy()])
    ref = A.astype(np.int64) @ B.astype(np.int64) + C
    assert np.array_equal(r[2].reshape(16, 16), ref.astype(np.int32))


@BUILDS
def test_wmma_f64_is_fma_in_k_order(opts):
    rs = np.random.RandomState(5)
    A, B, C = rs.standard_normal((8, 4)), rs.standard_normal((4, 8)), rs.standard_normal((8, 8))
    r = run(ptx(opts), "wmma_f64", (1,), (32,), [A, B, C.copy()])
    from gpudbg.sim.arith.floating import fma
    d = C.copy()
    for k in range(4):
        d = fma(A[:, k, None] * np.ones((1, 8)), np.ones((8, 1)) * B[None, k, :], d)
    assert np.array_equal(r[2].reshape(8, 8), d)
    assert np.allclose(d, A @ B + C)


@BUILDS
@pytest.mark.parametrize("sat", [0, 1], ids=["wrap", "satfinite"])
def test_mma_sync_int8_gemm(opts, sat):
    rs = np.random.RandomState(6)
    K = 96
    A = rs.randint(-128, 128, (16, K)).astype(np.int8)
    B = rs.randint(-128, 128, (K, 8)).astype(np.int8)
    C = rs.randint(-1000, 1000, (16, 8)).astype(np.int32)
    # rows 0 and 1 leave the int32 range (up and down) on the last step
    A[0:2] = 100
    B[:, 0] = 100
    C[0, 0], C[1, 0] = 2**31 - 500_000, -2**31 + 500_000
    A[1] = -100
    r = run(ptx(opts), "mma_s8_gemm", (1,), (32,), [A, np.ascontiguousarray(B.T), C.copy(), K, sat])
    exact = A.astype(np.int64) @ B.astype(np.int64) + C
    assert exact[0, 0] > 2**31 - 1 and exact[1, 0] < -2**31
    got = r[2].reshape(16, 8)
    if sat:
        assert np.array_equal(got, np.clip(exact, -2**31, 2**31 - 1))
    else:
        assert np.array_equal(got, ((exact + 2**31) % 2**32 - 2**31).astype(np.int32))


@BUILDS
def test_mma_sync_m8n8k16_mixed_signedness(opts):
    rs = np.random.RandomState(7)
    A = rs.randint(0, 256, (8, 16)).astype(np.uint8)
    B = rs.randint(-128, 128, (16, 8)).astype(np.int8)
    r = run(ptx(opts), "mma_u8s8_m8n8k16", (1,), (32,), [A, np.ascontiguousarray(B.T), Out(64, np.int32)])
    assert np.array_equal(r[2].reshape(8, 8), A.astype(np.int64) @ B.astype(np.int64))


@BUILDS
@pytest.mark.parametrize("kind", ["f16", "bf16"])
def test_ldmatrix_feeds_mma_m16n8k16(opts, kind):
    rs = np.random.RandomState(8)
    if kind == "f16":
        A, B = halves(rs, 16, 16), halves(rs, 16, 8)
        a64, b64 = A.astype(np.float64), B.astype(np.float64)
        args = [A, B]
    else:
        A, B = bf16_bits(rs.standard_normal((16, 16))), bf16_bits(rs.standard_normal((16, 8)))
        widen = lambda u: (u.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
        a64, b64 = widen(A), widen(B)
        args = [A, B]
    r = run(ptx(opts), f"ldmatrix_mma_{kind}", (1,), (32,), args + [Out(128, np.float32)])
    assert np.array_equal(r[2].reshape(16, 8), mma_f32_ref(a64, b64, np.zeros((16, 8))))


@BUILDS
def test_ldmatrix_x1_plain_and_transposed_fragments(opts):
    M = np.arange(64, dtype=np.uint16).reshape(8, 8) * 3 + 1
    r = run(ptx(opts), "ldmatrix_x1", (1,), (32,), [M.ravel(), Out(64, np.uint32)])
    got = r[1]
    for lane in range(32):
        g, t = lane >> 2, lane % 4
        assert got[lane] == int(M[g, 2 * t]) | int(M[g, 2 * t + 1]) << 16, lane
        assert got[32 + lane] == int(M[2 * t, g]) | int(M[2 * t + 1, g]) << 16, lane


@BUILDS
def test_mma_sync_f16_accumulators_m16n8k8(opts):
    rs = np.random.RandomState(9)
    A, B, C = halves(rs, 16, 8), halves(rs, 8, 8), halves(rs, 16, 8)
    r = run(ptx(opts), "mma_f16_m16n8k8", (1,), (32,), [A, np.ascontiguousarray(B.T), C, Out(128, np.float16)])
    ref = mma_f32_ref(A.astype(np.float64), B.astype(np.float64), C.astype(np.float64)).astype(np.float16)
    assert np.array_equal(r[3].reshape(16, 8), ref)


@BUILDS
def test_mma_sync_tf32_m16n8k8_truncates_inputs(opts):
    rs = np.random.RandomState(10)
    A = rs.standard_normal((16, 8)).astype(np.float32)
    B = rs.standard_normal((8, 8)).astype(np.float32)
    r = run(ptx(opts), "mma_tf32_m16n8k8", (1,), (32,), [A, np.ascontiguousarray(B.T), Out(128, np.float32)])
    assert np.array_equal(r[2].reshape(16, 8), mma_f32_ref(tf32_trunc(A), tf32_trunc(B), np.zeros((16, 8))))


@BUILDS
def test_mma_sync_f64_m8n8k4(opts):
    rs = np.random.RandomState(11)
    A, B, C = rs.standard_normal((8, 4)), rs.standard_normal((4, 8)), rs.standard_normal((8, 8))
    r = run(ptx(opts), "mma_f64_m8n8k4", (1,), (32,), [A, np.ascontiguousarray(B.T), C, Out(64, np.float64)])
    assert np.allclose(r[3].reshape(8, 8), A @ B + C, rtol=1e-14, atol=1e-14)


@BUILDS
def test_movmatrix_transposes_the_warp_fragment(opts):
    M = np.arange(64, dtype=np.uint32).reshape(8, 8) + 100
    frag = np.array([M[l >> 2, 2 * (l % 4)] | M[l >> 2, 2 * (l % 4) + 1] << 16 for l in range(32)], np.uint32)
    r = run(ptx(opts), "movmatrix_t", (1,), (32,), [frag, Out(32, np.uint32)])
    T = M.T
    exp = [int(T[l >> 2, 2 * (l % 4)]) | int(T[l >> 2, 2 * (l % 4) + 1]) << 16 for l in range(32)]
    assert r[1].tolist() == exp


@BUILDS
def test_misaligned_wmma_load_is_a_precise_fault(opts):
    A = np.zeros(512, np.float16)
    r = run(ptx(opts), "wmma_load_at", (1,), (32,), [A, 1, Out(256, np.float32)], expect_fault=True)
    f, base = r.fault, r.bases[0]
    assert f.kind is E.CUDBG_EXCEPTION_LANE_MISALIGNED_ADDRESS
    assert (f.block, f.thread, f.lane) == ((0, 0, 0), (0, 0, 0), 0)
    assert f.address == base + 2
    assert "wmma.load.a" in f.instruction
    assert "is misaligned (the row start address must be a multiple of 16 bytes)" in f.message
    assert f.faulting_count == 32


@BUILDS
def test_out_of_bounds_wmma_load_names_the_lane(opts):
    A = np.zeros(256 + 64, np.float16)       # rows 0..19 of a 16-wide matrix: starting at row 8 runs off
    r = run(ptx(opts), "wmma_load_at", (1,), (32,), [A, 8 * 16, Out(256, np.float32)], expect_fault=True)
    f, base = r.fault, r.bases[0]
    assert f.kind is E.CUDBG_EXCEPTION_LANE_ILLEGAL_ADDRESS
    # the first element past the end is row 20 = 8 + 12: held by lanes with groupID 4 (rows g + 8)
    assert f.lane == 16 and f.address == base + A.nbytes and f.access_size == 2
    assert f.message.startswith("Invalid __global__ read of size 2 bytes")
    assert f.faulting_count == 16


@BUILDS
def test_misaligned_ldmatrix_row_address(opts):
    r = run(ptx(opts), "ldmatrix_at", (1,), (32,), [8, Out(32, np.uint32)], expect_fault=True)
    f = r.fault
    assert f.kind is E.CUDBG_EXCEPTION_LANE_MISALIGNED_ADDRESS and f.space == "shared"
    assert f.lane == 0 and f.faulting_count == 8     # lanes 0-7 supply the row addresses of .x1
    assert "ldmatrix row address must be a multiple of 16 bytes" in f.message


def test_ldmatrix_aligned_offset_reads_the_next_rows():
    r = run(ptx(OPTIMIZED), "ldmatrix_at", (1,), (32,), [16, Out(32, np.uint32)])
    Ms = np.zeros(128, np.uint16)
    Ms[:32] = np.arange(32)
    M = Ms[8:72].reshape(8, 8)               # shifted by one row of 8 elements
    exp = [int(M[l >> 2, 2 * (l % 4)]) | int(M[l >> 2, 2 * (l % 4) + 1]) << 16 for l in range(32)]
    assert r[1].tolist() == exp


SM90 = ("-arch=compute_90",)


@pytest.mark.parametrize("trans", [0, 1], ids=["plain", "trans"])
def test_stmatrix_x4_sm90(trans):
    rs = np.random.RandomState(12)
    mats = rs.randint(0, 2**16, (4, 8, 8)).astype(np.uint16)
    frag = np.zeros((4, 32), np.uint32)
    for i in range(4):
        M = mats[i].T if trans else mats[i]
        for lane in range(32):
            g, t = lane >> 2, lane % 4
            frag[i, lane] = int(M[g, 2 * t]) | int(M[g, 2 * t + 1]) << 16
    r = run(kernel_ptx("tensor90", SM90), "stmatrix_x4", (1,), (32,), [frag.ravel(), Out(256, np.uint16), trans])
    assert np.array_equal(r[1].reshape(4, 8, 8), mats)


# ---------------------------------------------------------------- load-time errors

BAD = """
.version 8.0
.target sm_90
.address_size 64
.visible .entry bad(.param .u64 p)
{{
    .reg .b32 %r<20>;
    .reg .f32 %f<20>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [p];
    {inst};
    ret;
}}
"""

BAD_CASES = [
    ("wmma.load.a.sync.aligned.row.m16n16k16.global.f16 {%r1, %r2, %r3, %r4}, [%rd1]",
     "wmma.load.a destination needs 8 registers, got 4"),
    ("wmma.load.a.sync.aligned.row.m16n16k8.global.f16 {%r1, %r2, %r3, %r4}, [%rd1]",
     "wmma .m16n16k8 takes .tf32 multiplicands, not .f16"),
    ("wmma.load.c.sync.aligned.row.m16n16k16.global.s8 {%r1, %r2}, [%rd1]",
     "wmma .m16n16k16 accumulators are .f16/.f32/.s32, not .s8"),
    ("wmma.load.a.sync.aligned.m16n16k16.global.f16 {%r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8}, [%rd1]",
     "needs a matrix (.a/.b/.c/.d), a layout (.row/.col) and a shape"),
    ("mma.sync.aligned.m16n8k16.row.col.f16.bf16.bf16.f16 {%r1, %r2}, {%r3, %r4, %r5, %r6}, {%r7, %r8}, {%r9, %r10}",
     "mma.sync with .bf16 multiplicands accumulates in .f32, not .f16/.f16"),
    ("mma.sync.aligned.m16n8k32.row.col.s32.f16.f16.s32 {%r1, %r2, %r3, %r4}, {%r5, %r6, %r7, %r8}, {%r9, %r10}, "
     "{%r1, %r2, %r3, %r4}", "mma.sync.m16n8k32 takes .s8/.u8 multiplicands, not .f16"),
    ("mma.sync.aligned.m16n8k16.col.row.f32.f16.f16.f32 {%f1, %f2, %f3, %f4}, {%r5, %r6, %r7, %r8}, {%r9, %r10}, "
     "{%f1, %f2, %f3, %f4}", "mma.sync.m16n8k16 takes .row.col layouts, not .col.row"),
    ("mma.sync.aligned.m16n8k8.row.col.satfinite.f32.f16.f16.f32 {%f1, %f2, %f3, %f4}, {%r5, %r6}, {%r9}, "
     "{%f1, %f2, %f3, %f4}", ".satfinite is only valid for integer multiplicands"),
    ("mma.sync.aligned.m8n8k4.row.col.f32.f16.f16.f32 {%f1, %f2, %f3, %f4, %f5, %f6, %f7, %f8}, {%r1, %r2}, "
     "{%r3, %r4}, {%f1, %f2, %f3, %f4, %f5, %f6, %f7, %f8}", "Volta quad-pair layout"),
    ("mma.sync.aligned.m16n8k64.row.col.s32.s4.s4.s32 {%r1, %r2, %r3, %r4}, {%r5, %r6, %r7, %r8}, {%r9, %r10}, "
     "{%r1, %r2, %r3, %r4}", "mma.sync: unsupported shape"),
    ("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r1, %r2}, [%rd1]", "needs 4 registers for .x4, got 2"),
    ("ldmatrix.sync.aligned.m8n8.shared.b16 {%r1}, [%rd1]", "ldmatrix needs .x1, .x2 or .x4"),
    ("movmatrix.sync.aligned.m8n8.b16 %r1, %r2", "movmatrix: only .m8n8.trans is defined"),
    ("stmatrix.sync.aligned.m8n8.x1.local.b16 [%rd1], {%r1}", "unsupported modifier .local"),
]


@pytest.mark.parametrize("inst,message", BAD_CASES, ids=[c[1][:40] for c in BAD_CASES])
def test_malformed_tensor_instructions_are_refused_at_load_with_a_reason(inst, message):
    from gpudbg.ptx import parse
    from gpudbg.sim.gpu import SimGPU
    from gpudbg.sim.loader import load_module
    from gpudbg.sim.program import LoadError
    with pytest.raises(LoadError) as e:
        load_module(SimGPU(), parse(BAD.format(inst=inst), "bad.ptx"))
    assert message in str(e.value)
    assert "bad.ptx:11" in str(e.value) and "kernel bad" in str(e.value)


STRIDED = """
.version 8.0
.target sm_80
.address_size 64
.visible .entry strided(.param .u64 p, .param .u32 s, .param .u64 q)
{
    .reg .b32 %r<12>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [p];
    ld.param.u32 %r9, [s];
    ld.param.u64 %rd2, [q];
    wmma.load.a.sync.aligned.row.m16n16k16.global.f16 {%r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8}, [%rd1], %r9;
    wmma.store.d.sync.aligned.col.m16n16k16.global.f16 [%rd2], {%r1, %r2, %r3, %r4}, 16;
    ret;
}
"""


def test_wmma_stride_operand_and_its_alignment():
    """A 16x16 f16 tile read from a wider matrix with the stride operand and
    stored transposed (col-major .f16 d, the A elements reinterpreted as an
    f16 accumulator of the same shape: the tables agree on the first 8);
    a stride that is not a multiple of 16 bytes is a misaligned fault."""
    M = np.arange(16 * 40, dtype=np.float16).reshape(16, 40)
    r = run(STRIDED, "strided", (1,), (32,), [M, 40, Out(256, np.float16)])
    assert np.array_equal(r[2].reshape(16, 16).T, M[:, :16])
    r = run(STRIDED, "strided", (1,), (32,), [M, 36, Out(256, np.float16)], expect_fault=True)
    f = r.fault
    assert f.kind is E.CUDBG_EXCEPTION_LANE_MISALIGNED_ADDRESS and f.lane == 0
    assert f.address == r.bases[0] + 72          # row 1 starts 36 halves after row 0
    assert "(row 1 starts one stride after row 0: the stride must be a multiple of 16 bytes)" in f.message
