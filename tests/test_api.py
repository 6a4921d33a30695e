"""The Pythonic layer: Device, DeviceArray, Module, Kernel, errors."""
from __future__ import annotations

import gc

import numpy as np
import pytest

pytest.importorskip("cuda.bindings.nvrtc", reason="NVRTC (cuda-bindings) is not installed")

import gpudbg
from gpudbg.runtime import mc
from gpudbg.runtime.errors import mcError_t

SOURCE = r"""
__device__ int counter = 5;
__constant__ float scale[4] = {1.0f, 2.0f, 3.0f, 4.0f};

extern "C" __global__ void saxpy(int n, float a, const float *x, float *y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
extern "C" __global__ void fill2d(int *out, int width, int height) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < width && y < height) out[y * width + x] = y * 1000 + x;
}
extern "C" __global__ void bump(int by) { atomicAdd(&counter, by); }
extern "C" __global__ void scaled(float *out) { out[threadIdx.x] = scale[threadIdx.x] * 10.0f; }
extern "C" __global__ void wide(long long a, double b, unsigned char c, long long *out) {
    out[0] = a + (long long)b + c;
}
extern "C" __global__ void read_past(const float *in, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i <= n) out[i < n ? i : 0] = in[i];
}
"""


@pytest.fixture(scope="module")
def module():
    return gpudbg.compile(SOURCE, name="api_test.cu")


@pytest.fixture
def faulty():
    """A module on a context that the test will fault; reset afterwards."""
    m = gpudbg.compile(SOURCE, name="api_fault.cu")
    yield m
    gpudbg.Device(0).reset()


# ------------------------------------------------------------------ package
def test_package_exports():
    assert gpudbg.mc is mc
    assert gpudbg.__version__ == "0.1.0"
    for name in ("compile", "Device", "DeviceArray", "to_device", "Module", "Kernel", "mc",
                 "GPUError", "KernelFaultError", "CompileError", "compile_ptx"):
        assert name in dir(gpudbg)
    with pytest.raises(AttributeError):
        gpudbg.no_such_name


# ------------------------------------------------------------------ Device
def test_device_properties_come_from_the_runtime():
    d = gpudbg.Device(0)
    err, props = mc.mcGetDeviceProperties(0)
    assert d.properties == props
    assert d.name == props.name
    assert d.compute_capability == (props.major, props.minor)
    assert d.attribute(mc.mcDeviceAttribute_t.mcDevAttrWarpSize) == 32
    free, total = d.memory_info()
    assert 0 < free <= total == d.total_memory
    assert gpudbg.Device.count() >= 1
    assert gpudbg.Device.current() == d
    d.synchronize()
    with d as same:
        assert same is d


def test_device_rejects_bad_ordinals():
    with pytest.raises(gpudbg.GPUError) as ei:
        gpudbg.Device(99)
    assert ei.value.code is mcError_t.mcErrorInvalidDevice
    with pytest.raises(TypeError):
        gpudbg.Device("0")


# ------------------------------------------------------------------ DeviceArray
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int8, np.uint16, np.int64, np.complex64])
@pytest.mark.parametrize("shape", [(1,), (37,), (3, 5), (2, 3, 4)])
def test_device_array_round_trip(dtype, shape):
    host = (np.arange(np.prod(shape)) * 3 - 7).astype(dtype).reshape(shape)
    d = gpudbg.to_device(host)
    assert (d.shape, d.dtype, d.nbytes, d.size, d.ndim) == (shape, np.dtype(dtype), host.nbytes,
                                                             host.size, len(shape))
    assert d.ptr != 0 and len(d) == shape[0]
    back = d.to_host()
    assert back.dtype == host.dtype and np.array_equal(back, host)
    out = np.empty_like(host)
    assert d.copy_to_host(out) is out and np.array_equal(out, host)
    assert np.array_equal(np.asarray(d), host)
    d.free()


def test_zeros_device_array_copies_and_views():
    z = gpudbg.zeros((4, 4), np.int32)
    assert not z.to_host().any()
    e = gpudbg.device_array(16, np.int32)
    e.copy_from_host(np.arange(16))
    z.copy_from_device(e)
    assert z.to_host().ravel().tolist() == list(range(16))
    c = z.copy()
    assert np.array_equal(c.to_host(), z.to_host())
    as_bytes = z.view(np.uint8)
    assert as_bytes.shape == (4, 16) and as_bytes.to_host()[0, 4] == 1
    with pytest.raises(ValueError, match="view"):
        as_bytes.free()
    z.fill_bytes(0xFF)
    assert (z.to_host() == -1).all()
    empty = gpudbg.zeros(0)
    assert empty.to_host().shape == (0,)


def test_device_array_errors():
    d = gpudbg.zeros(8, np.float32)
    with pytest.raises(ValueError, match="bytes"):
        d.copy_to_host(np.empty(7, np.float32))
    with pytest.raises(ValueError, match="C-contiguous"):
        d.copy_to_host(np.empty(16, np.float32)[::2])
    with pytest.raises(TypeError):
        d.copy_to_host([0.0] * 8)
    with pytest.raises(ValueError, match="elements"):
        d.copy_from_host(np.zeros(9))
    with pytest.raises(ValueError, match="0..255"):
        d.fill_bytes(256)
    with pytest.raises(ValueError, match="non-negative"):
        gpudbg.device_array((-1,))
    with pytest.raises(TypeError):
        gpudbg.device_array(4, object)
    d.free()
    d.free()   # idempotent
    assert d.freed
    with pytest.raises(ValueError, match="freed"):
        d.to_host()
    with pytest.raises(ValueError, match="freed"):
        d.ptr


def test_context_manager_and_garbage_collection_free_memory():
    gc.collect()           # arrays of earlier tests still in reference cycles: queued now,
    gpudbg.synchronize()   # freed here, not by the allocation below
    before = gpudbg.Device(0).memory_info()[0]
    with gpudbg.zeros(1 << 20, np.uint8) as d:
        assert gpudbg.Device(0).memory_info()[0] < before
    assert d.freed
    assert gpudbg.Device(0).memory_info()[0] == before
    tmp = gpudbg.zeros(1 << 20, np.uint8)
    del tmp
    gc.collect()
    gpudbg.synchronize()   # frees what the collector queued
    assert gpudbg.Device(0).memory_info()[0] == before


# ------------------------------------------------------------------ Module / Kernel
def test_kernel_call_syntax_and_launch(module):
    n = 1000
    x = np.arange(n, dtype=np.float32)
    dx, dy = gpudbg.to_device(x), gpudbg.to_device(np.ones(n, np.float32))
    module.saxpy[(n + 127) // 128, 128](n, 2.0, dx, dy)            # Python float
    assert np.array_equal(dy.to_host(), 2 * x + 1)
    module["saxpy"].launch(((n + 255) // 256,), (256, 1, 1), [np.int32(n), np.float32(1), dx, dy])
    assert np.array_equal(dy.to_host(), 3 * x + 1)
    module.get_function("saxpy")[8, 128, None, 0](n, 1, dx, dy)     # an int for a float param
    assert np.array_equal(dy.to_host(), 4 * x + 1)
    assert module.saxpy is module["saxpy"]


def test_two_dimensional_launch(module):
    w, h = 37, 21
    out = gpudbg.zeros((h, w), np.int32)
    module.fill2d[(3, 2), (16, 16)](out, w, h)
    yy, xx = np.mgrid[0:h, 0:w]
    assert np.array_equal(out.to_host(), yy * 1000 + xx)


def test_argument_types_follow_the_ptx_params(module):
    out = gpudbg.zeros(1, np.int64)
    module.wide[1, 1](np.int64(1 << 40), 2.75, np.uint8(200), out)
    assert out.to_host()[0] == (1 << 40) + 2 + 200
    with pytest.raises(gpudbg.GPUError) as ei:
        module.wide[1, 1](1.5, 2.0, 1, out)           # a float for an integer param
    assert ei.value.code is mcError_t.mcErrorInvalidValue
    assert "argument 0" in str(ei.value)
    with pytest.raises(gpudbg.GPUError, match="takes 4 parameters, 2 given"):
        module.wide[1, 1](1, 2)
    with pytest.raises(TypeError, match="to_device"):
        module.wide[1, 1](1, 2.0, 3, np.zeros(1, np.int64))


def test_launch_configuration_errors(module):
    dx = gpudbg.zeros(4)
    with pytest.raises(TypeError, match="launch configuration"):
        module.saxpy[1](4, 1.0, dx, dx)
    with pytest.raises(TypeError, match="needs a launch configuration"):
        module.saxpy(4, 1.0, dx, dx)
    with pytest.raises(TypeError, match="grid"):
        module.saxpy["1", 4](4, 1.0, dx, dx)
    with pytest.raises(TypeError, match="block"):
        module.saxpy[1, (1, 2, 3, 4)](4, 1.0, dx, dx)
    with pytest.raises(gpudbg.GPUError) as ei:
        module.saxpy[1, 4096](4, 1.0, dx, dx)
    assert ei.value.code is mcError_t.mcErrorInvalidConfiguration


def test_missing_kernels(module):
    with pytest.raises(gpudbg.GPUError) as ei:
        module.get_function("nope")
    assert ei.value.code is mcError_t.mcErrorNotFound
    with pytest.raises(AttributeError, match="no kernel 'nope'"):
        module.nope
    assert not hasattr(module, "_private")


def test_globals(module):
    counter = module.get_global("counter", np.int32)
    assert counter.shape == (1,) and counter.to_host()[0] == 5
    counter.copy_from_host([100])
    module.bump[2, 32](3)
    assert counter.to_host()[0] == 100 + 64 * 3
    out = gpudbg.zeros(4)
    module.scaled[1, 4](out)
    assert out.to_host().tolist() == [10.0, 20.0, 30.0, 40.0]
    with pytest.raises(gpudbg.GPUError) as ei:
        module.get_global("missing")
    assert ei.value.code is mcError_t.mcErrorNotFound


def test_module_load_from_file_and_unload(tmp_path):
    path = tmp_path / "k.ptx"
    path.write_text(gpudbg.compile_ptx(SOURCE))
    with gpudbg.Module.load(path) as m:
        out = gpudbg.zeros((2, 2), np.int32)
        m.fill2d[1, (2, 2)](out, 2, 2)
        assert out.to_host().tolist() == [[0, 1], [1000, 1001]]
    assert m.unloaded
    with pytest.raises(ValueError, match="unloaded"):
        m.get_function("fill2d")
    with pytest.raises(gpudbg.GPUError) as ei:
        gpudbg.Module.load(tmp_path / "missing.ptx")
    assert ei.value.code is mcError_t.mcErrorFileNotFound


def test_streams(module):
    n = 256
    dx, dy = gpudbg.to_device(np.ones(n, np.float32)), gpudbg.zeros(n)
    with gpudbg.Stream() as s:
        module.saxpy[1, n, s](n, 3.0, dx, dy)
        s.synchronize()
        assert s.query()
    assert s.destroyed
    assert (dy.to_host() == 3).all()
    with pytest.raises(ValueError, match="destroyed"):
        module.saxpy.launch(1, n, (n, 1.0, dx, dy), stream=s)


# ------------------------------------------------------------------ faults
def test_out_of_bounds_read_raises_kernel_fault_error_at_sync(faulty):
    n = 1000
    d_in, d_out = gpudbg.to_device(np.zeros(n, np.float32)), gpudbg.zeros(n)
    faulty.read_past[(n + 127) // 128, 128](d_in, d_out, n)   # asynchronous: no error yet
    with pytest.raises(gpudbg.KernelFaultError) as ei:
        d_out.to_host()
    e = ei.value
    assert isinstance(e, gpudbg.GPUError)
    assert e.code is mcError_t.mcErrorIllegalAddress
    r = e.report
    assert r.kernel == "read_past"
    assert r.address == d_in.ptr + 4 * n
    assert "0 bytes past the end of the 4000-byte allocation" in r.message
    assert r.block == (7, 0, 0) and r.thread == (104, 0, 0)
    line = SOURCE.split("\n").index("    if (i <= n) out[i < n ? i : 0] = in[i];") + 1
    assert r.source_file == "api_fault.cu" and r.source_line == line
    assert "0 bytes past the end" in str(e)
    # the error is sticky, as in CUDA: every later call reports it
    with pytest.raises(gpudbg.KernelFaultError):
        gpudbg.zeros(4)
    gpudbg.Device(0).reset()
    assert d_in.freed
    with pytest.raises(ValueError, match="reset"):
        d_in.to_host()
    assert gpudbg.to_device(np.arange(3)).to_host().tolist() == [0, 1, 2]


def test_gpu_error_formats_code_and_message():
    e = gpudbg.GPUError(mcError_t.mcErrorInvalidValue, "bad thing")
    assert e.code is mcError_t.mcErrorInvalidValue and e.message == "bad thing"
    assert str(e) == "mcErrorInvalidValue: bad thing"
    assert gpudbg.GPUError(12345).code == 12345


def test_compiled_modules_name_their_ptx_in_fault_reports():
    """Regression: every module loaded through mcModuleLoadData was named
    <image>, so reports could not say which PTX file a fault is in."""
    mod = gpudbg.compile(r'''
extern "C" __global__ void past(const int* a, int* out) { out[0] = a[1 << 20]; }''', name="named.cu")
    a = gpudbg.zeros(4, np.int32)
    out = gpudbg.zeros(1, np.int32)
    mod.past[1, 1](a, out)
    with pytest.raises(gpudbg.KernelFaultError) as e:
        gpudbg.synchronize()
    assert e.value.report.ptx_file == "named.ptx"
    assert e.value.report.source_file == "named.cu"
    gpudbg.Device().reset()
