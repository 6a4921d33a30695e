import ctypes
import uuid

import numpy as np
import pytest

from cudrv_helpers import check, out_i32, out_u64
from gpudbg.cuda_driver import device as D
from gpudbg.driver.device_attributes import CUdevice_attribute, attribute_values
from gpudbg.sim.device_model import DeviceModel


def test_nothing_but_the_version_before_cuinit(fresh):
    v = out_i32()
    assert D.cuDriverGetVersion(v.addr) == 0 and v.value >= 13000
    assert D.cuDeviceGetCount(out_i32().addr) == 3
    assert D.cuDeviceGet(out_i32().addr, 0) == 3
    assert D.cuDriverGetVersion(0) == 1


def test_init_flags_and_devices(fresh):
    assert D.cuInit(1) == 1
    check(D.cuInit(0))
    n, d = out_i32(), out_i32()
    check(D.cuDeviceGetCount(n.addr))
    assert n.value == 2
    check(D.cuDeviceGet(d.addr, 1))
    assert d.value == 1
    assert D.cuDeviceGet(d.addr, 2) == 101 and D.cuDeviceGet(d.addr, -1) == 101
    assert D.cuDeviceGetCount(0) == 1


def test_no_device_is_cuda_error_no_device():
    from gpudbg.driver.engine import reset_engine
    reset_engine(num_devices=0)
    try:
        assert D.cuInit(0) == 100
    finally:
        reset_engine()


def test_name_uuid_memory_capability(ctx):
    buf = ctypes.create_string_buffer(64)
    check(D.cuDeviceGetName(ctypes.addressof(buf), 64, 0))
    assert buf.value.decode() == DeviceModel().name
    check(D.cuDeviceGetName(ctypes.addressof(buf), 5, 0))
    assert buf.value.decode() == DeviceModel().name[:4]
    assert D.cuDeviceGetName(ctypes.addressof(buf), 0, 0) == 1
    u0, u1 = (ctypes.c_ubyte * 16)(), (ctypes.c_ubyte * 16)()
    check(D.cuDeviceGetUuid_v2(ctypes.addressof(u0), 0))
    check(D.cuDeviceGetUuid(ctypes.addressof(u1), 1))
    assert bytes(u0) == DeviceModel().uuid and bytes(u0) != bytes(u1)
    uuid.UUID(bytes=bytes(u0))
    total = out_u64()
    check(D.cuDeviceTotalMem_v2(total.addr, 0))
    assert total.value == DeviceModel().global_memory
    major, minor = out_i32(), out_i32()
    check(D.cuDeviceComputeCapability(major.addr, minor.addr, 0))
    assert (major.value, minor.value) == DeviceModel().compute_capability
    assert D.cuDeviceGetLuid(out_u64().addr, out_i32().addr, 0) == 801   # Linux: as NVIDIA's driver


def test_every_attribute_of_cuda_h_has_a_value(ctx):
    v = out_i32()
    for a in CUdevice_attribute:
        check(D.cuDeviceGetAttribute(v.addr, int(a), 0))
        assert v.value == attribute_values(DeviceModel())[int(a)]
    check(D.cuDeviceGetAttribute(v.addr, int(CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT), 0))
    assert v.value == DeviceModel().sm_count
    assert D.cuDeviceGetAttribute(v.addr, 0, 0) == 1          # not an attribute
    assert D.cuDeviceGetAttribute(v.addr, 148, 0) == 1
    assert D.cuDeviceGetAttribute(v.addr, 1, 7) == 101
    assert D.cuDeviceGetAttribute(0, 1, 0) == 1


def test_attribute_table_matches_cuda_bindings():
    driver = pytest.importorskip("cuda.bindings.driver")
    theirs = {name: int(m) for name, m in driver.CUdevice_attribute.__members__.items()
              if name != "CU_DEVICE_ATTRIBUTE_MAX"}
    ours = {name: int(m) for name, m in CUdevice_attribute.__members__.items()}
    # cuda-bindings 13.5 may know attributes newer than the CUDA 13.0 headers
    assert {k: v for k, v in theirs.items() if k in ours} == {k: v for k, v in ours.items() if k in theirs}
    assert not set(ours) - set(theirs)
    newer = {k: v for k, v in theirs.items() if k not in ours}
    assert all(v > max(ours.values()) for v in newer.values()), newer


def test_p2p_attribute_enum_matches_cuda_bindings():
    driver = pytest.importorskip("cuda.bindings.driver")
    assert {int(m) for m in driver.CUdevice_P2PAttribute} <= set(D._P2P_ATTRIBUTES)


def test_properties_struct(ctx):
    p = D.CUdevprop()
    check(D.cuDeviceGetProperties(ctypes.addressof(p), 0))
    m = DeviceModel()
    assert (p.maxThreadsPerBlock, list(p.maxThreadsDim), p.SIMDWidth, p.textureAlign) == \
        (m.max_threads_per_block, list(m.max_block_dims), 32, m.texture_alignment)


def test_pci_bus_id_round_trip(ctx):
    buf = ctypes.create_string_buffer(16)
    check(D.cuDeviceGetPCIBusId(ctypes.addressof(buf), 16, 1))
    text = buf.value.decode()
    assert text == DeviceModel().for_ordinal(1).pci_bus_id
    d = out_i32()
    check(D.cuDeviceGetByPCIBusId(d.addr, ctypes.addressof(buf)))
    assert d.value == 1
    short = ctypes.create_string_buffer(text.split(":", 1)[1].upper().encode())
    check(D.cuDeviceGetByPCIBusId(d.addr, ctypes.addressof(short)))
    assert d.value == 1
    missing = ctypes.create_string_buffer(b"0000:99:00.0")
    assert D.cuDeviceGetByPCIBusId(d.addr, ctypes.addressof(missing)) == 101
    junk = ctypes.create_string_buffer(b"gpu zero")
    assert D.cuDeviceGetByPCIBusId(d.addr, ctypes.addressof(junk)) == 1
    assert D.cuDeviceGetByPCIBusId(d.addr, 0) == 1


def test_peers(ctx):
    v = out_i32()
    check(D.cuDeviceCanAccessPeer(v.addr, 0, 1))
    assert v.value == 0
    for attr in range(1, 6):
        v.c.value = 7
        check(D.cuDeviceGetP2PAttribute(v.addr, attr, 0, 1))
        assert v.value == 0
    assert D.cuDeviceGetP2PAttribute(v.addr, 1, 0, 0) == 101
    assert D.cuDeviceGetP2PAttribute(v.addr, 9, 0, 1) == 1


def test_mem_pools(ctx):
    a, b = out_u64(), out_u64()
    check(D.cuDeviceGetDefaultMemPool(a.addr, 0))
    check(D.cuDeviceGetMemPool(b.addr, 0))
    assert a.value == b.value != 0
    check(D.cuDeviceGetDefaultMemPool(b.addr, 1))
    assert b.value != a.value
    assert D.cuDeviceSetMemPool(0, b.value) == 1          # not local to device 0
    assert D.cuDeviceSetMemPool(0, 0x1234) == 400


def test_small_ones(ctx):
    w, v = out_u64(), out_i32()
    check(D.cuDeviceGetTexture1DLinearMaxWidth(w.addr, 0x20, 4, 0))     # float4
    assert w.value == 268435456 // 16
    assert D.cuDeviceGetTexture1DLinearMaxWidth(w.addr, 0x77, 1, 0) == 1
    check(D.cuDeviceGetExecAffinitySupport(v.addr, 0, 0))
    assert v.value == 0
    check(D.cuFlushGPUDirectRDMAWrites(0, 100))
    assert D.cuFlushGPUDirectRDMAWrites(0, 5) == 1
