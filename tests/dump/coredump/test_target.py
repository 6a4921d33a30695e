"""CoreBackend over cores the simulator wrote: the views of a faulting
kernel (device, grid, warps, lanes, the faulting lane's lane-level
exception and error pc), registers by PTX name equal to what the wave
held, memory of every space, the Program rebuilt from the embedded PTX
(lines, DWARF variables, instructions), and a barrier deadlock whose
waiting lanes sit at their bar instructions."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import gpudbg
import gpudbg.dump.coredump as coredump
from gpudbg.debug.backend import BackendError, GridStatus, MemorySpace
from gpudbg.dump.coredump.target import NOT_RUNNING, CoreBackend, open_core
from gpudbg.sim.faults import CUDBGException as E
from gpudbg.sim.memory.spaces import SHARED_WINDOW_BASE

STAGE = r"""
extern "C" __global__ void stage(const int *in, int *out, int bad) {
    __shared__ int tile[64];
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    tile[t] = in[i] * 2;
    __syncthreads();
    out[i] = tile[63 - t];
    if (i == bad) out[i + (1 << 24)] = 7;
}
"""

STUCK = r"""
extern "C" __global__ void stuck(int *out) {
    int t = threadIdx.x;
    out[t] = t;
    if (t < 32) {
        asm volatile("bar.sync 1, 64;");
    } else {
        __syncthreads();
    }
    out[t] = 2 * t;
}
"""


def _load_from_file(tmp_path: Path, source: str, name: str, options=()) -> gpudbg.Module:
    """Load through mcModuleLoad, so the module's PTX file is on disk (and
    the CUDA source, which the PTX names relative to the working directory)."""
    (tmp_path / name).write_text(source)
    path = tmp_path / name.replace(".cu", ".ptx")
    path.write_text(gpudbg.compile_ptx(source, options, name))
    return gpudbg.Module.load(path)


def _run_to_core(tmp_path, monkeypatch, launch):
    """Run `launch()` until its fault, with on-exception dumping on; return
    (fault report, core path, what the wave held at the fault)."""
    seen = {}
    real = coredump.on_kernel_fault

    def hook(gpu, fault):
        X, r = fault.wave, fault.report
        seen["program"] = X.program
        if r.sm is not None:
            L = X.layout
            slot = int(np.flatnonzero((L.sm == r.sm) & (L.warp == r.warp) & (L.lane == r.lane))[0])
            seen["regs"] = {X.program.reg_names[k][1]: X.regs[k][slot].copy()
                            for k in X.program.registers_of(r.function)}
        return real(gpu, fault)

    monkeypatch.setattr(coredump, "on_kernel_fault", hook)
    monkeypatch.setenv("GPUDBG_COREDUMP_ON_EXCEPTION", "1")
    monkeypatch.setenv("GPUDBG_COREDUMP_FILE", str(tmp_path / "core_%p.nvcudmp"))
    with pytest.raises(gpudbg.KernelFaultError) as ei:
        launch()
        gpudbg.synchronize()
    r = ei.value.report
    return r, Path(r.details["coredump"]), seen


@pytest.fixture
def stage_core(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    mod = _load_from_file(tmp_path, STAGE, "stage.cu", ["-G"])
    values = (np.arange(128, dtype=np.int32) * 5 + 1)
    d_in = gpudbg.to_device(values)
    d_out = gpudbg.zeros(128, np.int32)
    r, path, seen = _run_to_core(tmp_path, monkeypatch,
                                 lambda: mod.stage[2, 64](d_in, d_out, 70))
    return dict(report=r, path=path, seen=seen, values=values, d_in=d_in, d_out=d_out)


def _fault_coords(b: CoreBackend, r):
    w = b.warp(0, r.sm, r.warp)
    return w, w.lane(r.lane)


def test_views_of_a_faulting_kernel(stage_core):
    r = stage_core["report"]
    b = open_core(stage_core["path"])
    assert b.can_execute is False and b.device_count() == 1
    props = b.device(0)
    assert (props.sm_type, props.num_lanes, props.num_registers) == ("sm_90", 32, b.core.devices[0].regs_per_lane)
    assert props.global_memory_size > 0
    (g,) = b.grids(0)
    assert (g.kernel, g.grid_id, g.grid_dim, g.block_dim) == ("stage", r.grid_id, (2, 1, 1), (64, 1, 1))
    assert g.status is GridStatus.CUDBG_GRID_STATUS_ACTIVE
    assert b.symbol_at(0, g.entry_address) == ("stage", g.module_id)
    warps = b.warps(0)
    assert {(w.block_idx, w.grid_id) for w in warps} <= {((0, 0, 0), r.grid_id), ((1, 0, 0), r.grid_id)}
    assert sum(bin(w.valid_mask).count("1") for w in warps) == sum(len(w.lanes) for w in warps)
    w, lane = _fault_coords(b, r)
    assert w.broken and w.error_pc == r.pc and w.block_idx == tuple(r.block) and w.function == "stage"
    # the note restores the simulator's lane-level code (the table holds the warp-level 14)
    assert lane.exception is E.CUDBG_EXCEPTION_LANE_ILLEGAL_ADDRESS
    assert (lane.pc, lane.thread_idx, lane.function, lane.call_depth) == (r.pc, tuple(r.thread), "stage", 0)
    assert lane.active
    others = [lv for wv in warps for lv in wv.lanes if (wv.sm, wv.wp, lv.ln) != (r.sm, r.warp, r.lane)]
    assert all(lv.exception is E.CUDBG_EXCEPTION_NONE for lv in others)
    rep = b.fault_report()
    assert (rep.kind, rep.pc, rep.thread, rep.address, rep.grid_id) == \
        (E.CUDBG_EXCEPTION_LANE_ILLEGAL_ADDRESS, r.pc, tuple(r.thread), r.address, r.grid_id)
    # the launching host line is the engine's knowledge, not the GPU's: a
    # coredump holds the device state only
    assert "launched from" in r.format() and "launched from" not in rep.format()
    assert rep.format() == "\n".join(ln for ln in r.format().split("\n") if "launched from" not in ln)


def test_registers_by_name_match_the_wave(stage_core):
    r, seen = stage_core["report"], stage_core["seen"]
    b = open_core(stage_core["path"])
    regs = {v.name: v for v in b.registers(0, r.sm, r.warp, r.lane)}
    assert regs and set(regs) <= set(seen["regs"])
    for name, v in regs.items():
        want = seen["regs"][name]
        assert v.dtype == want.dtype.name and v.value.dtype == want.dtype, name
        assert v.value.tobytes() == np.asarray(want).tobytes(), name
    wide = [v for v in regs.values() if v.value.dtype.itemsize == 8]
    assert any(int(v.value) == stage_core["d_out"].ptr for v in wide)   # 64-bit from two R words
    assert any(int(v.value) == 70 for v in regs.values() if v.name.startswith("%r"))
    assert any(v.dtype == "bool" for v in regs.values())
    name = next(n for n in regs if n.startswith("%r") and not n.startswith("%rd"))
    assert b.read_register(0, r.sm, r.warp, r.lane, name[1:]) == regs[name].value
    first = next(e for e in b.register_map(0, r.sm, r.warp, r.lane) if e[0] == name)[3]
    assert b.read_register_r(0, r.sm, r.warp, r.lane, first) == int(regs[name].value.view(np.uint32))
    with pytest.raises(BackendError) as ei:
        b.write_register(0, r.sm, r.warp, r.lane, name, 1)
    assert ei.value.code == "NOT_SUPPORTED" and "read-only" in ei.value.message
    with pytest.raises(BackendError, match="no register %nope"):
        b.read_register(0, r.sm, r.warp, r.lane, "%nope")


def test_memory_of_every_space(stage_core):
    r, values = stage_core["report"], stage_core["values"]
    d_in = stage_core["d_in"]
    b = open_core(stage_core["path"])
    got = np.frombuffer(b.read_memory(0, MemorySpace.GLOBAL, d_in.ptr, 4 * 128), np.int32)
    assert got.tolist() == values.tolist()
    with pytest.raises(BackendError) as ei:
        b.read_memory(0, MemorySpace.GLOBAL, r.address, 4)
    assert ei.value.code == "MEMORY_MAPPING_FAILED"
    assert ei.value.message == f"Cannot access memory at address 0x{r.address:x}"
    # shared memory of each block holds its tile (every thread passed the barrier)
    for w in b.warps(0):
        bx = w.block_idx[0]
        tile = np.frombuffer(b.read_memory(0, MemorySpace.SHARED, 0, 256, w.sm, w.wp), np.int32)
        assert tile.tolist() == (values[64 * bx:64 * bx + 64] * 2).tolist()
        generic = b.read_memory(0, MemorySpace.GENERIC, SHARED_WINDOW_BASE + 8, 4, w.sm, w.wp)
        assert generic == tile[2:3].tobytes()
    with pytest.raises(BackendError, match="Cannot access memory at address 0x100"):
        b.read_memory(0, MemorySpace.SHARED, 0x100, 4, r.sm, r.warp)
    assert b.read_memory(0, MemorySpace.GENERIC, d_in.ptr + 4, 4, r.sm, r.warp, r.lane) == values[1:2].tobytes()
    params = b.read_memory(0, MemorySpace.PARAM, 0, 20, r.sm, r.warp)
    assert params == b.grids(0)[0].params[:20]
    assert int.from_bytes(params[:8], "little") == d_in.ptr
    assert int.from_bytes(params[16:20], "little") == 70
    assert b.read_memory(0, MemorySpace.PARAM, 8, 8) == stage_core["d_out"].ptr.to_bytes(8, "little")
    program = b.program_of_address(0, r.pc)
    code = b.read_memory(0, MemorySpace.CODE, r.pc, 16)
    assert int.from_bytes(code[:4], "little") == program.pc_of_address(r.pc)
    with pytest.raises(BackendError) as ei:
        b.read_memory(0, MemorySpace.LOCAL, 0, 4, r.sm, r.warp, r.lane)
    assert ei.value.code == "MEMORY_MAPPING_FAILED"
    with pytest.raises(BackendError) as ei:
        b.read_memory(0, MemorySpace.SHARED, 0, 4)
    assert ei.value.code == "INVALID_ARGS"
    with pytest.raises(BackendError) as ei:
        b.write_memory(0, MemorySpace.GLOBAL, d_in.ptr, b"x")
    assert ei.value.code == "NOT_SUPPORTED"


def test_program_rebuilt_from_the_embedded_ptx(stage_core):
    from gpudbg.debug.dwarf import DebugInfo
    r, live = stage_core["report"], stage_core["seen"]["program"]
    b = open_core(stage_core["path"])
    (p,) = b.programs(0)
    assert p is b.program_of_address(0, r.pc) and p.code_base == live.code_base
    assert b.program_of_address(0, 0x10) is None
    pc = p.pc_of_address(r.pc)
    assert p.code[pc].inst.text == r.instruction == live.code[pc].inst.text
    rebuilt, original = DebugInfo(p), DebugInfo(live)
    entry = rebuilt.lines.at(pc)
    assert (Path(entry.file).name, entry.line) == ("stage.cu", r.source_line)
    names = {v.name for v in rebuilt.variables_at(pc)}
    assert {"t", "i"} <= names and names == {v.name for v in original.variables_at(pc)}
    assert "tile[63 - t]" in b.sources(0, p.code_base)["stage.cu"]
    assert ".entry stage(" in b.core.module_ptx(p.code_base)


def test_control_is_refused_and_the_listener_hears_the_load(stage_core):
    b = open_core(stage_core["path"])
    for call in (lambda: b.suspend(0), lambda: b.resume(0), lambda: b.set_breakpoints(0, {1}),
                 lambda: b.single_step_warp(0, 0, 0, 1), lambda: b.resume_warps_until_pc(0, 0, 1, 0),
                 lambda: b.hold_threads(0, None, None, None, True), b.kill):
        with pytest.raises(BackendError) as ei:
            call()
        assert ei.value.message == NOT_RUNNING and ei.value.code == "NOT_SUPPORTED"
    assert b.is_stopped(0)
    heard = []

    class Listener:
        def context_event(self, dev, kind, context_id):
            heard.append(("ctx", dev, kind, context_id))

        def module_loaded(self, dev, program, name):
            heard.append(("module", dev, program.code_base, name))

    b.set_listener(Listener())
    ctx = b.core.devices[0].contexts[0]
    (p,) = b.programs(0)
    assert heard == [("ctx", 0, "create", ctx.context_id), ("module", 0, p.code_base, p.module.filename)]
    b.set_listener(None)
    for bad in (lambda: b.device(1), lambda: b.warps(-1)):
        with pytest.raises(BackendError) as ei:
            bad()
        assert ei.value.code == "INVALID_DEVICE"
    w = b.warps(0)[0]
    with pytest.raises(BackendError) as ei:
        b.registers(0, w.sm, w.wp, 99)
    assert ei.value.code == "INVALID_LANE"
    with pytest.raises(BackendError) as ei:
        b.registers(0, w.sm, 9999, 0)
    assert ei.value.code == "INVALID_WARP"
    with pytest.raises(BackendError) as ei:
        b.registers(0, 9999, 0, 0)
    assert ei.value.code == "INVALID_SM"


def test_barrier_deadlock_core_shows_the_blocked_warps(tmp_path, monkeypatch):
    mod = _load_from_file(tmp_path, STUCK, "stuck.cu")
    out = gpudbg.zeros(64, np.int32)
    r, path, _seen = _run_to_core(tmp_path, monkeypatch, lambda: mod.stuck[1, 64](out))
    assert r.hang is not None
    b = open_core(path)
    (p,) = b.programs(0)
    warps = b.warps(0)
    assert len(warps) == 2 and all(w.at_barrier and not w.broken for w in warps)
    bars = set()
    for w in warps:
        assert w.active_mask == w.valid_mask == 0xFFFFFFFF
        for lane in w.lanes:
            inst = p.code[p.pc_of_address(lane.pc)].inst
            assert lane.at_barrier and lane.exception is E.CUDBG_EXCEPTION_NONE
            assert inst.opcode in ("bar", "barrier") and lane.pc == w.pc
            bars.add(inst.operands[0].value)
    assert bars == {0, 1}
    assert b.fault_report().hang is r.hang and r.pc in {w.pc for w in warps}
    mem = np.frombuffer(b.read_memory(0, MemorySpace.GLOBAL, out.ptr, 256), np.int32)
    assert mem.tolist() == list(range(64))


def test_in_memory_modules_carry_their_ptx(tmp_path, monkeypatch):
    """gpudbg.compile loads from memory: the driver keeps the text on the
    loaded module (`ptx_text`) so the core embeds it; a module whose text
    was dropped gets a note saying why instead."""
    mod = gpudbg.compile(STAGE, name="mem_stage.cu")
    assert mod.handle.loaded.ptx_text == mod.ptx
    d_in = gpudbg.zeros(128, np.int32)
    d_out = gpudbg.zeros(128, np.int32)
    _r, path, _ = _run_to_core(tmp_path, monkeypatch, lambda: mod.stage[2, 64](d_in, d_out, 3))
    b = open_core(path)
    (p,) = b.programs(0)
    assert p.module.filename == "mem_stage.ptx" and p.functions["stage"].entry_pc == 0
    # a source compiled in this process is embedded from gpudbg.compile's record
    assert "tile[63 - t]" in b.sources(0, p.code_base)["mem_stage.cu"]
    gpudbg.Device(0).reset()
    mod = gpudbg.compile(STAGE, name="mem_stage.cu")
    mod.handle.loaded.ptx_text = None
    d_in = gpudbg.zeros(128, np.int32)
    d_out = gpudbg.zeros(128, np.int32)
    _r, path, _ = _run_to_core(tmp_path, monkeypatch, lambda: mod.stage[2, 64](d_in, d_out, 3))
    b = open_core(path)
    assert b.programs(0) == [] and any("was not kept" in n for n in b.notes), b.notes
    assert b.core.module_entry(b.grids(0)[0].module_id)["name"] == "mem_stage.ptx"
    assert b.grids(0)[0].kernel == "stage" and b.warps(0)[0].function == "stage"


def test_a_session_over_the_core_reads_source_and_variables(stage_core):
    from gpudbg.debug.events import EventKind
    from gpudbg.debug.session import Session
    r = stage_core["report"]
    s = Session(open_core(stage_core["path"]))
    kinds = []
    while (ev := s.next_event()) is not None:
        kinds.append(ev.kind)
    assert kinds == [EventKind.CTX_CREATE, EventKind.ELF_IMAGE_LOADED]
    file, line = s.source_line(0, r.pc)
    assert (Path(file).name, line) == ("stage.cu", r.source_line)
    assert s.function_at(0, r.pc)[0] == "stage"
    assert [w for w in s.broken_warps(0) if (w.sm, w.wp) == (r.sm, r.warp)]
    value = s.read_variable(0, r.sm, r.warp, r.lane, "i")
    assert int.from_bytes(value.data[:4], "little") == 70
    t = s.read_variable(0, r.sm, r.warp, r.lane, "t")
    assert int.from_bytes(t.data[:4], "little") == r.thread[0]
    with pytest.raises(Exception, match="not being run"):
        s.resume(0)


def test_core_lists_its_dumped_memory_as_allocations(stage_core):
    b = open_core(stage_core["path"])
    regions = b.allocations(0)
    assert regions and all(r.size > 0 for r in regions)
    assert [r.base for r in regions] == sorted(r.base for r in regions)
    for r in regions[:3]:
        assert len(b.read_memory(0, MemorySpace.GLOBAL, r.base, min(r.size, 16))) == min(r.size, 16)
