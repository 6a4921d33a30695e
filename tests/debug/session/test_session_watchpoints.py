"""Session watchpoints on device memory: global, shared and local ranges
and -G variables; write, read and access watches; old/new bytes; the
lanes that touched them; deleted, disabled and conditional watchpoints."""
import struct

import numpy as np
import pytest

import gpudbg
from gpudbg.debug.backend import MemorySpace, StopReason
from gpudbg.debug.session import DebugError
from gpudbg.debug.watch import WatchKind

from session_harness import Host, stop

GLOBAL = r"""
extern "C" __global__ void wk(int *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = i * 2;
    if (i == 37) out[n] = v + 1;
    out[i] = v;
    if (i == 3) out[n + 1] = out[n];
    if (i == 40) atomicAdd(out + n, 5);
    if (i == 41) out[n + 2] = 0;
}
"""

LOCALS = r"""
extern "C" __global__ void lk(int *out) {
    int t = threadIdx.x;
    int buf[4];
    for (int k = 0; k < 4; ++k) buf[k] = t + k;
    buf[t % 4] += 100;
    __shared__ int sdata[32];
    sdata[t] = buf[(t + 1) % 4];
    __syncthreads();
    out[blockIdx.x * 32 + t] = sdata[31 - t];
}
"""


def _global(session, holder):
    """wk on 2 blocks of 32 over 67 ints, stopped at its first line so
    the test can set watches (holder["ptr"] is the array)."""
    bp = session.break_at_kernel("wk")

    def host():
        m = gpudbg.compile(GLOBAL, name="wk.cu")
        d = gpudbg.zeros(67, np.int32)
        holder["ptr"] = d.ptr
        m.wk[2, 32](d, 64)
        return d.to_host()
    h = Host(host)
    stop(session)
    session.delete_breakpoint(bp)
    return h


def _int(b: bytes) -> int:
    return struct.unpack("<i", b)[0]


def _thread(session, lane):
    sm, wp, ln = lane
    return session.warp(0, sm, wp).block_idx, session.lane(0, sm, wp, ln).thread_idx


def test_write_watch_stops_the_writing_lane_with_old_and_new_value(session):
    holder = {}
    host = _global(session, holder)
    n_addr = holder["ptr"] + 64 * 4
    wp = session.watch(n_addr, 4)
    session.resume(0)
    ev = stop(session)
    assert ev.reason is StopReason.WATCHPOINT
    (hit,) = ev.watch_hits
    assert hit.watch == wp.id and len(ev.lanes) == 1 and hit.lanes == ev.lanes == hit.writers
    assert _thread(session, ev.lanes[0]) == ((1, 0, 0), (5, 0, 0))        # i == 37
    assert (_int(hit.old), _int(hit.new)) == (0, 75) and hit.addresses == (n_addr,)
    assert session.source_line(0, ev.address) == ("wk.cu", 5)
    # stopped after the store: memory already holds the new value, the warp is broken
    assert _int(session.read_memory(0, MemorySpace.GLOBAL, n_addr, 4)) == 75
    sm, w, _ = ev.lanes[0]
    assert session.warp(0, sm, w).broken
    session.resume(0)
    ev = stop(session)                        # the atomicAdd of i == 40 (a write too)
    (hit,) = ev.watch_hits
    assert _thread(session, ev.lanes[0]) == ((1, 0, 0), (8, 0, 0))
    assert (_int(hit.old), _int(hit.new)) == (75, 80) and hit.readers == hit.writers == ev.lanes
    session.resume(0)
    out = host.join()                         # out[i], out[n+1], out[n+2] writes never stopped it
    assert out[64] == 80 and out[65] == 75 and wp.hits == 2
    assert out[:64].tolist() == [2 * i for i in range(64)]


def test_read_watch_reports_only_readers_and_access_watch_both(session):
    holder = {}
    host = _global(session, holder)
    n_addr = holder["ptr"] + 64 * 4
    rw = session.watch(n_addr, 4, kind=WatchKind.READ)
    session.resume(0)
    ev = stop(session)
    (hit,) = ev.watch_hits
    assert hit.watch == rw.id and hit.readers == ev.lanes and hit.writers == ()
    assert _thread(session, ev.lanes[0]) == ((0, 0, 0), (3, 0, 0))
    assert _int(hit.old) == _int(hit.new) == 75
    assert session.source_line(0, ev.address) == ("wk.cu", 7)
    session.delete_watchpoint(rw)
    aw = session.watch(n_addr, 4, kind=WatchKind.ACCESS)
    assert aw.id == rw.id + 1                  # one numbering with breakpoints
    session.resume(0)
    ev = stop(session)
    (hit,) = ev.watch_hits
    assert hit.watch == aw.id and _thread(session, ev.lanes[0])[1] == (8, 0, 0)
    session.resume(0)
    host.join()


def test_no_stop_for_neighbouring_bytes_and_none_after_delete_or_disable(session):
    holder = {}
    host = _global(session, holder)
    base = holder["ptr"]
    between = session.watch(base + 66 * 4 + 2, 2)      # the upper half of out[n+2]: i == 41 writes 0 over 0
    changes = session.watch(base + 66 * 4, 4, changes_only=True)
    gone = session.watch(base + 64 * 4, 4)
    off = session.watch(base + 65 * 4, 4)
    session.delete_watchpoint(gone)
    session.enable_watchpoint(off, False)
    session.resume(0)
    ev = stop(session)
    assert [h.watch for h in ev.watch_hits] == [between.id]     # the write, unchanged value reported
    assert _thread(session, ev.lanes[0])[1] == (9, 0, 0)
    session.resume(0)
    host.join()
    assert changes.hits == 0 and off.hits == 0
    assert [w.id for w in session.watchpoints()] == [between.id, changes.id, off.id]
    with pytest.raises(DebugError, match=f"No watchpoint number {gone.id}"):
        session.delete_watchpoint(gone.id)


def test_condition_keeps_only_matching_lanes(session):
    holder = {}
    host = _global(session, holder)
    base = holder["ptr"]
    seen = []

    def cond(lanes):
        seen.append(len(lanes))
        return lanes.thread_idx[0] == 30
    wp = session.watch(base, 32 * 4, condition=cond)       # out[0..31]: warp 0 writes them at once
    session.resume(0)
    ev = stop(session)
    (hit,) = ev.watch_hits
    assert seen == [32] and len(hit.lanes) == 1 == len(ev.lanes) and hit.addresses == (base + 30 * 4,)
    assert _thread(session, ev.lanes[0]) == ((0, 0, 0), (30, 0, 0))
    assert np.frombuffer(hit.new, np.int32).tolist() == [2 * i for i in range(32)]
    session.delete_watchpoint(wp)
    session.resume(0)
    host.join()


def _locals(session):
    bp = session.break_at_line("lk.cu", 5)

    def host():
        m = gpudbg.compile(LOCALS, name="lk.cu", options=["-G"])
        d = gpudbg.zeros(64, np.int32)
        m.lk[2, 32](d)
        return d.to_host()
    h = Host(host)
    stop(session)
    session.delete_breakpoint(bp)
    return h


def _lane_of(session, block, thread):
    for w in session.warps(0):
        if w.block_idx == block:
            for lv in w.lanes:
                if lv.thread_idx == thread:
                    return w.sm, w.wp, lv.ln
    raise AssertionError("no such thread")


def test_local_array_of_a_g_kernel_is_watched_in_one_thread_only(session):
    host = _locals(session)
    lane = _lane_of(session, (1, 0, 0), (6, 0, 0))
    buf = session.read_variable(0, *lane, "buf")
    assert buf.space is MemorySpace.LOCAL
    wp = session.watch(buf.address + 8, 4, space=buf.space, lane=lane)     # buf[2]
    assert (wp.block_idx, wp.thread_idx) == ((1, 0, 0), (6, 0, 0))
    session.resume(0)
    ev = stop(session)
    assert ev.lanes == (lane,) and session.source_line(0, ev.address) == ("lk.cu", 5)
    (hit,) = ev.watch_hits
    assert (_int(hit.old), _int(hit.new)) == (0, 8)           # buf[2] = t + 2
    session.resume(0)
    ev = stop(session)
    (hit,) = ev.watch_hits
    assert ev.lanes == (lane,) and (_int(hit.old), _int(hit.new)) == (8, 108)   # buf[t % 4] += 100
    session.resume(0)
    host.join()
    assert wp.hits == 2
    assert session.watchpoints() == []      # its grid ended: the thread's memory is gone


def test_shared_variable_watch_is_the_focused_blocks_copy(session):
    host = _locals(session)
    lane = _lane_of(session, (1, 0, 0), (0, 0, 0))
    sdata = session.read_variable(0, *lane, "sdata")
    assert sdata.space is MemorySpace.SHARED
    session.watch(sdata.address + 5 * 4, 4, kind=WatchKind.ACCESS, space=sdata.space, lane=lane)
    session.resume(0)
    ev = stop(session)
    (hit,) = ev.watch_hits
    assert [_thread(session, x) for x in hit.writers] == [((1, 0, 0), (5, 0, 0))] and hit.readers == ()
    assert (_int(hit.old), _int(hit.new)) == (0, 7)      # buf[(5 + 1) % 4] = 5 + 2
    session.resume(0)
    ev = stop(session)
    (hit,) = ev.watch_hits
    assert [_thread(session, x) for x in hit.readers] == [((1, 0, 0), (26, 0, 0))] and hit.writers == ()
    assert session.source_line(0, ev.address) == ("lk.cu", 10)
    session.resume(0)
    out = host.join()
    assert out[32 + 26] == 7


def test_generic_window_address_and_bad_requests(session):
    from gpudbg.sim.memory.windows import SHARED_WINDOW_BASE
    host = _locals(session)
    lane = _lane_of(session, (0, 0, 0), (3, 0, 0))
    wp = session.watch(SHARED_WINDOW_BASE + 12, 4, space=MemorySpace.GENERIC, lane=lane)
    assert (wp.space, wp.address, wp.block_idx) == (MemorySpace.SHARED, 12, (0, 0, 0))
    with pytest.raises(DebugError, match="needs the lane"):
        session.watch(0, 4, space=MemorySpace.SHARED)
    with pytest.raises(DebugError, match="param memory cannot be watched"):
        session.watch(0, 4, space=MemorySpace.PARAM)
    with pytest.raises(DebugError, match="1 to"):
        session.watch(0x1000, 0)
    with pytest.raises(DebugError, match="Cannot watch global memory at 0x10"):
        session.watch(0x10, 4)
    with pytest.raises(DebugError, match="Cannot watch shared memory at 0x100000"):
        session.watch(1 << 20, 4, space=MemorySpace.SHARED, lane=lane)
    session.delete_watchpoint(wp)
    session.resume(0)
    host.join()


def test_source_step_over_the_write_stops_at_the_watchpoint(session):
    from gpudbg.debug.events import EventKind
    holder = {}
    host = _global(session, holder)
    n_addr = holder["ptr"] + 64 * 4
    wp = session.watch(n_addr, 4)
    sm, w, ln = _lane_of(session, (1, 0, 0), (5, 0, 0))
    events = []
    for _ in range(6):
        session.step_line(0, sm, w, over_calls=True)
        ev = session.next_event(timeout=0.0)
        while ev is not None:
            events.append(ev)
            session.acknowledge(ev)
            ev = session.next_event(timeout=0.0)
        if events:
            break
    (ev,) = [e for e in events if e.kind is EventKind.STOPPED]
    assert ev.reason is StopReason.WATCHPOINT and ev.lanes == ((sm, w, ln),)
    (hit,) = ev.watch_hits
    assert hit.watch == wp.id and (_int(hit.old), _int(hit.new)) == (0, 75)
    # the step ended right after the store
    assert session.source_line(0, ev.address) == ("wk.cu", 5)
    assert session.warp(0, sm, w).pc == ev.address + session.device(0).instruction_size
    session.single_step_warp(0, sm, w, 1)              # a plain step afterwards is no watch stop
    assert session.next_event(timeout=0.0) is None
    session.delete_watchpoint(wp)
    session.resume(0)
    host.join()


BIG = r"""
extern "C" __global__ void big(int *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = i * 3;
}
"""


def test_global_watch_stops_a_lane_of_a_later_wave_of_a_big_grid(session):
    holder = {}
    n = 1 << 20                       # 4096 blocks: more than the device holds at once
    bp = session.break_at_kernel("big")

    def host():
        m = gpudbg.compile(BIG, name="big.cu")
        d = gpudbg.zeros(n, np.int32)
        holder["ptr"] = d.ptr
        m.big[n // 256, 256](d, n)
        return d.to_host()
    h = Host(host)
    first = stop(session)
    session.delete_breakpoint(bp)
    first_blocks = {w.block_idx for w in session.warps(0)}
    assert (4095, 0, 0) not in first_blocks
    session.watch(holder["ptr"] + (n - 1) * 4, 4)
    session.resume(0)
    ev = stop(session, timeout=300)
    assert ev.reason is StopReason.WATCHPOINT and first.grid.grid_id == ev.grid.grid_id
    assert _thread(session, ev.lanes[0]) == ((4095, 0, 0), (255, 0, 0))
    assert _int(ev.watch_hits[0].new) == 3 * (n - 1)
    session.resume(0)
    assert h.join(300)[-1] == 3 * (n - 1)


GENERIC = r"""
__device__ __noinline__ void put(int *p, int v) { *p = v; }

extern "C" __global__ void gk(int *out) {
    __shared__ int sdata[32];
    int local[2];
    int t = threadIdx.x;
    put(&sdata[t], t + 100);
    put(&local[t % 2], t + 200);
    __syncthreads();
    out[blockIdx.x * 32 + t] = sdata[31 - t] + local[t % 2];
}
"""


def test_stores_through_generic_pointers_hit_shared_and_local_watches(session):
    bp = session.break_at_line("gk.cu", 8)

    def host():
        m = gpudbg.compile(GENERIC, name="gk.cu", options=["-G"])
        d = gpudbg.zeros(64, np.int32)
        m.gk[2, 32](d)
        return d.to_host()
    h = Host(host)
    stop(session)
    session.delete_breakpoint(bp)
    lane = _lane_of(session, (1, 0, 0), (7, 0, 0))
    sdata = session.read_variable(0, *lane, "sdata")
    local = session.read_variable(0, *lane, "local")
    session.watch(sdata.address + 9 * 4, 4, space=sdata.space, lane=lane)     # block 1's sdata[9]
    session.watch(local.address + 4, 4, space=local.space, lane=lane)         # thread 7's local[1]
    session.resume(0)
    got = []
    for _ in range(2):
        ev = stop(session)
        (hit,) = ev.watch_hits
        got.append((_thread(session, ev.lanes[0]), _int(hit.new), session.function_at(0, ev.address)[0]))
        session.resume(0)
    assert got == [(((1, 0, 0), (9, 0, 0)), 109, "_Z3putPii"), (((1, 0, 0), (7, 0, 0)), 207, "_Z3putPii")]
    out = h.join()
    assert out[32 + 22] == 109 + 222          # sdata[9] + its own local[0]


def test_without_watchpoints_the_debugged_loop_has_the_plain_leaders(session):
    holder = {}
    host = _global(session, holder)
    port = session.backend._port(0)
    prog = port.launch["function"].program
    assert port.leaders(prog)[0] is prog.leader          # nothing armed: the program's own blocks
    wp = session.watch(holder["ptr"], 4)
    leader = port.leaders(prog)[0]
    memory_pcs = port.watches.pcs(prog)
    assert memory_pcs and all(leader[pc] and leader[pc + 1] for pc in memory_pcs)
    session.delete_watchpoint(wp)
    assert port.watches is None and port.leaders(prog)[0] is prog.leader
    session.resume(0)
    host.join()


TWO = r"""
extern "C" __global__ void add(int *out, int v) {
    if (threadIdx.x == 0) atomicAdd(out, v);
}
"""


def test_two_grids_on_two_streams_each_see_their_own_old_and_new_value(session):
    from gpudbg.debug.events import EventKind
    holder = {}
    bp = session.break_at_kernel("add")

    def host():
        m = gpudbg.compile(TWO, name="two.cu")
        d = gpudbg.zeros(1, np.int32)
        holder["ptr"] = d.ptr
        s1, s2 = gpudbg.Stream(), gpudbg.Stream()
        m.add[1, 32](d, 1, stream=s1)
        m.add[1, 32](d, 10, stream=s2)
        gpudbg.Device().synchronize()
        return d.to_host()
    h = Host(host)
    stop(session)
    session.delete_breakpoint(bp)
    session.watch(holder["ptr"], 4)
    session.resume(0)
    steps = {}
    for _ in range(2):
        ev = stop(session)
        (hit,) = ev.watch_hits
        steps[ev.grid.grid_id] = _int(hit.new) - _int(hit.old)
        session.resume(0)
    assert h.join()[0] == 11
    first, second = sorted(steps)
    assert (steps[first], steps[second]) == (1, 10)
    assert session.wait_for({EventKind.STOPPED}, timeout=0.0) is None
