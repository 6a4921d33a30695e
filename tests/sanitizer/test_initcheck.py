"""initcheck: reads of global memory no copy, memset or kernel wrote, and
of shared memory no thread of the block wrote, reported once per pc with
the threads counted and the allocation named; --track-unused-memory's
warnings. Every bug program has a clean twin that must stay silent."""
from __future__ import annotations

import numpy as np
import pytest
from sanitizer_harness import checked

import gpudbg
from gpudbg.runtime import mc
from gpudbg.sanitizer.config import CheckConfig
from gpudbg.sanitizer.findings import FINDING_SCHEMA, Severity, ToolName
from gpudbg.sanitizer.initcheck import InitcheckTool, mark_written, unwritten, unwritten_ranges
from gpudbg.sanitizer.report import Reporter
from gpudbg.sim import instrument

D2H = mc.mcMemcpyKind.mcMemcpyDeviceToHost
D2D = mc.mcMemcpyKind.mcMemcpyDeviceToDevice
H2D = mc.mcMemcpyKind.mcMemcpyHostToDevice


def line_of(src: str, marker: str) -> int:
    hits = [i for i, text in enumerate(src.splitlines(), 1) if text.rstrip().endswith(marker)]
    assert len(hits) == 1, marker
    return hits[0]


def malloc(n: int) -> int:
    err, p = mc.mcMalloc(n)
    assert err == mc.mcError_t.mcSuccess
    return p


COPY_SRC = r"""
extern "C" __global__ void add_one(const int *in, int *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i] + 1;                 // READ
}
"""
READ_LINE = line_of(COPY_SRC, "// READ")


def run_add_one(prepare, n: int = 64, grid: int = 1, **options):
    """mcMalloc'd `in` and `out`, `prepare(in_ptr)` (host side), then
    add_one over n threads; (findings, texts, in pointer)."""
    with checked("initcheck", **options) as rep:
        m = gpudbg.compile(COPY_SRC, name="init.cu")
        src, dst = malloc(4 * n), malloc(4 * n)
        prepare(src)
        m.add_one[grid, n // grid](src, dst, n)
        out = np.zeros(n, dtype=np.int32)
        mc.mcMemcpy(out, dst, 4 * n, D2H)
        mc.mcFree(src)
        mc.mcFree(dst)
    return rep.findings, rep.texts, src


def test_read_of_malloc_memory_never_written():
    findings, texts, src = run_add_one(lambda p: None)
    assert len(findings) == 1
    f = findings[0]
    assert (f.tool, f.kind, f.severity) == (ToolName.INITCHECK, "uninitialized_global_read", Severity.ERROR)
    assert f.title == "Uninitialized __global__ memory read of size 4 bytes"
    assert f.count == 64 and f.size == 4 and f.address == src
    assert (f.site.source_file, f.site.source_line) == ("init.cu", READ_LINE)
    assert f.site.thread == (0, 0, 0) and f.site.block == (0, 0, 0)
    assert f.details[0] == f"at {f.site.where}" and f.details[0].endswith(f"init.cu:{READ_LINE}:add_one")
    assert f.details[1] == "by thread (0,0,0) in block (0,0,0)"
    assert f.details[2].startswith(f"Address 0x{src:x} is 0 bytes inside the 256-byte allocation at 0x{src:x}")
    assert texts and texts[0].startswith("========= Uninitialized __global__ memory read of size 4 bytes")


def test_partly_memset_memory_names_the_first_unwritten_byte():
    findings, _, src = run_add_one(lambda p: mc.mcMemset(p, 0, 16))
    (f,) = findings
    assert f.count == 60 and f.site.thread == (4, 0, 0)
    assert f.address == src + 16
    assert f.details[2].startswith(f"Address 0x{src + 16:x} is 16 bytes inside the 256-byte allocation")


def test_memset_then_read_is_silent():
    findings, texts, _ = run_add_one(lambda p: mc.mcMemset(p, 0, 256))
    assert findings == [] and texts == []


def test_host_copy_then_read_is_silent():
    findings, _, _ = run_add_one(lambda p: mc.mcMemcpy(p, np.arange(64, dtype=np.int32), 256, H2D))
    assert findings == []


def test_reads_in_every_wave_are_one_finding_counting_all_threads():
    n = 64 * 256
    findings, _, _ = run_add_one(lambda p: None, n=n, grid=64)
    (f,) = findings
    assert f.count == n and f.site.block == (0, 0, 0)


PRODUCE_SRC = r"""
extern "C" __global__ void produce(int *buf) { buf[threadIdx.x] = threadIdx.x; }
extern "C" __global__ void consume(const int *buf, int *out) {
    out[threadIdx.x] = buf[threadIdx.x] * 2;      // CONSUME
}
extern "C" __global__ void both(int *buf, int *out) {
    buf[threadIdx.x] = threadIdx.x;
    __syncthreads();
    out[threadIdx.x] = buf[63 - threadIdx.x];
}
"""


def test_memory_a_kernel_wrote_reads_clean_in_later_kernels_and_the_same_one():
    with checked("initcheck") as rep:
        m = gpudbg.compile(PRODUCE_SRC, name="produce.cu")
        buf, out = malloc(256), malloc(256)
        m.produce[1, 64](buf)
        m.consume[1, 64](buf, out)
        fresh = malloc(256)
        m.both[1, 64](fresh, out)
        host = np.zeros(64, dtype=np.int32)
        mc.mcMemcpy(host, out, 256, D2H)
    assert rep.findings == []
    assert (host == np.arange(63, -1, -1)).all()


def test_a_kernel_writing_half_leaves_the_other_half_uninitialized():
    src = PRODUCE_SRC
    with checked("initcheck") as rep:
        m = gpudbg.compile(src, name="produce.cu")
        buf, out = malloc(256), malloc(256)
        m.produce[1, 32](buf)                  # elements 0..31 only
        m.consume[1, 64](buf, out)
        gpudbg.Device().synchronize()
    (f,) = rep.findings
    assert f.count == 32 and f.site.thread == (32, 0, 0)
    assert f.site.source_line == line_of(src, "// CONSUME")
    assert f.address == buf + 128


def test_device_to_device_copy_carries_uninitialized_bytes():
    def copy_of_uninitialized(p):
        scratch = malloc(256)
        mc.mcMemset(scratch, 0, 128)            # the first half only
        mc.mcMemcpy(p, scratch, 256, D2D)
    findings, _, src = run_add_one(copy_of_uninitialized)
    (f,) = findings
    assert f.count == 32 and f.site.thread == (32, 0, 0)
    assert f.address == src + 128                 # named in the copy's destination
    assert f"the 256-byte allocation at 0x{src:x}" in f.details[2]


def test_device_to_device_copy_of_written_memory_is_silent():
    def copy_of_written(p):
        scratch = malloc(256)
        mc.mcMemset(scratch, 7, 256)
        mc.mcMemcpy(p, scratch, 256, D2D)
    findings, _, _ = run_add_one(copy_of_written)
    assert findings == []


def test_python_api_uninitialized_array_versus_zeros_and_to_device():
    with checked("initcheck") as rep:
        m = gpudbg.compile(COPY_SRC, name="init.cu")
        out = gpudbg.zeros(64, np.int32)
        m.add_one[1, 64](gpudbg.zeros(64, np.int32), out, 64)
        m.add_one[1, 64](gpudbg.to_device(np.ones(64, np.int32)), out, 64)
        assert rep.findings == []
        m.add_one[1, 64](gpudbg.device_array(64, np.int32), out, 64)
        out.to_host()
    (f,) = rep.findings
    assert f.kind == "uninitialized_global_read" and f.count == 64


ATOMIC_SRC = r"""
extern "C" __global__ void count(int *counter) {
    atomicAdd(counter, 1);                        // ATOMIC
}
"""


@pytest.mark.parametrize("memset", [False, True])
def test_atomic_on_a_counter_nobody_zeroed(memset):
    with checked("initcheck") as rep:
        m = gpudbg.compile(ATOMIC_SRC, name="atomic.cu")
        counter = malloc(4)
        if memset:
            mc.mcMemset(counter, 0, 4)
        m.count[1, 64](counter)
        gpudbg.Device().synchronize()
    if memset:
        assert rep.findings == []
    else:
        (f,) = rep.findings
        # the first atomic reads garbage; it writes the word, so the others read what it wrote
        assert f.count == 64 and f.site.source_line == line_of(ATOMIC_SRC, "// ATOMIC")
        assert f.title == "Uninitialized __global__ memory read of size 4 bytes"


SHARED_SRC = r"""
extern "C" __global__ void mirror(int *out) {
    __shared__ int s[64];
    int t = threadIdx.x;
#ifdef ALL
    s[t] = t;
#else
    if (t < 32) s[t] = t;                         // half the block writes
#endif
    __syncthreads();
    out[t] = s[63 - t];                           // SHARED READ
}
"""


@pytest.mark.parametrize("blocks", [1, 3])
def test_uninitialized_shared_read(blocks):
    with checked("initcheck") as rep:
        m = gpudbg.compile(SHARED_SRC, name="shared.cu")
        out = gpudbg.zeros(64, np.int32)
        m.mirror[blocks, 64](out)
        out.to_host()
    (f,) = rep.findings
    assert f.kind == "uninitialized_shared_read"
    assert f.title == "Uninitialized __shared__ memory read of size 4 bytes"
    assert f.count == 32 * blocks
    assert f.site.source_line == line_of(SHARED_SRC, "// SHARED READ")
    assert f.site.thread == (0, 0, 0) and f.site.block == (0, 0, 0)
    assert f.details[2] == ("Address 0xfc is 252 bytes inside the 256-byte __shared__ memory "
                            "of block (0,0,0)")


def test_shared_memory_every_thread_wrote_is_silent_and_each_launch_starts_unwritten():
    with checked("initcheck") as rep:
        m = gpudbg.compile(SHARED_SRC, name="shared.cu", options=["-DALL"])
        out = gpudbg.zeros(64, np.int32)
        m.mirror[2, 64](out)
        out.to_host()
        assert rep.findings == []
        half = gpudbg.compile(SHARED_SRC, name="shared.cu")
        half.mirror[1, 64](out)          # the previous launch's writes do not carry over
        out.to_host()
    assert [f.kind for f in rep.findings] == ["uninitialized_shared_read"]


HEAP_SRC = r"""
extern "C" __global__ void fresh(int *out, int write_first) {
    int *p = (int *)malloc(16);
    if (write_first) p[0] = 5;
    out[threadIdx.x] = p[0];                      // HEAP READ
    free(p);
}
"""


@pytest.mark.parametrize("write_first", [0, 1])
def test_device_malloc_memory_starts_uninitialized(write_first):
    with checked("initcheck") as rep:
        m = gpudbg.compile(HEAP_SRC, name="heap.cu")
        out = gpudbg.zeros(4, np.int32)
        m.fresh[1, 4](out, write_first)
        out.to_host()
    if write_first:
        assert rep.findings == []
    else:
        (f,) = rep.findings
        assert f.count == 4 and f.site.source_line == line_of(HEAP_SRC, "// HEAP READ")


def test_host_mapped_memory_counts_as_initialized():
    with checked("initcheck") as rep:
        m = gpudbg.compile(COPY_SRC, name="init.cu")
        err, managed = mc.mcMallocManaged(256)
        err, pinned = mc.mcMallocHost(256)
        out = malloc(256)
        m.add_one[1, 64](managed, out, 64)
        m.add_one[1, 64](pinned, out, 64)
        gpudbg.Device().synchronize()
        mc.mcFree(managed)
        mc.mcFreeHost(pinned)
    assert rep.findings == []


def test_allocations_made_before_the_tool_count_as_initialized():
    from gpudbg.driver.engine import reset_engine
    reset_engine()
    m = gpudbg.compile(COPY_SRC, name="init.cu")
    early, out = malloc(256), malloc(256)
    reporter = Reporter(write=lambda _t: None)
    tool = InitcheckTool(CheckConfig(tool=ToolName.INITCHECK), reporter)
    instrument.install(tool)
    try:
        m.add_one[1, 64](early, out, 64)
        late = malloc(256)
        m.add_one[1, 64](late, out, 64)
        gpudbg.Device().synchronize()
    finally:
        instrument.uninstall(tool)
        reset_engine()
    assert [f.address for f in reporter.findings] == [late]


HALF_SRC = r"""
extern "C" __global__ void fill_half(int *buf) { buf[threadIdx.x] = 1; }
"""


def test_track_unused_memory_warns_at_free_with_ranges_and_share():
    with checked("initcheck", track_unused_memory=True) as rep:
        m = gpudbg.compile(HALF_SRC, name="unused.cu")
        buf = malloc(1024)                                # ALLOC
        m.fill_half[1, 128](buf)                          # bytes 0..511
        gpudbg.Device().synchronize()
        mc.mcFree(buf)
        assert len(rep.findings) == 1
    (f,) = rep.findings
    assert (f.kind, f.severity, f.tool) == ("unused_memory", Severity.WARNING, ToolName.INITCHECK)
    assert f.title == f"Unused memory in allocation 0x{buf:x} of size 1024 bytes"
    assert f.details == [f"Not written 512 bytes at offset 0x200 (0x{buf + 512:x})",
                         "50% of allocation were unused."]
    here = line_of(open(__file__).read(), "# ALLOC")
    assert f.host_site[-1].endswith("in malloc")         # innermost last: the mcMalloc call
    assert f.host_site[-2].endswith(f"test_initcheck.py:{here} in "
                                    "test_track_unused_memory_warns_at_free_with_ranges_and_share")
    assert rep.errors == 0 and rep.warnings == 1


def test_track_unused_memory_at_program_end_and_silent_when_all_written():
    with checked("initcheck", track_unused_memory=True) as rep:
        m = gpudbg.compile(HALF_SRC, name="unused.cu")
        whole, kept = malloc(512), malloc(64)
        m.fill_half[1, 128](whole)                        # all of it
        mc.mcMemset(kept, 0, 16)
        gpudbg.Device().synchronize()
        mc.mcFree(whole)
        assert rep.findings == []
    (f,) = rep.findings                                   # at the session's end: still live
    assert f.title == f"Unused memory in allocation 0x{kept:x} of size 64 bytes"
    assert f.details == [f"Not written 48 bytes at offset 0x10 (0x{kept + 16:x})",
                         "75% of allocation were unused."]


def test_without_the_option_unused_memory_is_not_reported():
    with checked("initcheck") as rep:
        buf = malloc(1024)
        mc.mcFree(buf)
    assert rep.findings == []


def test_findings_match_the_json_schema():
    jsonschema = pytest.importorskip("jsonschema")
    findings, _, _ = run_add_one(lambda p: None, track_unused_memory=True)
    assert {f.kind for f in findings} == {"uninitialized_global_read", "unused_memory"}
    for f in findings:
        jsonschema.validate(f.as_dict(), FINDING_SCHEMA)


def test_shadow_words_follow_size_and_alignment():
    shadow = np.zeros(32, dtype=np.uint8)
    mark_written(shadow, np.array([0, 8], dtype=np.uint64), 8)
    mark_written(shadow, np.array([17], dtype=np.uint64), 1)
    mark_written(shadow, np.array([20], dtype=np.uint64), 4)
    assert unwritten(shadow, np.array([0, 4, 12, 16, 20], dtype=np.uint64), 4).tolist() == \
        [False, False, False, True, False]
    assert unwritten(shadow, np.array([17, 18], dtype=np.uint64), 1).tolist() == [False, True]
    assert unwritten(shadow, np.array([0], dtype=np.uint64), 16).tolist() == [False]
    assert unwritten(shadow, np.array([8], dtype=np.uint64), 16).tolist() == [True]
    assert unwritten_ranges(shadow[:24]) == [(16, 1), (18, 2)]
