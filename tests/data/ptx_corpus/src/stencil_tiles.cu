// Tiled shared-memory kernels: 2D 5-point stencil, transpose, 1D convolution with constant taps.
#define T 32
__constant__ float taps[17];
__global__ void stencil(const float *in, float *out, int w, int h) {
  __shared__ float s[T + 2][T + 2];
  int x = blockIdx.x * T + threadIdx.x, y = blockIdx.y * T + threadIdx.y;
  int cx = min(max(x, 0), w - 1), cy = min(max(y, 0), h - 1);
  s[threadIdx.y + 1][threadIdx.x + 1] = in[cy * w + cx];
  if (threadIdx.x == 0) s[threadIdx.y + 1][0] = in[cy * w + max(cx - 1, 0)];
  if (threadIdx.x == T - 1) s[threadIdx.y + 1][T + 1] = in[cy * w + min(cx + 1, w - 1)];
  if (threadIdx.y == 0) s[0][threadIdx.x + 1] = in[max(cy - 1, 0) * w + cx];
  if (threadIdx.y == T - 1) s[T + 1][threadIdx.x + 1] = in[min(cy + 1, h - 1) * w + cx];
  __syncthreads();
  if (x < w && y < h)
    out[y * w + x] = 0.2f * (s[threadIdx.y + 1][threadIdx.x + 1] + s[threadIdx.y][threadIdx.x + 1] +
                             s[threadIdx.y + 2][threadIdx.x + 1] + s[threadIdx.y + 1][threadIdx.x] +
                             s[threadIdx.y + 1][threadIdx.x + 2]);
}
__global__ void transpose(const float *in, float *out, int w, int h) {
  __shared__ float tile[T][T + 1];
  int x = blockIdx.x * T + threadIdx.x, y = blockIdx.y * T + threadIdx.y;
  for (int j = 0; j < T; j += 8)
    if (x < w && y + j < h) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * w + x];
  __syncthreads();
  x = blockIdx.y * T + threadIdx.x;
  y = blockIdx.x * T + threadIdx.y;
  for (int j = 0; j < T; j += 8)
    if (x < h && y + j < w) out[(y + j) * h + x] = tile[threadIdx.x][threadIdx.y + j];
}
__global__ void conv1d(const float *in, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float s = 0;
#pragma unroll
  for (int k = -8; k <= 8; ++k) s += taps[k + 8] * in[min(max(i + k, 0), n - 1)];
  out[i] = s;
}
