"""An all-pairs n-body step (the GPU Gems 3 shared-memory tiling) as the
"larger real kernel" of issue 13's benchmark: per body, a loop over
shared-memory tiles of 256 bodies with two barriers per tile and an
unrolled inner loop of loads, fused multiply-adds and rsqrtf, checked
against a float64 numpy computation of the same accelerations."""
from __future__ import annotations

import time

import numpy as np

import gpudbg
from bench_sim import restore
from timing import best_of

SOURCE = r"""
#define TILE 256
extern "C" __global__ void nbody_step(const float4 *pos, float4 *vel, float dt, float eps2, int n) {
    __shared__ float4 tile[TILE];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float4 p = pos[i];
    float ax = 0.0f, ay = 0.0f, az = 0.0f;
    for (int base = 0; base < n; base += TILE) {
        tile[threadIdx.x] = pos[base + threadIdx.x];
        __syncthreads();
#pragma unroll 8
        for (int j = 0; j < TILE; ++j) {
            float4 q = tile[j];
            float dx = q.x - p.x, dy = q.y - p.y, dz = q.z - p.z;
            float r2 = fmaf(dx, dx, fmaf(dy, dy, fmaf(dz, dz, eps2)));
            float inv = rsqrtf(r2);
            float s = q.w * inv * inv * inv;
            ax = fmaf(dx, s, ax);
            ay = fmaf(dy, s, ay);
            az = fmaf(dz, s, az);
        }
        __syncthreads();
    }
    float4 v = vel[i];
    v.x += ax * dt; v.y += ay * dt; v.z += az * dt;
    vel[i] = v;
}
"""
TILE = 256


def case_nbody(repeat: int, n: int = 4096):
    """(simulated seconds, numpy seconds) for one step of n bodies."""
    if n % TILE:
        raise ValueError(f"n-body: n={n} must be a multiple of {TILE}")
    k = gpudbg.compile(SOURCE).get_function("nbody_step")
    rng = np.random.default_rng(7)
    pos = rng.standard_normal((n, 4)).astype(np.float32)
    pos[:, 3] = rng.random(n, dtype=np.float32) + 0.5          # masses
    vel = np.zeros((n, 4), dtype=np.float32)
    dpos, dvel = gpudbg.to_device(pos), gpudbg.to_device(vel)
    dt, eps2 = np.float32(0.01), np.float32(0.01)

    def sim():
        k[n // TILE, TILE](dpos, dvel, dt, eps2, np.int32(n))
        gpudbg.Device().synchronize()
    t_sim = best_of(sim, repeat, setup=restore(dvel, vel))

    def reference():
        p = pos.astype(np.float64)
        out = np.empty((n, 3))
        for a in range(0, n, 256):        # 256 rows at a time: n x n x 3 doubles would be 400 MB
            d = p[None, :, :3] - p[a:a + 256, None, :3]
            r2 = (d * d).sum(axis=2) + float(eps2)
            s = p[None, :, 3] * r2 ** -1.5
            out[a:a + 256] = (d * s[:, :, None]).sum(axis=1) * float(dt)
        return out
    got = dvel.to_host()[:, :3]
    t_np = time.perf_counter()
    want = reference()
    t_np = time.perf_counter() - t_np
    assert np.allclose(got, want, rtol=1e-3, atol=1e-3 * float(np.abs(want).max())), \
        "n-body velocities differ from numpy"
    return t_sim, t_np
