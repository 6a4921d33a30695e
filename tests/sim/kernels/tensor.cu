// Tensor-core kernels for test_executor_tensor.py: wmma GEMMs in every
// element type (f16, bf16, tf32, s8/u8, f64) and shape, mma.sync through
// inline PTX fed by ldmatrix or by the ISA's fragment formulas, movmatrix,
// and faulting loads. One warp computes one output tile.
#include <mma.h>
#include <cuda_bf16.h>
using namespace nvcuda;

// C (MxN row-major f32) = A (MxK row-major) x B (KxN col-major): one warp per 16x16 tile
extern "C" __global__ void wmma_f16_gemm(const half *A, const half *B, float *C, int M, int N, int K) {
    int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    int tm = warp / (N / 16), tn = warp % (N / 16);
    if (tm * 16 >= M) return;
    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::fill_fragment(acc, 0.0f);
    for (int k = 0; k < K; k += 16) {
        wmma::load_matrix_sync(fa, A + tm * 16 * K + k, K);
        wmma::load_matrix_sync(fb, B + tn * 16 * K + k, K);
        wmma::mma_sync(acc, fa, fb, acc);   // MMA
    }
    wmma::store_matrix_sync(C + tm * 16 * N + tn * 16, acc, N, wmma::mem_row_major);
}

// D = A x B + C with half accumulators, A col-major, B row-major, C and D
// col-major, for one tile of shape MxNxK (m32n8k16 and m8n32k16)
template <int M, int N, int K>
__device__ void half_acc_tile(const half *A, const half *B, const half *C, half *D) {
    wmma::fragment<wmma::matrix_a, M, N, K, half, wmma::col_major> fa;
    wmma::fragment<wmma::matrix_b, M, N, K, half, wmma::row_major> fb;
    wmma::fragment<wmma::accumulator, M, N, K, half> acc;
    wmma::load_matrix_sync(fa, A, M);
    wmma::load_matrix_sync(fb, B, N);
    wmma::load_matrix_sync(acc, C, M, wmma::mem_col_major);
    wmma::mma_sync(acc, fa, fb, acc);
    wmma::store_matrix_sync(D, acc, M, wmma::mem_col_major);
}

extern "C" __global__ void wmma_half_m32n8k16(const half *A, const half *B, const half *C, half *D) {
    half_acc_tile<32, 8, 16>(A, B, C, D);
}

extern "C" __global__ void wmma_half_m8n32k16(const half *A, const half *B, const half *C, half *D) {
    half_acc_tile<8, 32, 16>(A, B, C, D);
}

// tf32: C (16x16 row-major) = A (16xK row-major) x B (Kx16 row-major),
// optionally converting the fragments with __float_to_tf32 (round to nearest)
extern "C" __global__ void wmma_tf32_gemm(const float *A, const float *B, float *C, int K, int convert) {
    wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::row_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 8, float> acc;
    wmma::fill_fragment(acc, 0.0f);
    for (int k = 0; k < K; k += 8) {
        wmma::load_matrix_sync(fa, A + k, K);
        wmma::load_matrix_sync(fb, B + k * 16, 16);
        if (convert) {
            for (int i = 0; i < fa.num_elements; i++) fa.x[i] = wmma::__float_to_tf32(fa.x[i]);
            for (int i = 0; i < fb.num_elements; i++) fb.x[i] = wmma::__float_to_tf32(fb.x[i]);
        }
        wmma::mma_sync(acc, fa, fb, acc);
    }
    wmma::store_matrix_sync(C, acc, 16, wmma::mem_row_major);
}

extern "C" __global__ void wmma_bf16(const __nv_bfloat16 *A, const __nv_bfloat16 *B, float *C) {
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::row_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::load_matrix_sync(fa, A, 16);
    wmma::load_matrix_sync(fb, B, 16);
    wmma::load_matrix_sync(acc, C, 16, wmma::mem_row_major);
    wmma::mma_sync(acc, fa, fb, acc);
    wmma::store_matrix_sync(C, acc, 16, wmma::mem_row_major);
}

// int8: C (16x16 s32) += A (s8 or u8) x B (s8 or u8), m16n16k16
template <typename TA, typename TB>
__device__ void int8_tile(const TA *A, const TB *B, int *C) {
    wmma::fragment<wmma::matrix_a, 16, 16, 16, TA, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, TB, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, int> acc;
    wmma::load_matrix_sync(fa, A, 16);
    wmma::load_matrix_sync(fb, B, 16);
    wmma::load_matrix_sync(acc, C, 16, wmma::mem_row_major);
    wmma::mma_sync(acc, fa, fb, acc);
    wmma::store_matrix_sync(C, acc, 16, wmma::mem_row_major);
}

extern "C" __global__ void wmma_s8(const signed char *A, const signed char *B, int *C) { int8_tile(A, B, C); }
extern "C" __global__ void wmma_u8(const unsigned char *A, const unsigned char *B, int *C) { int8_tile(A, B, C); }

// f64: C (8x8) = A (8x4) x B (4x8) + C, all row-major
extern "C" __global__ void wmma_f64(const double *A, const double *B, double *C) {
    wmma::fragment<wmma::matrix_a, 8, 8, 4, double, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 8, 8, 4, double, wmma::row_major> fb;
    wmma::fragment<wmma::accumulator, 8, 8, 4, double> acc;
    wmma::load_matrix_sync(fa, A, 4);
    wmma::load_matrix_sync(fb, B, 8);
    wmma::load_matrix_sync(acc, C, 8, wmma::mem_row_major);
    wmma::mma_sync(acc, fa, fb, acc);
    wmma::store_matrix_sync(C, acc, 8, wmma::mem_row_major);
}

// mma.sync int8 GEMM: C (16x8 s32, row-major) += A (16xK s8 row-major) x B
// (Kx8 s8, stored col-major: Bt[n*K + k]); fragments built by the ISA's
// formulas for m16n8k32 (groupID g = lane>>2, threadID_in_group t = lane%4)
extern "C" __global__ void mma_s8_gemm(const signed char *A, const signed char *Bt, int *C, int K, int sat) {
    int lane = threadIdx.x % 32, g = lane >> 2, t = lane % 4;
    int c[4];
    for (int i = 0; i < 4; i++) c[i] = C[(g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)];
    for (int k0 = 0; k0 < K; k0 += 32) {
        unsigned a[4], b[2];
        for (int j = 0; j < 4; j++)
            a[j] = *(const unsigned *)(A + (g + 8 * (j & 1)) * K + k0 + 4 * t + 16 * (j >> 1));
        for (int j = 0; j < 2; j++)
            b[j] = *(const unsigned *)(Bt + g * K + k0 + 4 * t + 16 * j);
        if (sat)
            asm volatile("mma.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.s8.s32 "
                         "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                         : "+r"(c[0]), "+r"(c[1]), "+r"(c[2]), "+r"(c[3])
                         : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
        else
            asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 "
                         "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                         : "+r"(c[0]), "+r"(c[1]), "+r"(c[2]), "+r"(c[3])
                         : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    }
    for (int i = 0; i < 4; i++) C[(g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)] = c[i];
}

// mma.sync.m8n8k16 u8 x s8: C (8x8 s32) = A (8x16 u8 row-major) x B (16x8 s8, col-major)
extern "C" __global__ void mma_u8s8_m8n8k16(const unsigned char *A, const signed char *Bt, int *C) {
    int lane = threadIdx.x % 32, g = lane >> 2, t = lane % 4;
    unsigned a = *(const unsigned *)(A + g * 16 + 4 * t);
    unsigned b = *(const unsigned *)(Bt + g * 16 + 4 * t);
    int c0 = 0, c1 = 0;
    asm volatile("mma.sync.aligned.m8n8k16.row.col.s32.u8.s8.s32 {%0,%1}, {%2}, {%3}, {%0,%1};"
                 : "+r"(c0), "+r"(c1) : "r"(a), "r"(b));
    C[g * 8 + 2 * t] = c0;
    C[g * 8 + 2 * t + 1] = c1;
}

// mma.sync f16 m16n8k16 fed by ldmatrix from shared memory: A (16x16 half
// row-major) with .x4, B (16x8 half row-major, k by n) with .x2.trans;
// D (16x8 f32 row-major)
template <typename T>
__device__ void ldmatrix_mma(const T *A, const T *B, float *D, bool bf16) {
    __shared__ __align__(16) T As[16 * 16];
    __shared__ __align__(16) T Bs[16 * 8];
    int lane = threadIdx.x;
    for (int i = lane; i < 256; i += 32) As[i] = A[i];
    for (int i = lane; i < 128; i += 32) Bs[i] = B[i];
    __syncwarp();
    unsigned a[4], b[2];
    unsigned pa = (unsigned)__cvta_generic_to_shared(&As[(lane % 16) * 16 + (lane / 16) * 8]);
    unsigned pb = (unsigned)__cvta_generic_to_shared(&Bs[(lane % 16) * 8]);
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(a[0]), "=r"(a[1]), "=r"(a[2]), "=r"(a[3]) : "r"(pa));
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0,%1}, [%2];"
                 : "=r"(b[0]), "=r"(b[1]) : "r"(pb));
    float d[4] = {0.f, 0.f, 0.f, 0.f};
    if (bf16)
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                     "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    else
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                     "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    int g = lane >> 2, t = lane % 4;
    for (int i = 0; i < 4; i++) D[(g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)] = d[i];
}

extern "C" __global__ void ldmatrix_mma_f16(const half *A, const half *B, float *D) { ldmatrix_mma(A, B, D, false); }
extern "C" __global__ void ldmatrix_mma_bf16(const __nv_bfloat16 *A, const __nv_bfloat16 *B, float *D) {
    ldmatrix_mma(A, B, D, true);
}

// every lane's registers after ldmatrix .x1 (and .x1.trans) of one 8x8 matrix
extern "C" __global__ void ldmatrix_x1(const unsigned short *M, unsigned *out) {
    __shared__ __align__(16) unsigned short Ms[64];
    int lane = threadIdx.x;
    Ms[lane] = M[lane];
    Ms[lane + 32] = M[lane + 32];
    __syncwarp();
    unsigned p = (unsigned)__cvta_generic_to_shared(&Ms[(lane % 8) * 8]);
    unsigned r, rt;
    asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];" : "=r"(r) : "r"(p));
    asm volatile("ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%0}, [%1];" : "=r"(rt) : "r"(p));
    out[lane] = r;
    out[32 + lane] = rt;
}

// mma.sync f16 m16n8k8 with f16 accumulators, fragments by the ISA formulas:
// D (16x8 half) = A (16x8 half row-major) x B (8x8 half, col-major) + C (16x8 half)
extern "C" __global__ void mma_f16_m16n8k8(const half *A, const half *Bt, const half *C, half *D) {
    int lane = threadIdx.x % 32, g = lane >> 2, t = lane % 4;
    unsigned a[2], b, c[2], d[2];
    for (int j = 0; j < 2; j++) a[j] = *(const unsigned *)(A + (g + 8 * j) * 8 + 2 * t);
    b = *(const unsigned *)(Bt + g * 8 + 2 * t);
    for (int j = 0; j < 2; j++) c[j] = *(const unsigned *)(C + (g + 8 * j) * 8 + 2 * t);
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f16.f16.f16.f16 {%0,%1}, {%2,%3}, {%4}, {%5,%6};"
                 : "=r"(d[0]), "=r"(d[1]) : "r"(a[0]), "r"(a[1]), "r"(b), "r"(c[0]), "r"(c[1]));
    for (int j = 0; j < 2; j++) *(unsigned *)(D + (g + 8 * j) * 8 + 2 * t) = d[j];
}

// mma.sync tf32 m16n8k8: D (16x8 f32) = A (16x8 row-major) x B (8x8 col-major)
extern "C" __global__ void mma_tf32_m16n8k8(const float *A, const float *Bt, float *D) {
    int lane = threadIdx.x % 32, g = lane >> 2, t = lane % 4;
    unsigned a[4], b[2];
    for (int j = 0; j < 4; j++) a[j] = __float_as_uint(A[(g + 8 * (j & 1)) * 8 + t + 4 * (j >> 1)]);
    for (int j = 0; j < 2; j++) b[j] = __float_as_uint(Bt[g * 8 + t + 4 * j]);
    float d[4] = {0.f, 0.f, 0.f, 0.f};
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
                 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    for (int i = 0; i < 4; i++) D[(g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)] = d[i];
}

// mma.sync f64 m8n8k4: D (8x8) = A (8x4 row-major) x B (4x8 col-major) + C
extern "C" __global__ void mma_f64_m8n8k4(const double *A, const double *Bt, const double *C, double *D) {
    int lane = threadIdx.x % 32, g = lane >> 2, t = lane % 4;
    double a = A[g * 4 + t], b = Bt[g * 4 + t];
    double c0 = C[g * 8 + 2 * t], c1 = C[g * 8 + 2 * t + 1], d0, d1;
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%4,%5};"
                 : "=d"(d0), "=d"(d1) : "d"(a), "d"(b), "d"(c0), "d"(c1));
    D[g * 8 + 2 * t] = d0;
    D[g * 8 + 2 * t + 1] = d1;
}

// movmatrix: lane l holds row l>>2, columns 2(l%4), 2(l%4)+1 of an 8x8 .b16 matrix
extern "C" __global__ void movmatrix_t(const unsigned *in, unsigned *out) {
    unsigned r, d;
    r = in[threadIdx.x];
    asm volatile("movmatrix.sync.aligned.m8n8.trans.b16 %0, %1;" : "=r"(d) : "r"(r));
    out[threadIdx.x] = d;
}

// faults: a wmma load from A + offset elements (misaligned or out of bounds)
extern "C" __global__ void wmma_load_at(const half *A, int offset, float *C) {
    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::fill_fragment(acc, 0.0f);
    wmma::fill_fragment(fb, __float2half(1.0f));
    wmma::load_matrix_sync(fa, A + offset, 16);
    wmma::mma_sync(acc, fa, fb, acc);
    wmma::store_matrix_sync(C, acc, 16, wmma::mem_row_major);
}

// faults: ldmatrix whose row addresses are shifted by `offset` bytes
extern "C" __global__ void ldmatrix_at(int offset, unsigned *out) {
    __shared__ __align__(16) unsigned short Ms[128];
    int lane = threadIdx.x;
    Ms[lane] = lane;
    __syncwarp();
    unsigned p = (unsigned)__cvta_generic_to_shared(&Ms[(lane % 8) * 8]) + offset;
    unsigned r;
    asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];" : "=r"(r) : "r"(p));
    out[lane] = r;
}

// The shape of CUDA's cudaTensorCoreGemm sample, reduced: a block of 4 warps
// stages 32x16 slices of A and B in shared memory whose rows are padded by
// 8 halves (16 bytes: rows start 16-byte but not 32-byte aligned), each warp
// computes one 16x16 tile of the block's 32x32 output; C = alpha*A*B + beta*C
#define SKEW 8
extern "C" __global__ void wmma_shared_tiled(const half *A, const half *B, const float *C, float *D,
                                             int n, float alpha, float beta) {
    __shared__ __align__(32) half As[32][16 + SKEW];
    __shared__ __align__(32) half Bs[16][32 + SKEW];
    int warp = threadIdx.x / 32, wm = warp / 2, wn = warp % 2;
    int bm = blockIdx.y * 32, bn = blockIdx.x * 32;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::fill_fragment(acc, 0.0f);
    for (int k = 0; k < n; k += 16) {
        for (int i = threadIdx.x; i < 32 * 16; i += blockDim.x) {
            As[i / 16][i % 16] = A[(bm + i / 16) * n + k + i % 16];
            Bs[i / 32][i % 32] = B[(k + i / 32) * n + bn + i % 32];
        }
        __syncthreads();
        wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
        wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::row_major> fb;
        wmma::load_matrix_sync(fa, &As[wm * 16][0], 16 + SKEW);
        wmma::load_matrix_sync(fb, &Bs[0][wn * 16], 32 + SKEW);
        wmma::mma_sync(acc, fa, fb, acc);
        __syncthreads();
    }
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> c;
    const float *ct = C + (bm + wm * 16) * n + bn + wn * 16;
    wmma::load_matrix_sync(c, ct, n, wmma::mem_row_major);
    for (int i = 0; i < c.num_elements; i++) c.x[i] = alpha * acc.x[i] + beta * c.x[i];
    wmma::store_matrix_sync(D + (bm + wm * 16) * n + bn + wn * 16, c, n, wmma::mem_row_major);
}
