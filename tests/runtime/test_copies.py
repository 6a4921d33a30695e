"""Seed 002 §2.10: 2D, 3D, peer, symbol and stream copies."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import gpudbg
from gpudbg.driver import commands as C
from gpudbg.driver.engine import get_engine
from gpudbg.driver.stream import Stream
from gpudbg.runtime import mc
from gpudbg.runtime.errors import mcError_t as E
from gpudbg.runtime.types import mcMemcpyKind as K
from gpudbg.sim import copy_engine
from gpudbg.sim.gpu import SimGPU
from gpudbg.sim.memory.spaces import AccessFault, AllocationKind

S = E.mcSuccess
H2D, D2H, D2D, DEFAULT = K.mcMemcpyHostToDevice, K.mcMemcpyDeviceToHost, K.mcMemcpyDeviceToDevice, K.mcMemcpyDefault

SYMBOLS_SRC = r'''
__device__ int counter[4];
__constant__ float k[8];
extern "C" __global__ void bump(int* out) {
    out[threadIdx.x] = counter[threadIdx.x] + (int)k[threadIdx.x];
}'''


@pytest.fixture
def opcodes(monkeypatch):
    """The opcodes of everything submitted to any stream."""
    seen = []
    orig = Stream.submit

    def spy(self, commands):
        seen.extend(c.opcode for c in commands)
        return orig(self, commands)
    monkeypatch.setattr(Stream, "submit", spy)
    return seen


def grid(h, w, seed=0):
    return ((np.arange(h * w) * 7 + seed) % 251).astype(np.uint8).reshape(h, w)


def issued():
    return get_engine().current_context().legacy.channel.issued


# ------------------------------------------------------------------ 2D
def test_memcpy_2d_round_trip(fake, opcodes):
    _, p, pitch = mc.mcMallocPitch(100, 8)
    src = grid(8, 100)
    assert mc.mcMemcpy2D(p, pitch, src, 100, 100, 8, H2D) == (S,)
    assert C.Opcode.COPY_2D in opcodes and C.Opcode.COPY not in opcodes
    _, p2, pitch2 = mc.mcMallocPitch(100, 8)
    assert mc.mcMemcpy2D(p2, pitch2, p, pitch, 100, 8, D2D) == (S,)
    out = np.full((8, 130), 0xEE, np.uint8)
    assert mc.mcMemcpy2D(out, 130, p2, pitch2, 100, 8, DEFAULT) == (S,)
    assert (out[:, :100] == src).all() and (out[:, 100:] == 0xEE).all()   # padding untouched
    # a sub-rectangle: columns 10..30 of rows 2..5
    part = np.zeros((3, 20), np.uint8)
    assert mc.mcMemcpy2D(part, 20, p + 2 * pitch + 10, pitch, 20, 3, D2H) == (S,)
    assert (part == src[2:5, 10:30]).all()


def test_memcpy_2d_async_pinned(fake):
    _, p, pitch = mc.mcMallocPitch(64, 4)
    _, pinned = mc.mcMallocHost(64 * 4)
    mc.host_view(pinned, 256)[:] = grid(4, 64).ravel()
    _, s = mc.mcStreamCreate()
    assert mc.mcMemcpy2DAsync(p, pitch, pinned, 64, 64, 4, H2D, s) == (S,)
    _, back = mc.mcMallocHost(80 * 4)
    assert mc.mcMemcpy2DAsync(back, 80, p, pitch, 64, 4, D2H, s) == (S,)
    assert mc.mcStreamSynchronize(s) == (S,)
    assert (mc.host_view(back, 320).reshape(4, 80)[:, :64] == grid(4, 64)).all()
    assert mc.mcMemcpy2DAsync(p, pitch, pinned, 64, 64, 4, H2D, "bad") == (E.mcErrorInvalidResourceHandle,)


@pytest.mark.parametrize("case,code", [
    ("dpitch_small", E.mcErrorInvalidPitchValue),
    ("spitch_small", E.mcErrorInvalidPitchValue),
    ("pitch_too_big", E.mcErrorInvalidPitchValue),
    ("kind", E.mcErrorInvalidMemcpyDirection),
    ("unknown_pointer", E.mcErrorInvalidDevicePointer),
    ("null", E.mcErrorInvalidValue),
    ("out_of_bounds", E.mcErrorInvalidValue),
    ("host_buffer_too_small", E.mcErrorInvalidValue),
    ("negative_height", E.mcErrorInvalidValue),
    ("wrong_direction", E.mcErrorInvalidValue),
])
def test_memcpy_2d_errors_queue_nothing(fake, case, code):
    _, p, pitch = mc.mcMallocPitch(100, 8)
    host = np.zeros((8, 100), np.uint8)
    args = {
        "dpitch_small": (p, 50, host, 100, 100, 8, H2D),
        "spitch_small": (p, pitch, host, 99, 100, 8, H2D),
        "pitch_too_big": (p, 2**31, host, 100, 100, 8, H2D),
        "kind": (p, pitch, host, 100, 100, 8, 9),
        "unknown_pointer": (0x1234, pitch, host, 100, 100, 8, DEFAULT),
        "null": (0, pitch, host, 100, 100, 8, H2D),
        "out_of_bounds": (p, pitch, host, 100, 100, 9, DEFAULT),
        "host_buffer_too_small": (p, pitch, host, 100, 100, 9, H2D),
        "negative_height": (p, pitch, host, 100, 100, -1, H2D),
        "wrong_direction": (host, 100, p, pitch, 100, 8, H2D),
    }[case]
    before = issued()
    assert mc.mcMemcpy2D(*args) == (code,)
    assert issued() == before                 # rejected before anything was queued


def test_memcpy_param_2d(fake):
    _, p, pitch = mc.mcMallocPitch(64, 8)
    src = grid(8, 64)
    T = mc.mcMemoryType
    cp = mc.mc_Memcpy2D(srcMemoryType=T.mcMemoryTypeHost, srcHost=src, srcPitch=64,
                        dstMemoryType=T.mcMemoryTypeDevice, dstDevice=p, dstPitch=pitch,
                        WidthInBytes=64, Height=8)
    assert mc.mcMemcpyParam2D(cp) == (S,)
    out = np.zeros((4, 16), np.uint8)
    back = mc.mc_Memcpy2D(srcMemoryType=T.mcMemoryTypeDevice, srcDevice=p, srcPitch=pitch,
                          srcXInBytes=8, srcY=3, dstMemoryType=T.mcMemoryTypeHost, dstHost=out,
                          dstPitch=16, WidthInBytes=16, Height=4)
    assert mc.mcMemcpyParam2D(back) == (S,)
    assert (out == src[3:7, 8:24]).all()
    _, s = mc.mcStreamCreate()
    out[:] = 0
    assert mc.mcMemcpyParam2DAsync(back, s) == (S,)          # to pageable: returns when done
    assert (out == src[3:7, 8:24]).all()
    out[:] = 0
    back.srcMemoryType = back.dstMemoryType = T.mcMemoryTypeUnified
    assert mc.mcMemcpy2DUnaligned(back) == (S,)
    assert (out == src[3:7, 8:24]).all()
    bad = [mc.mc_Memcpy2D(srcMemoryType=T.mcMemoryTypeArray, dstDevice=p, WidthInBytes=1, Height=1),
           mc.mc_Memcpy2D(srcMemoryType=9), "not a struct"]
    for b in bad:
        assert mc.mcMemcpyParam2D(b) == (E.mcErrorInvalidValue,)
    cp.srcPitch = 10
    assert mc.mcMemcpyParam2D(cp) == (E.mcErrorInvalidPitchValue,)
    cp.srcPitch, cp.srcMemoryType, cp.srcHost = 64, T.mcMemoryTypeDevice, None
    cp.srcDevice = 0x1234
    assert mc.mcMemcpy2DUnaligned(cp) == (E.mcErrorInvalidDevicePointer,)


# ------------------------------------------------------------------ 3D
def test_memcpy_3d_with_positions(fake, opcodes):
    _, pp = mc.mcMalloc3D(mc.mcExtent(16, 6, 4))
    assert mc.mcMemset3D(pp, 0, mc.mcExtent(16, 6, 4)) == (S,)
    src = np.arange(3 * 4 * 10, dtype=np.uint8).reshape(3, 4, 10)
    p = mc.mcMemcpy3DParms(srcPtr=mc.mcPitchedPtr(src, 10, 10, 4), dstPtr=pp,
                           dstPos=mc.mcPos(2, 1, 1), extent=mc.mcExtent(10, 4, 3), kind=H2D)
    del opcodes[:]
    assert mc.mcMemcpy3D(p) == (S,)
    assert opcodes.count(C.Opcode.COPY_2D) == 3            # one per slice (slices not contiguous)
    whole = np.zeros((4, 6, 16), np.uint8)
    q = mc.mcMemcpy3DParms(srcPtr=pp, dstPtr=mc.mcPitchedPtr(whole, 16, 16, 6),
                           extent=mc.mcExtent(16, 6, 4))
    assert mc.mcMemcpy3D(q) == (S,)
    expect = np.zeros((4, 6, 16), np.uint8)
    expect[1:4, 1:5, 2:12] = src
    assert (whole == expect).all()
    _, s = mc.mcStreamCreate()
    whole[:] = 0
    assert mc.mcMemcpy3DAsync(q, s) == (S,)
    assert (whole == expect).all()


@pytest.mark.parametrize("case,code", [
    ("array", E.mcErrorInvalidResourceHandle),   # not a live mcArray_t
    ("width_over_pitch", E.mcErrorInvalidPitchValue),
    ("rows_over_slice", E.mcErrorInvalidValue),
    ("kind", E.mcErrorInvalidMemcpyDirection),
    ("not_struct", E.mcErrorInvalidValue),
    ("out_of_bounds", E.mcErrorInvalidValue),
])
def test_memcpy_3d_errors(fake, case, code):
    _, pp = mc.mcMalloc3D(mc.mcExtent(16, 4, 2))
    host = np.zeros(16 * 4 * 2, np.uint8)
    hp = mc.mcPitchedPtr(host, 16, 16, 4)
    p = mc.mcMemcpy3DParms(srcPtr=hp, dstPtr=pp, extent=mc.mcExtent(16, 4, 2))
    if case == "array":
        p.srcArray = object()
    elif case == "width_over_pitch":
        p.extent = mc.mcExtent(17, 4, 2)
    elif case == "rows_over_slice":
        p.extent = mc.mcExtent(16, 5, 2)
    elif case == "kind":
        p.kind = 12
    elif case == "out_of_bounds":
        p.dstPos = mc.mcPos(0, 0, 1)
        p.srcPtr = mc.mcPitchedPtr(np.zeros(16 * 4 * 3, np.uint8), 16, 16, 4)
    else:
        p = "parms"
    assert mc.mcMemcpy3D(p) == (code,)


# ------------------------------------------------------------------ peer
def _on(device, fn, *args):
    assert mc.mcSetDevice(device) == (S,)
    try:
        return fn(*args)
    finally:
        mc.mcSetDevice(0)


def test_memcpy_peer(fake, opcodes):
    _, d1 = _on(1, mc.mcMalloc, 64)
    _, d0 = mc.mcMalloc(64)
    data = np.arange(16, dtype=np.uint32)
    mc.mcMemcpy(d0, data, 64, H2D)
    assert mc.mcMemcpyPeer(d1, 1, d0, 0, 64) == (S,)
    out = np.zeros(16, np.uint32)
    assert _on(1, mc.mcMemcpy, out, d1, 64, D2H) == (S,)
    assert (out == data).all()
    _, s = mc.mcStreamCreate()
    assert mc.mcMemcpyPeerAsync(d0 + 32, 0, d1, 1, 32, s) == (S,)
    assert mc.mcStreamSynchronize(s) == (S,)
    mc.mcMemcpy(out, d0, 64, D2H)
    assert (out == np.r_[data[:8], data[:8]]).all()
    assert mc.mcMemcpy(d1, d0, 64, DEFAULT) == (S,)          # UVA: a plain copy across devices
    assert mc.mcMemcpyPeer(d1, 5, d0, 0, 64) == (E.mcErrorInvalidDevice,)
    assert mc.mcMemcpyPeer(d1, 0, d0, 0, 64) == (E.mcErrorInvalidValue,)        # d1 is on device 1
    assert mc.mcMemcpyPeer(d1, 1, data, 0, 64) == (E.mcErrorInvalidValue,)      # host buffer
    assert mc.mcMemcpyPeerAsync(d1, 1, d0, 0, 65, s) == (E.mcErrorInvalidValue,)  # past the end


def test_memcpy_3d_peer(fake):
    _, a = mc.mcMalloc3D(mc.mcExtent(8, 2, 2))
    _, b = _on(1, mc.mcMalloc3D, mc.mcExtent(8, 2, 2))
    src = np.arange(32, dtype=np.uint8).reshape(2, 2, 8)
    mc.mcMemcpy3D(mc.mcMemcpy3DParms(srcPtr=mc.mcPitchedPtr(src, 8, 8, 2), dstPtr=a,
                                     extent=mc.mcExtent(8, 2, 2)))
    peer = mc.mcMemcpy3DPeerParms(srcPtr=a, srcDevice=0, dstPtr=b, dstDevice=1, extent=mc.mcExtent(8, 2, 2))
    assert mc.mcMemcpy3DPeer(peer) == (S,)
    out = np.zeros_like(src)
    back = mc.mcMemcpy3DParms(srcPtr=b, dstPtr=mc.mcPitchedPtr(out, 8, 8, 2), extent=mc.mcExtent(8, 2, 2))
    assert mc.mcMemcpy3DPeerAsync(back, None) == (S,)            # devices inferred from pointers
    assert (out == src).all()
    peer.dstDevice = 0
    assert mc.mcMemcpy3DPeer(peer) == (E.mcErrorInvalidValue,)
    peer.dstDevice = 3
    assert mc.mcMemcpy3DPeerAsync(peer, 0) == (E.mcErrorInvalidDevice,)


# ------------------------------------------------------------------ symbols
@pytest.fixture
def symbols_ptx():
    return gpudbg.compile_ptx(SYMBOLS_SRC)


def test_symbols(fake, symbols_ptx):
    _, m1 = mc.mcModuleLoadData(symbols_ptx)
    err, addr = mc.mcGetSymbolAddress("counter")
    assert err == S and addr == mc.mcModuleGetGlobal(m1, "counter")[1]
    assert mc.mcGetSymbolSize("counter") == (S, 16)
    assert mc.mcGetSymbolSize("k") == (S, 32)
    ks = np.arange(8, dtype=np.float32)
    assert mc.mcMemcpyToSymbol("k", ks, 32) == (S,)
    assert mc.mcMemcpyToSymbol("k", np.float32([42]), 4, 12, H2D) == (S,)
    out = np.zeros(8, np.float32)
    assert mc.mcMemcpyFromSymbol(out, "k", 32) == (S,)
    assert list(out) == [0, 1, 2, 42, 4, 5, 6, 7]
    _, s = mc.mcStreamCreate()
    _, d = mc.mcMalloc(16)
    assert mc.mcMemcpyFromSymbolAsync(d, "k", 16, 16, D2D, s) == (S,)
    assert mc.mcMemcpyToSymbolAsync("counter", d, 16, 0, D2D, s) == (S,)
    res = np.zeros(4, np.float32)
    assert mc.mcMemcpyFromSymbolAsync(res, "counter", 16, 0, DEFAULT, s) == (S,)
    assert list(res) == [4, 5, 6, 7]
    # a second module defining the same names makes the bare name ambiguous
    _, m2 = mc.mcModuleLoadData(symbols_ptx)
    assert mc.mcGetSymbolAddress("k") == (E.mcErrorInvalidSymbol, None)
    assert "ambiguous" in mc.last_error_message()
    assert mc.mcGetSymbolAddress((m2, "k")) == (S, mc.mcModuleGetGlobal(m2, "k")[1])
    assert mc.mcMemcpyToSymbol((m2, "k"), ks, 32) == (S,)


@pytest.mark.parametrize("case,code", [
    ("unknown", E.mcErrorInvalidSymbol),
    ("not_a_name", E.mcErrorInvalidSymbol),
    ("unknown_in_module", E.mcErrorInvalidSymbol),
    ("past_end", E.mcErrorInvalidValue),
    ("to_symbol_kind", E.mcErrorInvalidMemcpyDirection),
    ("from_symbol_kind", E.mcErrorInvalidMemcpyDirection),
    ("negative_offset", E.mcErrorInvalidValue),
])
def test_symbol_errors(fake, symbols_ptx, case, code):
    _, m = mc.mcModuleLoadData(symbols_ptx)
    buf = np.zeros(64, np.uint8)
    call = {
        "unknown": lambda: mc.mcGetSymbolSize("nope"),
        "not_a_name": lambda: mc.mcGetSymbolAddress(1234),
        "unknown_in_module": lambda: mc.mcMemcpyToSymbol((m, "nope"), buf, 4),
        "past_end": lambda: mc.mcMemcpyToSymbol("counter", buf, 16, 4),
        "to_symbol_kind": lambda: mc.mcMemcpyToSymbol("counter", buf, 4, 0, D2H),
        "from_symbol_kind": lambda: mc.mcMemcpyFromSymbol(buf, "counter", 4, 0, H2D),
        "negative_offset": lambda: mc.mcMemcpyFromSymbolAsync(buf, "counter", 4, -1),
    }[case]
    assert call()[0] == code


def test_symbol_copy_reaches_a_real_kernel(real, symbols_ptx):
    _, m = mc.mcModuleLoadData(symbols_ptx)
    _, f = mc.mcModuleGetFunction(m, "bump")
    assert mc.mcMemcpyToSymbol("counter", np.int32([10, 20, 30, 40]), 16) == (S,)
    assert mc.mcMemcpyToSymbol("k", np.float32([1, 2, 3, 4]), 16) == (S,)
    _, out = mc.mcMalloc(16)
    assert mc.mcModuleLaunchKernel(f, 1, 1, 1, 4, 1, 1, 0, None, [out], None) == (S,)
    res = np.zeros(4, np.int32)
    assert mc.mcMemcpyDtoH(res, out, 16) == (S,)
    assert list(res) == [11, 22, 33, 44]


# ------------------------------------------------------------------ stream forms
def test_stream_forms(fake):
    _, s = mc.mcStreamCreate()
    _, a = mc.mcMalloc(64)
    _, b = mc.mcMalloc(64)
    data = np.arange(64, dtype=np.uint8)
    assert mc.mcMemcpyHtoDAsync(a, data, 64, s) == (S,)
    assert mc.mcMemcpyDtoDAsync(b, a, 64, s) == (S,)
    out = np.zeros(64, np.uint8)
    assert mc.mcMemcpyDtoHAsync(out, b, 64, s) == (S,)
    assert (out == data).all()
    out[:] = 0
    assert mc.mcMemcpyWithStream(out, b, 64, D2H, s) == (S,)
    assert (out == data).all()
    for fn, args in ((mc.mcMemcpyHtoDAsync, (a, data, 64, "s")), (mc.mcMemcpyDtoDAsync, (b, a, 64, 7)),
                     (mc.mcMemcpyDtoHAsync, (out, b, 64, 3.5)), (mc.mcMemcpyWithStream, (out, b, 64, D2H, "x"))):
        assert fn(*args) == (E.mcErrorInvalidResourceHandle,)
    assert mc.mcMemcpyWithStream(out, b, 64, 7, s) == (E.mcErrorInvalidMemcpyDirection,)
    assert mc.mcMemcpyDtoDAsync(b, a, 65, s) == (E.mcErrorInvalidValue,)


# ------------------------------------------------------------------ commands and copy engine
@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**64 - 1), st.integers(0, 2**64 - 1), st.integers(0, 2**40),
       st.integers(0, 2**40), st.integers(0, 2**32), st.integers(0, 2**32),
       st.integers(0, 2**32 - 1), st.sampled_from([1, 2, 4]))
def test_pitched_commands_round_trip(src, dst, spitch, dpitch, width, height, value, esize):
    for cmd in (C.make(C.Opcode.COPY_2D, src=src, dst=dst, spitch=spitch, dpitch=dpitch,
                       width=width, height=height),
                C.make(C.Opcode.MEMSET_2D, dst=dst, pitch=dpitch, value=value, element_size=esize,
                       width=width, height=height)):
        assert C.decode_words(C.encode(cmd)) == [cmd]


def test_copy_engine_faults_precisely():
    gpu = SimGPU()
    a = gpu.alloc_internal(64, AllocationKind.DEVICE)
    a.data[:] = np.arange(64, dtype=np.uint8)
    copy_engine.copy_2d(gpu, a.base, a.base + 1, 8, 8, 4, 4)           # overlapping: memmove
    assert list(a.data[1:5]) == [0, 1, 2, 3] and list(a.data[9:13]) == [8, 9, 10, 11]
    with pytest.raises(AccessFault):
        copy_engine.copy_2d(gpu, a.base, a.base, 16, 16, 16, 5)        # last row past the end
    with pytest.raises(AccessFault, match="misaligned"):
        copy_engine.fill_2d(gpu, a.base, 6, 0, 4, 1, 2)                # pitch not 4-byte aligned
    with pytest.raises(AccessFault, match="any device"):
        copy_engine.copy_2d(gpu, 0x10, a.base, 1, 1, 1, 1)
    gpu.shutdown()
