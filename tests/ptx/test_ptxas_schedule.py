"""The approximate ptxas block order (gpudbg.ptx.ptxas_schedule): loads
move up with their address computation, never above a store that may
alias them (same state space or generic) nor above a barrier; distinct
state spaces do not alias."""
from __future__ import annotations

from gpudbg.ptx.parser import parse
from gpudbg.ptx.ptxas_schedule import schedule_block

HEAD = ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u64 p)\n{\n"
REGS = ".reg .b32 %r<10>;\n.reg .b64 %rd<10>;\n"


def order(body: str, window: int = 100) -> list[str]:
    insts = parse(HEAD + REGS + body + "\nret;\n}\n", "s.ptx").functions["k"].instructions
    return [i.text.split()[0] for i in schedule_block(insts, window)]


def test_a_global_load_moves_above_a_shared_store_with_its_address():
    body = ("st.shared.u32 [%r1], %r2;\nadd.s32 %r3, %r2, 1;\nmul.wide.u32 %rd2, %r4, 4;\n"
            "add.s64 %rd3, %rd1, %rd2;\nld.global.u32 %r5, [%rd3];")
    got = order(body)
    assert got.index("ld.global.u32") < got.index("st.shared.u32")
    assert got.index("mul.wide.u32") < got.index("add.s64") < got.index("ld.global.u32")
    assert got.index("add.s32") > got.index("ld.global.u32")     # unrelated arithmetic keeps its place
    assert got[-1] == "ret"


def test_a_load_never_passes_a_store_that_may_alias_it():
    for store in ("st.global.u32 [%rd4], %r2;", "st.u32 [%rd4], %r2;", "bar.sync 0;"):
        got = order(store + "\nadd.s32 %r3, %r2, 1;\nld.global.u32 %r5, [%rd3];")
        assert got.index("ld.global.u32") > got.index(store.split()[0]), store


def test_the_window_limits_how_far_a_load_moves():
    alu = "\n".join(f"add.s32 %r{i + 2}, %r{i + 1}, 1;" for i in range(6))
    got = order(alu + "\nld.global.u32 %r9, [%rd3];", window=2)
    assert got.index("ld.global.u32") == 4
    assert order(alu + "\nld.global.u32 %r9, [%rd3];", window=100).index("ld.global.u32") == 0
