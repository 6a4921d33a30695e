"""A -G cluster kernel (distributed shared memory) under the debugger: its
variables print per block, with the values the peer block wrote."""
from __future__ import annotations

from pathlib import Path

PROGRAM = str(Path(__file__).resolve().parent / "programs" / "cluster_swap.py")


def test_cluster_kernel_variables_per_block(gdb):
    status, out, err = gdb(PROGRAM, "break swap.cu:12", "run", "print rank", "print v",
                           "cuda block (3,0,0) thread (5,0,0)", "print rank", "print v", "continue")
    assert status == 0, err
    assert "hit Breakpoint 1, swap<<<(4,1,1),(32,1,1)>>>" in out
    assert "$1 = 0\n$2 = 100\n" in out          # block 0 (rank 0) read rank 1's buf[0]
    assert "$3 = 1\n$4 = 5\n" in out            # block 3 (rank 1) read rank 0's buf[5]
    assert "[100, 0, 100, 0]" in out
