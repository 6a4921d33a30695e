"""commands.decode_packed (the front end's one-unpack decode) gives exactly
what decode_one gives for every valid command, and leaves everything else
(bad headers, constrained fields) to decode_one's precise errors, also
through Ring.decode_at."""
import struct

import pytest
from hypothesis import given, settings, strategies as st

from gpudbg.driver import commands as C
from gpudbg.driver.ring import MAX_COMMAND_WORDS, Ring
from gpudbg.sim.memory.allocations import GlobalMemory
from gpudbg.sim.memory.spaces import AllocationKind


def _command(op: C.Opcode, values: list[int]) -> C.Command:
    fields = {}
    for (name, ftype), v in zip(C.FORMATS[op], values):
        fields[name] = v & (C.WORD_MASK if ftype is C.U32 else C.U64_MASK)
    return C.Command(op, fields)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(sorted(C.FORMATS)), st.lists(st.integers(0, C.U64_MASK), min_size=6, max_size=6))
def test_packed_decode_is_decode_one(op, values):
    cmd = _command(op, values)
    words = C.encode(cmd)
    buf = struct.pack(f"<{len(words)}I", *words)
    try:
        expected = C.decode_one(words.__getitem__, 0)
    except C.CommandDecodeError:
        expected = None                       # a constrained field out of its set
    got = C.decode_packed(words[0], buf, 4)
    if op in (C.Opcode.MEMSET, C.Opcode.MEMSET_2D):
        assert got is None                    # constrained: always decode_one's business
    else:
        assert got == expected and list(got.fields) == list(expected.fields)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, C.WORD_MASK))
def test_a_header_decode_one_refuses_is_refused(header):
    buf = bytes(4 * 16)
    got = C.decode_packed(header, buf, 4)
    try:
        C.decode_one(lambda i: header if i == 0 else 0, 0)
    except C.CommandDecodeError:
        assert got is None
    else:
        if header >> 24 not in (C.Opcode.MEMSET, C.Opcode.MEMSET_2D):
            assert got is not None and got.opcode == header >> 24


def test_ring_decode_keeps_the_precise_errors():
    mem = GlobalMemory(capacity=1 << 20)
    ring = Ring(mem.alloc(4 * 64, AllocationKind.RING), "r")
    words = C.encode(C.make(C.Opcode.MEMSET, dst=8, value=1, element_size=4, count=1))
    words[4] = 3                                          # element_size
    ring.write(words)
    with pytest.raises(C.CommandDecodeError, match="element_size=3 must be 1, 2 or 4"):
        ring.decode_at(0)
    ring.get = ring.put
    ring.write([(int(C.Opcode.SEM_RELEASE) << 24) | 3, 0, 0, 0])
    with pytest.raises(C.CommandDecodeError, match="carries 4 payload words, header says 3"):
        ring.decode_at(ring.get)
    ring.get = ring.put
    ring.write([0x7F << 24])
    with pytest.raises(C.CommandDecodeError, match="unknown opcode 0x7f"):
        ring.decode_at(ring.get)


@given(st.one_of(st.integers(-2, C.U64_MASK + 2), st.floats(allow_nan=False), st.booleans()))
def test_the_launch_shortcut_is_make(descriptor):
    try:
        expected = C.make(C.Opcode.LAUNCH, descriptor=descriptor)
    except C.CommandFormatError as e:
        with pytest.raises(C.CommandFormatError) as got:
            C.launch(descriptor)
        assert str(got.value) == str(e)
    else:
        assert C.launch(descriptor) == expected


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(sorted(C.FORMATS)), st.lists(st.integers(0, C.U64_MASK), min_size=6, max_size=6),
       st.integers(0, 63))
def test_ring_decode_at_any_offset_is_decode_one(op, values, offset):
    """Ring.decode_at, whose LAUNCH comes from commands.launch's cache and
    the rest from decode_packed, decodes what decode_one decodes from the
    same words wherever they lie in the ring, wrapping or not."""
    mem = GlobalMemory(capacity=1 << 20)
    ring = Ring(mem.alloc(4 * 64, AllocationKind.RING), "r")
    words = C.encode(_command(op, values))
    for i, w in enumerate(words):
        ring.words[(offset + i) % ring.size] = w
    try:
        expected = C.decode_one(words.__getitem__, 0)
    except C.CommandDecodeError as e:
        with pytest.raises(C.CommandDecodeError, match=e.reason):
            ring.decode_at(offset)
        return
    got = ring.decode_at(offset)
    assert got == expected and list(got.fields) == list(expected.fields)
    if op is C.Opcode.LAUNCH and offset + MAX_COMMAND_WORDS <= ring.size:     # (away from the end)
        assert got is C.launch(got.descriptor)      # one Command per launch block
