"""Special registers (%tid, %laneid, %clock64, ...): readers over the wave's
layout arrays and the launch's uniform values.

Per-thread registers index the layout arrays; uniform ones (%ntid, %nctaid,
%nsmid, %gridid) are numpy scalars that broadcast. Clocks read the
simulated device clock, which advances with executed work, so they are
monotonic and repeatable rather than tied to host time.
"""
from __future__ import annotations

import numpy as np

from gpudbg.ptx import ir
from gpudbg.sim import cluster, reserved_smem
from gpudbg.sim.ops.base import UnsupportedInstruction

_AXES = {"x": 0, "y": 1, "z": 2}


def _per_thread(get):
    def read(X, idx):
        a = get(X)
        return a if idx is None else a[idx]
    return read


def _lanemask(kind):
    def get(X):
        lane = X.layout.lane.astype(np.uint64)
        one = np.uint64(1)
        if kind == "eq":
            m = one << lane
        elif kind == "lt":
            m = (one << lane) - one
        elif kind == "le":
            m = (one << (lane + one)) - one
        elif kind == "gt":
            m = ~((one << (lane + one)) - one)
        else:  # ge
            m = ~((one << lane) - one)
        return (m & np.uint64(0xFFFFFFFF)).astype(np.uint32)
    return get


def special_reader(tc, sreg: ir.SpecialRegister):
    name, comp = sreg.name, sreg.component
    axis = _AXES.get(comp) if comp is not None else None
    if name == "%tid":
        return _per_thread(lambda X: X.layout.tid[axis])
    if name == "%ctaid":
        return _per_thread(lambda X: X.layout.ctaid[axis])
    if name == "%ntid":
        return lambda X, idx: np.uint32(X.block_dim[axis])
    if name == "%nctaid":
        return lambda X, idx: np.uint32(X.grid_dim[axis])
    if name == "%laneid":
        return _per_thread(lambda X: X.layout.lane)
    if name == "%warpid":
        return _per_thread(lambda X: X.layout.warp)
    if name == "%nwarpid":
        return lambda X, idx: np.uint32(X.model.warp_slots_per_sm)
    if name == "%smid":
        return _per_thread(lambda X: X.layout.sm)
    if name == "%nsmid":
        return lambda X, idx: np.uint32(X.model.sm_count)
    if name == "%gridid":
        return lambda X, idx: np.uint64(X.grid_id)
    if name.startswith("%lanemask_"):
        return _per_thread(_lanemask(name[len("%lanemask_"):]))
    pc = tc.pc
    if name == "%clock":
        return lambda X, idx: np.uint32(X.clock(pc) & 0xFFFFFFFF)
    if name == "%clock_hi":
        return lambda X, idx: np.uint32((X.clock(pc) >> 32) & 0xFFFFFFFF)
    if name == "%clock64":
        return lambda X, idx: np.uint64(X.clock(pc))
    if name == "%globaltimer":
        return lambda X, idx: np.uint64(X.globaltimer())
    if name == "%globaltimer_lo":
        return lambda X, idx: np.uint32(X.globaltimer() & 0xFFFFFFFF)
    if name == "%globaltimer_hi":
        return lambda X, idx: np.uint32(X.globaltimer() >> 32)
    if name.startswith("%envreg"):
        k = int(name[len("%envreg"):])
        return lambda X, idx: np.uint32(X.envregs[k])
    if name == "%dynamic_smem_size":
        return lambda X, idx: np.uint32(X.dynamic_shared)
    if name == "%total_smem_size":
        # static + dynamic shared memory of the block (what the launch gave it)
        return lambda X, idx: np.uint32(reserved_smem.user_shared(X.function, X.dynamic_shared))
    if name == "%aggr_smem_size":
        # the same plus the system's reserved shared memory, which hardware
        # sets aside for every block whether or not the kernel names it
        return lambda X, idx: np.uint32(reserved_smem.user_shared(X.function, X.dynamic_shared)
                                        + X.model.reserved_shared_per_block)
    if name.startswith("%reserved_smem_offset_"):
        which = name[len("%reserved_smem_offset_"):]
        if which not in ("begin", "end", "cap") and which not in {
                str(k) for k in range(reserved_smem.OFFSET_REGISTERS)}:
            raise UnsupportedInstruction(f"special register {name} does not exist (the ISA defines "
                                         "%reserved_smem_offset_begin, _end, _cap, _0 and _1)")
        reserved_smem.mark_used(tc.program)
        return lambda X, idx: np.uint32(reserved_smem.offset_register(*X.reserved_smem, which))
    if name == "%current_graph_exec":
        # the device graph being executed; 0 when the kernel is not part of
        # one, which is always the case here (no device-side graph launch)
        return lambda X, idx: np.uint64(0)
    if name.startswith("%pm"):
        return lambda X, idx: np.uint32(0)
    if name == "%is_explicit_cluster":
        return lambda X, idx: np.bool_(X.cluster_dim != (1, 1, 1))
    if name == "%cluster_ctarank":
        return lambda X, idx: cluster.lane_ranks(X, idx).astype(np.uint32)
    if name == "%cluster_ctaid":
        return lambda X, idx: cluster.rank_coords(cluster.lane_ranks(X, idx), X.cluster_dim)[axis].astype(np.uint32)
    if name == "%clusterid":
        return lambda X, idx: (X.layout.ctaid[axis] if idx is None else X.layout.ctaid[axis][idx]) \
            // np.uint32(X.cluster_dim[axis])
    if name == "%nclusterid":
        return lambda X, idx: np.uint32(X.grid_dim[axis] // X.cluster_dim[axis])
    if name == "%cluster_nctaid":
        return lambda X, idx: np.uint32(X.cluster_dim[axis])
    if name == "%cluster_nctarank":
        return lambda X, idx: np.uint32(cluster.size(X.cluster_dim))
    raise UnsupportedInstruction(f"special register {name}{'.' + comp if comp else ''} is not supported")
