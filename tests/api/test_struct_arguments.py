"""Struct kernel arguments: numpy record scalars and ctypes.Structure
instances reach the kernel byte for byte, and a size that does not match
the kernel's parameter is refused naming the argument and both sizes."""
from __future__ import annotations

import ctypes

import numpy as np
import pytest

import gpudbg

SRC = r'''
struct Particle { float x, y; int id; double mass; };
extern "C" __global__ void weigh(Particle p, int scale, double *out) {
    out[0] = (p.x + p.y) * p.id + p.mass * scale;
}'''


class Particle(ctypes.Structure):
    _fields_ = [("x", ctypes.c_float), ("y", ctypes.c_float), ("id", ctypes.c_int), ("mass", ctypes.c_double)]


PARTICLE = np.dtype([("x", "<f4"), ("y", "<f4"), ("id", "<i4"), ("mass", "<f8")], align=True)


@pytest.fixture(scope="module")
def weigh():
    return gpudbg.compile(SRC).weigh


def test_numpy_record_and_ctypes_structure_arguments(weigh):
    out = gpudbg.zeros(1, np.float64)
    rec = np.array((1.5, 2.5, 3, 0.25), dtype=PARTICLE)
    weigh[1, 1](rec[()], 4, out)                    # np.void record scalar
    assert out.item() == 13.0
    weigh[1, 1](rec, 8, out)                        # 0-d structured array
    assert out.item() == 14.0
    weigh[1, 1](Particle(1.0, 1.0, 2, 10.0), 1, out)
    assert out.item() == 14.0


def test_struct_of_the_wrong_size_is_refused_with_both_sizes(weigh):
    packed = np.dtype([("x", "<f4"), ("y", "<f4"), ("id", "<i4"), ("mass", "<f8")])   # no padding: 20 bytes
    with pytest.raises(TypeError, match=r"weigh: argument 0 \(weigh_param_0\) is a numpy record .* of 20 bytes, "
                                        r"but the kernel's parameter has 24 bytes"):
        weigh[1, 1](np.zeros((), packed)[()], 1, gpudbg.zeros(1, np.float64))

    class Small(ctypes.Structure):
        _fields_ = [("x", ctypes.c_float)]
    with pytest.raises(TypeError, match=r"ctypes.Structure Small of 4 bytes, but the kernel's parameter has 24"):
        weigh[1, 1](Small(1.0), 1, gpudbg.zeros(1, np.float64))
