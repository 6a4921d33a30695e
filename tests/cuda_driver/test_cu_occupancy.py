import ctypes

from cu_kernels import function, load_module
from cudrv_helpers import check, out_i32, out_u64
from gpudbg.cabi import handles
from gpudbg.cuda_driver import launch as L
from gpudbg.cuda_driver import module as MOD
from gpudbg.cuda_driver import occupancy as OCC
from gpudbg.runtime import mc

SHARED_PTX = """
.version 8.0
.target sm_80
.address_size 64
.visible .entry big(.param .u64 p)
.maxntid 256, 1, 1
{
    .shared .align 4 .b8 buf[20000];
    .reg .b64 %rd<3>;
    .reg .b32 %r<2>;
    mov.u64 %rd1, buf;
    ld.param.u64 %rd2, [p];
    ld.shared.u32 %r1, [%rd1];
    st.global.u32 [%rd2], %r1;
    ret;
}
"""


def kernels():
    return [function(load_module(), "saxpy"), function(load_module(SHARED_PTX), "big")]


def test_matches_the_runtime(ctx):
    for f in kernels():
        engine_f = handles.lookup("CUfunction", f)
        for block, smem in [(32, 0), (128, 0), (256, 1024), (256, 30000), (512, 0), (1024, 0)]:
            n = out_i32()
            check(OCC.cuOccupancyMaxActiveBlocksPerMultiprocessor(n.addr, f, block, smem))
            err, expect = mc.mcOccupancyMaxActiveBlocksPerMultiprocessor(engine_f, block, smem)
            assert err == 0 and n.value == expect, (f, block, smem)
            check(OCC.cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(n.addr, f, block, smem, 1))
            assert n.value == expect
        grid, block = out_i32(), out_i32()
        check(OCC.cuOccupancyMaxPotentialBlockSize(grid.addr, block.addr, f, 0, 4096, 0))
        err, g, b = mc.mcOccupancyMaxPotentialBlockSize(engine_f, 4096, 0)
        assert (grid.value, block.value) == (g, b) and b > 0
        check(OCC.cuOccupancyMaxPotentialBlockSizeWithFlags(grid.addr, block.addr, f, 0, 0, 96, 0))
        assert block.value <= 96
        dyn = out_u64()
        check(OCC.cuOccupancyAvailableDynamicSMemPerBlock(dyn.addr, f, 2, 128))
        err, expect = mc.mcOccupancyAvailableDynamicSMemPerBlock(engine_f, 2, 128)
        assert dyn.value == expect
    # the big kernel is limited by its shared memory and its .maxntid
    big = kernels()[1]
    n = out_i32()
    check(OCC.cuOccupancyMaxActiveBlocksPerMultiprocessor(n.addr, big, 512, 0))
    assert n.value == 0


def test_callback_for_dynamic_shared_memory(ctx):
    f = kernels()[0]
    asked = []

    @ctypes.CFUNCTYPE(ctypes.c_size_t, ctypes.c_int)
    def smem_of(block):
        asked.append(block)
        return block * 64

    grid, block = out_i32(), out_i32()
    check(OCC.cuOccupancyMaxPotentialBlockSize(grid.addr, block.addr, f, ctypes.cast(smem_of, ctypes.c_void_p).value,
                                               0, 0))
    err, g, b = mc.mcOccupancyMaxPotentialBlockSize(handles.lookup("CUfunction", f), lambda b: b * 64, 0)
    assert (grid.value, block.value) == (g, b)
    assert asked and all(a % 32 == 0 for a in asked)


def test_clusters_and_errors(ctx):
    f = kernels()[0]
    cfg = L.CUlaunchConfig(16, 1, 1, 128, 1, 1, 0, None, None, 0)
    size, active, n = out_i32(), out_i32(), out_i32()
    check(OCC.cuOccupancyMaxPotentialClusterSize(size.addr, f, ctypes.addressof(cfg)))
    check(OCC.cuOccupancyMaxActiveClusters(active.addr, f, ctypes.addressof(cfg)))
    check(OCC.cuOccupancyMaxActiveBlocksPerMultiprocessor(n.addr, f, 128, 0))
    from gpudbg.driver.engine import get_engine
    # the portable maximum fits a GPC; without a cluster shape each block is a cluster
    assert size.value == 8 and active.value == n.value * get_engine().device(0).model.sm_count
    assert OCC.cuOccupancyMaxActiveBlocksPerMultiprocessor(0, f, 128, 0) == 1
    assert OCC.cuOccupancyMaxActiveBlocksPerMultiprocessor(n.addr, 0, 128, 0) == 400
    assert OCC.cuOccupancyMaxActiveBlocksPerMultiprocessor(n.addr, f, 0, 0) == 1
    assert OCC.cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(n.addr, f, 128, 0, 4) == 1
    assert OCC.cuOccupancyMaxActiveClusters(active.addr, f, 0) == 1
    mod = out_u64()
    check(MOD.cuFuncGetModule(mod.addr, f))
    check(MOD.cuModuleUnload(mod.value))
    assert OCC.cuOccupancyMaxActiveBlocksPerMultiprocessor(n.addr, f, 128, 0) == 400
