"""What makes a cold compile cheap changes no answer: the planner's light
trial emission (probe.Prober) decides exactly what a whole trial segment
decides, access sites past the first OWN_SITE_CACHES sharing a cache
give the interpreter's results and reports, and a module large enough
for the quick LLVM pipeline computes what the interpreter computes."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from engines_pair import Out, run_both
from gpudbg.ptx import parse
from gpudbg.sim.gpu import SimGPU
from gpudbg.sim.loader import load_module
from gpudbg.sim.native import jit
from gpudbg.sim.native.emit import OWN_SITE_CACHES, probe
from gpudbg.sim.native.probe import Prober
from gpudbg.sim.native.segments import SegmentPlan

KERNELS = Path(__file__).resolve().parents[1] / "kernels"
HEAD = ".version 8.0\n.target sm_80\n.address_size 64\n"


def _summary(found):
    return None if found is None else (found[0].effect, sorted(found[1]), sorted(found[2]))


@pytest.mark.parametrize("path", sorted(KERNELS.glob("*.ptx")), ids=lambda p: p.name)
def test_the_prober_decides_what_a_whole_trial_segment_decides(path):
    lm = load_module(SimGPU(), parse(path.read_text(), path.name))
    programs = {id(f.program): f.program for f in lm.functions.values()}
    lowered = 0
    for program in programs.values():
        prober = Prober(program)
        for c in program.code:
            if c.built.run is None:
                continue
            want = _summary(probe(program, c, SegmentPlan.empty()))
            assert _summary(prober(c)) == want, f"{path.name} pc {c.pc}: {c.inst.text}"
            lowered += want is not None
    assert lowered > 0


def _many_sites(loads: int) -> str:
    """`loads` global loads alternating between x and y at growing
    offsets, summed, stored: one segment with that many access sites."""
    body = ["ld.param.u64 %rd1, [x];", "ld.param.u64 %rd2, [y];", "ld.param.u64 %rd3, [out];",
            "mov.u32 %r1, %tid.x;", "mul.wide.u32 %rd4, %r1, 4;",
            "add.s64 %rd5, %rd1, %rd4;", "add.s64 %rd6, %rd2, %rd4;", "mov.f32 %f0, 0f00000000;"]
    for j in range(loads):
        base = "%rd5" if j % 2 == 0 else "%rd6"
        body.append(f"ld.global.f32 %f{j + 1}, [{base}+{4 * j}];")
        body.append(f"add.f32 %f0, %f0, %f{j + 1};")
    body += ["add.s64 %rd7, %rd3, %rd4;", "st.global.f32 [%rd7], %f0;", "ret;"]
    return HEAD + (".visible .entry many(.param .u64 x, .param .u64 y, .param .u64 out)\n{\n"
                   f".reg .b32 %r<2>; .reg .f32 %f<{loads + 1}>; .reg .b64 %rd<8>;\n"
                   + "\n".join(body) + "\n}\n")


@pytest.mark.parametrize("short", [False, True], ids=["in bounds", "y too short: a fault"])
def test_access_sites_sharing_a_cache_agree_with_the_interpreter(short):
    loads = 3 * OWN_SITE_CACHES
    rng = np.random.default_rng(5)
    x = rng.random(64 + 4 * loads, dtype=np.float32)
    y = rng.random(64 + (loads if not short else loads // 2), dtype=np.float32)
    ref, got = run_both(_many_sites(loads), "many", (1,), (64,), [x, y, Out(64)], expect_fault=short)
    if short:
        assert got.fault is not None
    else:
        t = np.arange(64)
        want = sum((x if j % 2 == 0 else y)[t + j].astype(np.float64) for j in range(loads))
        assert np.allclose(got[2], want, rtol=1e-5)


def test_a_module_past_the_quick_threshold_computes_what_the_interpreter_computes(monkeypatch):
    seen = []
    compile_object = jit.compile_object

    def spy(ir_text):
        seen.append(jit.pipeline_for(ir_text))
        return compile_object(ir_text)
    monkeypatch.setattr(jit, "compile_object", spy)
    monkeypatch.setenv("GPUDBG_NATIVE_CACHE", "off")
    loads = 200
    rng = np.random.default_rng(6)
    x = rng.random(64 + 4 * loads, dtype=np.float32)
    y = rng.random(64 + 4 * loads, dtype=np.float32)
    run_both(_many_sites(loads), "many", (2,), (32,), [x, y, Out(64)])
    assert seen == ["quick"]
