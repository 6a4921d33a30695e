"""PM4 header decoding against packets crashdec decoded in the real dumps."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from gpudbg.dump.devcoredump import BufferObject, pm4, ringwalk
from gpudbg.dump.devcoredump.pm4 import PacketType, decode_header, odd_parity_bit
from gpudbg.dump.devcoredump.pm4_opcodes import opcode_name, opcode_number


def pkt7(op: int, count: int) -> int:
    return (0x7 << 28) | (odd_parity_bit(op) << 23) | (op << 16) | (odd_parity_bit(count) << 15) | count


def pkt4(reg: int, count: int) -> int:
    return (0x4 << 28) | (odd_parity_bit(reg) << 27) | (reg << 8) | (odd_parity_bit(count) << 7) | count


@pytest.mark.parametrize("header, name, count", [
    (0x703E8003, "CP_REG_TO_MEM", 3), (0x70460001, "CP_EVENT_WRITE", 1), (0x70108000, "CP_NOP", 0),
    (0x70E50001, "CP_SET_MARKER", 1), (0x70BF8003, "CP_INDIRECT_BUFFER", 3),
    (0x70C80008, "CP_ME_INIT", 8), (0x70438003, "CP_SET_DRAW_STATE", 3), (0x70268000, "CP_WAIT_FOR_IDLE", 0),
])
def test_type7_from_crashdec(header, name, count):
    p = decode_header(header, 6)
    assert (p.type, p.name, p.count, p.parity_ok) == (PacketType.TYPE7, name, count, True)
    assert pkt7(p.opcode, count) == header


def test_type4_register_write():
    p = decode_header(0x48088501, 6)
    assert (p.type, p.register, p.count, p.parity_ok) == (PacketType.TYPE4, 0x885, 1, True)
    assert "pkt4 reg 0x00885 count 1" == p.label()
    bad = decode_header(0x48088501 ^ (1 << 7), 6)
    assert not bad.parity_ok
    assert decode_header(0xDEADD00D, 6) is None


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 0x7F), st.integers(0, 0x3FFF), st.integers(0, 0x7FFFF), st.integers(0, 0x7F))
def test_headers_round_trip_and_single_bit_flips_fail_parity(op, count, reg, count4):
    p = decode_header(pkt7(op, count), 7)
    assert (p.opcode, p.count, p.parity_ok) == (op, count, True)
    q = decode_header(pkt4(reg, count4), 5)
    assert (q.register, q.count, q.parity_ok) == (reg, count4, True)
    flipped = decode_header(pkt4(reg, count4) ^ 1, 5)
    assert not flipped.parity_ok


def test_generation_variants_of_recycled_opcodes():
    assert opcode_name(0x32, 3) == "CP_COND_INDIRECT_BUFFER_PFD"
    assert opcode_name(0x32, 6) == "CP_LOAD_STATE6_GEOM"
    assert opcode_name(0x46, 7) == "CP_EVENT_WRITE7"
    assert opcode_name(0x1d, 6) == "CP_SKIP_IB2_ENABLE_GLOBAL" and opcode_name(0x23, 6) == "CP_SKIP_IB2_ENABLE_LOCAL"
    assert opcode_number("CP_EXEC_CS", 6) == 0x33 and opcode_number("CP_RUN_OPENCL", 6) == 0x31
    assert opcode_number("CP_LOAD_STATE6_FRAG", 6) == 0x34 and opcode_number("CP_DRAW_INDX_OFFSET", 6) == 0x38


def test_legacy_type0_type2_type3():
    t3 = decode_header((3 << 30) | (2 << 16) | (0x3F << 8), 3)
    assert (t3.type, t3.name, t3.count) == (PacketType.TYPE3, "CP_INDIRECT_BUFFER", 3)
    t0 = decode_header((0 << 30) | (1 << 16) | 0x2140, 3)
    assert (t0.type, t0.register, t0.count) == (PacketType.TYPE0, 0x2140, 2)
    assert decode_header(0x80000000, 2).type is PacketType.TYPE2


def test_walk_wrapped_ring_and_follow_ib():
    size = 32
    words = np.full(size, pkt7(0x26, 0), dtype=np.uint32)    # the previous lap: WAIT_FOR_IDLEs
    # a stream written from 26 that wraps: NOP(2) at 26, IB at 29..32 -> wraps to 0, then EVENT at 1
    seq = [pkt7(0x10, 2), 0, 0, pkt7(0x3F, 3), 0x1000, 0x1, 4, pkt7(0x46, 1), 0x31, pkt7(0x26, 0)]
    for k, w in enumerate(seq):
        words[(26 + k) % size] = w
    walk = pm4.walk_ring(words, rptr=(26 + 7) % size, wptr=(26 + 10) % size, gen=6, dumped_dwords=size,
                         count=8)
    names = [e.item.name for e in walk.history]
    assert names[-2:] == ["CP_NOP", "CP_INDIRECT_BUFFER"] and walk.straddling is None
    assert [e.item.name for e in walk.pending] == ["CP_EVENT_WRITE", "CP_WAIT_FOR_IDLE"]
    assert walk.pending_dwords == 3
    bo = BufferObject(0x100001000, 0x100, np.array([pkt7(0x10, 0), pkt7(0x33, 3), 1, 1, 1],
                                                   dtype="<u4").tobytes())
    ib = pm4.follow_ib(0x100001000, 4, 1, [bo], 6)
    assert [p.packet.name for p in ib.packets] == ["CP_NOP", "CP_EXEC_CS"] and ib.dumped
    missing = pm4.follow_ib(0x200000000, 4, 1, [bo], 6)
    assert missing.bo is None and not missing.packets


def test_walk_resynchronises_after_junk():
    words = np.array([0xDEADBEEF, 0x12345678, pkt7(0x26, 0), pkt7(0x10, 1), 5, pkt7(0x26, 0)] + [0] * 10,
                     dtype=np.uint32)
    walk = ringwalk.walk(words, 5, 6, pm4.decoder(6), dumped_dwords=6)
    assert walk.skipped_dwords == 2 and [e.item.name for e in walk.history if e.item][-1] == "CP_NOP"
