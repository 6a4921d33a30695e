"""Seed 002 §2.9 allocation functions and §2.3.3.2 mcStreamAttachMemAsync."""
import numpy as np
import pytest

from gpudbg.driver.engine import get_engine
from gpudbg.runtime import mc
from gpudbg.runtime.errors import mcError_t as E
from gpudbg.runtime.types import mcMemcpyKind as K
from gpudbg_fakes import Hold

S = E.mcSuccess


def test_malloc_pitch(fake):
    err, ptr, pitch = mc.mcMallocPitch(100, 8)
    assert err == S and pitch == 512 and ptr % 512 == 0
    info = get_engine().resolve_pointer(ptr)
    assert info.allocation.size == 512 * 8
    assert mc.mcMallocPitch(512, 2)[2] == 512
    assert mc.mcMallocPitch(513, 2)[2] == 1024
    assert mc.mcMallocPitch(100, 0)[:2] == (S, 0)
    assert mc.mcMallocPitch(-1, 4) == (E.mcErrorInvalidValue, None, None)
    assert mc.mcMallocPitch(2**31, 1) == (E.mcErrorInvalidValue, None, None)    # above max pitch
    assert mc.mcFreeHost(ptr) == (E.mcErrorInvalidValue,)
    assert mc.mcFree(ptr) == (S,)
    assert mc.mcFree(ptr) == (E.mcErrorInvalidValue,)                           # double free


def test_malloc_3d(fake):
    err, pp = mc.mcMalloc3D(mc.mcExtent(10, 4, 3))
    assert err == S and isinstance(pp, mc.mcPitchedPtr)
    assert (pp.pitch, pp.xsize, pp.ysize) == (512, 10, 4)
    assert get_engine().resolve_pointer(pp.ptr).allocation.size == 512 * 4 * 3
    assert mc.mcMalloc3D(mc.mcExtent(0, 4, 3))[1].ptr == 0
    assert mc.mcMalloc3D((10, 4, 3)) == (E.mcErrorInvalidValue, None)
    assert mc.mcMalloc3D(mc.mcExtent(10, -1, 3)) == (E.mcErrorInvalidValue, None)
    assert mc.mcFree(pp.ptr) == (S,)


def test_ext_malloc_with_flags(fake):
    err, dev = mc.mcExtMallocWithFlags(64, mc.mcExtMallocFlags.mcDeviceMallocDefault)
    assert err == S
    with pytest.raises(ValueError):
        mc.host_view(dev, 4)                        # plain device memory
    err, fine = mc.mcExtMallocWithFlags(64, mc.mcExtMallocFlags.mcDeviceMallocFinegrained)
    assert err == S
    mc.host_view(fine, 4)[:] = 9                    # host-coherent
    assert get_engine().current_context().memory.attachment(fine)[0] == 0x1   # attached globally
    assert mc.mcExtMallocWithFlags(8, mc.mcExtMallocFlags.mcMallocSignalMemory)[0] == S
    assert mc.mcExtMallocWithFlags(16, mc.mcExtMallocFlags.mcMallocSignalMemory) == (E.mcErrorInvalidValue, None)
    assert mc.mcExtMallocWithFlags(64, mc.mcExtMallocFlags.mcDeviceMallocUncached)[0] == S
    assert mc.mcExtMallocWithFlags(0, 0) == (S, 0)
    assert mc.mcExtMallocWithFlags(64, 7) == (E.mcErrorInvalidValue, None)
    assert mc.mcFree(dev) == (S,) and mc.mcFree(fine) == (S,)


def test_host_register_aliases_the_buffer(fake, kernels):
    arr = np.zeros(16, np.uint32)
    assert mc.mcHostRegister(arr, arr.nbytes, mc.mcHostRegisterFlags.mcHostRegisterMapped) == (S,)
    err, dptr = mc.mcHostGetDevicePointer(arr, 0)
    assert err == S and dptr != 0
    assert mc.mcHostGetDevicePointer(arr[4:], 0) == (S, dptr + 16)     # inside the range
    assert mc.mcHostGetFlags(arr) == (S, 2)
    # a device-side write lands in the numpy array ...
    assert mc.mcModuleLaunchKernel(kernels["store"], 1, 1, 1, 1, 1, 1, 0, None, [dptr + 8, 77], None) == (S,)
    assert mc.mcDeviceSynchronize() == (S,)
    assert arr[2] == 77
    # ... and a host write is what the device reads
    arr[5] = 1234
    _, d = mc.mcMalloc(64)
    assert mc.mcMemcpy(d, dptr, 64, K.mcMemcpyDeviceToDevice) == (S,)
    out = np.zeros(16, np.uint32)
    assert mc.mcMemcpy(out, d, 64, K.mcMemcpyDeviceToHost) == (S,)
    assert out[2] == 77 and out[5] == 1234
    assert mc.mcHostRegister(arr[2:], 8, 0) == (E.mcErrorHostMemoryAlreadyRegistered,)
    assert mc.mcFree(dptr) == (E.mcErrorInvalidValue,)
    assert "mcHostUnregister" in mc.last_error_message()
    assert mc.mcHostUnregister(arr[1:]) == (E.mcErrorHostMemoryNotRegistered,)   # not the base
    assert mc.mcHostUnregister(arr) == (S,)
    assert mc.mcHostUnregister(arr) == (E.mcErrorHostMemoryNotRegistered,)
    assert mc.mcHostGetFlags(arr) == (E.mcErrorInvalidValue, None)
    assert get_engine().resolve_pointer(dptr) is None                  # mapping gone


def test_host_register_by_device_pointer_and_bytearray(fake):
    buf = bytearray(256)
    assert mc.mcHostRegister(buf, 128, mc.mcHostRegisterFlags.mcHostRegisterPortable) == (S,)
    _, dptr = mc.mcHostGetDevicePointer(buf)
    assert mc.mcMemset(dptr, 0x5A, 128) == (S,)                  # registered: synchronous
    assert buf[:128] == b"\x5a" * 128 and buf[128:] == bytes(128)
    # only the first 128 bytes are registered: a range across its end is refused
    assert mc.mcMemcpy(buf, np.zeros(256, np.uint8), 256, K.mcMemcpyHostToHost) == (E.mcErrorInvalidValue,)
    assert mc.mcHostUnregister(dptr) == (S,)                     # by its device pointer


@pytest.mark.parametrize("case,code", [
    ("size0", E.mcErrorInvalidValue),
    ("too_big", E.mcErrorInvalidValue),
    ("int_pointer", E.mcErrorInvalidValue),
    ("not_buffer", E.mcErrorInvalidValue),
    ("flags", E.mcErrorInvalidValue),
    ("readonly", E.mcErrorInvalidValue),
])
def test_host_register_errors(fake, case, code):
    arr = np.zeros(8, np.uint8)
    args = {"size0": (arr, 0, 0), "too_big": (arr, 9, 0), "int_pointer": (12345, 8, 0),
            "not_buffer": ("text", 4, 0), "flags": (arr, 8, 0x40), "readonly": (bytes(8), 8, 0)}[case]
    assert mc.mcHostRegister(*args) == (code,)


def test_host_register_read_only(fake):
    ro = bytes(range(16))
    assert mc.mcHostRegister(ro, 16, mc.mcHostRegisterFlags.mcHostRegisterReadOnly) == (S,)
    _, dptr = mc.mcHostGetDevicePointer(ro)
    _, d = mc.mcMalloc(16)
    assert mc.mcMemcpy(d, ro, 16, K.mcMemcpyHostToDevice) == (S,)
    assert mc.mcMemcpy(dptr, d, 16, K.mcMemcpyDeviceToHost) == (E.mcErrorInvalidValue,)
    assert mc.mcHostUnregister(ro) == (S,)


def test_registration_ends_with_the_context(fake):
    arr = np.zeros(32, np.uint8)
    assert mc.mcHostRegister(arr, 32) == (S,)
    assert mc.mcDeviceReset() == (S,)
    assert mc.mcHostGetFlags(arr) == (E.mcErrorInvalidValue, None)
    assert mc.mcHostRegister(arr, 32) == (S,)


def test_host_get_flags_and_device_pointer(fake):
    _, p = mc.mcMallocHost(64, mc.mcMallocHostFlags.mcMallocHostMapped)
    assert mc.mcHostGetFlags(p) == (S, 2)
    assert mc.mcHostGetFlags(p + 10) == (S, 2)
    assert mc.mcHostGetDevicePointer(p, 0) == (S, p)
    assert mc.mcHostGetDevicePointer(p, 1) == (E.mcErrorInvalidValue, None)
    _, d = mc.mcMalloc(64)
    assert mc.mcHostGetFlags(d) == (E.mcErrorInvalidValue, None)
    assert mc.mcHostGetFlags(np.zeros(4)) == (E.mcErrorInvalidValue, None)
    assert mc.mcHostGetDevicePointer(np.zeros(4)) == (E.mcErrorInvalidValue, None)


def test_stream_attach_mem_is_stream_ordered(fake):
    mem = get_engine().current_context().memory
    _, mg = mc.mcMallocManaged(256)
    _, s = mc.mcStreamCreate()
    assert mem.attachment(mg) == (0x1, None)                  # mcMemAttachGlobal by default
    hold = Hold(s)
    assert mc.mcStreamAttachMemAsync(s, mg, 0, mc.mcMemAttachFlags.mcMemAttachSingle) == (S,)
    assert mem.attachment(mg) == (0x1, None)                  # not yet: earlier work pending
    hold.release()
    assert mc.mcStreamSynchronize(s) == (S,)
    assert mem.attachment(mg) == (0x4, s)
    assert mc.mcStreamAttachMemAsync(s, mg, 256, mc.mcMemAttachFlags.mcMemAttachHost) == (S,)
    assert mc.mcStreamSynchronize(s) == (S,)
    assert mem.attachment(mg)[0] == 0x2                       # replaced
    assert mc.mcStreamDestroy(s) == (S,)
    assert mem.attachment(mg) == (0x1, None)                  # destroyed stream: default again
    assert mc.mcStreamAttachMemAsync(0, mg, 0, mc.mcMemAttachFlags.mcMemAttachGlobal) == (S,)


@pytest.mark.parametrize("case,code", [
    ("null_stream_single", E.mcErrorInvalidValue),
    ("device_memory", E.mcErrorInvalidValue),
    ("pageable", E.mcErrorInvalidValue),
    ("partial_length", E.mcErrorInvalidValue),
    ("interior", E.mcErrorInvalidValue),
    ("flags", E.mcErrorInvalidValue),
    ("stream", E.mcErrorInvalidResourceHandle),
])
def test_stream_attach_mem_errors(fake, case, code):
    _, mg = mc.mcMallocManaged(256)
    _, d = mc.mcMalloc(256)
    _, s = mc.mcStreamCreate()
    args = {"null_stream_single": (0, mg, 0, 4), "device_memory": (s, d, 0, 4),
            "pageable": (s, np.zeros(4), 0, 4), "partial_length": (s, mg, 100, 4),
            "interior": (s, mg + 16, 0, 4), "flags": (s, mg, 0, 8), "stream": ("s", mg, 0, 4)}[case]
    assert mc.mcStreamAttachMemAsync(*args) == (code,)


def test_free_of_the_wrong_allocator(fake):
    _, pinned = mc.mcMallocHost(64)
    _, pp = mc.mcMalloc3D(mc.mcExtent(8, 2, 2))
    _, mg = mc.mcMallocManaged(64)
    assert mc.mcFree(pinned) == (E.mcErrorInvalidValue,)
    assert mc.mcFreeHost(pp.ptr) == (E.mcErrorInvalidValue,)
    assert mc.mcFreeHost(mg) == (E.mcErrorInvalidValue,)
    assert mc.mcFree(0x1234) == (E.mcErrorInvalidValue,)
    assert mc.mcFree(pp.ptr) == (S,) and mc.mcFree(mg) == (S,) and mc.mcFreeHost(pinned) == (S,)
    assert mc.mcFreeHost(pinned) == (E.mcErrorInvalidValue,)
