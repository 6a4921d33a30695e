// sm_90 tensor-core data movement for test_executor_tensor.py: stmatrix.
// Lane l supplies the address of row l%8 of matrix l/8; each lane stores
// register i's two halves to matrix i by the 8x8 fragment layout.
extern "C" __global__ void stmatrix_x4(const unsigned *frag, unsigned short *out, int trans) {
    __shared__ __align__(16) unsigned short S[4 * 64];
    int lane = threadIdx.x;
    unsigned r[4];
    for (int i = 0; i < 4; i++) r[i] = frag[i * 32 + lane];
    unsigned p = (unsigned)__cvta_generic_to_shared(&S[(lane / 8) * 64 + (lane % 8) * 8]);
    if (trans)
        asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1,%2,%3,%4};"
                     :: "r"(p), "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3]) : "memory");
    else
        asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1,%2,%3,%4};"
                     :: "r"(p), "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3]) : "memory");
    __syncwarp();
    for (int i = lane; i < 256; i += 32) out[i] = S[i];
}
