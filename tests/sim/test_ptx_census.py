"""The PTX census (sim/census.py, `gpudbg ptx-census`): what the loader
accepts, derived from the op registry, and the rejected instructions of a
file with the loader's reasons."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpudbg.cli.main import main
from gpudbg.sim import census
from gpudbg.sim.ops import base

HERE = Path(__file__).parent
HEAD = ".version 8.3\n.target sm_90\n.address_size 64\n"


def _entry(opcode: str) -> census.OpcodeForms:
    return next(e for e in census.accepted() if e.opcode == opcode)


def test_every_registered_opcode_is_listed():
    assert [e.opcode for e in census.accepted()] == sorted(base.registry())


def test_modifiers_come_from_the_builders():
    cp = _entry("cp")
    assert {"async", "bulk", "commit_group", "wait_group", "wait_all", "noinc", "mbarrier::complete_tx::bytes",
            "bulk_group", "read"} <= set(cp.modifiers)
    mb = _entry("mbarrier")
    assert {"init", "inval", "arrive", "arrive_drop", "expect_tx", "complete_tx", "test_wait", "try_wait",
            "pending_count", "parity", "noComplete", "shared::cluster"} <= set(mb.modifiers)
    assert "fence.proxy.async.shared::cta" in _entry("fence").forms
    assert _entry("setmaxnreg").forms == ["setmaxnreg.dec.sync.aligned.u32", "setmaxnreg.inc.sync.aligned.u32"]
    assert _entry("prefetchu").forms == ["prefetchu.L1"]
    assert _entry("add").typed and "sat" in _entry("add").modifiers       # Mods.rounding() and take("sat")
    assert {"NaN", "abs", "add"} <= set(_entry("redux").modifiers)


def test_a_new_builder_is_in_the_census_by_itself():
    extra = ("zeta", "eta")

    @base.op("zzcensus")
    def build_zz(inst, tc):
        m = base.Mods(inst)
        m.take("alpha", "beta")
        m.take(*extra)
        if "gamma" in inst.modifiers:
            pass
        return base.Built(lambda X, idx: None)
    try:
        # the builder lives in this test module: the census reads its source
        e = _entry("zzcensus")
        assert e.builder.endswith("build_zz")
        assert {"alpha", "beta", "gamma"} <= set(e.modifiers)
    finally:
        del base.registry()["zzcensus"]


def test_file_check_reports_each_rejected_instruction(tmp_path):
    ptx = tmp_path / "k.ptx"
    ptx.write_text(HEAD + """.visible .entry k(.param .u64 p)
{
    .reg .b32 %r<4>;
    .reg .pred %p<2>;
    mov.u32 %r1, WARP_SZ;
    foo.u32 %r1, %r2;
    setmaxnreg.inc.sync.aligned.u32 20;
    @%p1 elect.sync %r2|%p1, -1;
    redux.sync.add.f32 %r3, %r1, -1;
    ret;
}
""")
    c = census.check_file(str(ptx))
    assert (c.instructions, c.accepted) == (6, 3)
    got = [(r.line, r.reason) for r in c.rejected]
    assert got[0] == (9, "unsupported instruction 'foo'")
    assert got[1][0] == 10 and "multiple of 8 in 24..256" in got[1][1]
    assert got[2][0] == 12 and "redux.sync.add takes .u32 or .s32, not .f32" in got[2][1]


def test_unparsable_file_is_reported():
    c = census.check_text(HEAD + ".visible .entry k( {", "bad.ptx")
    assert c.error is not None and c.instructions == 0


@pytest.mark.parametrize("name", ["warp.O.ptx", "warp.G.ptx", "control.G.ptx", "async_copy.stdc++17.ptx",
                                  "async_copy.archcompute90-stdc++17.ptx"])
def test_checked_in_kernels_are_fully_accepted(name):
    c = census.check_file(str(HERE / "kernels" / name))
    assert c.error is None and not c.rejected and c.instructions > 50


def test_command_line(tmp_path, capsys):
    assert main(["ptx-census", "--json"]) == 0
    listing = json.loads(capsys.readouterr().out)
    assert "cp" in {e["opcode"] for e in listing["opcodes"]} and "sync" in listing["ignorable_modifiers"]
    good = HERE / "kernels" / "warp.O.ptx"
    bad = tmp_path / "bad.ptx"
    bad.write_text(HEAD + ".visible .entry k()\n{\n    trap.foo;\n    ret;\n}\n")
    assert main(["ptx-census", str(good)]) == 0
    assert "0 rejected" in capsys.readouterr().out
    assert main(["ptx-census", "--json", str(good), str(bad)]) == 1
    files = json.loads(capsys.readouterr().out)
    assert files[0]["rejected"] == [] and files[1]["rejected"][0]["line"] == 6
    assert main(["ptx-census", str(tmp_path / "missing.ptx")]) == 2
