"""Seed dumps written by gpudbg itself, for the two dump fuzz targets: the
simulator runs kernels that fault (an out-of-bounds store after a shared
memory stage, a fault inside a called device function) or deadlock at a
barrier, with coredump and devcoredump capture on, and the files it wrote
are read back.

The one idea: seeds are normalized (time stamps, thread and process ids,
command line zeroed) so a fuzz run is deterministic by its seed across
processes. Kernels come from CUDA C via NVRTC (with line info, so a core's
note carries sources and a line table); without NVRTC the hand-written PTX
versions are used.
"""
from __future__ import annotations

import contextlib
import functools
import io
import os
import tempfile
from pathlib import Path

import numpy as np

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

NESTED = r"""
__device__ __noinline__ int poke(int *p, int k) {
    int local[8];
    for (int j = 0; j < 8; ++j) local[j] = k * j;
    p[k << 22] = local[k & 7];
    return local[3];
}
extern "C" __global__ void nested(int *out, int k) {
    out[threadIdx.x] = threadIdx.x == 5 ? poke(out, k) : 1;
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

# The same faults without NVRTC: a store far out of bounds.
HAND_PTX = r"""
.version 8.0
.target sm_80
.address_size 64
.visible .entry oob(.param .u64 out, .param .u32 bad)
{
    .reg .b32 %r<4>;
    .reg .b64 %rd<5>;
    .reg .pred %p<2>;
    ld.param.u64 %rd1, [out];
    ld.param.u32 %r1, [bad];
    mov.u32 %r2, %tid.x;
    cvta.to.global.u64 %rd2, %rd1;
    mul.wide.u32 %rd3, %r2, 4;
    add.s64 %rd4, %rd2, %rd3;
    st.global.u32 [%rd4], %r2;
    setp.ne.s32 %p1, %r2, %r1;
    @%p1 bra DONE;
    add.s64 %rd4, %rd4, 268435456;
    st.global.u32 [%rd4], %r2;
DONE:
    ret;
}
"""


def _launches():
    """Callables that each load a module and launch a kernel that faults or
    hangs (each is run on a fresh context: a fault leaves the old one sticky)."""
    import gpudbg

    def cuda(source: str, name: str, kernel: str, grid, block, *args, options=()):
        def launch():
            m = gpudbg.compile(source, name=name, options=list(options))
            getattr(m, kernel)[grid, block](*[gpudbg.to_device(a) if isinstance(a, np.ndarray) else a
                                              for a in args])
        return launch

    try:
        gpudbg.compile_ptx(STAGE, name="stage.cu")
    except gpudbg.CompileError:
        return [lambda: gpudbg.Module.from_ptx(HAND_PTX, name="oob.ptx").oob[1, 64](
            gpudbg.zeros(64, np.int32), 7)]
    data = np.arange(128, dtype=np.int32)
    return [cuda(STAGE, "stage.cu", "stage", 2, 64, data, np.zeros(128, np.int32), 70),
            cuda(NESTED, "nested.cu", "nested", 1, 32, np.zeros(128, np.int32), 3, options=["-G"]),
            cuda(STUCK, "stuck.cu", "stuck", 1, 64, np.zeros(128, np.int32))]


def _run_faulting(hook_core, devcore_dir: Path | None) -> None:
    """Run every faulting launch; `hook_core(gpu, fault)` sees each fault
    the coredump hook would see; devcoredumps go to `devcore_dir`."""
    import gpudbg
    import gpudbg.dump.coredump as coredump
    from gpudbg.dump.devcoredump import capture

    real = coredump.on_kernel_fault
    env = {k: os.environ.get(k) for k in ("GPUDBG_COREDUMP_ON_EXCEPTION", "GPUDBG_HANG_TIMEOUT")}
    os.environ["GPUDBG_COREDUMP_ON_EXCEPTION"] = "1"
    coredump.on_kernel_fault = hook_core
    if devcore_dir is not None:
        capture.enable(devcore_dir)
    try:
        for launch in _launches():
            try:
                launch()
                gpudbg.synchronize()
            except gpudbg.KernelFaultError:
                pass
            gpudbg.Device(0).reset()
    finally:
        coredump.on_kernel_fault = real
        if devcore_dir is not None:
            capture.disable()
        for k, v in env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@functools.lru_cache(maxsize=1)
def _seeds() -> tuple[tuple[bytes, ...], tuple[bytes, ...]]:
    """(coredumps, devcoredumps) of one run of the faulting launches: one
    core per fault (and a lightweight one of the first), normalized."""
    from gpudbg.dump.coredump import CUDBG_COREDUMP_LIGHTWEIGHT_FLAGS, build_coredump
    from gpudbg.dump.coredump import snapshot as S
    from gpudbg.dump.devcoredump import parse, write
    from gpudbg.dump.devcoredump.model import DumpTime

    cores: list[bytes] = []

    def hook(_gpu, fault) -> None:
        if getattr(fault, "wave", None) is None or getattr(fault, "report", None) is None:
            return
        snap = S.snapshot_from_wave(fault.wave, fault.report)
        snap.timestamp = 0
        for c in snap.contexts:
            c.tid = 0
        for g in snap.grids:
            g.host_tid = 0
        cores.append(build_coredump(snap))
        if len(cores) == 1:
            cores.append(build_coredump(snap, CUDBG_COREDUMP_LIGHTWEIGHT_FLAGS))

    devcores = []
    with tempfile.TemporaryDirectory(prefix="gpudbg-fuzz-") as tmp:
        with contextlib.redirect_stderr(io.StringIO()):   # "devcoredump written to ..." lines
            _run_faulting(hook, Path(tmp))
        for path in sorted(Path(tmp).glob("*.devcore")):
            dump = parse(path.read_bytes())
            dump.time, dump.comm, dump.cmdline = DumpTime(0, 0), "fuzz", "fuzz"
            devcores.append(write(dump).encode())
    return tuple(cores), tuple(devcores)


def gpudbg_coredumps() -> tuple[bytes, ...]:
    """One `.nvcudmp` per faulting launch, and a lightweight one."""
    return _seeds()[0]


def gpudbg_devcoredumps() -> tuple[bytes, ...]:
    """The devcoredumps the faulting launches wrote, normalized."""
    return _seeds()[1]
