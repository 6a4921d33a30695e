"""Seed 002 §2.11: 1D, 2D and 3D memsets."""
import numpy as np
import pytest

from gpudbg.driver import commands as C
from gpudbg.driver.engine import get_engine
from gpudbg.driver.stream import Stream
from gpudbg.runtime import mc
from gpudbg.runtime.errors import mcError_t as E
from gpudbg.runtime.types import mcMemcpyKind as K

S = E.mcSuccess
INVALID = E.mcErrorInvalidValue


@pytest.fixture
def opcodes(monkeypatch):
    seen = []
    orig = Stream.submit

    def spy(self, commands):
        seen.extend(c.opcode for c in commands)
        return orig(self, commands)
    monkeypatch.setattr(Stream, "submit", spy)
    return seen


def pitched(width, height, fill=0xEE):
    _, p, pitch = mc.mcMallocPitch(width, height)
    mc.mcMemset(p, fill, pitch * height)
    return p, pitch


def read(p, nbytes, dtype=np.uint8):
    out = np.zeros(nbytes, np.uint8)
    assert mc.mcMemcpy(out, p, nbytes, K.mcMemcpyDeviceToHost) == (S,)
    return out.view(dtype)


def test_memset_2d_leaves_padding(fake, opcodes):
    p, pitch = pitched(100, 6)
    del opcodes[:]
    assert mc.mcMemset2D(p, pitch, 0x1AB, 100, 6) == (S,)        # low byte of the int
    assert opcodes.count(C.Opcode.MEMSET_2D) == 1
    rows = read(p, pitch * 6).reshape(6, pitch)
    assert (rows[:, :100] == 0xAB).all() and (rows[:, 100:] == 0xEE).all()
    _, s = mc.mcStreamCreate()
    assert mc.mcMemset2DAsync(p + 10, pitch, 3, 20, 2, s) == (S,)
    assert mc.mcStreamSynchronize(s) == (S,)
    rows = read(p, pitch * 6).reshape(6, pitch)
    assert (rows[:2, 10:30] == 3).all() and (rows[2:, 10:30] == 0xAB).all()


@pytest.mark.parametrize("case", ["pitch_small", "past_end", "host_buffer", "unknown", "value",
                                  "stream"])
def test_memset_2d_errors(fake, case):
    p, pitch = pitched(100, 6)
    args = {"pitch_small": (p, 50, 0, 100, 6), "past_end": (p, pitch, 0, 100, 7),
            "host_buffer": (np.zeros(8), 8, 0, 8, 1), "unknown": (0x1234, 8, 0, 8, 2),
            "value": (p, pitch, 1 << 40, 8, 2), "stream": (p, pitch, 0, 8, 2, "s")}[case]
    if case == "stream":
        assert mc.mcMemset2DAsync(*args) == (E.mcErrorInvalidResourceHandle,)
    else:
        assert mc.mcMemset2D(*args) == (INVALID,)


@pytest.mark.parametrize("size,fn,fn_async,value", [
    (1, mc.mcMemsetD2D8, mc.mcMemsetD2D8Async, 0x5C),
    (2, mc.mcMemsetD2D16, mc.mcMemsetD2D16Async, 0xBEEF),
    (4, mc.mcMemsetD2D32, mc.mcMemsetD2D32Async, 0xDEADBEEF),
])
def test_memset_d2d(fake, size, fn, fn_async, value):
    p, pitch = pitched(64, 4)
    assert fn(p, pitch, value, 8, 4) == (S,)                       # 8 elements per row
    rows = read(p, pitch * 4).reshape(4, pitch)
    elems = rows[:, :8 * size].copy().view(f"<u{size}")
    assert (elems == value).all() and (rows[:, 8 * size:] == 0xEE).all()
    _, s = mc.mcStreamCreate()
    assert fn_async(p, 0, 1, 2, 1, s) == (S,)                      # height 1: the pitch is unused
    assert mc.mcStreamSynchronize(s) == (S,)
    assert list(read(p, 2 * size, f"<u{size}")) == [1, 1]
    assert fn(p, pitch, 1 << (8 * size), 8, 4) == (INVALID,)       # does not fit
    assert fn(p, pitch, value, 8, 5) == (INVALID,)                 # past the end
    if size > 1:
        assert fn(p + 1, pitch, value, 2, 2) == (INVALID,)         # misaligned pointer
        assert fn(p, pitch + 1, value, 2, 2) == (INVALID,)         # misaligned pitch
    assert fn_async(p, pitch, value, 8, 4, "s") == (E.mcErrorInvalidResourceHandle,)


def test_memset_3d(fake, opcodes):
    ext = mc.mcExtent(10, 3, 4)
    _, pp = mc.mcMalloc3D(ext)
    mc.mcMemset(pp.ptr, 0xEE, pp.pitch * 3 * 4)
    del opcodes[:]
    assert mc.mcMemset3D(pp, 7, mc.mcExtent(10, 3, 4)) == (S,)
    assert opcodes.count(C.Opcode.MEMSET_2D) == 1                 # contiguous slices: one command
    vol = read(pp.ptr, pp.pitch * 12).reshape(4, 3, pp.pitch)
    assert (vol[:, :, :10] == 7).all() and (vol[:, :, 10:] == 0xEE).all()
    del opcodes[:]
    _, s = mc.mcStreamCreate()
    assert mc.mcMemset3DAsync(pp, 1, mc.mcExtent(4, 2, 3), s) == (S,)    # 2 of 3 rows: per slice
    assert opcodes.count(C.Opcode.MEMSET_2D) == 3
    assert mc.mcStreamSynchronize(s) == (S,)
    vol = read(pp.ptr, pp.pitch * 12).reshape(4, 3, pp.pitch)
    assert (vol[:3, :2, :4] == 1).all() and (vol[:3, 2, :4] == 7).all() and (vol[3, :, :10] == 7).all()
    assert mc.mcMemset3D(pp, 0, mc.mcExtent(0, 3, 4)) == (S,)
    assert mc.mcMemset3D(pp, 0, mc.mcExtent(pp.pitch + 1, 1, 1)) == (INVALID,)
    assert mc.mcMemset3D(pp, 0, mc.mcExtent(10, 4, 2)) == (INVALID,)    # rows exceed a slice
    assert mc.mcMemset3D(pp, 0, mc.mcExtent(10, 3, 5)) == (INVALID,)    # past the allocation
    assert mc.mcMemset3D(pp.ptr, 0, ext) == (INVALID,)                  # not an mcPitchedPtr
    assert mc.mcMemset3DAsync(pp, 0, (1, 1, 1), s) == (INVALID,)


def test_memset_1d_forms(fake):
    _, d = mc.mcMalloc(64)
    _, s = mc.mcStreamCreate()
    assert mc.mcMemsetAsync(d, 9, 64, s) == (S,)
    assert mc.mcMemsetD32Async(d + 4, 0x01020304, 1, s) == (S,)
    assert mc.mcStreamSynchronize(s) == (S,)
    out = read(d, 8)
    assert list(out) == [9, 9, 9, 9, 4, 3, 2, 1]
    assert mc.mcMemsetD32(d + 2, 0, 1) == (INVALID,)
    assert mc.mcMemsetD16(d, 1 << 16, 1) == (INVALID,)
    assert mc.mcMemsetD8(d, 0, 65) == (INVALID,)
    assert mc.mcMemset(d, 0, -1) == (INVALID,)
    before = get_engine().current_context().legacy.channel.issued
    assert mc.mcMemsetD8Async(d, 0, 65, s) == (INVALID,)
    assert get_engine().current_context().legacy.channel.issued == before


def test_memset_reaches_peer_pinned_memory(fake):
    """Pinned memory of device 1 is set by device 0's copy engine (MEMSET_2D
    resolves the peer's address window)."""
    assert mc.mcSetDevice(1) == (S,)
    _, pinned = mc.mcMallocHost(32)
    assert mc.mcSetDevice(0) == (S,)
    assert mc.mcMemsetD16(pinned, 0x0A0B, 16) == (S,)
    assert (mc.host_view(pinned, 32, np.uint16) == 0x0A0B).all()
