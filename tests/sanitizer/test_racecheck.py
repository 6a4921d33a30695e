"""racecheck: shared-memory hazards between threads of a block with no
barrier (or __syncwarp) between them, counted per access and reported as
compute-sanitizer words them, and races between blocks in global memory;
every bug program has a clean twin that must stay silent."""
from __future__ import annotations

import numpy as np
import pytest
from sanitizer_harness import checked

import gpudbg
from gpudbg.runtime import mc
from gpudbg.sanitizer.config import Schedule
from gpudbg.sanitizer.findings import FINDING_SCHEMA

MAX_DYNAMIC_SHARED = 8      # mcFuncAttributeMaxDynamicSharedMemorySize


def line_of(src: str, marker: str) -> int:
    """1-based line of the source line carrying the comment `marker`."""
    hits = [i for i, text in enumerate(src.splitlines(), 1) if text.rstrip().endswith(marker)]
    assert len(hits) == 1, marker
    return hits[0]


def run(src: str, kernel: str, grid, block, *args, name: str = "race.cu", shared: int = 0,
        **options):
    """Launch `kernel` under racecheck (numpy array arguments go to the
    device first); (findings, printed texts, arguments after the launch)."""
    with checked("racecheck", **options) as rep:
        args = tuple(gpudbg.to_device(a) if isinstance(a, np.ndarray) else a for a in args)
        m = gpudbg.compile(src, name=name)
        k = m.get_function(kernel)
        if shared > 48 * 1024:
            mc.mcFuncSetAttribute(k.handle, MAX_DYNAMIC_SHARED, shared)
        k[grid, block, 0, shared](*args)
        gpudbg.Device().synchronize()
        results = [a.to_host() if hasattr(a, "to_host") else a for a in args]
    return rep.findings, rep.texts, results


def only(findings, kind: str):
    got = [f for f in findings if f.kind == kind]
    assert got, f"no {kind} in {[f.kind for f in findings]}"
    return got


# ---------------------------------------------------------------- RAW

RAW_SRC = r"""
extern "C" __global__ void neighbours(const int *in, int *out) {
    __shared__ int s[64];
    int t = threadIdx.x;
    s[t] = in[t];                              // W
#ifdef SYNC
    __syncthreads();
#endif
    out[t] = s[(t + 1) % 64];                  // R
}
"""


def test_missing_syncthreads_is_a_read_after_write_naming_both_lines():
    inp = np.arange(64, dtype=np.int32)
    findings, texts, (_, out) = run(RAW_SRC, "neighbours", 1, 64, inp, np.zeros(64, np.int32))
    assert len(findings) == 1
    f = findings[0]
    assert f.kind == "shared_race_raw"
    assert f.site.source_line == line_of(RAW_SRC, "// W")
    assert f.other_site.source_line == line_of(RAW_SRC, "// R")
    assert f.count == 64                 # every thread reads a word its neighbour wrote
    assert f.title.startswith("Error: Race reported between Write access at 0x")
    assert f"race.cu:{line_of(RAW_SRC, '// W')}:neighbours" in f.title
    assert f.details[0].startswith("and Read access at 0x")
    assert f.details[0].endswith(f"race.cu:{line_of(RAW_SRC, '// R')}:neighbours [64 hazards]")
    # the example pair: a reader and the neighbour that wrote its word
    reader, writer = f.other_site.thread[0], f.site.thread[0]
    assert writer == (reader + 1) % 64
    assert f.address == 4 * writer and f.size == 4
    assert "__shared__ offset" in f.details[1]
    assert texts and "========= Error: Race reported between Write access" in texts[0]
    assert "[64 hazards]" in texts[0]
    assert np.array_equal(out, np.roll(np.arange(64), -1))


def test_syncthreads_between_write_and_read_is_silent():
    src = "#define SYNC\n" + RAW_SRC
    inp = np.arange(64, dtype=np.int32)
    findings, _, _ = run(src, "neighbours", 1, 64, inp, np.zeros(64, np.int32))
    assert findings == []


COUNT_SRC = r"""
extern "C" __global__ void some(int *out, int k) {
    __shared__ volatile int s[128];
    int t = threadIdx.x;
    s[t] = t;                                  // W
    if (t < k)
        out[t] = s[t + 1];                     // R
}
"""


@pytest.mark.parametrize("k", [1, 5, 40])
def test_hazard_count_is_the_number_of_racing_accesses(k):
    findings, _, (out, _) = run(COUNT_SRC, "some", 1, 128, np.zeros(128, np.int32), k)
    assert [(f.kind, f.count) for f in findings] == [("shared_race_raw", k)]
    assert f"[{k} hazard{'' if k == 1 else 's'}]" in findings[0].details[0]


# ---------------------------------------------------------------- WAR and WAW

WAR_SRC = r"""
extern "C" __global__ void shift(int *data) {
    __shared__ int s[64];
    int t = threadIdx.x;
    s[t] = data[t];
    __syncthreads();
    int v = s[(t + 1) % 64];                   // R
#ifdef SYNC
    __syncthreads();
#endif
    s[t] = v;                                  // W
    __syncthreads();
    data[t] = s[t];
}
"""


def test_overwriting_what_a_neighbour_reads_is_a_write_after_read():
    data = np.arange(64, dtype=np.int32)
    findings, _, _ = run(WAR_SRC, "shift", 1, 64, data)
    assert [f.kind for f in findings] == ["shared_race_war"]
    f = findings[0]
    assert f.title.startswith("Error: Race reported between Read access")
    assert f.details[0].startswith("and Write access")
    assert (f.site.source_line, f.other_site.source_line) == (line_of(WAR_SRC, "// R"),
                                                              line_of(WAR_SRC, "// W"))
    assert f.count == 64


def test_write_after_read_with_a_barrier_is_silent():
    data = np.arange(64, dtype=np.int32)
    findings, _, (out,) = run("#define SYNC\n" + WAR_SRC, "shift", 1, 64, data)
    assert findings == []
    assert np.array_equal(out, np.roll(np.arange(64), -1))


WAW_SRC = r"""
extern "C" __global__ void twice(int *out) {
    __shared__ int s[64];
    int t = threadIdx.x;
    s[t] = 1;                                  // W1
#ifdef SYNC
    __syncthreads();
#endif
    s[(t + 1) % 64] = 2;                       // W2
    __syncthreads();
    out[t] = s[t];
}
"""


def test_two_threads_writing_one_word_without_a_barrier_is_write_after_write():
    findings, _, _ = run(WAW_SRC, "twice", 1, 64, np.zeros(64, np.int32))
    assert [f.kind for f in findings] == ["shared_race_waw"]
    f = findings[0]
    assert (f.site.source_line, f.other_site.source_line) == (line_of(WAW_SRC, "// W1"),
                                                              line_of(WAW_SRC, "// W2"))
    assert f.title.startswith("Error: Race reported between Write access")
    assert f.details[0].startswith("and Write access") and f.count == 64


def test_ordered_writes_are_silent():
    findings, _, (out,) = run("#define SYNC\n" + WAW_SRC, "twice", 1, 64, np.zeros(64, np.int32))
    assert findings == [] and (out == 2).all()


SAME_STORE_SRC = r"""
extern "C" __global__ void collide(int *out, int share) {
    __shared__ int s[64];
    int t = threadIdx.x;
    s[t / share] = t;                          // W
    __syncthreads();
    out[t] = s[t / share];
}
"""


def test_lanes_of_one_store_writing_one_word_race():
    # 64 threads, four per word: three of each four collide with the first
    findings, _, _ = run(SAME_STORE_SRC, "collide", 1, 64, np.zeros(64, np.int32), 4)
    assert [(f.kind, f.count) for f in findings] == [("shared_race_waw", 48)]
    f = findings[0]
    assert f.site.source_line == f.other_site.source_line == line_of(SAME_STORE_SRC, "// W")
    assert f.site.thread != f.other_site.thread


def test_lanes_of_one_store_writing_distinct_words_and_reading_shared_ones_are_silent():
    findings, _, _ = run(SAME_STORE_SRC, "collide", 1, 64, np.zeros(64, np.int32), 1)
    assert findings == []


BYTES_SRC = r"""
extern "C" __global__ void bytes(unsigned char *out, int other) {
    __shared__ unsigned char c[64];
    int t = threadIdx.x;
    c[t] = (unsigned char)t;                   // W
    out[t] = c[t ^ other];                     // R
}
"""


def test_bytes_of_one_word_written_by_different_threads_do_not_race():
    """Byte granularity: neighbours share a word but not a byte."""
    findings, _, (out, _) = run(BYTES_SRC, "bytes", 1, 64, np.zeros(64, np.uint8), 0)
    assert findings == [] and np.array_equal(out, np.arange(64))


def test_reading_a_neighbours_byte_races():
    findings, _, _ = run(BYTES_SRC, "bytes", 1, 64, np.zeros(64, np.uint8), 1)
    assert [(f.kind, f.count, f.size) for f in findings] == [("shared_race_raw", 64, 1)]


WIDE_SRC = r"""
extern "C" __global__ void wide(float *out, int sync) {
    __shared__ float4 s[64];
    int t = threadIdx.x;
    s[t] = make_float4(t, t, t, t);                           // W
    if (sync) __syncthreads();
    float4 v = s[(t + 1) % 64];                               // R
    out[t] = v.x + v.w;
}
"""


@pytest.mark.parametrize("sync", [0, 1])
def test_vector_accesses_are_one_hazard_per_thread(sync):
    """A 16-byte load racing a 16-byte store counts once per thread."""
    findings, _, _ = run(WIDE_SRC, "wide", 1, 64, np.zeros(64, np.float32), sync)
    expected = [] if sync else [("shared_race_raw", 64, 16)]
    assert [(f.kind, f.count, f.size) for f in findings] == expected


MIXED_SRC = r"""
extern "C" __global__ void mixed(unsigned char *out, int sync) {
    __shared__ int s[64];
    int t = threadIdx.x;
    s[t] = t * 0x01010101;                                    // W
    if (sync) __syncthreads();
    const unsigned char *b = (const unsigned char *)s;
    out[t] = b[4 * ((t + 1) % 64) + 3];                       // R
    out[64 + t] = b[4 * t + 2];                               // OWN
}
"""


@pytest.mark.parametrize("sync", [0, 1])
def test_words_written_then_read_as_bytes(sync):
    """Word stores, then byte loads: the shadow splits its units to bytes
    and still knows who wrote each byte (a thread's own bytes are fine)."""
    findings, _, (out, _) = run(MIXED_SRC, "mixed", 1, 64, np.zeros(128, np.uint8), sync)
    expected = [] if sync else [("shared_race_raw", 64, 1)]
    assert [(f.kind, f.count, f.size) for f in findings] == expected
    for f in findings:
        assert f.other_site.source_line == line_of(MIXED_SRC, "// R")
        assert f.address % 4 == 3
    assert np.array_equal(out[64:], np.arange(64, dtype=np.uint8))


# ---------------------------------------------------------------- warp-synchronous code

WARP_REDUCE_SRC = r"""
extern "C" __global__ void warp_reduce(const int *in, int *out) {
    __shared__ volatile int s[64];
    int t = threadIdx.x;
    s[t] = in[t];
    __syncthreads();
    if (t < 32) {
#ifndef SYNCWARP
        s[t] += s[t + 32];
        s[t] += s[t + 16];
        s[t] += s[t + 8];
        s[t] += s[t + 4];
        s[t] += s[t + 2];
        s[t] += s[t + 1];
#else
        int v = s[t];
        for (int d = 32; d > 0; d >>= 1) {
            v += s[t + d];
            __syncwarp();
            s[t] = v;
            __syncwarp();
        }
#endif
    }
    __syncthreads();
    if (t == 0) out[0] = s[0];
}
"""


def test_warp_synchronous_reduction_without_syncwarp_races():
    """No implicit warp synchrony since Volta: lanes of one warp reading
    what others wrote with no __syncwarp race (what compute-sanitizer
    reports)."""
    inp = np.arange(64, dtype=np.int32)
    findings, _, (_, out) = run(WARP_REDUCE_SRC, "warp_reduce", 1, 64, inp, np.zeros(1, np.int32))
    kinds = {f.kind for f in findings}
    assert "shared_race_raw" in kinds and "shared_race_war" in kinds
    for f in findings:
        assert f.site.block == f.other_site.block == (0, 0, 0)
        assert f.site.thread[0] < 32 and f.other_site.thread[0] < 32
    assert out[0] == sum(range(64))          # the schedule hides the bug


def test_warp_synchronous_reduction_with_syncwarp_is_silent():
    inp = np.arange(64, dtype=np.int32)
    findings, _, (_, out) = run("#define SYNCWARP\n" + WARP_REDUCE_SRC, "warp_reduce", 1, 64, inp,
                                np.zeros(1, np.int32))
    assert findings == []
    assert out[0] == sum(range(64))


SHFL_SRC = r"""
extern "C" __global__ void exchange(int *out) {
    __shared__ int s[32];
    int t = threadIdx.x;
    s[t] = t;                                  // W
#ifdef SYNCWARP
    __syncwarp();
#else
    int v = __shfl_sync(0xffffffffu, t, 0);    // a register exchange, not a memory fence
    out[32] = v;
#endif
    out[t] = s[t ^ 1];                         // R
}
"""


def test_shfl_sync_does_not_order_shared_memory():
    findings, _, _ = run(SHFL_SRC, "exchange", 1, 32, np.zeros(33, np.int32))
    assert [(f.kind, f.count) for f in findings] == [("shared_race_raw", 32)]


def test_syncwarp_orders_lanes_of_one_warp():
    findings, _, (out,) = run("#define SYNCWARP\n" + SHFL_SRC, "exchange", 1, 32,
                              np.zeros(33, np.int32))
    assert findings == [] and np.array_equal(out[:32], np.arange(32) ^ 1)


DIVERGED_SRC = r"""
extern "C" __global__ void halves(int *out, int sync) {
    __shared__ int s[32];
    int t = threadIdx.x;
    if (t < 16) {
        s[t] = t;
        if (sync) __syncwarp(0x0000ffffu);                     // the half that diverged
        out[t] = s[t ^ 1];                                    // R
    } else {
        s[t] = -t;
        out[t] = s[t];
    }
}
"""


@pytest.mark.parametrize("sync", [0, 1])
def test_syncwarp_with_the_mask_of_a_diverged_half(sync):
    findings, _, _ = run(DIVERGED_SRC, "halves", 1, 32, np.zeros(32, np.int32), sync)
    expected = [] if sync else [("shared_race_raw", 16)]
    assert [(f.kind, f.count) for f in findings] == expected


def test_syncwarp_does_not_order_lanes_of_different_warps():
    src = SHFL_SRC.replace("s[32]", "s[64]").replace("s[t ^ 1]", "s[t ^ 32]")
    findings, _, _ = run("#define SYNCWARP\n" + src, "exchange", 1, 64, np.zeros(65, np.int32))
    assert [(f.kind, f.count) for f in findings] == [("shared_race_raw", 64)]


TILE_SRC = r"""
#define TILE 16
extern "C" __global__ void matmul(const float *A, const float *B, float *C, int n) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
    float acc = 0.0f;
    for (int t = 0; t < n / TILE; ++t) {
        As[ty][tx] = A[row * n + t * TILE + tx];              // LOAD
        Bs[ty][tx] = B[(t * TILE + ty) * n + col];            // LOADB
        __syncthreads();
        for (int k = 0; k < TILE; ++k)
            acc += As[ty][k] * Bs[k][tx];                     // USE
#ifndef RACY
        __syncthreads();
#endif
    }
    C[row * n + col] = acc;
}
"""


def tiled(src: str, **options):
    rng = np.random.default_rng(7)
    a = rng.random((32, 32), dtype=np.float32)
    b = rng.random((32, 32), dtype=np.float32)
    findings, _, (_, _, c, _) = run(src, "matmul", (2, 2), (16, 16), a, b,
                                    np.zeros((32, 32), np.float32), 32, **options)
    return findings, c, a @ b


def test_tiled_matmul_is_silent():
    """Every row of a block reads one row of each tile: a broadcast that
    racecheck reduces to one lane per word, and orders by the barriers."""
    findings, c, expected = tiled(TILE_SRC)
    assert findings == [] and np.allclose(c, expected, rtol=1e-5)


def test_tiled_matmul_without_its_second_barrier_races():
    """The next tile's load overwrites words other threads are still reading."""
    src = "#define RACY\n" + TILE_SRC
    findings, _, _ = tiled(src)
    war = only(findings, "shared_race_war")
    use = line_of(src, "// USE")
    assert {(f.site.source_line, f.other_site.source_line) for f in war} == \
        {(use, line_of(src, "// LOAD")), (use, line_of(src, "// LOADB"))}
    assert all(f.site.block == f.other_site.block for f in war)


BROADCAST_SRC = r"""
extern "C" __global__ void broadcast(int *out, int writer) {
    __shared__ int s[16];
    int t = threadIdx.y * blockDim.x + threadIdx.x;
    if (t < 16) s[t] = t;
    __syncthreads();
    int v = s[t % 16];                                        // R
    if (t == writer) s[t % 16] = -1;                          // W
    out[t] = v;
}
"""


@pytest.mark.parametrize("block", [(16, 4), (64, 1)])
@pytest.mark.parametrize("writer", [0, 5, 63, 48])
def test_a_reader_overwriting_a_word_other_rows_read_races(block, writer):
    """Every row of 16 threads reads the same 16 words; whichever thread
    then writes one of them races with the other rows' reads of it (the
    last and the first reader of a word are remembered: a 2-D block's rows
    and a 1-D block's repeating lanes)."""
    findings, _, _ = run(BROADCAST_SRC, "broadcast", 1, block, np.zeros(64, np.int32), writer)
    assert [(f.kind, f.count) for f in findings] == [("shared_race_war", 1)]
    f = findings[0]
    assert (f.site.source_line, f.other_site.source_line) == (line_of(BROADCAST_SRC, "// R"),
                                                              line_of(BROADCAST_SRC, "// W"))
    linear = [t[0] + block[0] * t[1] for t in (f.site.thread, f.other_site.thread)]
    assert linear[1] == writer and linear[0] % 16 == writer % 16 and linear[0] != writer


# ---------------------------------------------------------------- clean programs

REDUCTION_SRC = r"""
#define THREADS 256
extern "C" __global__ void reduce_sum(const float *in, float *out, int n) {
    __shared__ float partial[THREADS];
    unsigned t = threadIdx.x;
    unsigned i = blockIdx.x * (2 * THREADS) + t;
    float v = 0.0f;
    if (i < n) v = in[i];
    if (i + THREADS < n) v += in[i + THREADS];
    partial[t] = v;
    __syncthreads();
    for (unsigned stride = THREADS / 2; stride > 0; stride >>= 1) {
        if (t < stride)
            partial[t] += partial[t + stride];
        __syncthreads();
    }
    if (t == 0)
        out[blockIdx.x] = partial[0];
}
"""


def test_tree_reduction_with_syncthreads_is_silent():
    x = np.arange(4096, dtype=np.float32)
    findings, _, (_, out, _) = run(REDUCTION_SRC, "reduce_sum", 8, 256, x,
                                   np.zeros(8, np.float32), 4096)
    assert findings == []
    assert np.allclose(out, x.reshape(8, 512).sum(axis=1))


COUNTER_SRC = r"""
extern "C" __global__ void count(unsigned *total, unsigned *per_block) {
    __shared__ unsigned c;
    if (threadIdx.x == 0) c = 0;
    __syncthreads();
    atomicAdd(&c, 1u);
    atomicAdd(total, 1u);
    __syncthreads();
    if (threadIdx.x == 0) per_block[blockIdx.x] = c;
}
"""


def test_atomic_counters_in_shared_and_global_memory_are_silent():
    findings, _, (total, per_block) = run(COUNTER_SRC, "count", 4, 96, np.zeros(1, np.uint32),
                                          np.zeros(4, np.uint32))
    assert findings == []
    assert total[0] == 4 * 96 and (per_block == 96).all()


def test_a_plain_write_racing_shared_atomics_is_reported():
    src = COUNTER_SRC.replace("    __syncthreads();\n    atomicAdd(&c", "    atomicAdd(&c", 1)
    findings, _, _ = run(src, "count", 1, 64, np.zeros(1, np.uint32), np.zeros(1, np.uint32))
    f = only(findings, "shared_race_waw")[0]
    assert f.title.startswith("Error: Race reported between Write access")
    assert f.details[0].startswith("and Atomic access")
    assert f.count == 63                   # every thread but the writer itself


EXITED_SRC = r"""
extern "C" __global__ void partial(const int *in, int *out, int n) {
    __shared__ int s[64];
    int t = threadIdx.x;
    if (t >= n) return;
    s[t] = in[t];
    __syncthreads();
    out[t] = s[(t + 1) % n];
}
"""


def test_barrier_after_threads_exited_is_silent():
    """Exited threads release a CTA barrier: legal, and it orders the rest."""
    inp = np.arange(64, dtype=np.int32)
    findings, _, (_, out, _) = run(EXITED_SRC, "partial", 1, 64, inp, np.zeros(64, np.int32), 40)
    assert findings == []
    assert np.array_equal(out[:40], np.roll(np.arange(40), -1))


def test_each_wave_starts_with_ordered_shared_memory():
    """Blocks of a later wave reuse the shared segments of an earlier one:
    what the earlier block wrote does not race with the new block."""
    src = r"""
    extern "C" __global__ void waves(int *out) {
        extern __shared__ int dyn[];
        int t = threadIdx.x;
        dyn[t] = t + blockIdx.x;
        __syncthreads();
        out[blockIdx.x * blockDim.x + t] = dyn[(t + 1) % blockDim.x];
    }
    """
    shared = 200 * 1024                      # one block per SM: 133 blocks make two waves
    findings, _, (out,) = run(src, "waves", 133, 32, np.zeros(133 * 32, np.int32), shared=shared)
    assert findings == []
    t = np.arange(32)
    assert np.array_equal(out.reshape(133, 32)[132], (t + 1) % 32 + 132)


# ---------------------------------------------------------------- global memory between blocks

GLOBAL_SRC = r"""
extern "C" __global__ void blocks(int *data, int *out, int mode) {
    int t = threadIdx.x, b = blockIdx.x;
    if (mode == 0) {
        if (t == 0) out[0] = b;                               // SAME
    } else if (mode == 1) {
        if (b == 0) data[t] = t;                              // PRODUCE
        else out[t] = data[t];                                // CONSUME
    } else if (mode == 2) {
        out[b * blockDim.x + t] = data[b * blockDim.x + t] + 1;   // DISJOINT
    } else if (mode == 3) {
        atomicAdd(out, 1);                                    // ATOMIC
    } else {
        if (b == 0) atomicAdd(out, 1);                        // ATOM
        else if (t == 0) out[0] = 7;                          // PLAIN
    }
}
"""


def global_run(mode: int, grid: int = 2, **options):
    return run(GLOBAL_SRC, "blocks", grid, 32, np.zeros(grid * 32, np.int32),
               np.zeros(grid * 32, np.int32), mode, **options)


def test_two_blocks_writing_one_global_word_race():
    findings, _, _ = global_run(0)
    assert [(f.kind, f.count) for f in findings] == [("global_race_waw", 1)]
    f = findings[0]
    assert f.site.source_line == f.other_site.source_line == line_of(GLOBAL_SRC, "// SAME")
    assert {f.site.block, f.other_site.block} == {(0, 0, 0), (1, 0, 0)}
    assert f.site.thread == f.other_site.thread == (0, 0, 0)
    assert "__global__ address 0x" in f.details[1]


def test_a_block_reading_what_another_writes_races():
    findings, _, _ = global_run(1)
    assert len(findings) == 1
    f = findings[0]
    assert f.kind in ("global_race_raw", "global_race_war")
    lines = {f.site.source_line, f.other_site.source_line}
    assert lines == {line_of(GLOBAL_SRC, "// PRODUCE"), line_of(GLOBAL_SRC, "// CONSUME")}
    assert f.count == 32
    assert {f.site.block, f.other_site.block} == {(0, 0, 0), (1, 0, 0)}


def test_disjoint_global_writes_per_block_are_silent():
    findings, _, (_, out, _) = global_run(2, grid=4)
    assert findings == [] and (out == 1).all()


def test_atomic_adds_from_every_block_are_silent():
    findings, _, (_, out, _) = global_run(3, grid=4)
    assert findings == [] and out[0] == 4 * 32


def test_a_plain_write_racing_another_blocks_atomics_is_reported():
    findings, _, _ = global_run(4)
    f = only(findings, "global_race_waw")[0]
    assert {f.site.source_line, f.other_site.source_line} == {line_of(GLOBAL_SRC, "// ATOM"),
                                                              line_of(GLOBAL_SRC, "// PLAIN")}


def test_global_races_can_be_switched_off():
    findings, _, _ = global_run(0, racecheck_global=False)
    assert findings == []


def test_blocks_of_different_waves_race_too():
    src = r"""
    extern "C" __global__ void late(int *out) {
        extern __shared__ int dyn[];
        dyn[threadIdx.x] = 1;
        if (threadIdx.x == 0 && (blockIdx.x == 0 || blockIdx.x == gridDim.x - 1))
            out[0] = blockIdx.x;
    }
    """
    findings, _, _ = run(src, "late", 133, 32, np.zeros(1, np.int32), shared=200 * 1024)
    assert [f.kind for f in findings] == ["global_race_waw"]
    assert {findings[0].site.block, findings[0].other_site.block} == {(0, 0, 0), (132, 0, 0)}


def test_one_block_reading_and_writing_its_own_global_data_is_not_judged():
    src = r"""
    extern "C" __global__ void own(int *p) {
        p[(threadIdx.x + 1) % 32] = threadIdx.x;      // a race inside the block, not checked
    }
    """
    findings, _, _ = run(src, "own", 1, 32, np.zeros(32, np.int32))
    assert findings == []


# ---------------------------------------------------------------- random schedules

@pytest.mark.parametrize("seed", [1, 2, 3])
def test_under_random_warp_order_every_neighbour_pair_is_one_hazard(seed):
    """Warps interleave at random: a reader's warp may run before or after
    its neighbour's write, so each pair is a read-after-write or a
    write-after-read, counted once either way."""
    inp = np.arange(64, dtype=np.int32)
    findings, _, _ = run(RAW_SRC, "neighbours", 1, 64, inp, np.zeros(64, np.int32),
                         schedule=Schedule.RANDOM, seed=seed)
    assert {f.kind for f in findings} <= {"shared_race_raw", "shared_race_war"}
    assert sum(f.count for f in findings) == 64


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_clean_programs_stay_silent_under_random_warp_order(seed):
    random = {"schedule": Schedule.RANDOM, "seed": seed}
    x = np.arange(2048, dtype=np.float32)
    findings, _, (_, out, _) = run(REDUCTION_SRC, "reduce_sum", 4, 256, x, np.zeros(4, np.float32),
                                   2048, **random)
    assert findings == [] and np.allclose(out, x.reshape(4, 512).sum(axis=1))
    findings, _, (_, out) = run("#define SYNCWARP\n" + WARP_REDUCE_SRC, "warp_reduce", 1, 64,
                                np.arange(64, dtype=np.int32), np.zeros(1, np.int32), **random)
    assert findings == [] and out[0] == sum(range(64))
    findings, _, _ = run(EXITED_SRC, "partial", 1, 64, np.arange(64, dtype=np.int32),
                         np.zeros(64, np.int32), 40, **random)
    assert findings == []
    findings, _, _ = run(COUNTER_SRC, "count", 4, 96, np.zeros(1, np.uint32),
                         np.zeros(4, np.uint32), **random)
    assert findings == []
    findings, c, expected = tiled(TILE_SRC, **random)
    assert findings == [] and np.allclose(c, expected, rtol=1e-5)


# ---------------------------------------------------------------- reports

def test_findings_are_one_per_pc_pair_per_launch_and_match_the_schema():
    jsonschema = pytest.importorskip("jsonschema")
    with checked("racecheck") as rep:
        inp = gpudbg.to_device(np.arange(64, dtype=np.int32))
        m = gpudbg.compile(RAW_SRC, name="race.cu")
        for _ in range(2):
            m.neighbours[1, 64](inp, gpudbg.zeros(64, np.int32))
        gpudbg.Device().synchronize()
    assert [f.count for f in rep.findings] == [64, 64]
    for f in rep.findings:
        jsonschema.validate(f.as_dict(), FINDING_SCHEMA)
        assert f.as_dict()["other_site"]["source_line"] == line_of(RAW_SRC, "// R")


def test_races_before_a_fault_are_still_reported():
    src = RAW_SRC.replace("    out[t] = s[(t + 1) % 64];                  // R",
                          "    out[t] = s[(t + 1) % 64];                  // R\n"
                          "    out[t * (1 << 26)] = 1;                    // far out of bounds")
    with checked("racecheck") as rep:
        m = gpudbg.compile(src, name="race.cu")
        with pytest.raises(gpudbg.KernelFaultError):
            m.neighbours[1, 64](gpudbg.to_device(np.arange(64, dtype=np.int32)),
                                gpudbg.zeros(64, np.int32))
            gpudbg.Device().synchronize()
    assert [(f.kind, f.count) for f in rep.findings] == [("shared_race_raw", 64)]
