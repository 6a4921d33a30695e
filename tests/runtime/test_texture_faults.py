"""Texture and surface faults are precise: a handle that names no live
object, a surface access out of range with .trap (surf2Dwrite's default
cudaBoundaryModeTrap), and a texture over a freed array each stop the
kernel at the faulting thread and instruction with a message that names
the handle, the coordinates or the freed memory."""
import numpy as np
import pytest

from gpudbg import compile_ptx
from gpudbg.runtime import mc
from gpudbg.runtime.errors import mcError_t as E
from gpudbg.sim.faults import CUDBGException

S = E.mcSuccess
SRC = r'''
extern "C" __global__ void read(cudaTextureObject_t t, float *out) {
  out[threadIdx.x] = tex2D<float>(t, threadIdx.x + 0.5f, 0.5f);
}
extern "C" __global__ void poke(cudaSurfaceObject_t s, int x, int y) {
  if (threadIdx.x == 3) surf2Dwrite(1.0f, s, x * 4, y);
}
extern "C" __global__ void poke_zero(cudaSurfaceObject_t s, int x, int y, float *out) {
  surf2Dwrite(2.0f, s, x * 4, y, cudaBoundaryModeZero);
  out[0] = surf2Dread<float>(s, x * 4, y, cudaBoundaryModeZero);
  out[1] = surf2Dread<float>(s, x * 4, y, cudaBoundaryModeClamp);
}
'''


@pytest.fixture
def k():
    assert mc.mcDeviceReset() == (S,)
    err, m = mc.mcModuleLoadData(compile_ptx(SRC, name="texfaults.cu"))
    assert err == S, mc.last_error_message()
    yield {n: mc.mcModuleGetFunction(m, n)[1] for n in ("read", "poke", "poke_zero")}
    mc.mcDeviceReset()


def _array(flags=0):
    err, desc = mc.mcCreateChannelDesc(32, 0, 0, 0, mc.mcChannelFormatKind.mcChannelFormatKindFloat)
    err, arr = mc.mcMallocArray(desc, 4, 2, flags)
    assert err == S
    img = np.arange(8, dtype=np.float32).reshape(2, 4)
    assert mc.mcMemcpy2DToArray(arr, 0, 0, img, 16, 16, 2, mc.mcMemcpyKind.mcMemcpyHostToDevice) == (S,)
    rd = mc.mcResourceDesc()
    rd.res.array.array = arr
    return arr, rd


def test_unknown_texture_handle_is_a_precise_fault(k):
    _, out = mc.mcMalloc(64)
    assert mc.mcLaunchKernel(k["read"], 1, 4, [0x5151, out]) == (S,)
    assert mc.mcDeviceSynchronize() == (E.mcErrorIllegalAddress,)
    rep = mc.fault_report()
    assert rep.kernel == "read" and rep.instruction.startswith("tex.2d")
    assert "handle 0x5151 is not a texture object" in rep.message


def test_destroyed_texture_handle_is_named_as_such(k):
    arr, rd = _array()
    err, tex = mc.mcCreateTextureObject(rd, mc.mcTextureDesc(), None)
    assert mc.mcDestroyTextureObject(tex) == (S,)
    assert mc.mcDestroyTextureObject(tex) == (E.mcErrorInvalidValue,)
    _, out = mc.mcMalloc(64)
    assert mc.mcLaunchKernel(k["read"], 1, 4, [tex, out]) == (S,)
    assert mc.mcDeviceSynchronize() == (E.mcErrorIllegalAddress,)
    assert f"handle 0x{tex:x} is a destroyed texture object" in mc.fault_report().message


def test_surface_handle_is_not_a_texture(k):
    arr, rd = _array(mc.mcArrayFlags.mcArraySurfaceLoadStore)
    err, surf = mc.mcCreateSurfaceObject(rd)
    _, out = mc.mcMalloc(64)
    assert mc.mcLaunchKernel(k["read"], 1, 4, [surf, out]) == (S,)
    assert mc.mcDeviceSynchronize() == (E.mcErrorIllegalAddress,)
    assert "is a surface object, not a texture object" in mc.fault_report().message


def test_surface_write_out_of_range_traps_at_the_thread(k):
    arr, rd = _array(mc.mcArrayFlags.mcArraySurfaceLoadStore)
    err, surf = mc.mcCreateSurfaceObject(rd)
    assert mc.mcLaunchKernel(k["poke"], 1, 8, [surf, 4, 1]) == (S,)
    assert mc.mcDeviceSynchronize() == (E.mcErrorIllegalAddress,)
    rep = mc.fault_report()
    assert rep.kind is CUDBGException.CUDBG_EXCEPTION_WARP_OUT_OF_RANGE_ADDRESS
    assert rep.instruction.startswith("sust.b.2d") and ".trap" in rep.instruction
    assert tuple(rep.thread) == (3, 0, 0)
    assert "x (bytes)=16, y=1" in rep.message and "4x2 elements of 4 bytes" in rep.message


def test_zero_and_clamp_modes_do_not_fault(k):
    arr, rd = _array(mc.mcArrayFlags.mcArraySurfaceLoadStore)
    err, surf = mc.mcCreateSurfaceObject(rd)
    _, out = mc.mcMalloc(8)
    assert mc.mcLaunchKernel(k["poke_zero"], 1, 1, [surf, 9, 1, out]) == (S,)
    assert mc.mcDeviceSynchronize() == (S,), mc.last_error_message()
    got = np.zeros(2, np.float32)
    mc.mcMemcpy(got, out, 8, mc.mcMemcpyKind.mcMemcpyDeviceToHost)
    assert got.tolist() == [0.0, 7.0]          # zero: nothing stored, zero read; clamp: texel (3, 1)


def test_texture_over_a_freed_array_faults_like_a_use_after_free(k):
    arr, rd = _array()
    err, tex = mc.mcCreateTextureObject(rd, mc.mcTextureDesc(), None)
    assert mc.mcFreeArray(arr) == (S,)
    assert mc.mcFreeArray(arr) == (E.mcErrorInvalidResourceHandle,)
    _, out = mc.mcMalloc(64)
    assert mc.mcLaunchKernel(k["read"], 1, 4, [tex, out]) == (S,)
    assert mc.mcDeviceSynchronize() == (E.mcErrorIllegalAddress,)
    assert "freed" in mc.fault_report().format()


def test_objects_die_with_their_context(k):
    arr, rd = _array()
    err, tex = mc.mcCreateTextureObject(rd, mc.mcTextureDesc(), None)
    assert mc.mcDeviceReset() == (S,)
    err, m = mc.mcModuleLoadData(compile_ptx(SRC, name="texfaults.cu"))
    _, read = mc.mcModuleGetFunction(m, "read")
    assert mc.mcGetTextureObjectTextureDesc(tex) == (E.mcErrorInvalidValue, None)
    assert mc.mcFreeArray(arr) == (E.mcErrorInvalidResourceHandle,)     # went with the context's memory
    _, out = mc.mcMalloc(64)
    assert mc.mcLaunchKernel(read, 1, 4, [tex, out]) == (S,)
    assert mc.mcDeviceSynchronize() == (E.mcErrorIllegalAddress,)
    assert f"handle 0x{tex:x} is a destroyed texture object" in mc.fault_report().message


def test_a_geometry_other_than_the_textures_is_an_illegal_instruction(k):
    err, desc = mc.mcCreateChannelDesc(32, 0, 0, 0, mc.mcChannelFormatKind.mcChannelFormatKindFloat)
    err, arr = mc.mcMalloc3DArray(desc, mc.mcExtent(4, 2, 2), 0)
    rd = mc.mcResourceDesc()
    rd.res.array.array = arr
    err, tex = mc.mcCreateTextureObject(rd, mc.mcTextureDesc(), None)
    _, out = mc.mcMalloc(64)
    assert mc.mcLaunchKernel(k["read"], 1, 4, [tex, out]) == (S,)       # tex2D on a 3D texture
    assert mc.mcDeviceSynchronize()[0] != S
    rep = mc.fault_report()
    assert rep.kind is CUDBGException.CUDBG_EXCEPTION_WARP_ILLEGAL_INSTRUCTION
    assert "tex.2d on a 3d texture object" in rep.message
