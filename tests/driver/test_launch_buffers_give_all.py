"""driver/launch_buffers.py give_all: many retired blocks given back under
one hold of the GPU's lock keep exactly the accounting of one give each
(kept blocks are free memory, the excess over KEEP is freed, a block freed
already is skipped)."""
from gpudbg.driver import launch_buffers
from gpudbg.driver.engine import get_engine
from gpudbg.runtime import mc

EMPTY = ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry empty()\n{\n ret;\n}\n"


def test_give_all_counts_as_one_give_each(real):
    assert mc.mcModuleLoadData(EMPTY)[0] == mc.mcError_t.mcSuccess
    ctx = get_engine().current_context()
    buffers = launch_buffers.for_context(ctx)
    memory = ctx.gpu.memory
    before = memory.used
    blocks = [buffers.take(128, "test") for _ in range(launch_buffers.KEEP + 5)]
    assert memory.used == before + 128 * len(blocks)
    ctx.gpu.free_internal(blocks[0])           # one freed meanwhile: skipped
    buffers.give_all(blocks)
    assert len(buffers._free[128]) == launch_buffers.KEEP
    assert sum(b.freed for b in blocks) == 1 + 4
    assert memory.used == before
    again = buffers.take(128, "again")         # a kept block, counted as used again
    assert again in blocks and memory.used == before + 128
