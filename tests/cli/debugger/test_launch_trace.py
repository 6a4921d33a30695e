"""Kernels launched from the device (CDP2) in the debugger: breakpoints in
a grandchild, `info cuda launch trace` showing the parent chain, the
Parent column of `info cuda kernels`, and the cudbg grid info."""
from __future__ import annotations

import re
from pathlib import Path

PROGRAM = str(Path(__file__).resolve().parent / "programs" / "nested_launch.py")


def test_launch_trace_shows_the_parent_chain(gdb):
    status, out, err = gdb(PROGRAM, "break nested.cu:3", "run", "info cuda launch trace", "info cuda kernels",
                           "print v", "continue")
    assert status == 0, err
    assert "hit Breakpoint 1, leaf<<<(1,1,1),(4,1,1)>>> (out=(int *) 0x" in out and "v=11) at nested.cu:3" in out
    trace = out.split("Lvl")[1].splitlines()
    rows = [re.match(r"^(\*?)\s+(\d+)\s+(\d+)\s+0\s+(\d+)\s+Active\s+(\(\S+\))\s+(\(\S+\))\s+(.*)$", ln)
            for ln in trace[1:4]]
    assert all(rows), trace
    assert [r.group(1, 2, 3, 5, 6) for r in rows] == [
        ("*", "0", "2", "(1,1,1)", "(4,1,1)"), ("", "1", "1", "(1,1,1)", "(1,1,1)"), ("", "2", "0", "(1,1,1)", "(1,1,1)")]
    assert [re.sub("0x[0-9a-f]+", "P", r.group(7)) for r in rows] == ["leaf(out=P, v=11)", "middle(out=P, v=10)",
                                                                        "top(out=P)"]
    grids = [int(r.group(4)) for r in rows]
    assert grids[0] > grids[1] > grids[2]       # each launched by the next
    kernels = out.split("Kernel  Parent")[1].splitlines()
    parents = [ln.lstrip(" *").split()[:2] for ln in kernels[1:4]]
    assert parents == [["0", "-"], ["1", "0"], ["2", "1"]]
    assert "$1 = 11" in out
    assert "[11, 11, 11, 11]" in out
