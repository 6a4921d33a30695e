"""Devcoredump numbers past what the fields hold: thousands of digits (once
a ValueError from int()'s 4300-digit limit), sizes of 2^63 and more, times
past year 9999, rings larger than any kernel prints, bos declaring
gigabytes. The parser refuses with DevcoredumpError at the line, and what
it accepts is analyzed without building the declared sizes."""
from __future__ import annotations

import time

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from gpudbg.dump.devcoredump import BufferObject, DevcoredumpError, parse
from gpudbg.dump.devcoredump import pm4
from gpudbg.dump.devcoredump.analyzer import analyze, to_dict
from gpudbg.dump.devcoredump.report import format_text
from gpudbg.reader_error import ReaderError

HEAD = "---\nkernel: 6.1\nmodule: msm\ntime: 1.000000000\nrevision: 630 (6.3.0.2)\nrbbm-status: 0x00000000\n"
RING = ("ringbuffer:\n  - id: 0\n    iova: 0x1000\n    last-fence: {fence}\n    retired-fence: 1\n"
        "    rptr: {rptr}\n    wptr: 0\n    size: {size}\n")
BIG = "9" * 5000


@pytest.mark.parametrize("text, line, fragment", [
    (HEAD + RING.format(fence=BIG, rptr=0, size=32), 10, "5000 digits, too many for a 64-bit number"),
    (HEAD + RING.format(fence=1, rptr="1" + "0" * 4400, size=32), 12, "4401 digits"),
    (HEAD + RING.format(fence=1, rptr=0, size=BIG), 14, "5000 digits"),
    (HEAD + RING.format(fence=1, rptr=0, size=1 << 64), 14, "does not fit in 64 bits"),
    (HEAD + RING.format(fence=1, rptr=0, size=1 << 30), 14, "over the 4194304 bytes this reader walks"),
    (HEAD + "bos:\n  - iova: 0x1000\n    size: 9223372036854775808\n", 9, "does not fit in 63 bits"),
    (HEAD + "bos:\n  - iova: 0x1000\n    size: 18446744073709551616\n", 9, "does not fit in 63 bits"),
    (HEAD.replace("time: 1.000000000", "time: " + BIG + ".000000000"), 4, "expected <seconds>.<nanoseconds>"),
    (HEAD.replace("630 (6.3.0.2)", BIG + " (6.3.0.2)"), 5, "expected '<id>"),
    (HEAD.replace("630 (6.3.0.2)", "630 (6.3.0." + BIG + ")"), 5, "expected '<id>"),
    (HEAD + "gmu-hfi:\n    queue-history[" + BIG + "]: 1\n", 8, "unknown field"),
    (HEAD + "gmu-hfi:\n    queue-history[0]: 1 " + BIG + "\n", 8, "5000 digits"),
    (HEAD + "vm-log:\n  - map:" + BIG + ": 0x1-0x2\n", 8, "vm-log: expected"),
    (HEAD + "registers:\n  - { offset: 0x1" + "0" * 40 + ", value: 0x1 }\n", 8, "offset"),
])
def test_numbers_past_their_field_are_refused_at_their_line(text, line, fragment):
    with pytest.raises(DevcoredumpError) as ei:
        parse(text)
    e = ei.value
    assert isinstance(e, ReaderError) and e.line == line, str(e)
    assert fragment in e.reason and len(str(e)) < 300      # one readable line, not 5000 digits


def test_a_time_past_year_9999_still_analyzes():
    dump = parse(HEAD.replace("time: 1.000000000", "time: 18446744073709551615.000000000"))
    summary = analyze(dump)
    assert summary.time == "18446744073709551615.000000000" and summary.time_utc is None
    format_text(summary, title="x")


def test_a_bo_declaring_terabytes_is_read_without_building_it():
    bo = BufferObject(iova=0x10000, size=1 << 40, data=np.arange(1, 5, dtype=np.uint32).tobytes())
    t0 = time.perf_counter()
    assert bo.window(2, 4).tolist() == [3, 4, 0, 0]
    assert bo.window((1 << 38) - 1, 8).tolist() == [0]          # clipped at the declared end
    assert bo.window_bytes(6, 4) == bytes([0, 0, 3, 0])
    ib = pm4.follow_ib(0x10000, 0xFFFFF, 1, [bo], 6)
    assert ib.dumped and ib.bo is bo
    assert time.perf_counter() - t0 < 2.0


def test_a_launch_in_a_huge_bo_is_decoded_from_a_window():
    """A gpudbg ring whose LAUNCH descriptor lies in a bo that declares 4 GiB
    (a fuzz input took 18 s and 4 GiB of memory building the bo's contents)."""
    from gpudbg.driver import commands as C
    from gpudbg.dump.devcoredump import Devcoredump, Layout, Ringbuffer, write
    desc = C.encode_descriptor(**{name: 1 for name, _ in C.DESCRIPTOR_FORMAT})
    launch = C.encode(C.make(C.Opcode.LAUNCH, descriptor=0x20000))
    ring = np.zeros(64, np.uint32)
    ring[:len(launch)] = launch
    dump = Devcoredump(module="gpudbg", kernel="gpudbg", layout=Layout.A6XX, gpu_initialized=1,
                       ringbuffers=[Ringbuffer(0, 0x1000, 1, 0, 0, len(launch), 256, ring.tobytes())],
                       bos=[BufferObject(0x20000, 1 << 32, desc)])
    t0 = time.perf_counter()
    summary = analyze(parse(write(dump)))
    assert "grid (1,1,1) block (1,1,1)" in summary.rings[0].executing.text
    assert time.perf_counter() - t0 < 2.0


FIELDS = ["last-fence", "retired-fence", "rptr", "wptr", "size", "id"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(FIELDS), st.one_of(
    st.integers(-(1 << 70), 1 << 70).map(str), st.text("0123456789", min_size=1, max_size=30),
    st.integers(4200, 6000).map(lambda n: "7" * n),
    st.sampled_from(["-0", "", "0x10", "1e3", " 1", "\x00"])))
def test_any_number_in_a_ring_field_parses_or_is_a_line_error(field, value):
    values = {"id": "0", "last-fence": "1", "retired-fence": "1", "rptr": "0", "wptr": "0", "size": "32"}
    values[field] = value
    text = HEAD + "ringbuffer:\n  - id: {id}\n    iova: 0x1000\n    last-fence: {last-fence}\n" \
                  "    retired-fence: {retired-fence}\n    rptr: {rptr}\n    wptr: {wptr}\n" \
                  "    size: {size}\n".format_map(values)
    try:
        dump = parse(text)
    except DevcoredumpError as e:
        assert 7 <= e.line <= 14 and len(str(e)) < 300
        return
    to_dict(analyze(dump))
