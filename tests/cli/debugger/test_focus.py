"""The focus: parsing switch requests and resolving them against lanes."""
from __future__ import annotations

import pytest

from gpudbg.cli.debugger.commands import CommandError
from gpudbg.cli.debugger.focus import INVALID, LaneSite, make_focus, parse_request, resolve

# two blocks of 64 threads: block b on SM b, warps 0 and 1, 32 lanes each
SITES = [LaneSite(0, b, w, ln, 7, (b, 0, 0), (w * 32 + ln, 0, 0)) for b in range(2) for w in range(2)
         for ln in range(32)]


def kernel_of(dev, grid):
    return 0


def focus_at(block: int, thread: int):
    site = next(s for s in SITES if s.block == (block, 0, 0) and s.thread == (thread, 0, 0))
    return make_focus(site, kernel_of)


def grid_of_kernel(k):
    return (0, 7) if k == 0 else None


def test_parse_request_values_and_queries():
    assert parse_request("block 1 thread 5") == {"block": (1, 0, 0), "thread": (5, 0, 0)}
    assert parse_request("thread (3,1)") == {"thread": (3, 1, 0)}
    assert parse_request("block 2,0,0 lane 7") == {"block": (2, 0, 0), "lane": 7}
    assert parse_request("block thread") == {"block": None, "thread": None}
    assert parse_request("w 2 l 3") == {"warp": 2, "lane": 3}


@pytest.mark.parametrize("text", ["block (1,2,3,4)", "warp 1,2", "bogus 1", "block 1 block 2", "lane -1",
                                  "thread (1,2"])
def test_parse_request_errors(text):
    with pytest.raises(CommandError):
        parse_request(text)


def test_switch_block_keeps_the_thread():
    site = resolve({"block": (1, 0, 0)}, focus_at(0, 5), SITES, grid_of_kernel)
    assert (site.block, site.thread, site.sm, site.wp, site.ln) == ((1, 0, 0), (5, 0, 0), 1, 0, 5)


def test_switch_warp_keeps_sm_and_lane():
    site = resolve({"warp": 1}, focus_at(1, 3), SITES, grid_of_kernel)
    assert (site.sm, site.wp, site.ln, site.thread) == (1, 1, 3, (35, 0, 0))


def test_switch_thread_moves_warp_and_lane():
    site = resolve({"thread": (40, 0, 0)}, focus_at(0, 0), SITES, grid_of_kernel)
    assert (site.wp, site.ln) == (1, 8)


def test_kernel_switch_and_invalid_coordinates():
    assert resolve({"kernel": 0}, None, SITES, grid_of_kernel) == SITES[0]
    for request in ({"kernel": 3}, {"block": (5, 0, 0)}, {"lane": 32}, {"sm": 9}):
        with pytest.raises(CommandError, match=INVALID.split(".")[0]):
            resolve(request, focus_at(0, 0), SITES, grid_of_kernel)
    with pytest.raises(CommandError, match="mix"):
        resolve({"block": (0, 0, 0), "lane": 1}, None, SITES, grid_of_kernel)


def test_describe_orders_like_cuda_gdb():
    f = focus_at(1, 37)
    assert f.describe(["thread", "block"]) == "block (1,0,0), thread (37,0,0)"
    assert f.switching() == ("[Switching focus to CUDA kernel 0, grid 7, block (1,0,0), thread (37,0,0), "
                             "device 0, sm 1, warp 1, lane 5]")
