"""Ring.release_value_at, the front end's way of knowing the fence that
closes every push without decoding it: the value of exactly the
SEM_RELEASE whose header and address are the head given, None for every
other command, another semaphore's release, and a release that wraps."""
from hypothesis import given, settings, strategies as st

from gpudbg.driver import commands as C
from gpudbg.driver.ring import RELEASE_WORDS, Ring
from gpudbg.sim.memory.allocations import GlobalMemory
from gpudbg.sim.memory.spaces import AllocationKind

_MEM = GlobalMemory(capacity=1 << 20)
_RING = Ring(_MEM.alloc(256, AllocationKind.RING), "r")     # 64 words


def _head(address: int) -> tuple[int, int, int]:
    return tuple(C.encode(C.make(C.Opcode.SEM_RELEASE, address=address, value=0))[:3])


def _place(offset: int, words: list[int]) -> None:
    for i, w in enumerate(words):
        _RING.words[(offset + i) % _RING.size] = w


@settings(max_examples=150, deadline=None)
@given(st.integers(0, C.U64_MASK), st.integers(0, C.U64_MASK), st.integers(0, C.U64_MASK),
       st.integers(0, 63))
def test_the_own_release_is_read_and_every_other_command_is_not(address, other, value, offset):
    own = C.encode(C.make(C.Opcode.SEM_RELEASE, address=address, value=value))
    _place(offset, own)
    wraps = offset + RELEASE_WORDS > _RING.size
    assert _RING.release_value_at(offset, _head(address)) == (None if wraps else value)
    if not wraps:
        assert _RING.decode_at(offset).fields == {"address": address, "value": value}
    if other != address:
        assert _RING.release_value_at(offset, _head(other)) is None
    _place(offset, C.encode(C.make(C.Opcode.COPY, src=address, dst=value, size=7)))
    assert _RING.release_value_at(offset, _head(address)) is None
    _place(offset, C.encode(C.make(C.Opcode.WRITE_VALUE, address=address, value=value & C.WORD_MASK,
                                   width=4, flags=0)))
    assert _RING.release_value_at(offset, _head(address)) is None
