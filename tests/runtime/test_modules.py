"""Seed 002 §2.12 modules: loading (data, file, pointer, Ex with JIT
options), handles, function attributes, symbols."""
import numpy as np
import pytest

from gpudbg import compile_ptx
from gpudbg.driver.engine import get_engine
from gpudbg.runtime import mc
from gpudbg.runtime.errors import mcError_t as E

S = E.mcSuccess
O = mc.mcJitOption
A = mc.mcFunction_attribute

SRC = r'''
__constant__ int table[8] = {1, 2, 3, 4, 5, 6, 7, 8};
__device__ float bias = 0.5f;
extern "C" __global__ void __launch_bounds__(256) bounded(float *x) { x[threadIdx.x] += bias; }
extern "C" __global__ void heavy(float *x, int n) {
    __shared__ float tile[128];
    float a = x[threadIdx.x], b = a * 2.f, c = b * a, d = c + b, e = d * c;
    tile[threadIdx.x % 128] = a + b + c + d + e + table[threadIdx.x % 8];
    __syncthreads();
    x[threadIdx.x] = tile[(threadIdx.x + 1) % 128] * n;
}
'''


@pytest.fixture(scope="module")
def ptx():
    return compile_ptx(SRC, name="mods.cu")


def load(ptx, *opts):
    vals = [v for _, v in opts]
    err, m = mc.mcModuleLoadDataEx(ptx, len(opts), [o for o, _ in opts], vals)
    return err, m, vals


def test_load_data_file_and_pointer(real, ptx, tmp_path):
    err, m = mc.mcModuleLoadData(ptx)
    assert err == S
    err, m2 = mc.mcModuleLoadData(ptx.encode() + b"\0garbage")
    assert err == S
    path = tmp_path / "mods.ptx"
    path.write_text(ptx)
    err, m3 = mc.mcModuleLoad(str(path))
    assert err == S and m3.name == str(path)
    err, host = mc.mcMallocHost(len(ptx) + 1)
    raw = np.frombuffer(ptx.encode() + b"\0", np.uint8)
    assert mc.mcMemcpy(host, raw, raw.size, mc.mcMemcpyKind.mcMemcpyHostToHost) == (S,)
    err, m4 = mc.mcModuleLoadData(host)
    assert err == S and sorted(m4.functions) == ["bounded", "heavy"]
    assert mc.mcModuleLoadData(12) == (E.mcErrorInvalidValue, None)
    assert mc.mcModuleLoadData(ptx.replace(".version", ".versio")) == (E.mcErrorInvalidImage, None)
    assert mc.mcModuleLoadData(ptx.replace("ret;", "bogus.op;", 1)) == (E.mcErrorInvalidKernelFile, None)
    assert mc.mcModuleLoad(str(tmp_path / "missing.ptx")) == (E.mcErrorFileNotFound, None)
    assert mc.mcModuleLoad(None) == (E.mcErrorInvalidValue, None)


def test_handles_globals_and_unload(real, ptx):
    err, m = mc.mcModuleLoadData(ptx)
    err, f = mc.mcModuleGetFunction(m, "heavy")
    assert err == S and f.name == "heavy"
    assert mc.mcModuleGetFunction(m, "nope") == (E.mcErrorNotFound, None)
    err, ptr, size = mc.mcModuleGetGlobal(m, "table")
    assert err == S and size == 32
    host = np.zeros(8, np.int32)
    assert mc.mcMemcpy(host, ptr, 32, mc.mcMemcpyKind.mcMemcpyDeviceToHost) == (S,)
    assert host.tolist() == [1, 2, 3, 4, 5, 6, 7, 8]
    assert mc.mcModuleGetGlobal(m, "missing") == (E.mcErrorNotFound, None, None)
    assert mc.mcFuncGetModule(f) == (S, m)
    assert mc.mcFuncGetModule(None) == (E.mcErrorInvalidValue, None)
    assert mc.mcFuncGetModule("heavy") == (E.mcErrorInvalidResourceHandle, None)
    assert mc.mcModuleUnload(m) == (S,)
    assert mc.mcModuleUnload(m) == (E.mcErrorNotFound,)
    assert mc.mcFuncGetModule(f) == (E.mcErrorInvalidResourceHandle, None)
    assert mc.mcModuleGetGlobal(m, "table") == (E.mcErrorInvalidValue, None, None)


def test_function_attributes(real, ptx):
    err, m = mc.mcModuleLoadData(ptx)
    f = m.functions["heavy"]
    b = m.functions["bounded"]
    assert mc.mcFuncGetAttribute(A.MC_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, b) == (S, 256)
    assert mc.mcFuncGetAttribute(A.MC_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f) == (S, 512)
    assert mc.mcFuncGetAttribute(A.MC_FUNC_ATTRIBUTE_NUM_REGS, f) == (S, f.kernel.num_regs)
    assert mc.mcFuncGetAttribute(A.MC_FUNC_ATTRIBUTE_BINARY_VERSION, f) == (S, 90)
    assert mc.mcFuncGetAttribute(A.MC_FUNC_ATTRIBUTE_CACHE_MODE_CA, f) == (S, 0)
    assert mc.mcFuncGetAttribute(A.MC_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, f) == (S, 48 * 1024 - 512)
    assert mc.mcFuncGetAttribute(A.MC_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH, f) == (S, 0)
    assert mc.mcFuncGetAttribute(99, f) == (E.mcErrorInvalidValue, None)
    assert mc.mcFuncGetAttribute(A.MC_FUNC_ATTRIBUTE_NUM_REGS, "heavy") == (E.mcErrorInvalidDeviceFunction, None)
    mc.mcModuleUnload(m)
    assert mc.mcFuncGetAttribute(A.MC_FUNC_ATTRIBUTE_NUM_REGS, f) == (E.mcErrorInvalidDeviceFunction, None)


def test_get_func_by_symbol(real, ptx):
    err, m = mc.mcModuleLoadData(ptx)
    f = m.functions["heavy"]
    assert mc.mcGetFuncBySymbol(f) == (S, f)
    assert mc.mcGetFuncBySymbol("heavy") == (S, f)
    assert mc.mcGetFuncBySymbol(f.kernel.code_address) == (S, f)
    assert mc.mcGetFuncBySymbol("nope") == (E.mcErrorInvalidValue, None)
    assert mc.mcGetFuncBySymbol(3.0) == (E.mcErrorInvalidValue, None)
    mc.mcModuleLoadData(ptx)
    assert mc.mcGetFuncBySymbol("heavy") == (E.mcErrorInvalidValue, None)   # two modules define it
    assert "2 loaded modules" in mc.last_error_message()


def test_jit_logs_wall_time_and_ignored_options(real, ptx):
    info, error = bytearray(2048), np.zeros(256, np.uint8)
    err, m, vals = load(ptx, (O.mcJitInfoLogBuffer, info), (O.mcJitInfoLogBufferSizeBytes, 2048),
                        (O.mcJitErrorLogBuffer, error), (O.mcJitErrorLogBufferSizeBytes, 256),
                        (O.mcJitWallTime, 0.0), (O.mcJitLogVerbose, 1), (O.mcJitOptimizationLevel, 3),
                        (O.mcJitGenerateLineInfo, 1), (O.mcJitTargetFromContext, None))
    assert err == S
    text = bytes(info[:vals[1]]).rstrip(b"\0").decode()
    assert "2 kernel(s)" in text and "Function properties for heavy" in text
    assert "CU_JIT_OPTIMIZATION_LEVEL (7) ignored" in text and "line info recorded" in text
    assert vals[1] == len(text) + 1 and vals[3] == 1 and error[0] == 0
    assert isinstance(vals[4], float) and vals[4] > 0
    bad = ptx.replace("ret;", "bogus.op;", 1)
    err, m, vals = load(bad, (O.mcJitErrorLogBuffer, error), (O.mcJitErrorLogBufferSizeBytes, 16))
    assert err == E.mcErrorInvalidKernelFile and vals[1] == 16
    assert bytes(error[:15]).decode().startswith("error: ") and error[15] == 0


def test_jit_register_and_thread_options(real, ptx):
    err, m, _ = load(ptx)
    natural = m.functions["heavy"].kernel.num_regs
    err, m, _ = load(ptx, (O.mcJitMaxRegisters, 12))
    assert err == S and mc.mcFuncGetAttribute(A.MC_FUNC_ATTRIBUTE_NUM_REGS, m.functions["heavy"]) == (S, 12)
    assert natural > 12
    err, m, vals = load(ptx, (O.mcJitThreadsPerBlock, 1024), (O.mcJitMaxRegisters, 255))
    assert err == S and vals[0] == 1024 and m.functions["heavy"].kernel.num_regs <= 64
    err, m, _ = load(ptx, (O.mcJitMaxThreadsPerBlock, 128))
    f = m.functions["heavy"]
    assert mc.mcFuncGetAttribute(A.MC_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, f) == (S, 128)
    err, d = mc.mcMalloc(4 * 256)
    assert mc.mcLaunchKernel(f, 1, 256, [d, 1]) == (E.mcErrorInvalidConfiguration,)
    assert mc.mcLaunchKernel(f, 1, 128, [d, 1]) == (S,)
    err, m, _ = load(ptx, (O.mcJitCacheMode, mc.mcJitCacheMode.mcJitCacheOptionCa))
    assert mc.mcFuncGetAttribute(A.MC_FUNC_CACHE_MODE_CA, m.functions["heavy"]) == (S, 1)


def test_jit_targets(real, ptx):
    assert load(ptx, (O.mcJitTarget, 90))[0] == S
    assert load(ptx, (O.mcJitTarget, 100))[0] == E.mcErrorNoKernelImageForDevice
    assert load(ptx.replace(".target sm_80", ".target sm_86"), (O.mcJitTarget, 80))[0] \
        == E.mcErrorInvalidKernelFile


@pytest.mark.parametrize("opts", [
    [(O.mcJitMaxRegisters, 0)], [(O.mcJitMaxRegisters, 256)], [(99, 1)], [(O.mcJitLogVerbose, 2)],
    [(O.mcJitOptimizationLevel, 5)], [(O.mcJitTarget, 81)], [(O.mcJitCacheMode, 3)],
    [(O.mcJitFallbackStrategy, 2)], [(O.mcJitInfoLogBuffer, b"readonly")], [(O.mcJitInfoLogBuffer, 17)],
    [(O.mcJitInfoLogBuffer, bytearray(4)), (O.mcJitInfoLogBufferSizeBytes, 8)],
    [(O.mcJitMaxRegisters, 32), (O.mcJitMaxRegisters, 40)], [(O.mcJitThreadsPerBlock, "64")],
])
def test_jit_bad_option_values(real, ptx, opts):
    assert load(ptx, *opts)[0] == E.mcErrorInvalidValue


def test_jit_option_list_lengths(real, ptx):
    assert mc.mcModuleLoadDataEx(ptx, 2, [O.mcJitMaxRegisters], [32]) == (E.mcErrorInvalidValue, None)
    assert mc.mcModuleLoadDataEx(ptx, -1, [], []) == (E.mcErrorInvalidValue, None)
    assert mc.mcModuleLoadDataEx(ptx, 0, None, None)[0] == S


def test_loads_are_tracked_by_context(real, ptx):
    err, m = mc.mcModuleLoadData(ptx)
    assert m in get_engine().current_context().modules


def test_attribute_struct_and_single_queries_agree(real, ptx):
    """Regression: mcFuncGetAttributes reported cacheModeCA 0 and the PTX
    ISA version (95) as ptxVersion, while the single-attribute query read
    the module's JIT cache mode; CUDA defines ptxVersion as the virtual
    architecture (80 for compute_80)."""
    err, m, _ = load(ptx, (O.mcJitCacheMode, mc.mcJitCacheMode.mcJitCacheOptionCa))
    assert err == S
    f = m.functions["heavy"]
    err, attrs = mc.mcFuncGetAttributes(f)
    assert err == S
    assert attrs.cacheModeCA == 1
    assert mc.mcFuncGetAttribute(A.MC_FUNC_ATTRIBUTE_CACHE_MODE_CA, f) == (S, 1)
    assert attrs.ptxVersion == 80
    assert mc.mcFuncGetAttribute(A.MC_FUNC_ATTRIBUTE_PTX_VERSION, f) == (S, 80)
    mc.mcModuleUnload(m)


def test_load_data_names_the_image(real, ptx):
    """gpudbg extension: mcModuleLoadData(image, name=...) names the PTX in
    reports and errors (it was always <image>)."""
    err, m = mc.mcModuleLoadData(ptx, name="mods.ptx")
    assert err == S
    assert m.functions["heavy"].kernel.program.module.filename == "mods.ptx"
    mc.mcModuleUnload(m)
    assert mc.mcModuleLoadData(ptx, name="") == (E.mcErrorInvalidValue, None)
    err, _ = mc.mcModuleLoadData(".version 8.0\n.target sm_80\nbogus;", name="bad.ptx")
    assert err != S
    assert "bad.ptx:" in mc.last_error_message()
