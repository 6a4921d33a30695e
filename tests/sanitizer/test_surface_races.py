"""racecheck sees surface stores and loads as the global memory accesses
they are: two blocks writing one surface texel race, a block reading what
another writes races, and disjoint texels per block stay silent."""
from __future__ import annotations

import numpy as np
from sanitizer_harness import checked

import gpudbg

SRC = r"""
extern "C" __global__ void texels(cudaSurfaceObject_t s, int mode) {
    int t = threadIdx.x, b = blockIdx.x;
    if (mode == 0) {
        if (t == 0) surf2Dwrite(b, s, 0, 0);                       // SAME
    } else if (mode == 1) {
        if (b == 0) surf2Dwrite(t, s, t * 4, 0);                    // PRODUCE
        else surf2Dwrite(surf2Dread<int>(s, t * 4, 0) + 1, s, t * 4, 1);
    } else {
        surf2Dwrite(t + b, s, t * 4, b);                           // DISJOINT
    }
}
"""


def run(mode: int):
    with checked("racecheck") as rep:         # a fresh device: the objects are made inside
        arr = gpudbg.CudaArray((4, 32), np.int32, surface=True)
        surf = gpudbg.Surface(arr)
        k = gpudbg.compile(SRC, name="surfrace.cu").get_function("texels")
        k[2, 32](surf, mode)
        gpudbg.Device().synchronize()
        img = arr.to_host()
    return rep.findings, img


def test_two_blocks_writing_one_texel_race():
    findings, _ = run(0)
    assert [(f.kind, f.count) for f in findings] == [("global_race_waw", 1)]
    assert {findings[0].site.block, findings[0].other_site.block} == {(0, 0, 0), (1, 0, 0)}


def test_reading_another_blocks_texels_races():
    findings, _ = run(1)
    assert len(findings) == 1 and findings[0].kind in ("global_race_raw", "global_race_war")
    assert findings[0].count == 32


def test_disjoint_texels_are_silent():
    findings, img = run(2)
    assert findings == []
    np.testing.assert_array_equal(img[:2], np.arange(32)[None, :] + np.arange(2)[:, None])
