"""Executor details on hand-written PTX, where the exact instruction form
matters: setp with two results and a bool op, selp, vector mov pack and
unpack, identity cvt, .v2/.v4 loads and stores in every space, ld.param of
kernel parameters of every size (incl. a .b8 struct), .func parameters in
both directions, bar.red, %clock64, nanosleep, exit releasing a barrier,
half precision, and load-time rejection of unsupported instructions."""
from __future__ import annotations

import struct

import numpy as np
import pytest

from gpudbg.ptx import parse
from gpudbg.sim.gpu import SimGPU
from gpudbg.sim.loader import load_module
from gpudbg.sim.program import LoadError
from kernels import Out, hand_ptx, run

N = 40


@pytest.fixture(scope="module")
def details():
    stb = struct.pack("<BBxxIQQ", 7, 0xAB, 0xDEADBEEF, 0x1122334455667788, 99)
    r = run(hand_ptx("details"), "details", (1,), (N,), [Out(N * 32, np.uint32), 0xBEEF, 3.25, stb, 200, -1.5])
    return r[0].reshape(N, 32)


def test_setp_pair_with_bool_op_and_selp(details):
    for t in range(N):
        odd = bool(t & 1)
        exp = ((t < 8 and odd) * 1 | (t >= 8 and odd) * 2 | (t >= 20 or odd) * 4 | (t < 20 or odd) * 8)
        assert details[t, 0] == exp, t


def test_mov_vector_pack_and_unpack(details):
    t = np.arange(N)
    hi = t + 0x1000
    assert np.array_equal(details[:, 2], t) and np.array_equal(details[:, 3], hi)
    assert np.array_equal(details[:, 4], t)
    assert np.array_equal(details[:, 5], (hi >> 16) | ((hi & 0xFFFF) << 16))  # halves swapped


def test_cvt_identity_is_a_copy(details):
    t = np.arange(N)
    assert np.array_equal(details[:, 6], t + 0x1001)  # incremented copy
    assert np.array_equal(details[:, 7], t + 0x1000)  # the copy of the copy is unaffected


def test_vector_loads_and_stores(details):
    t = np.arange(N)
    u = t ^ 1  # read back the neighbour's shared record after the barrier
    assert np.array_equal(details[:, 8:12], np.stack([u, u + 100, u + 200, u + 300], axis=1))
    q = np.ascontiguousarray(details[:, 12:16]).view(np.uint64)
    assert np.array_equal(q[:, 0], 128 * t) and np.array_equal(q[:, 1], t | ((t + 0x1000) << 32))


def test_kernel_params_of_every_size(details):
    assert (details[:, 16] == 0xBEEF).all() and (details[:, 17] == 200).all()
    assert (np.ascontiguousarray(details[:, 18:20]).view(np.float64) == 3.25).all()
    assert (details[:, 20].view(np.float32) == -1.5).all()
    assert (details[:, 21] == 0xDEADBEEF).all() and (details[:, 24] == 0xAB).all()
    assert (np.ascontiguousarray(details[:, 22:24]).view(np.uint64) == 99).all()


def test_func_struct_param_and_struct_return(details):
    t = np.arange(N)
    assert np.array_equal(details[:, 25], (2 * t + 100) * 3)
    assert (details[:, 26] == 3).all()
    assert (np.ascontiguousarray(details[:, 28:30]).view(np.uint64) == 102).all()


def test_bar_red_popc_and_or(details):
    assert (details[:, 30] == 10 + 2000).all()  # popc of t < 10; and = false; or = true


def test_clock64_is_monotonic_and_nanosleep_advances_it():
    gpu = SimGPU()
    r1 = run(hand_ptx("misc"), "timing", (1,), (64,), [Out(64 * 4, np.uint64), 5000], gpu=gpu)
    r2 = run(hand_ptx("misc"), "timing", (1,), (64,), [Out(64 * 4, np.uint64), 5000], gpu=gpu)
    for r in (r1, r2):
        c = r[0].reshape(64, 4).astype(np.int64)
        assert (np.diff(c, axis=1) > 0).all()  # two reads in one basic block differ too
        cycles_per_us = gpu.model.clock_rate_khz // 1000
        assert (c[:, 3] - c[:, 2] >= 5 * cycles_per_us).all()
    assert r2[0].min() > r1[0].max()  # the device clock keeps running across launches


def test_exit_releases_threads_parked_at_a_barrier():
    r = run(hand_ptx("misc"), "exit_release", (2,), (64,), [Out(64, np.int32)])
    assert r[0].tolist() == [1] * 32 + [20] * 32


def test_half_precision_basics():
    rs = np.random.RandomState(0)
    a = (rs.rand(32) * 8 - 4).astype(np.float16)
    b = (rs.rand(32) * 8 - 4).astype(np.float16)
    r = run(hand_ptx("half"), "halves", (1,), (32,), [a, b, Out(32 * 8, np.uint16)])
    o = r[2].reshape(32, 8).view(np.float16)
    f = np.float32
    assert np.array_equal(o[:, 0], (a.astype(f) + b).astype(np.float16))
    assert np.array_equal(o[:, 1], (a.astype(f) * b).astype(np.float16))
    assert np.array_equal(o[:, 2], (a.astype(np.float64) * b + a).astype(np.float16))
    assert np.array_equal(o[:, 3], -a)
    assert np.array_equal(o[:, 4], (a.astype(f) + b).astype(np.float16))
    assert np.array_equal(o[:, 5], np.maximum(a, b))
    assert np.array_equal(o[:, 6], (a.astype(f) * a).astype(np.float16))
    assert np.array_equal(o[:, 7], (b.astype(f) * b).astype(np.float16))


_UNSUPPORTED = """.version 7.0
.target sm_80
.address_size 64
.visible .entry mma_kernel(.param .u64 p)
{{
	.reg .b32 %r<10>;
	.reg .b64 %rd<3>;
	ld.param.u64 %rd1, [p];
	{body}
	ret;
}}
"""


@pytest.mark.parametrize("body,opcode", [
    ("wgmma.fence.sync.aligned;", "wgmma"),
    ("add.s33 %r1, %r2, %r3;", "add"),
])
def test_unsupported_instruction_fails_at_load(body, opcode):
    gpu = SimGPU()
    before = len(gpu.memory.allocations())
    with pytest.raises(LoadError) as e:
        load_module(gpu, parse(_UNSUPPORTED.format(body=body), "mma.ptx"))
    msg = str(e.value)
    assert msg.startswith("mma.ptx:9:2: ")
    assert "in kernel mma_kernel: " + body.rstrip(";") in msg
    assert opcode in msg
    assert len(gpu.memory.allocations()) == before  # nothing of the module stays allocated


def test_named_barrier_producer_consumer_with_counts():
    r = run(hand_ptx("misc"), "producer_consumer", (2,), (128,), [Out(128, np.int32, -1)])
    t = np.arange(64)
    assert r[0].tolist() == t.tolist() + (t * t).tolist()
