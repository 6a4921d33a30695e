"""The device arena reserved in the host process and pinned/managed memory
as real host pages at their device address (sim/memory/host_mapping.py)."""
from __future__ import annotations

import ctypes
import gc
import os
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from gpudbg.sim.memory import AccessFault, AllocationKind, GlobalMemory, OutOfMemory
from gpudbg.sim.memory import host_mapping as hm

K = AllocationKind
pytestmark = pytest.mark.skipif(hm.arena() is None and not hm.enabled(),
                                reason="GPUDBG_HOST_MAPPING=0: no device arena in this process")


@pytest.fixture(autouse=True)
def _collected():
    """Memories of earlier tests may wait in reference cycles: their pages
    go back when collected, so each test starts with a quiet arena."""
    gc.collect()
    yield


def _maps() -> list[tuple[int, int, str]]:
    out = []
    with open("/proc/self/maps") as f:
        for line in f:
            rng, perms = line.split()[:2]
            lo, hi = (int(x, 16) for x in rng.split("-"))
            out.append((lo, hi, perms))
    return out


def _perms_at(address: int) -> str | None:
    for lo, hi, perms in _maps():
        if lo <= address < hi:
            return perms
    return None


def _run(code: str, env: dict | None = None) -> subprocess.CompletedProcess:
    e = dict(os.environ, **(env or {}))
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=60, env=e)


def test_the_arena_is_reserved_without_access_at_the_simulator_base():
    a = hm.arena()
    assert a is not None and hm.arena_error() is None
    assert GlobalMemory.GLOBAL_BASE == a.base == hm.NOMINAL_BASE
    assert a.end == 0x7E00_0000_0000           # up to the shared window
    gm = GlobalMemory()
    assert gm.host_backed and gm.base == a.base
    d = gm.alloc(64)
    assert _perms_at(d.base) == "---p"        # device memory is not host memory
    # a memory outside the arena (a test's own base) keeps numpy backing
    assert not GlobalMemory(base=0x1000_0000, va_size=1 << 30).host_backed


@pytest.mark.parametrize("kind", [K.HOST_PINNED, K.MANAGED])
def test_host_writes_by_address_and_kernel_accesses_share_bytes(kind):
    gm = GlobalMemory()
    a = gm.alloc(4096 + 100, kind)
    assert a.base % hm.PAGE == 0 and a.data.ctypes.data == a.base and a.host_pages is not None
    assert _perms_at(a.base).startswith("rw")
    ctypes.memmove(a.base + 8, b"\x07\0\0\0", 4)
    lanes = np.array([a.base + 8, a.base + 4096], dtype=np.uint64)
    assert gm.load(lanes, np.uint32).tolist() == [7, 0]             # device load sees it
    gm.store(lanes, np.array([11, 12], np.uint32), np.uint32)       # device store ...
    assert ctypes.c_uint32.from_address(a.base + 8).value == 11     # ... seen by the host
    assert ctypes.c_uint32.from_address(a.base + 4096).value == 12
    gm.write(a.base + 100, b"abc")                                  # copy engine write
    assert ctypes.string_at(a.base + 100, 3) == b"abc"
    assert gm.atomic("add", [a.base + 8], [5], np.uint32).tolist() == [11]
    assert ctypes.c_uint32.from_address(a.base + 8).value == 16


def test_bounds_checks_come_before_memory_is_touched():
    gm = GlobalMemory()
    a = gm.alloc(100, K.HOST_PINNED)
    # the page tail past the allocation is real memory, but still a fault
    with pytest.raises(AccessFault, match="Invalid __global__ read of size 4 bytes"):
        gm.load([a.base + 100], np.uint32)
    gm.free(a.base)
    # freed pages are PROT_NONE again; the simulator reports, never touches
    assert _perms_at(a.base) == "---p"
    with pytest.raises(AccessFault, match="freed"):
        gm.load([a.base], np.uint32)
    with pytest.raises(AccessFault):
        gm.read(a.base, 4)


def test_placement_is_page_aligned_and_device_memory_packs_around_it():
    gm = GlobalMemory()
    z = gm.alloc(0, K.HOST_PINNED)            # zero size still gets a page of its own
    p = gm.alloc(10, K.HOST_PINNED, align=256)
    d = gm.alloc(16)
    assert z.base == gm.base and p.base == gm.base + 2 * hm.PAGE   # page, redzone, next page
    assert d.base == z.base + hm.PAGE + 256    # device memory fills the gap after z's redzone
    assert gm.used == 16                       # pinned memory is not device capacity
    m = gm.alloc(1000, K.MANAGED)
    assert gm.used == 1016 and m.base % hm.PAGE == 0


def test_free_and_realloc_cycles_do_not_leak_mappings():
    gm = GlobalMemory()
    keep = gm.alloc(64, K.HOST_PINNED)
    before = len(_maps())
    for i in range(200):
        a = gm.alloc(3 * hm.PAGE, K.MANAGED if i % 2 else K.HOST_PINNED)
        ctypes.memset(a.base, 0xAB, 3 * hm.PAGE)
        assert a.data[:4].tolist() == [0xAB] * 4
        gm.free(a.base)
    assert len(_maps()) <= before
    assert hm.live_ranges(gm.base, gm.va_limit) == [(keep.base, keep.base + hm.PAGE)]
    again = gm.alloc(3 * hm.PAGE, K.HOST_PINNED)           # fresh pages are zero-filled
    assert not again.data.any()


def test_memories_sharing_the_arena_never_share_host_pages():
    gm1, gm2 = GlobalMemory(), GlobalMemory()
    a = gm1.alloc(100, K.HOST_PINNED)
    b = gm2.alloc(100, K.HOST_PINNED)
    assert b.base != a.base and b.base >= a.base + hm.PAGE
    ctypes.memset(a.base, 1, 100)
    assert not b.data.any()
    # a memory dropped with live pinned allocations gives its pages back
    base = b.base
    del gm2, b
    gc.collect()
    assert _perms_at(base) == "---p"
    assert _perms_at(a.base).startswith("rw")
    gm1.free(a.base)


def test_map_pages_refuses_bad_ranges():
    a = hm.arena()
    with pytest.raises(ValueError, match="page-aligned range inside the device arena"):
        hm.map_pages(0x1000_0000, hm.PAGE)
    with pytest.raises(ValueError, match="page-aligned"):
        hm.map_pages(a.base + 1, hm.PAGE)
    p = hm.map_pages(a.end - hm.PAGE, hm.PAGE)
    try:
        with pytest.raises(ValueError, match="overlaps host pages already mapped"):
            hm.map_pages(a.end - hm.PAGE, hm.PAGE)
    finally:
        p.release()
    assert p.released and _perms_at(a.end - hm.PAGE) == "---p"


def test_a_failed_host_mapping_is_out_of_memory_and_charges_nothing(monkeypatch):
    gm = GlobalMemory()

    def refuse(start, length):
        raise hm.HostReservationError(12, "Cannot allocate memory")
    monkeypatch.setattr(hm, "map_pages", refuse)
    with pytest.raises(OutOfMemory, match="out of host memory"):
        gm.alloc(64, K.MANAGED)
    assert gm.used == 0 and gm.allocations() == []


def test_host_is_mapped_probe():
    buf = ctypes.create_string_buffer(64)
    assert hm.is_mapped(ctypes.addressof(buf), 64)
    assert not hm.is_mapped(0x1000, 16)


# ------------------------------------------------------------------ in a child process

def test_host_dereference_of_a_device_pointer_is_sigsegv():
    code = """
        import ctypes, sys
        from gpudbg.sim.memory import GlobalMemory, AllocationKind
        gm = GlobalMemory()
        p = gm.alloc(16, AllocationKind.HOST_PINNED)
        ctypes.memmove(p.base, b"pinned", 6)
        print(ctypes.string_at(p.base, 6).decode(), flush=True)   # host memory: fine
        d = gm.alloc(16)
        ctypes.string_at(d.base, 4)                                # device memory: SIGSEGV
        print("survived", flush=True)
    """
    r = _run(code)
    assert r.stdout.strip() == "pinned", r.stderr
    assert r.returncode == -signal.SIGSEGV


def test_dereference_of_freed_pinned_memory_is_sigsegv():
    r = _run("""
        import ctypes
        from gpudbg.sim.memory import GlobalMemory, AllocationKind
        gm = GlobalMemory()
        p = gm.alloc(16, AllocationKind.MANAGED)
        gm.free(p.base)
        ctypes.string_at(p.base, 4)
        print("survived")
    """)
    assert r.returncode == -signal.SIGSEGV and "survived" not in r.stdout


_TAKE = """
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                          ctypes.c_int, ctypes.c_long]
    def take(addr):   # a host mapping squatting inside a candidate range
        assert libc.mmap(addr, 4096, 3, 0x22 | 0x100000, -1, 0) == addr
"""


def test_an_occupied_base_moves_the_arena_to_a_fallback():
    r = _run(_TAKE + """
    take(0x7000_0000_0000 + (5 << 40))
    from gpudbg.sim.memory import GlobalMemory, AllocationKind, host_mapping as hm
    gm = GlobalMemory()
    p = gm.alloc(8, AllocationKind.HOST_PINNED)
    ctypes.memmove(p.base, b"ok", 2)
    print(hex(hm.arena().base), hex(GlobalMemory.GLOBAL_BASE), hex(gm.base), gm.host_backed,
          ctypes.string_at(p.base, 2).decode())
    """)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["0x600000000000"] * 3 + ["True", "ok"]


def test_no_reservation_is_a_clear_error_and_can_be_turned_off():
    r = _run(_TAKE + """
    for base in (0x7000_0000_0000, 0x6000_0000_0000, 0x4000_0000_0000, 0x3000_0000_0000):
        take(base + (13 << 40))
    import errno
    from gpudbg.sim.memory import GlobalMemory, host_mapping as hm
    assert hm.arena() is None
    try:
        GlobalMemory()
    except hm.HostReservationError as e:
        print(e.errno == errno.EEXIST, e.strerror)
    """)
    assert r.returncode == 0, r.stderr
    msg = r.stdout
    assert msg.startswith("True ")
    assert "cannot reserve the simulated GPU's address range" in msg
    assert "0x700000000000-0x7e0000000000: part of it is already mapped" in msg
    assert "GPUDBG_HOST_MAPPING=0" in msg
    r = _run("""
        from gpudbg.sim.memory import GlobalMemory, AllocationKind, host_mapping as hm
        gm = GlobalMemory()
        p = gm.alloc(8, AllocationKind.HOST_PINNED)
        p.data[:] = 3
        print(hm.arena(), gm.host_backed, p.host_pages, gm.read(p.base, 2).tolist())
    """, {"GPUDBG_HOST_MAPPING": "0"})
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["None", "False", "None", "[3,", "3]"]
