"""Adreno PM4 command-stream packet headers: decode, walk rings, follow IBs.

Header layouts (bit positions as in Mesa's freedreno register database):
a5xx and later use type 4 (register write: [31:28]=4, [27] odd parity of
the register, [26:8] register, [7] odd parity of the count, [6:0] count)
and type 7 (opcode: [31:24]=0x70, [23] odd parity of the opcode, [22:16]
opcode, [15] odd parity of the count, [13:0] count); a2xx-a4xx use type 0
(register write, count-1 in [29:16], register in [14:0]), type 2 (one-dword
filler) and type 3 (opcode in [15:8], count-1 in [29:16]). The parity bits
make a random dword a poor type-4/7 header, which is what lets ringwalk
resynchronise after stale or damaged data. Indirect buffers are followed
when their target lies inside a dumped bo (IB1 -> IB2, no deeper). Payload
fields are not interpreted; this reports what crashdec's headers say.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field

import numpy as np

from gpudbg.dump.devcoredump import ringwalk
from gpudbg.dump.devcoredump.model import BufferObject
from gpudbg.dump.devcoredump.pm4_opcodes import INDIRECT_BUFFER_NAMES, opcode_name


class PacketType(enum.Enum):
    TYPE0 = 0
    TYPE1 = 1
    TYPE2 = 2
    TYPE3 = 3
    TYPE4 = 4
    TYPE7 = 7


def odd_parity_bit(value: int) -> int:
    """The bit that makes value's population count (plus itself) odd."""
    return 1 - (bin(value).count("1") & 1)


@dataclass
class Packet:
    type: PacketType
    header: int
    count: int                  # payload dwords
    opcode: int | None = None   # type 3/7
    name: str | None = None     # opcode name, None when the table has none
    register: int | None = None  # type 0/4: first register (dword index)
    parity_ok: bool = True

    @property
    def size(self) -> int:
        return 1 + self.count

    def label(self) -> str:
        if self.type in (PacketType.TYPE4, PacketType.TYPE0):
            return f"pkt{self.type.value} reg 0x{self.register:05x} count {self.count}"
        if self.type is PacketType.TYPE2:
            return "pkt2 (NOP filler)"
        if self.type is PacketType.TYPE1:
            return f"pkt1 regs 0x{self.register:03x}"
        name = self.name or f"UNKNOWN_{self.opcode:02x}"
        return f"pkt{self.type.value} {name} ({self.opcode:02x}) count {self.count}"


def decode_header(header: int, gen: int) -> Packet | None:
    """The packet this header starts on an Adreno of generation `gen`, or None."""
    if gen >= 5:
        top = header >> 28
        if top == 4:
            count = header & 0x7F
            reg = (header >> 8) & 0x7FFFF
            ok = ((header >> 7) & 1) == odd_parity_bit(count) and ((header >> 27) & 1) == odd_parity_bit(reg)
            return Packet(PacketType.TYPE4, header, count, register=reg, parity_ok=ok)
        if header >> 24 == 0x70 and not header & 0x4000:
            count = header & 0x3FFF
            op = (header >> 16) & 0x7F
            ok = ((header >> 15) & 1) == odd_parity_bit(count) and ((header >> 23) & 1) == odd_parity_bit(op)
            return Packet(PacketType.TYPE7, header, count, op, opcode_name(op, gen), parity_ok=ok)
        return None
    kind = header >> 30
    if kind == 0:
        return Packet(PacketType.TYPE0, header, ((header >> 16) & 0x3FFF) + 1, register=header & 0x7FFF)
    if kind == 1:
        return Packet(PacketType.TYPE1, header, 2, register=header & 0x7FF)
    if kind == 2:
        return Packet(PacketType.TYPE2, header, 0)
    op = (header >> 8) & 0xFF
    return Packet(PacketType.TYPE3, header, ((header >> 16) & 0x3FFF) + 1, op, opcode_name(op, gen))


def decoder(gen: int) -> ringwalk.Decoder:
    """A ringwalk decoder: invalid or parity-failing headers are not packets."""
    def decode(words: np.ndarray, offset: int) -> tuple[int, Packet] | None:
        pkt = decode_header(int(words[offset % len(words)]), gen)
        if pkt is None or not pkt.parity_ok:
            return None
        return pkt.size, pkt
    return decode


def walk_ring(words: np.ndarray, rptr: int, wptr: int, gen: int, count: int = 16,
              dumped_dwords: int | None = None) -> ringwalk.RingWalk:
    return ringwalk.walk(words, rptr, wptr, decoder(gen), count, dumped_dwords)


@dataclass
class StreamPacket:
    address: int                # iova of the header
    packet: Packet | None       # None: undecodable dword
    words: tuple[int, ...]
    ib: "IndirectBuffer | None" = None


@dataclass
class IndirectBuffer:
    """One CP_INDIRECT_BUFFER call: target, size, and (if dumped) its packets."""

    level: int                  # 1 = called from the ring, 2 = from an IB1
    target: int
    size_dwords: int
    bo: BufferObject | None = None
    dumped: bool = False        # the bo's data covers the target
    packets: list[StreamPacket] = field(default_factory=list)
    truncated: bool = False     # stopped at the decode limit

    @property
    def offset_in_bo(self) -> int | None:
        return None if self.bo is None else self.target - self.bo.iova


def ib_target(packet: Packet, payload: tuple[int, ...], gen: int) -> tuple[int, int] | None:
    """(target iova, size in dwords) of an indirect-buffer packet."""
    if packet.name not in INDIRECT_BUFFER_NAMES:
        return None
    if gen >= 5:
        if len(payload) < 3:
            return None
        return payload[0] | (payload[1] << 32), payload[2] & 0xFFFFF
    if len(payload) < 2:
        return None
    return payload[0], payload[1] & 0xFFFFF


def find_bo(bos: list[BufferObject], iova: int) -> BufferObject | None:
    for bo in bos:
        if bo.iova <= iova < bo.end:
            return bo
    return None


def decode_stream(words: np.ndarray, base: int, gen: int, limit: int = 4096) -> tuple[list[StreamPacket], bool]:
    """Packets of a linear buffer (no wrap); returns (packets, truncated)."""
    out: list[StreamPacket] = []
    pos = 0
    n = len(words)
    while pos < n:
        if len(out) >= limit:
            return out, True
        pkt = decode_header(int(words[pos]), gen)
        if pkt is None or not pkt.parity_ok:
            out.append(StreamPacket(base + pos * 4, None, (int(words[pos]),)))
            pos += 1
            continue
        end = min(pos + pkt.size, n)
        out.append(StreamPacket(base + pos * 4, pkt, tuple(int(w) for w in words[pos:end])))
        pos += pkt.size
    return out, False


def follow_ib(target: int, size: int, level: int, bos: list[BufferObject], gen: int,
              limit: int = 4096) -> IndirectBuffer:
    ib = IndirectBuffer(level, target, size)
    bo = find_bo(bos, target)
    ib.bo = bo
    if bo is None:
        return ib
    start = (target - bo.iova) // 4
    have = len(bo.data) // 4
    ib.dumped = have > start
    if not ib.dumped:
        return ib
    words = bo.window(start, size)
    ib.packets, ib.truncated = decode_stream(words, target, gen, limit)
    if level < 2:
        for sp in ib.packets:
            if sp.packet is not None:
                tgt = ib_target(sp.packet, sp.words[1:], gen)
                if tgt is not None:
                    sp.ib = follow_ib(tgt[0], tgt[1], level + 1, bos, gen, limit)
    return ib
