"""Seed 002 §2.13: virtual memory management. Reservations without backing,
handles, mappings at offsets, access flags enforced in kernels and copies,
granularity, handle lifetime and in-process sharing."""
from pathlib import Path

import numpy as np
import pytest

from gpudbg.runtime import mc
from gpudbg.runtime.errors import mcError_t as E
from gpudbg.runtime.types import mcMemcpyKind as K

S = E.mcSuccess
G = 2 << 20
F = mc.mcMemAccessFlags
RW, RO, NONE = F.mcMemAccessFlagsProtReadWrite, F.mcMemAccessFlagsProtRead, F.mcMemAccessFlagsProtNone
POSIX = mc.mcMemAllocationHandleType.mcMemHandleTypePosixFileDescriptor
FIX = Path(__file__).resolve().parent.parent / "driver" / "fixtures"
X = np.arange(32, dtype=np.float32)


def _access(ptr, size, flags, device=0):
    return mc.mcMemSetAccess(ptr, size, [mc.mcMemAccessDesc(mc.mcMemLocation(id=device), flags)], 1)


def _mapped(size=G, handle_size=None, offset=0, flags=RW):
    """A reservation of 2*size with one mapping of `size` at its start."""
    err, va = mc.mcMemAddressReserve(2 * size, 0, 0, 0)
    assert err == S
    err, h = mc.mcMemCreate(handle_size or size, mc.mcMemAllocationProp(), 0)
    assert err == S
    assert mc.mcMemMap(va, size, offset, h, 0) == (S,)
    if flags is not None:
        assert _access(va, size, flags) == (S,)
    return va, h


@pytest.fixture
def saxpy(real):
    err, m = mc.mcModuleLoad(FIX / "saxpy.ptx")
    assert err == S
    return mc.mcModuleGetFunction(m, "saxpy")[1]


def _saxpy(fn, x, y):
    assert mc.mcModuleLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, None, [32, np.float32(2.0), x, y], None) == (S,)
    return mc.mcDeviceSynchronize()


def test_granularity(fake):
    prop = mc.mcMemAllocationProp()
    assert mc.mcMemGetAllocationGranularity(prop, 0) == (S, G)
    assert mc.mcMemGetAllocationGranularity(prop, 1) == (S, G)
    assert mc.mcMemGetAllocationGranularity(prop, 2) == (E.mcErrorInvalidValue, None)
    assert mc.mcMemGetAllocationGranularity(mc.mcMemAllocationProp(type=0), 0) == (E.mcErrorInvalidValue, None)
    bad_dev = mc.mcMemAllocationProp(location=mc.mcMemLocation(id=7))
    assert mc.mcMemGetAllocationGranularity(bad_dev, 0) == (E.mcErrorInvalidDevice, None)
    assert mc.mcMemGetAllocationGranularity(None, 0) == (E.mcErrorInvalidValue, None)


def test_reserve_and_free(fake):
    err, va = mc.mcMemAddressReserve(2 * G, 0, 0, 0)
    assert err == S and va % G == 0
    assert mc.mcMemAddressReserve(2 * G, 0, va, 0)[1] != va     # hint taken: placed elsewhere
    err, fixed = mc.mcMemAddressReserve(G, 0, va + (64 << 20), 0)
    assert err == S and fixed == va + (64 << 20)
    err, big = mc.mcMemAddressReserve(G, 8 * G, 0, 0)
    assert err == S and big % (8 * G) == 0
    assert mc.mcMemAddressReserve(G + 1, 0, 0, 0) == (E.mcErrorInvalidValue, None)
    assert mc.mcMemAddressReserve(G, 3 * G, 0, 0) == (E.mcErrorInvalidValue, None)
    assert mc.mcMemAddressReserve(G, 0, 0, 1) == (E.mcErrorInvalidValue, None)
    assert mc.mcMemAddressReserve(0, 0, 0, 0) == (E.mcErrorInvalidValue, None)
    assert mc.mcMemAddressFree(va, G) == (E.mcErrorInvalidValue,)           # not the whole range
    assert mc.mcMemAddressFree(va, 2 * G) == (S,)
    assert mc.mcMemAddressFree(va, 2 * G) == (E.mcErrorInvalidValue,)
    # reserved memory is not backed: copies are refused
    assert mc.mcMemcpy(fixed, X, 128, K.mcMemcpyHostToDevice) == (E.mcErrorInvalidValue,)
    assert "reserved but unmapped" in mc.last_error_message()


def test_create_release_and_properties(fake):
    _, free0, _ = mc.mcMemGetInfo()
    prop = mc.mcMemAllocationProp(requestedHandleTypes=POSIX)
    err, h = mc.mcMemCreate(2 * G, prop, 0)
    assert err == S and mc.mcMemGetInfo()[1] == free0 - 2 * G
    err, p = mc.mcMemGetAllocationPropertiesFromHandle(h)
    assert err == S and (p.type, p.requestedHandleTypes, p.location.id) == (1, POSIX, 0)
    assert mc.mcMemRelease(h) == (S,)
    assert mc.mcMemGetInfo()[1] == free0
    assert mc.mcMemRelease(h) == (E.mcErrorInvalidValue,)
    assert mc.mcMemGetAllocationPropertiesFromHandle(h) == (E.mcErrorInvalidValue, None)
    assert mc.mcMemCreate(G // 2, mc.mcMemAllocationProp(), 0) == (E.mcErrorInvalidValue, None)
    assert mc.mcMemCreate(G, mc.mcMemAllocationProp(), 4) == (E.mcErrorInvalidValue, None)
    win = mc.mcMemAllocationProp(requestedHandleTypes=mc.mcMemAllocationHandleType.mcMemHandleTypeWin32)
    assert mc.mcMemCreate(G, win, 0) == (E.mcErrorInvalidValue, None)
    loc1 = mc.mcMemAllocationProp(location=mc.mcMemLocation(id=1))
    err, h1 = mc.mcMemCreate(G, loc1, 0)
    assert err == S and mc.mcMemGetAllocationPropertiesFromHandle(h1)[1].location.id == 1
    assert mc.mcMemCreate(1 << 50, mc.mcMemAllocationProp(), 0) == (E.mcErrorMemoryAllocation, None)


def test_map_at_offsets_aliases_and_access_rules(fake):
    err, va = mc.mcMemAddressReserve(4 * G, 0, 0, 0)
    _, h = mc.mcMemCreate(2 * G, mc.mcMemAllocationProp(), 0)
    assert mc.mcMemMap(va, G, G, h, 0) == (S,)                 # second half of the handle
    assert mc.mcMemMap(va + 2 * G, 2 * G, 0, h, 0) == (S,)     # the whole handle again
    assert mc.mcMemMap(va, G, 0, h, 0) == (E.mcErrorInvalidValue,)          # overlaps
    assert mc.mcMemMap(va + G, G, 2 * G, h, 0) == (E.mcErrorInvalidValue,)  # past the handle
    assert mc.mcMemMap(va + G, G, 100, h, 0) == (E.mcErrorInvalidValue,)    # offset not granular
    assert mc.mcMemMap(va + G, G, 0, 999, 0) == (E.mcErrorInvalidValue,)    # no such handle
    assert mc.mcMemMap(va + 8 * G, G, 0, h, 0) == (E.mcErrorInvalidValue,)  # outside the reservation
    loc = mc.mcMemLocation(id=0)
    # a new mapping has no access: copies are refused before anything is queued
    assert mc.mcMemGetAccess(loc, va) == (S, NONE)
    assert mc.mcMemcpy(va, X, 128, K.mcMemcpyHostToDevice) == (E.mcErrorInvalidValue,)
    assert "mapped without access" in mc.last_error_message()
    assert _access(va, G, RW) == (S,) and _access(va + 2 * G, 2 * G, RO) == (S,)
    assert mc.mcMemGetAccess(loc, va + 100) == (S, RW)
    assert mc.mcMemGetAccess(loc, va + 3 * G) == (S, RO)
    assert mc.mcMemGetAccess(loc, va + G) == (E.mcErrorInvalidValue, None)      # unmapped
    assert mc.mcMemGetAccess(mc.mcMemLocation(id=5), va) == (E.mcErrorInvalidDevice, None)
    assert mc.mcMemcpy(va + 64, X, 128, K.mcMemcpyHostToDevice) == (S,)
    out = np.zeros(32, np.float32)
    # va maps handle offset G, which the second mapping sees at va + 2G + G
    assert mc.mcMemcpy(out, va + 3 * G + 64, 128, K.mcMemcpyDeviceToHost) == (S,)
    assert (out == X).all()
    assert mc.mcMemcpy(va + 3 * G, X, 128, K.mcMemcpyHostToDevice) == (E.mcErrorInvalidValue,)
    assert "read-only" in mc.last_error_message()
    assert mc.mcMemset(va + 3 * G, 0, 16) == (E.mcErrorInvalidValue,)
    # access descriptors: whole mappings only, valid flags and devices
    assert _access(va, G // 2, RW) == (E.mcErrorInvalidValue,)
    assert _access(va, 2 * G, RW) == (E.mcErrorInvalidValue,)            # runs into a hole
    assert _access(va, G, 2) == (E.mcErrorInvalidValue,)
    assert _access(va, G, RW, device=6) == (E.mcErrorInvalidDevice,)
    assert mc.mcMemSetAccess(va, G, [], 1) == (E.mcErrorInvalidValue,)
    assert _access(va, G, RW, device=1) == (S,)          # another device's flags are recorded
    assert mc.mcMemGetAccess(mc.mcMemLocation(id=1), va) == (S, RW)
    # unmap: whole mappings only
    assert mc.mcMemUnmap(va, G // 2) == (E.mcErrorInvalidValue,)
    assert mc.mcMemUnmap(va + G, G) == (E.mcErrorInvalidValue,)
    assert mc.mcMemAddressFree(va, 4 * G) == (E.mcErrorInvalidValue,)   # still mapped
    assert mc.mcMemUnmap(va, G) == (S,)
    assert mc.mcMemcpy(va, X, 128, K.mcMemcpyHostToDevice) == (E.mcErrorInvalidValue,)
    assert mc.mcMemUnmap(va + 2 * G, 2 * G) == (S,)
    assert mc.mcMemRelease(h) == (S,)
    assert mc.mcMemAddressFree(va, 4 * G) == (S,)


def test_handle_lives_while_mapped_and_retain(fake):
    _, free0, _ = mc.mcMemGetInfo()
    va, h = _mapped()
    assert mc.mcMemcpy(va, X, 128, K.mcMemcpyHostToDevice) == (S,)
    assert mc.mcMemRelease(h) == (S,)                 # still mapped: memory stays
    out = np.zeros(32, np.float32)
    assert mc.mcMemcpy(out, va, 128, K.mcMemcpyDeviceToHost) == (S,) and (out == X).all()
    assert mc.mcMemGetInfo()[1] == free0 - G
    err, h2 = mc.mcMemRetainAllocationHandle(va + 4096)
    assert err == S and mc.mcMemGetAllocationPropertiesFromHandle(h2)[0] == S
    assert mc.mcMemRetainAllocationHandle(va + G) == (E.mcErrorInvalidValue, None)
    assert mc.mcMemUnmap(va, G) == (S,)
    assert mc.mcMemGetInfo()[1] == free0 - G          # the retained handle holds it
    assert mc.mcMemRelease(h2) == (S,)
    assert mc.mcMemGetInfo()[1] == free0


def test_shareable_handles_in_process(fake):
    va, h = _mapped(flags=RW)
    assert mc.mcMemExportToShareableHandle(h, POSIX, 0) == (E.mcErrorInvalidValue, None)  # not requested
    _, hs = mc.mcMemCreate(G, mc.mcMemAllocationProp(requestedHandleTypes=POSIX), 0)
    err, fd = mc.mcMemExportToShareableHandle(hs, POSIX, 0)
    assert err == S and isinstance(fd, int)
    win = mc.mcMemAllocationHandleType.mcMemHandleTypeWin32
    assert mc.mcMemExportToShareableHandle(hs, win, 0) == (E.mcErrorNotSupported, None)
    assert mc.mcMemExportToShareableHandle(hs, POSIX, 1) == (E.mcErrorInvalidValue, None)
    err, hi = mc.mcMemImportFromShareableHandle(fd, POSIX)
    assert err == S and hi != hs
    assert mc.mcMemImportFromShareableHandle(fd + 1000, POSIX) == (E.mcErrorInvalidValue, None)
    assert mc.mcMemImportFromShareableHandle(fd, win) == (E.mcErrorNotSupported, None)
    # the imported handle is the same physical memory
    assert mc.mcMemUnmap(va, G) == (S,)
    assert mc.mcMemMap(va, G, 0, hs, 0) == (S,) and mc.mcMemMap(va + G, G, 0, hi, 0) == (S,)
    assert _access(va, 2 * G, RW) == (S,)
    assert mc.mcMemcpy(va + 8, X, 128, K.mcMemcpyHostToDevice) == (S,)
    out = np.zeros(32, np.float32)
    assert mc.mcMemcpy(out, va + G + 8, 128, K.mcMemcpyDeviceToHost) == (S,) and (out == X).all()


def test_kernel_uses_a_mapping(saxpy):
    va, _ = _mapped()
    assert mc.mcMemcpy(va, X, 128, K.mcMemcpyHostToDevice) == (S,)
    assert mc.mcMemset(va + 4096, 0, 128) == (S,)
    assert _saxpy(saxpy, va, va + 4096) == (S,)
    out = np.zeros(32, np.float32)
    assert mc.mcMemcpy(out, va + 4096, 128, K.mcMemcpyDeviceToHost) == (S,)
    np.testing.assert_allclose(out, 2 * X)


def test_kernel_faults_on_reserved_but_unmapped_memory(saxpy):
    va, _ = _mapped()
    assert _saxpy(saxpy, va + G, va) == (E.mcErrorIllegalAddress,)
    rep = mc.fault_report()
    assert rep.address == va + G and "reserved but unmapped" in rep.format()


def test_kernel_faults_on_a_mapping_without_access(saxpy):
    va, _ = _mapped(flags=NONE)
    _, y = mc.mcMalloc(128)
    assert _saxpy(saxpy, va, y) == (E.mcErrorIllegalAddress,)
    rep = mc.fault_report()
    assert rep.address == va and "mapped without access" in rep.format()


def test_kernel_faults_writing_a_read_only_mapping(saxpy):
    va, _ = _mapped(flags=RO)
    _, x = mc.mcMalloc(128)
    assert _saxpy(saxpy, va, x) == (S,)                # reading it is fine
    assert _saxpy(saxpy, x, va + 256) == (E.mcErrorIllegalAddress,)
    rep = mc.fault_report()
    assert rep.address == va + 256 and "read-only" in rep.format()
