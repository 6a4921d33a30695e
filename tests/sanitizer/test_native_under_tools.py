"""The sanitizer's tools over the native engine: compiled code runs under a
tool exactly where it emits no event class the tool consumes (pure
register arithmetic under initcheck and racecheck, everything but
barriers and warp operations under synccheck), and every finding is the
interpreter's, word for word. Which classes are which is data: the
instructions' declared events (instrument.instruction_events) and the
tools' overridden methods (Tap.consumes)."""
from __future__ import annotations

import gc

import numpy as np
import pytest
from sanitizer_harness import checked

import gpudbg
from gpudbg.ptx.parser import parse
from gpudbg.runtime import mc
from gpudbg.sanitizer.config import CheckConfig
from gpudbg.sanitizer.findings import ToolName
from gpudbg.sanitizer.report import Reporter
from gpudbg.sanitizer.session import SanitizerSession
from gpudbg.sim import instrument
from gpudbg.sim.instrument import Event
from gpudbg.sim.native import engine
from gpudbg.sim.program import Program

# ---------------------------------------------------------------- what each tool consumes


@pytest.mark.parametrize("tool, consumed", [
    ("memcheck", Event(0)),
    ("initcheck", Event.MEMORY | Event.ORDER),
    ("racecheck", Event.MEMORY | Event.BARRIER_COMPLETE | Event.WARP_SYNC | Event.ORDER),
    ("synccheck", Event.BARRIER_ARRIVAL | Event.BARRIER_COMPLETE | Event.WARP_SYNC | Event.ORDER),
])
def test_each_tool_consumes_the_events_of_the_methods_it_overrides(tool, consumed):
    session = SanitizerSession(CheckConfig(tool=ToolName(tool)), Reporter(10, False)).start()
    try:
        tap = instrument.active()
        assert Event(tap.consumes) == consumed
        assert tap.observes_execution == bool(consumed)
        assert tap.observes_memory == bool(consumed & Event.MEMORY)
    finally:
        session.finish()


# ---------------------------------------------------------------- what compiled code emits

HEAD = ".version 8.0\n.target sm_80\n.address_size 64\n"

# an inner loop (a native region) with a branch leaving it backwards, to
# the outer loop, whose store keeps it from being a region itself
BACKWARD_EXIT = HEAD + """
.visible .entry back(.param .u64 out)
{
    .reg .pred %p<4>; .reg .b32 %r<4>; .reg .b64 %rd<2>;
    ld.param.u64 %rd1, [out];
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, 0;
OUTER:
    add.u32 %r2, %r2, 1;
    st.global.u32 [%rd1], %r2;
    setp.ge.u32 %p2, %r2, 4;
    @%p2 bra DONE;
    mov.u32 %r3, 0;
INNER:
    add.u32 %r3, %r3, 1;
    setp.eq.u32 %p1, %r3, %r1;
    @%p1 bra OUTER;
    setp.lt.u32 %p3, %r3, 50;
    @%p3 bra INNER;
    bra OUTER;
DONE:
    ret;
}
"""

# a loop leaving forwards only, reading memory
FORWARD_EXIT = HEAD + """
.visible .entry fwd(.param .u64 src, .param .u64 out)
{
    .reg .pred %p<2>; .reg .b32 %r<6>; .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [src];
    ld.param.u64 %rd2, [out];
    mov.u32 %r1, %tid.x;
    mul.lo.u32 %r5, %r1, 7;
    mov.u32 %r2, 0;
    mov.u32 %r3, 0;
LOOP:
    ld.global.u32 %r4, [%rd1];
    add.u32 %r3, %r3, %r4;
    add.u32 %r2, %r2, 1;
    setp.lt.u32 %p1, %r2, %r1;
    @%p1 bra LOOP;
    add.u32 %r3, %r3, %r5;
    st.global.u32 [%rd2], %r3;
    ret;
}
"""


def _program(ptx: str) -> Program:
    return Program(parse(ptx), {}, 0)


def _segment_events(program: Program) -> dict[str, Event]:
    from gpudbg.sim.native.segments import plan_segments
    plans, _lowered, _live = plan_segments(program)
    return {" / ".join(program.code[pc].inst.text for pc in range(p.start, p.end)): Event(p.events)
            for p in plans}


def test_a_segment_emits_memory_events_for_its_loads_and_stores_not_its_parameter_loads():
    events = _segment_events(_program(FORWARD_EXIT))
    assert any("ld.param" in text and "mul.lo.u32" in text and ev == Event(0) for text, ev in events.items()), events
    assert any("ld.global" in text and ev == Event.MEMORY for text, ev in events.items()), events
    assert any("st.global" in text and ev == Event.MEMORY for text, ev in events.items()), events
    assert all(ev in (Event(0), Event.MEMORY) for ev in events.values())


def _regions(program: Program):
    from gpudbg.sim.native.regions import find_regions
    from gpudbg.sim.native.segments import plan_segments
    _plans, lowered, live = plan_segments(program)
    return find_regions(program, lowered, live)


def test_a_region_leaving_backwards_is_marked_as_reordering_events():
    (region,) = _regions(_program(BACKWARD_EXIT))
    assert Event(region.events) == Event.ORDER           # no memory access in the inner loop


def test_a_region_leaving_forwards_emits_only_its_loads():
    (region,) = _regions(_program(FORWARD_EXIT))
    assert Event(region.events) == Event.MEMORY


def test_barriers_and_warp_operations_declare_their_events():
    ptx = HEAD + """
.visible .entry sync(.param .u64 out)
{
    .reg .b32 %r<3>;
    mov.u32 %r1, %tid.x;
    shfl.sync.bfly.b32 %r2, %r1, 1, 31, -1;
    bar.sync 0;
    ret;
}
"""
    program = _program(ptx)
    by_op = {c.inst.opcode: instrument.instruction_events(c.built, c.inst.opcode) for c in program.code}
    assert by_op["shfl"] == Event.WARP_SYNC
    assert by_op["bar"] == Event.BARRIER_ARRIVAL | Event.BARRIER_COMPLETE
    assert by_op["mov"] == Event(0)


# ---------------------------------------------------------------- end to end: same findings, compiled code ran

# each kernel has a loop of register arithmetic (a native region with no
# memory access) beside the memory accesses the tools report on

INIT_SRC = r"""
extern "C" __global__ void scramble(const unsigned *in, unsigned *out, unsigned n, int k) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned h = i;
    for (int j = 0; j < k; ++j)
        h = h * 2654435761u + (h >> 13) + j;
    if (i < n) out[i] = in[h % n] + (h >> 3);             // READ
}
"""

RACE_SRC = r"""
extern "C" __global__ void neighbours(const int *in, int *out, int k) {
    __shared__ int s[64];
    int t = threadIdx.x;
    int v = in[t];
    s[t] = v;                                             // W
    int h = v;
    for (int j = 0; j < k; ++j)
        h = h * 5 + (h >> 2) + j;
    out[t] = s[(t + 1) % 64] - h;                         // R
}
"""

SYNC_SRC = r"""
extern "C" __global__ void halves(const int *in, int *out, int k) {
    __shared__ int s[128];
    int t = threadIdx.x;
    int acc = t * 3 + 1;
    for (int j = 0; j < k; ++j)                           // a loop of loads: a native region
        acc = acc * 7 + in[(t + j) & 127];
    s[t] = acc;
    if (t % 32 < 16) {
        __syncthreads();                                  // BARRIER
        out[t] = s[127 - t];
    }
    out[t + 128] = acc;
}
"""

OOB_SRC = r"""
extern "C" __global__ void stride(const int *in, int *out, int n, int k) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int m = i;
    for (int j = 0; j < k; ++j)
        m = (m * 5 + 3) % (n + 16);                        // past the end for some threads
    out[i] = in[m] * 2;
}
"""


def _launch(tool: str):
    """One program per tool, launched the same way (same host frames)."""
    if tool == "initcheck":
        n = 256
        m = gpudbg.compile(INIT_SRC, name="scramble.cu")
        err, src = mc.mcMalloc(4 * n)
        assert err == mc.mcError_t.mcSuccess
        mc.mcMemset(src, 0, 4 * n // 2)                  # the upper half never written
        out = gpudbg.zeros(n, np.uint32)
        m.scramble[2, 128](src, out, np.uint32(n), 5)
        result = out.to_host()
        mc.mcFree(src)
        return result
    if tool == "racecheck":
        m = gpudbg.compile(RACE_SRC, name="race.cu")
        out = gpudbg.zeros(64, np.int32)
        m.neighbours[1, 64](gpudbg.to_device(np.arange(64, dtype=np.int32)), out, 5)
        return out.to_host()
    if tool == "synccheck":
        m = gpudbg.compile(SYNC_SRC, name="halves.cu")
        out = gpudbg.zeros(256, np.int32)
        m.halves[1, 128](gpudbg.to_device(np.arange(128, dtype=np.int32) * 3), out, 9)
        return out.to_host()
    m = gpudbg.compile(OOB_SRC, name="stride.cu")
    out = gpudbg.zeros(256, np.int32)
    m.stride[2, 128](gpudbg.to_device(np.ones(256, dtype=np.int32)), out, 256, 3)
    try:
        gpudbg.Device().synchronize()
    except gpudbg.KernelFaultError as e:   # memcheck's device report is the simulator's fault
        return str(e)
    raise AssertionError("the out-of-bounds load did not fault")


def _checked_run(tool: str, engine_name: str, monkeypatch):
    """(findings as dicts, printed texts, results, compiled calls) of one
    run; a call is (region?, succeeded, its events & the tools' consumed)."""
    monkeypatch.setenv(engine.ENV_ENGINE, engine_name)
    calls: list[tuple[bool, bool, int]] = []
    original = engine.NativeSegment.run

    def run(self, X, idx):
        ok = original(self, X, idx)
        tap = X.tap
        calls.append((isinstance(self, engine.NativeRegion), ok, self.events & (tap.consumes if tap else 0)))
        return ok
    with monkeypatch.context() as m:
        m.setattr(engine.NativeSegment, "run", run)
        with checked(tool) as rep:
            result = _launch(tool)
        return [f.as_dict() for f in rep.findings], list(rep.texts), result, calls


@pytest.mark.parametrize("tool", ["initcheck", "racecheck", "synccheck", "memcheck"])
def test_findings_under_the_native_engine_are_the_interpreters(tool, monkeypatch):
    # one call site for both runs: the findings' host frames name it
    (found_i, texts_i, result_i, calls_i), (found_n, texts_n, result_n, calls_n) = [
        _checked_run(tool, name, monkeypatch) for name in ("interp", "native")]
    assert found_i or tool == "memcheck", f"{tool}: the program must have findings"
    assert found_n == found_i
    assert texts_n == texts_i
    if tool == "memcheck":
        assert "Invalid __global__ read" in result_i or "out of bounds" in result_i.lower(), result_i
        assert result_n == result_i
    else:
        assert np.array_equal(result_n, result_i)
    assert not calls_i
    done = [c for c in calls_n if c[1]]
    assert done, f"{tool}: no compiled code ran"
    # compiled code never ran where it would have emitted an event the tool consumes
    assert all(consumed == 0 for _region, _ok, consumed in calls_n)
    # the arithmetic loop (initcheck, racecheck, memcheck) or the loop of loads,
    # which are not synccheck's, ran as a native region
    assert any(region for region, _ok, _c in done)


def test_initcheck_keeps_the_loads_interpreted(monkeypatch):
    """The compiled program has segments with memory events: under
    initcheck they are the ones that never ran natively."""
    _f, _t, _r, calls = _checked_run("initcheck", "native", monkeypatch)
    assert calls
    programs = [p for p in gc.get_objects() if isinstance(p, Program) and getattr(p, "native_ready", False)
                and any(c.inst.opcode == "ld" and "global" in c.inst.modifiers for c in p.code)
                and any("scramble" == c.function for c in p.code)]
    assert programs
    segs = [c.native for c in programs[-1].code if c.native is not None]
    assert any(s.events & Event.MEMORY for s in segs)
    assert any(not s.events for s in segs)


# ---------------------------------------------------------------- a random schedule: the same interleaving per seed

LAST_SRC = r"""
extern "C" __global__ void last(int *out, int k) {
    int t = threadIdx.x;
    int h = t;
    for (int j = 0; j < k + (t >> 5); ++j)                 // a loop of register arithmetic
        h = h * 5 + (h >> 2) + j;
    out[1 + t] = h;
    if ((t & 31) == 0) out[0] = t;                          // which warp writes last: the interleaving
}
"""


@pytest.mark.parametrize("tool", ["initcheck", "synccheck"])
def test_a_seed_picks_the_same_interleaving_on_both_engines(tool, monkeypatch):
    """Under --schedule random the native engine runs the variant whose
    steps are the interpreter's (no loop regions, no if bodies): each
    scheduling draw picks the same warps, so a seed reproduces the same
    run, and compiled segments still run."""
    from gpudbg.sanitizer.config import Schedule

    def last_writers(engine_name: str) -> tuple[list[int], int]:
        monkeypatch.setenv(engine.ENV_ENGINE, engine_name)
        calls = []
        original = engine.NativeSegment.run

        def run(self, X, idx):
            ok = original(self, X, idx)
            calls.append(ok)
            return ok
        out = []
        with monkeypatch.context() as m:
            m.setattr(engine.NativeSegment, "run", run)
            for seed in range(6):
                with checked(tool, schedule=Schedule.RANDOM, seed=seed):
                    mod = gpudbg.compile(LAST_SRC, name="last.cu")
                    d = gpudbg.zeros(257, np.int32)
                    mod.last[1, 256](d, 6)
                    out.append(int(d.to_host()[0]))
        return out, sum(calls)

    interp, _ = last_writers("interp")
    native, ran = last_writers("native")
    assert len(set(interp)) > 1                 # the seeds do pick different interleavings
    assert native == interp
    assert ran > 0
