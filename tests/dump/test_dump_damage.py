"""Damaged input: only DevcoredumpError (with a line number) or a parse."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

sys.path.insert(0, str(Path(__file__).parent))
from dump_paths import msm_file  # noqa: E402

from gpudbg.dump.devcoredump import DevcoredumpError, DpuDumpError, parse
from gpudbg.dump.devcoredump.analyzer import analyze

# the head of the real a630 dump (ring, bos, some registers) and its tail
# (shader blocks, clusters, debugbus) keep each example fast
_FULL = msm_file("crash.devcore").read_bytes()
_LINES = _FULL.split(b"\n")
SAMPLE = b"\n".join(_LINES[:120] + _LINES[2396:2436] + _LINES[2858:2880] + _LINES[5296:])


def _check(data: bytes) -> None:
    try:
        dump = parse(data)
    except DevcoredumpError as exc:
        assert exc.line >= 1 and str(exc).startswith(f"line {exc.line}: ")
        return
    analyze(dump, packets=4)       # whatever parses must also analyze


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, len(SAMPLE)))
def test_truncation(cut):
    _check(SAMPLE[:cut])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.integers(0, len(SAMPLE) - 1), st.integers(0, 255)), min_size=1, max_size=4))
def test_byte_flips(flips):
    data = bytearray(SAMPLE)
    for pos, value in flips:
        data[pos] = value
    _check(bytes(data))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.integers(0, SAMPLE.count(b"\n")), min_size=1, max_size=3, unique=True))
def test_line_deletions(drop):
    lines = SAMPLE.split(b"\n")
    _check(b"\n".join(l for i, l in enumerate(lines) if i not in set(drop)))


def test_sample_itself_parses():
    d = parse(SAMPLE)
    assert d.ringbuffers[0].wptr == 56 and d.warnings == []
    assert d.indexed_registers and d.shader_blocks and d.clusters and d.debugbus


HEAD = "---\nkernel: 6.1\nmodule: msm\ntime: 1.000000000\nrevision: 630 (6.3.0.2)\nrbbm-status: 0x00000000\n"


@pytest.mark.parametrize("body, line, fragment", [
    ("ringbuffer:\n  - id: 0\n    iova: 0x1000\n    last-fence: 1\n    retired-fence: 1\n    rptr: 0\n"
     "    wptr: 0\n    size: 8\n    data: !!ascii85 |\n     !!!!\"!!!!#!!!!$\n", 15, "declared size is 2 dwords"),
    ("ringbuffer:\n  - id: 0\n    iova: 0xZZ\n", 9, "expected 0x-prefixed hex"),
    ("ringbuffer:\n  - id: 0\n     iova: 0x10\n", 9, "unexpected line"),
    ("ringbuffer:\n  - id: 0\n    iova: 0x1000\n", 8, "missing 'last-fence:'"),
    ("bos:\n  - iova: 0x1000\n    size: 8\n    data: !!ascii85 |\n     !!!x!\n", 11, "bad ascii85"),
    ("bos:\n  - iova: 0x1000\n    size: 8\n    data: !!ascii85 |\n", 10, "without its payload"),
    ("registers:\n  - { offset: 0x0840, value: 0xfffffffff }\n", 8, "does not fit in 32 bits"),
    ("registers:\n  - { offset: 0x08g0, value: 0x1 }\n", 8, "bad register line"),
    ("rbbm-status: 0x0\n", 7, "duplicate 'rbbm-status:'"),
    ("  stray: 1\n", 7, "indented line under the scalar"),
    ("ringbuffer:\n  - id: 0\n    iova: 0x0\n    last-fence: 1\n    retired-fence: 1\n    rptr: 9\n"
     "    wptr: 0\n    size: 32\n", 12, "outside the ring of 8 dwords"),
    ("gmu-hfi:\n    queue-history[1]: 1 2\n", 8, "out of order"),
    ("shader-blocks:\n  - type: X\n        - bank: 0\n", 9, "too deep"),
    ("clusters:\n  - cluster-name: C\n      - { offset: 0x0, value: 0x0 }\n", 9, "not directly under"),
    ("fault-info:\n  - iova=zz\n", 8, "expected hex digits"),
])
def test_specific_errors(body, line, fragment):
    with pytest.raises(DevcoredumpError) as err:
        parse(HEAD + body)
    assert err.value.line == line, str(err.value)
    assert fragment in err.value.reason


@pytest.mark.parametrize("text, line", [("", 1), ("hello\n", 1), ("---\nkernel:\tx\n", 2),
                                        ("---\r\nkernel: x\r\n", 1), (b"---\n\xff\n", 2)])
def test_not_a_dump(text, line):
    with pytest.raises(DevcoredumpError) as err:
        parse(text)
    assert err.value.line == line


def test_lenient_variants_warn():
    dump = parse("---\nkernel: 5.4\nmodule: msm\ntime: 12.345678\nfuture: 1\nrevision: 530 (5.3.0.0)")
    msgs = [w.message for w in dump.warnings]
    assert dump.time.nanoseconds == 345_678_000
    assert any("6 fractional digits" in m for m in msgs)
    assert any("does not end with a newline" in m for m in msgs)
    assert any("unknown section 'future'" in m for m in msgs)
    assert [u.name for u in dump.unknown_sections] == ["future"] and dump.unknown_sections[0].start_line == 5


@pytest.mark.parametrize("text", [
    "---\nkernel: 6.1.0\nmodule: msm\ndpu devcoredump\ntime: 1.000000000\n"
    "====================dpu_mdp================\n0x0 : 00000000 00000000 00000000 00000000\n",
    "---\nmodule: msm\ntimestamp 12345\n====================intf_1================\n",
    "---\nkernel: 4.19\nmodule: msm_drm\nsde devcoredump\n",
])
def test_dpu_dumps_rejected(text):
    with pytest.raises(DpuDumpError) as err:
        parse(text)
    assert "display-engine" in str(err.value) or "SDE" in str(err.value)
