"""Seed 002 §2.6: occupancy answers from the device model and the kernel's
real footprint, and agreement with how the simulator places blocks."""
import pytest

from gpudbg import compile_ptx
from gpudbg.driver.engine import get_engine, reset_engine
from gpudbg.runtime import mc
from gpudbg.runtime.errors import mcError_t as E
from gpudbg.sim.device_model import occupancy

S = E.mcSuccess

SRC = r'''
extern "C" __global__ void light(float *out) { out[threadIdx.x] = 1.0f; }
extern "C" __global__ void tiled(float *out) {
    __shared__ float tile[5120];                        // 20 KiB static
    tile[threadIdx.x] = threadIdx.x;
    __syncthreads();
    out[threadIdx.x] = tile[(threadIdx.x + 1) % blockDim.x];
}
extern "C" __global__ void dyn(float *out) {
    extern __shared__ float buf[];
    buf[threadIdx.x] = 2.0f;
    __syncthreads();
    out[threadIdx.x] = buf[threadIdx.x];
}
'''


@pytest.fixture(scope="module")
def ptx():
    return compile_ptx(SRC)


@pytest.fixture
def fns(ptx):
    reset_engine(num_devices=1)
    mc.mcGetLastError()
    _, m = mc.mcModuleLoadData(ptx)
    yield {n: mc.mcModuleGetFunction(m, n)[1] for n in ("light", "tiled", "dyn")}
    reset_engine()
    mc.mcGetLastError()


@pytest.mark.parametrize("name,block,dyn", [("light", 32, 0), ("light", 256, 0), ("light", 1024, 0),
                                            ("tiled", 128, 0), ("tiled", 512, 0),
                                            ("dyn", 64, 16 * 1024), ("dyn", 256, 40 * 1024)])
def test_occupancy_equals_simulator_placement(fns, name, block, dyn):
    f = fns[name]
    _, out = mc.mcMalloc(1024 * 4)
    err, n = mc.mcOccupancyMaxActiveBlocksPerMultiprocessor(f, block, dyn)
    assert err == S and n >= 1
    assert mc.mcLaunchKernel(f, 1, block, [out], dyn, None) == (S,)
    assert mc.mcDeviceSynchronize() == (S,)
    assert mc.last_launch_stats().blocks_per_sm == n
    # and it is the CUDA occupancy rule over the translated kernel's footprint
    k = f.kernel
    assert n == occupancy(get_engine().current_device().model, block, k.num_regs, k.static_shared + dyn)
    assert mc.mcModuleOccupancyMaxActiveBlocksPerMultiprocessor(f, block, dyn) == (S, n)
    assert mc.mcOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(f, block, dyn, 1) == (S, n)


def test_shared_memory_limits_occupancy(fns):
    light, tiled = fns["light"], fns["tiled"]
    _, a = mc.mcOccupancyMaxActiveBlocksPerMultiprocessor(light, 128, 0)
    _, b = mc.mcOccupancyMaxActiveBlocksPerMultiprocessor(tiled, 128, 0)
    m = get_engine().current_device().model
    assert b == m.shared_per_sm // (20 * 1024 + m.reserved_shared_per_block) < a
    # a configuration no launch accepts has occupancy 0
    assert mc.mcOccupancyMaxActiveBlocksPerMultiprocessor(light, 2048, 0) == (S, 0)
    assert mc.mcOccupancyMaxActiveBlocksPerMultiprocessor(fns["dyn"], 32, 100 * 1024) == (S, 0)


def test_occupancy_errors(fns):
    f = fns["light"]
    assert mc.mcOccupancyMaxActiveBlocksPerMultiprocessor(f, 0, 0) == (E.mcErrorInvalidValue, None)
    assert mc.mcOccupancyMaxActiveBlocksPerMultiprocessor(f, 32, -1) == (E.mcErrorInvalidValue, None)
    assert mc.mcOccupancyMaxActiveBlocksPerMultiprocessor("light", 32, 0) == \
        (E.mcErrorInvalidDeviceFunction, None)
    assert mc.mcModuleOccupancyMaxActiveBlocksPerMultiprocessor(None, 32, 0) == \
        (E.mcErrorInvalidDeviceFunction, None)
    assert mc.mcOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(f, 32, 0, 2) == (E.mcErrorInvalidValue, None)
    assert mc.mcOccupancyMaxPotentialBlockSize(f, 0, -1) == (E.mcErrorInvalidValue, None, None)
    assert mc.mcOccupancyMaxPotentialBlockSizeWithFlags(f, 0, 0, 8) == (E.mcErrorInvalidValue, None, None)
    assert mc.mcOccupancyMaxPotentialBlockSize(f, lambda b: -1, 0) == (E.mcErrorInvalidValue, None, None)
    assert mc.mcOccupancyAvailableDynamicSMemPerBlock(f, 0, 32) == (E.mcErrorInvalidValue, None)
    assert mc.mcOccupancyAvailableDynamicSMemPerBlock(object(), 1, 32) == (E.mcErrorInvalidDeviceFunction, None)


def test_max_potential_block_size(fns):
    m = get_engine().current_device().model
    f = fns["light"]
    err, grid, block = mc.mcOccupancyMaxPotentialBlockSize(f, 0, 0)
    assert err == S
    _, per_sm = mc.mcOccupancyMaxActiveBlocksPerMultiprocessor(f, block, 0)
    assert grid == per_sm * m.sm_count
    best = max(b * mc.mcOccupancyMaxActiveBlocksPerMultiprocessor(f, b, 0)[1] for b in range(32, 1025, 32))
    assert block * per_sm == best
    err, grid, block = mc.mcOccupancyMaxPotentialBlockSize(f, 0, 96)
    assert err == S and block <= 96
    # a block-size dependent dynamic shared memory size: 200 bytes per thread
    g = fns["dyn"]
    err, grid, block = mc.mcOccupancyMaxPotentialBlockSizeWithFlags(g, lambda b: 200 * b, 0, 0)
    assert err == S and 200 * block <= 48 * 1024
    assert grid == mc.mcOccupancyMaxActiveBlocksPerMultiprocessor(g, block, 200 * block)[1] * m.sm_count
    best = max(b * mc.mcOccupancyMaxActiveBlocksPerMultiprocessor(g, b, 200 * b)[1] for b in range(32, 1025, 32))
    assert block * mc.mcOccupancyMaxActiveBlocksPerMultiprocessor(g, block, 200 * block)[1] == best


def test_available_dynamic_shared(fns):
    g = fns["dyn"]
    for blocks in (1, 2, 4, 7):
        err, dyn = mc.mcOccupancyAvailableDynamicSMemPerBlock(g, blocks, 128)
        assert err == S and dyn > 0
        assert mc.mcOccupancyMaxActiveBlocksPerMultiprocessor(g, 128, dyn)[1] >= blocks
        if dyn < 48 * 1024:       # one allocation unit more and they no longer fit
            assert mc.mcOccupancyMaxActiveBlocksPerMultiprocessor(g, 128, dyn + 128)[1] < blocks
    assert mc.mcOccupancyAvailableDynamicSMemPerBlock(g, 1, 128) == (S, 48 * 1024)
    assert mc.mcOccupancyAvailableDynamicSMemPerBlock(g, 33, 32) == (S, 0)   # > 32 blocks per SM
