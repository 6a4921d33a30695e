"""The loader gives each kernel the register count ptxas would (the
allocator of gpudbg.ptx.regalloc), not the PTX's declared virtual
registers: a register-tiled SGEMM declares 743 words where ptxas allocates
64 (issue 11's tiled matmul: 129 against 32), and occupancy must follow
the allocation."""
from __future__ import annotations

from pathlib import Path

from gpudbg.ptx.corpus import read_ptx, read_register_table
from gpudbg.ptx.parser import parse
from gpudbg.ptx.regalloc import register_count
from gpudbg.ptx.types import PTX_TYPES
from gpudbg.sim.device_model import occupancy
from gpudbg.sim.gpu import SimGPU
from gpudbg.sim.loader import load_module

CORPUS = Path(__file__).resolve().parent.parent / "data" / "ptx_corpus"
MATMUL = "plain/own__register_heavy.ptx.xz"       # sgemm_4x4 and an n-body step


def test_num_regs_is_the_allocators_count_and_close_to_ptxas():
    module = parse(read_ptx(CORPUS / MATMUL), MATMUL)
    gpu = SimGPU()
    loaded = load_module(gpu, module)
    ptxas = read_register_table(CORPUS / "ptxas_sm80.tsv")
    try:
        for name, k in loaded.functions.items():
            declared = sum((PTX_TYPES[d.type].bits + 31) // 32
                           for d in module.functions[name].registers.values() if d.type != "pred")
            real = ptxas[(MATMUL, name)]
            assert k.num_regs == register_count(module, name)
            assert declared > 3 * real                        # what the loader used to report
            assert abs(k.num_regs - real) <= 0.25 * real
            blocks = occupancy(gpu.model, 256, k.num_regs, k.static_shared)
            assert 1 < blocks <= occupancy(gpu.model, 256, real, k.static_shared)
            assert 256 <= k.max_threads_per_block <= 1024      # what the registers allow
    finally:
        loaded.unload()
