// Texture and surface objects: 2D bilinear fetch, 3D fetch, layered fetch, surface read/write.
__global__ void tex2d_sample(cudaTextureObject_t tex, float *out, int w, int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < w && y < h) out[y * w + x] = tex2D<float>(tex, (x + 0.5f) / w, (y + 0.5f) / h);
}
__global__ void tex3d_sample(cudaTextureObject_t tex, float4 *out, int n) {
  int i = threadIdx.x;
  if (i < n) out[i] = tex3D<float4>(tex, i * 0.5f, 1.0f, 2.0f);
}
__global__ void layered(cudaTextureObject_t tex, float *out, int layer) {
  out[threadIdx.x] = tex2DLayered<float>(tex, threadIdx.x, 0, layer);
}
__global__ void surface_scale(cudaSurfaceObject_t in, cudaSurfaceObject_t out, int w, int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < w && y < h) {
    float v = surf2Dread<float>(in, x * 4, y);
    surf2Dwrite(v * 2.0f, out, x * 4, y);
  }
}
