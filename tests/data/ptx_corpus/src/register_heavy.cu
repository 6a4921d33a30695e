// Register-heavy kernels: a 4x4 register-blocked SGEMM and an n-body force loop.
__global__ void sgemm_4x4(const float *A, const float *B, float *C, int n) {
  __shared__ float As[16][64], Bs[16][64];
  float acc[4][4] = {};
  int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  int row = blockIdx.y * 64, col = blockIdx.x * 64;
  for (int k0 = 0; k0 < n; k0 += 16) {
    for (int l = threadIdx.x; l < 16 * 64; l += 256) {
      As[l / 64][l % 64] = A[(row + l % 64) * n + k0 + l / 64];
      Bs[l / 64][l % 64] = B[(k0 + l / 64) * n + col + l % 64];
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < 16; ++k) {
      float a[4], b[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) { a[i] = As[k][ty * 4 + i]; b[i] = Bs[k][tx * 4 + i]; }
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] += a[i] * b[j];
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j) C[(row + ty * 4 + i) * n + col + tx * 4 + j] = acc[i][j];
}
__global__ void nbody(const float4 *pos, float3 *acc, int n, float eps2) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float4 p = pos[i];
  float3 a = {0, 0, 0};
#pragma unroll 4
  for (int j = 0; j < n; ++j) {
    float4 q = pos[j];
    float dx = q.x - p.x, dy = q.y - p.y, dz = q.z - p.z;
    float r2 = dx * dx + dy * dy + dz * dz + eps2;
    float inv = rsqrtf(r2);
    float s = q.w * inv * inv * inv;
    a.x += dx * s; a.y += dy * s; a.z += dz * s;
  }
  acc[i] = a;
}
