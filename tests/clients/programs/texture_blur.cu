// Textures and surfaces through the CUDA runtime, as image-processing code
// uses them: a float image in a CUDA array sampled bilinearly (normalized,
// wrapping coordinates) into a surface-backed array, a uchar4 image read as
// normalized float, results checked against a CPU model of the hardware's
// fixed-point filter (weights with 8 fraction bits).
#include <cstdio>
#include <cmath>
#include <cuda_runtime.h>

#define CHECK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { \
    printf("%s failed: %s\n", #x, cudaGetErrorString(e)); return 1; } } while (0)

__global__ void resample(cudaTextureObject_t src, cudaSurfaceObject_t dst, int w, int h, float shift) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) return;
    float u = (x + 0.5f + shift) / w, v = (y + 0.5f - shift) / h;
    float value = tex2D<float>(src, u, v);
    surf2Dwrite(value, dst, x * (int)sizeof(float), y);
}

__global__ void brightness(cudaTextureObject_t rgba, float *out, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) return;
    float4 c = tex2D<float4>(rgba, x + 0.5f, y + 0.5f);
    out[y * w + x] = 0.25f * (c.x + c.y + c.z + c.w);
}

static float weight(float f) { return floorf(f * 256.0f + 0.5f) / 256.0f; }
static int wrap(int i, int n) { return ((i % n) + n) % n; }

static float model(const float *img, int w, int h, float u, float v) {
    float x = u * w - 0.5f, y = v * h - 0.5f;
    int i = (int)floorf(x), j = (int)floorf(y);
    float a = weight(x - floorf(x)), b = weight(y - floorf(y));
    #define T(ii, jj) img[wrap(jj, h) * w + wrap(ii, w)]
    float r0 = (1 - a) * T(i, j) + a * T(i + 1, j);
    float r1 = (1 - a) * T(i, j + 1) + a * T(i + 1, j + 1);
    return (1 - b) * r0 + b * r1;
}

int main() {
    const int w = 24, h = 16;
    const float shift = 3.3f;
    float img[w * h], out[w * h];
    for (int i = 0; i < w * h; ++i) img[i] = sinf(i * 0.37f) * 10.0f;

    cudaChannelFormatDesc fdesc = cudaCreateChannelDesc<float>();
    cudaArray_t src, dst;
    CHECK(cudaMallocArray(&src, &fdesc, w, h));
    CHECK(cudaMallocArray(&dst, &fdesc, w, h, cudaArraySurfaceLoadStore));
    CHECK(cudaMemcpy2DToArray(src, 0, 0, img, w * sizeof(float), w * sizeof(float), h, cudaMemcpyHostToDevice));

    cudaResourceDesc res = {};
    res.resType = cudaResourceTypeArray;
    res.res.array.array = src;
    cudaTextureDesc td = {};
    td.addressMode[0] = td.addressMode[1] = cudaAddressModeWrap;
    td.filterMode = cudaFilterModeLinear;
    td.readMode = cudaReadModeElementType;
    td.normalizedCoords = 1;
    cudaTextureObject_t tex;
    CHECK(cudaCreateTextureObject(&tex, &res, &td, nullptr));
    cudaResourceDesc sres = {};
    sres.resType = cudaResourceTypeArray;
    sres.res.array.array = dst;
    cudaSurfaceObject_t surf;
    CHECK(cudaCreateSurfaceObject(&surf, &sres));

    dim3 block(8, 8), grid((w + 7) / 8, (h + 7) / 8);
    resample<<<grid, block>>>(tex, surf, w, h, shift);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy2DFromArray(out, w * sizeof(float), dst, 0, 0, w * sizeof(float), h, cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            float want = model(img, w, h, (x + 0.5f + shift) / w, (y + 0.5f - shift) / h);
            if (fabsf(out[y * w + x] - want) > 1e-4f) ++bad;
        }
    cudaTextureDesc back;
    CHECK(cudaGetTextureObjectTextureDesc(&back, tex));
    if (back.addressMode[0] != cudaAddressModeWrap || back.filterMode != cudaFilterModeLinear) ++bad;

    // uchar4 read as normalized float, point sampled
    uchar4 rgba[w * h];
    for (int i = 0; i < w * h; ++i) rgba[i] = make_uchar4(i % 256, (3 * i) % 256, 255, 51);
    cudaChannelFormatDesc cdesc = cudaCreateChannelDesc<uchar4>();
    cudaArray_t carr;
    CHECK(cudaMallocArray(&carr, &cdesc, w, h));
    CHECK(cudaMemcpy2DToArray(carr, 0, 0, rgba, w * sizeof(uchar4), w * sizeof(uchar4), h, cudaMemcpyHostToDevice));
    res.res.array.array = carr;
    cudaTextureDesc cd = {};
    cd.addressMode[0] = cd.addressMode[1] = cudaAddressModeClamp;
    cd.filterMode = cudaFilterModePoint;
    cd.readMode = cudaReadModeNormalizedFloat;
    cudaTextureObject_t ctex;
    CHECK(cudaCreateTextureObject(&ctex, &res, &cd, nullptr));
    float *dout;
    CHECK(cudaMalloc(&dout, sizeof(out)));
    brightness<<<grid, block>>>(ctex, dout, w, h);
    CHECK(cudaMemcpy(out, dout, sizeof(out), cudaMemcpyDeviceToHost));
    for (int i = 0; i < w * h; ++i) {
        float want = 0.25f * (rgba[i].x / 255.0f + rgba[i].y / 255.0f + 1.0f + 0.2f);
        if (fabsf(out[i] - want) > 1e-5f) ++bad;
    }

    CHECK(cudaDestroyTextureObject(tex));
    CHECK(cudaDestroyTextureObject(ctex));
    CHECK(cudaDestroySurfaceObject(surf));
    CHECK(cudaFreeArray(src));
    CHECK(cudaFreeArray(dst));
    CHECK(cudaFreeArray(carr));
    CHECK(cudaFree(dout));
    printf("texture resample %dx%d: %s (%d mismatches)\n", w, h, bad ? "FAILED" : "PASSED", bad);
    return bad != 0;
}
