"""synccheck: __syncthreads reached by part of a warp, barrier thread
counts that do not fit, and warp-synchronous member masks that leave out
the executing lane, name exited or absent lanes, or disagree; each bug
program has a clean twin that must stay silent (threads that exited
release a barrier, full-mask shuffles, __activemask() ballots in a branch,
named barriers with correct counts), under the default and random
schedules."""
from __future__ import annotations

import numpy as np
import pytest
from sanitizer_harness import checked

import gpudbg
from gpudbg.sanitizer.config import Schedule
from gpudbg.sanitizer.findings import FINDING_SCHEMA, Severity, ToolName

DIVERGENT = "Barrier error detected. Divergent thread(s) in warp."
INVALID = "Barrier error detected. Invalid arguments."


def line_of(src: str, marker: str) -> int:
    hits = [i for i, text in enumerate(src.splitlines(), 1) if text.rstrip().endswith(marker)]
    assert len(hits) == 1, marker
    return hits[0]


def run(src: str, kernel: str, grid, block, *args, name: str = "sync.cu", defines=(), **options):
    """Launch under synccheck; (findings, printed texts, device results)."""
    with checked("synccheck", **options) as rep:
        args = tuple(gpudbg.to_device(a) if isinstance(a, np.ndarray) else a for a in args)
        m = gpudbg.compile(src, name=name, options=[f"-D{d}" for d in defines])
        m.get_function(kernel)[grid, block](*args)
        gpudbg.Device().synchronize()
        results = [a.to_host() if hasattr(a, "to_host") else a for a in args]
    return rep.findings, rep.texts, results


RANDOM = [dict(schedule=Schedule.RANDOM, seed=s) for s in (1, 7)]
SCHEDULES = [dict()] + RANDOM

# ---------------------------------------------------------------- divergent barriers

BRANCH_SRC = r"""
extern "C" __global__ void halves(int *out) {
    __shared__ int s[128];
    int t = threadIdx.x;
    s[t] = t;
#ifdef FIXED
    __syncthreads();
    if (t % 32 < 16) out[t] = s[127 - t];
#else
    if (t % 32 < 16) {
        __syncthreads();                          // BARRIER
        out[t] = s[127 - t];
    }
#endif
    out[t + 128] = t;                             // every lane has work after the branch
}
"""


@pytest.mark.parametrize("options", SCHEDULES)
def test_syncthreads_in_a_branch_half_of_each_warp_takes(options):
    findings, texts, _ = run(BRANCH_SRC, "halves", 1, 128, np.zeros(256, np.int32), **options)
    (f,) = findings
    assert (f.tool, f.kind, f.severity) == (ToolName.SYNCCHECK, "divergent_barrier", Severity.ERROR)
    assert f.title == DIVERGENT
    assert f.count == 64                          # the 16 lanes of each of 4 warps that arrived
    assert (f.site.source_file, f.site.source_line) == ("sync.cu", line_of(BRANCH_SRC, "// BARRIER"))
    assert f.site.thread[0] % 32 < 16 and f.site.block == (0, 0, 0)
    assert f.details[0] == f"at {f.site.where}" and f.details[1].startswith("by thread (")
    assert texts[0].startswith("========= " + DIVERGENT)


@pytest.mark.parametrize("options", SCHEDULES)
def test_syncthreads_after_the_branch_is_silent(options):
    findings, _, (out,) = run(BRANCH_SRC, "halves", 1, 128, np.zeros(256, np.int32),
                              defines=["FIXED"], **options)
    assert findings == []
    t = np.arange(128)
    assert (out[:128][t % 32 < 16] == 127 - t[t % 32 < 16]).all()


REDUCE_SRC = r"""
extern "C" __global__ void reduce(const int *in, int *out) {
    __shared__ int s[64];
    int tx = threadIdx.x;
    s[tx] = in[blockIdx.x * blockDim.x + tx];
    __syncthreads();
    for (int st = blockDim.x / 2; st > 0; st >>= 1) {
#ifdef FIXED
        if (tx < st) s[tx] += s[tx + st];
        __syncthreads();
#else
        if (tx < st) {
            s[tx] += s[tx + st];
            __syncthreads();                      // INSIDE
        }
#endif
    }
    if (tx == 0) out[blockIdx.x] = s[0];
}
"""


def test_reduction_with_the_barrier_inside_the_condition():
    """compute-sanitizer's own synccheck example: at strides 16..1 part of
    warp 0 waits while its other lanes loop on."""
    findings, _, _ = run(REDUCE_SRC, "reduce", 2, 64, np.arange(128, dtype=np.int32),
                         np.zeros(2, np.int32))
    (f,) = findings
    assert f.kind == "divergent_barrier"
    assert f.site.source_line == line_of(REDUCE_SRC, "// INSIDE")
    assert f.count == 2 * (16 + 8 + 4 + 2 + 1)


@pytest.mark.parametrize("options", SCHEDULES)
def test_correct_reduction_is_silent(options):
    findings, _, (_, out) = run(REDUCE_SRC, "reduce", 2, 64, np.arange(128, dtype=np.int32),
                                np.zeros(2, np.int32), defines=["FIXED"], **options)
    assert findings == []
    assert out.tolist() == [sum(range(64)), sum(range(64, 128))]


EARLY_SRC = r"""
extern "C" __global__ void early(const int *in, int *out, int n) {
    __shared__ int s[64];
    int t = threadIdx.x;
    if (t >= n) return;
    s[t] = in[t];
    __syncthreads();
    out[t] = s[(t + 1) % n];
}
"""


@pytest.mark.parametrize("n", [40, 32, 7])
@pytest.mark.parametrize("options", SCHEDULES)
def test_barrier_with_exited_threads_is_silent(n, options):
    """Threads past n return: exited threads release the barrier (PTX),
    whether whole warps or part of one leave."""
    findings, _, (_, out, _) = run(EARLY_SRC, "early", 1, 64, np.arange(64, dtype=np.int32),
                                   np.zeros(64, np.int32), n, **options)
    assert findings == []
    assert out[:n].tolist() == [(t + 1) % n for t in range(n)]


# ---------------------------------------------------------------- barrier thread counts

NAMED_SRC = r"""
extern "C" __global__ void named(int *out) {
    int w = threadIdx.x / 32;
    out[threadIdx.x] = w;
#if defined(BAD_MULTIPLE)
    asm volatile("bar.sync 1, 48;");              // COUNT48
#elif defined(MISMATCH)
    int c = w == 0 ? 64 : 96;
    asm volatile("bar.sync 1, %0;" :: "r"(c));     // MIXED
#else
    if (w < 2) asm volatile("bar.sync 1, 64;");
    else asm volatile("bar.sync 2, 64;");
#endif
    out[threadIdx.x + 128] = w;
}
"""


@pytest.mark.parametrize("options", SCHEDULES)
def test_named_barriers_with_correct_counts_are_silent(options):
    findings, _, (out,) = run(NAMED_SRC, "named", 1, 128, np.zeros(256, np.int32), **options)
    assert findings == []
    assert out[128:].tolist() == [t // 32 for t in range(128)]


def test_thread_count_not_a_multiple_of_the_warp_size():
    findings, _, _ = run(NAMED_SRC, "named", 1, 64, np.zeros(256, np.int32), defines=["BAD_MULTIPLE"])
    (f,) = findings
    assert (f.kind, f.title) == ("barrier_invalid_arguments", INVALID)
    assert f.site.source_line == line_of(NAMED_SRC, "// COUNT48")
    assert "thread count 48 is not a positive multiple of the warp size (32) (64 threads)" in f.details
    assert "64 threads arrived at barrier 1 for a thread count of 48 (64 threads)" in f.details


def test_threads_of_a_block_giving_different_counts():
    with pytest.raises(gpudbg.KernelFaultError):      # and the 96 never arrive: a deadlock
        run(NAMED_SRC, "named", 1, 64, np.zeros(256, np.int32), defines=["MISMATCH"])
    with checked("synccheck") as rep:
        m = gpudbg.compile(NAMED_SRC, name="sync.cu", options=["-DMISMATCH"])
        try:
            m.named[1, 64](gpudbg.zeros(256, np.int32))
            gpudbg.Device().synchronize()
        except gpudbg.KernelFaultError:
            pass
    (f,) = rep.findings
    assert f.kind == "barrier_invalid_arguments" and f.count == 32
    assert f.site.thread == (32, 0, 0) and f.site.source_line == line_of(NAMED_SRC, "// MIXED")
    assert f.details[2] == "threads of one block give barrier 1 different thread counts (64 and 96) (32 threads)"


# ---------------------------------------------------------------- warp-synchronous masks

SHFL_SRC = r"""
extern "C" __global__ void shfl(int *out) {
    int v = threadIdx.x;
#ifdef FIXED
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    if (threadIdx.x % 32 < 8)
        out[threadIdx.x + 64] = __ballot_sync(__activemask(), v & 1);
#else
    v += __shfl_down_sync(0x0000ffffu, v, 1);     // SHFL
#endif
    out[threadIdx.x] = v;
}
"""


@pytest.mark.parametrize("options", SCHEDULES)
def test_shfl_mask_that_leaves_out_active_lanes(options):
    findings, _, _ = run(SHFL_SRC, "shfl", 1, 64, np.zeros(128, np.int32), **options)
    (f,) = findings
    assert (f.kind, f.title) == ("warp_sync_invalid_arguments", INVALID)
    assert f.count == 32                          # lanes 16..31 of both warps
    assert f.site.source_line == line_of(SHFL_SRC, "// SHFL")
    lane = f.site.thread[0] % 32                  # the first lane found (warp order is the schedule's)
    assert lane == 16
    assert f.details[2] == ("shfl.sync member mask 0x0000ffff of lane 16 does not include the "
                            "executing lane (32 threads)")


@pytest.mark.parametrize("options", SCHEDULES)
def test_full_mask_shuffles_and_activemask_ballot_in_a_branch_are_silent(options):
    findings, _, (out,) = run(SHFL_SRC, "shfl", 1, 64, np.zeros(128, np.int32), defines=["FIXED"],
                              **options)
    assert findings == []
    assert out[0] == sum(range(32)) and out[32] == sum(range(32, 64))


SYNCWARP_SRC = r"""
extern "C" __global__ void sw(int *out) {
    int lane = threadIdx.x % 32;
    if (lane >= 16) return;
    out[threadIdx.x] = lane;
#ifdef FIXED
    __syncwarp(0x0000ffffu);
#else
    __syncwarp();                                 // SYNCWARP
#endif
    out[threadIdx.x + 64] = out[threadIdx.x ^ 1];
}
"""


@pytest.mark.parametrize("options", SCHEDULES)
def test_syncwarp_mask_naming_exited_lanes(options):
    findings, _, _ = run(SYNCWARP_SRC, "sw", 1, 64, np.zeros(128, np.int32), **options)
    (f,) = findings
    assert f.kind == "warp_sync_invalid_arguments" and f.count == 32
    assert f.site.source_line == line_of(SYNCWARP_SRC, "// SYNCWARP")
    assert f.details[2] == ("bar.warp.sync member mask 0xffffffff of lane 0 names lane(s) that "
                            "have exited (32 threads)")


@pytest.mark.parametrize("options", SCHEDULES)
def test_syncwarp_over_the_remaining_lanes_is_silent(options):
    findings, _, _ = run(SYNCWARP_SRC, "sw", 1, 64, np.zeros(128, np.int32), defines=["FIXED"], **options)
    assert findings == []


MASKS_SRC = r"""
extern "C" __global__ void masks(int *out) {
    int lane = threadIdx.x % 32;
    int v = lane;
#if defined(ABSENT)
    if (lane < 8) v = __shfl_sync(0xffffffffu, v, 0);      // ABSENT
#elif defined(DISAGREE)
    unsigned m = lane < 16 ? 0xffffffffu : 0xffff0000u;
    __syncwarp(m);                                         // DISAGREE
#else
    unsigned m = lane < 16 ? 0x0000ffffu : 0xffff0000u;    // two independent halves
    __syncwarp(m);
#endif
    out[threadIdx.x] = v;
}
"""


def test_full_mask_shuffle_inside_a_branch_names_absent_lanes():
    findings, _, _ = run(MASKS_SRC, "masks", 1, 32, np.zeros(32, np.int32), defines=["ABSENT"])
    (f,) = findings
    assert f.kind == "warp_sync_invalid_arguments" and f.count == 8
    assert f.site.source_line == line_of(MASKS_SRC, "// ABSENT")
    assert f.details[2] == ("shfl.sync member mask 0xffffffff of lane 0 names live lane(s) that "
                            "are not executing it (8 threads)")


def test_lanes_naming_each_other_with_different_masks():
    findings, _, _ = run(MASKS_SRC, "masks", 1, 32, np.zeros(32, np.int32), defines=["DISAGREE"])
    (f,) = findings
    assert f.site.source_line == line_of(MASKS_SRC, "// DISAGREE") and f.site.thread == (0, 0, 0)
    assert f.details[2] == ("bar.warp.sync member mask 0xffffffff of lane 0 names lane(s) "
                            "executing it with a different mask (16 threads)")
    assert f.count == 16


def test_disjoint_half_warp_masks_are_silent():
    findings, _, _ = run(MASKS_SRC, "masks", 1, 32, np.zeros(32, np.int32))
    assert findings == []


def test_findings_match_the_json_schema():
    jsonschema = pytest.importorskip("jsonschema")
    findings, _, _ = run(BRANCH_SRC, "halves", 1, 128, np.zeros(256, np.int32))
    findings += run(SHFL_SRC, "shfl", 1, 64, np.zeros(128, np.int32))[0]
    assert len(findings) == 2
    for f in findings:
        jsonschema.validate(f.as_dict(), FINDING_SCHEMA)
