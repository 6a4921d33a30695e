"""The ring command format, as data: opcodes, their word layouts, and the one
encoder and decoder that both the driver (producer) and the simulated GPU's
front end (consumer) use.

A command is a header word `opcode << 24 | payload_words` followed by its
fields, each a u32 (one word) or u64 (two words, low then high), in the order
of FORMATS. Because the layout is a table, adding a command is one row, and
the decoder can name the ring, word offset and word of anything malformed.
Launch descriptors (the QMD-like block a LAUNCH points at) are described the
same way. This module knows nothing about rings, memory or execution.
"""
from __future__ import annotations

import enum
import struct
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

WORD_MASK = 0xFFFF_FFFF
U64_MASK = 0xFFFF_FFFF_FFFF_FFFF


class Opcode(enum.IntEnum):
    NOP = 0x00
    LAUNCH = 0x01
    COPY = 0x02
    MEMSET = 0x03
    SEM_RELEASE = 0x04
    SEM_ACQUIRE = 0x05
    HOST_NOTIFY = 0x06
    WAIT_VALUE = 0x07     # stream memory op: block the channel until *address satisfies flags
    WRITE_VALUE = 0x08    # stream memory op: store value (4 or 8 bytes) at address
    TIMESTAMP = 0x09      # event record: store the device clock (cycles, u64) at address
    SET_LAUNCH_LIMITS = 0x30  # channel state: per-thread stack, printf FIFO, malloc heap (sim/launch_limits.py)
    POOL_ALLOC = 0x20     # stream-ordered allocator: map [address, +size) from its pool's memory
    POOL_FREE = 0x21      # stream-ordered allocator: unmap the block at address (use-after-free traps)
    COPY_2D = 0x10        # pitched copy: height rows of width bytes (peer devices allowed)
    MEMSET_2D = 0x11      # pitched memset: height rows of width elements

    # An opcode is its number: hash it as one. Enum's own __hash__ (of the
    # member's name) runs in Python, and every command made, encoded, decoded
    # and dispatched looks its opcode up in a table several times.
    __hash__ = int.__hash__


class FieldType(enum.Enum):
    U32 = 1
    U64 = 2

    @property
    def words(self) -> int:
        return self.value

    @property
    def mask(self) -> int:
        return WORD_MASK if self is FieldType.U32 else U64_MASK


U32, U64 = FieldType.U32, FieldType.U64

# opcode -> ordered (field name, type). The single source of truth.
FORMATS: dict[Opcode, tuple[tuple[str, FieldType], ...]] = {
    Opcode.NOP: (),
    Opcode.LAUNCH: (("descriptor", U64),),
    Opcode.COPY: (("src", U64), ("dst", U64), ("size", U64)),
    Opcode.MEMSET: (("dst", U64), ("value", U32), ("element_size", U32), ("count", U64)),
    Opcode.SEM_RELEASE: (("address", U64), ("value", U64)),
    Opcode.SEM_ACQUIRE: (("address", U64), ("value", U64)),
    Opcode.HOST_NOTIFY: (("token", U32),),
    Opcode.WAIT_VALUE: (("address", U64), ("value", U64), ("flags", U32), ("width", U32)),
    Opcode.WRITE_VALUE: (("address", U64), ("value", U64), ("flags", U32), ("width", U32)),
    Opcode.TIMESTAMP: (("address", U64),),
    Opcode.SET_LAUNCH_LIMITS: (("stack_size", U32), ("printf_fifo_size", U64), ("malloc_heap_size", U64),
                               ("pending_launch_count", U32)),
    Opcode.POOL_ALLOC: (("address", U64), ("size", U64)),
    Opcode.POOL_FREE: (("address", U64),),
    Opcode.COPY_2D: (("src", U64), ("dst", U64), ("spitch", U64), ("dpitch", U64),
                     ("width", U64), ("height", U64)),
    Opcode.MEMSET_2D: (("dst", U64), ("pitch", U64), ("value", U32), ("element_size", U32),
                       ("width", U64), ("height", U64)),
}

# Field checks beyond "fits in its type", applied on encode and decode.
CONSTRAINTS: dict[tuple[Opcode, str], tuple[Callable[[int], bool], str]] = {
    (Opcode.MEMSET, "element_size"): (lambda v: v in (1, 2, 4), "must be 1, 2 or 4"),
    (Opcode.MEMSET_2D, "element_size"): (lambda v: v in (1, 2, 4), "must be 1, 2 or 4"),
}

# The launch descriptor written into device memory (QMD-like), all u32 words
# except the addresses and the grid id.
DESCRIPTOR_FORMAT: tuple[tuple[str, FieldType], ...] = (
    ("code_address", U64),
    ("grid_x", U32), ("grid_y", U32), ("grid_z", U32),
    ("block_x", U32), ("block_y", U32), ("block_z", U32),
    ("shared_bytes", U32),
    ("param_address", U64),
    ("param_size", U32),
    ("grid_id", U64),
    ("host_tid", U32),      # native id of the host thread that launched (debugger events)
    # 1: a cooperative launch, which runs with a grid workspace (cooperative_
    # groups' wsSize, barrier) that grid.sync() finds through %envreg1:%envreg2
    ("cooperative", U32),
    # thread-block cluster shape (sim/cluster.py); 0 in every field: no cluster
    ("cluster_x", U32), ("cluster_y", U32), ("cluster_z", U32),
)
DESCRIPTOR_WORDS = sum(t.words for _, t in DESCRIPTOR_FORMAT)
DESCRIPTOR_BYTES = DESCRIPTOR_WORDS * 4


class CommandFormatError(ValueError):
    """A command that cannot be encoded: unknown field, missing field, value
    out of range."""


class CommandDecodeError(ValueError):
    """Words in a ring that are not a valid command, located precisely."""

    def __init__(self, ring: str, offset: int, word: int, reason: str):
        super().__init__(f"ring {ring}: bad command at word offset {offset} "
                         f"(word 0x{word:08x}): {reason}")
        self.ring = ring
        self.offset = offset
        self.word = word
        self.reason = reason


@dataclass(frozen=True)
class Command:
    """One decoded (or to-be-encoded) command."""

    opcode: Opcode
    fields: Mapping[str, int]

    def __getattr__(self, name: str) -> int:
        try:
            return self.fields[name]
        except KeyError:
            raise AttributeError(f"{self.opcode.name} has no field {name!r}") from None

    @property
    def size_words(self) -> int:
        return _SIZE_WORDS[self.opcode]

    def __repr__(self) -> str:
        args = ", ".join(f"{k}=0x{v:x}" for k, v in self.fields.items())
        return f"{self.opcode.name}({args})"


def payload_words(opcode: Opcode) -> int:
    return _PAYLOAD[opcode]


def make(opcode: Opcode, **fields: int) -> Command:
    """A validated command; every field of the format must be given."""
    names, layout = _NAMES[opcode], _LAYOUT[opcode]
    if fields.keys() != _NAME_SETS[opcode]:     # exactly the format's fields
        unknown = set(fields) - set(names)
        if unknown:
            raise CommandFormatError(f"{opcode.name} has no field(s) {sorted(unknown)}; "
                                     f"its fields are {list(names)}")
        raise CommandFormatError(f"{opcode.name} is missing field(s) {[n for n in names if n not in fields]}")
    for name, mask, check in layout:
        value = fields[name]
        if value.__class__ is not int and not isinstance(value, int) or value < 0 or value > mask:
            raise CommandFormatError(f"{opcode.name}.{name}={value!r} does not fit in "
                                     f"{'U32' if mask == WORD_MASK else 'U64'}")
        if check and not check[0](value):
            raise CommandFormatError(f"{opcode.name}.{name}={value} {check[1]}")
    return Command(opcode, {n: fields[n] for n in names})


_LAUNCHES: dict[int, Command] = {}     # descriptor address -> its LAUNCH command (see launch)
_LAUNCHES_KEPT = 4096


def launch(descriptor: int) -> Command:
    """make(LAUNCH, descriptor=...) with its one check inline (every launch
    makes one); make raises the same error for a bad value. A command is
    immutable and launch blocks are reused (driver/launch_buffers.py), so
    the command of an address seen before is that same object."""
    if descriptor.__class__ is int:
        cmd = _LAUNCHES.get(descriptor)
        if cmd is not None:
            return cmd
        if 0 <= descriptor <= U64_MASK:
            if len(_LAUNCHES) >= _LAUNCHES_KEPT:
                _LAUNCHES.clear()
            cmd = _LAUNCHES[descriptor] = Command(Opcode.LAUNCH, {"descriptor": descriptor})
            return cmd
    return make(Opcode.LAUNCH, descriptor=descriptor)     # refused, with make's error


def _pack_fields(fmt: Sequence[tuple[str, FieldType]], values: Mapping[str, int]) -> list[int]:
    words: list[int] = []
    for name, ftype in fmt:
        v = values[name]
        if ftype is U32:
            words.append(v & WORD_MASK)
        else:
            words.append(v & WORD_MASK)
            words.append((v >> 32) & WORD_MASK)
    return words


def encode(command: Command) -> list[int]:
    """The words of one command, header first."""
    return _ENCODERS[command.opcode](command.fields)


def _encoder(op: Opcode) -> Callable[[Mapping[str, int]], list[int]]:
    """The encoder of one opcode's fields, its FORMATS entry unrolled into one
    list expression (generated once, as dataclasses generates __init__): a
    launch encodes a command per push, and walking the format each time cost
    more than the words. Each value is masked to its words, U64 low word first."""
    words = [str(_HEADER[op])]
    for i, (name, wide) in enumerate(_WIDE[op]):
        words.append(f"f{i} & {WORD_MASK}")
        if wide:
            words.append(f"(f{i} >> 32) & {WORD_MASK}")
    reads = "".join(f"    f{i} = fields[{name!r}]\n" for i, (name, _w) in enumerate(_WIDE[op]))
    namespace: dict[str, Any] = {}
    exec(f"def encode(fields):\n{reads}    return [{', '.join(words)}]\n", namespace)   # noqa: S102 (from FORMATS)
    return namespace["encode"]


def encode_all(commands: Sequence[Command]) -> list[int]:
    words: list[int] = []
    for c in commands:
        words.extend(encode(c))
    return words


def decode_one(read_word: Callable[[int], int], offset: int, ring: str = "?") -> Command:
    """Decode the command whose header is at word `offset`; `read_word(i)`
    returns the word i words after the header (the caller handles wrap)."""
    header = read_word(0)
    op_value = header >> 24
    opcode = _BY_VALUE.get(op_value)
    if opcode is None:
        raise CommandDecodeError(ring, offset, header, f"unknown opcode 0x{op_value:02x}")
    expected = _PAYLOAD[opcode]
    count = header & 0x00FF_FFFF
    if count != expected:
        raise CommandDecodeError(ring, offset, header,
                                 f"{opcode.name} carries {expected} payload words, header says {count}")
    fields: dict[str, int] = {}
    i = 1
    for name, wide, check in _DECODE[opcode]:
        if wide:
            fields[name] = read_word(i) | (read_word(i + 1) << 32)
            i += 2
        else:
            fields[name] = read_word(i)
            i += 1
        if check and not check[0](fields[name]):
            raise CommandDecodeError(ring, offset, header, f"{opcode.name}.{name}={fields[name]} {check[1]}")
    return Command(opcode, fields)


def decode_packed(header: int, buf, byte_offset: int) -> Command | None:
    """decode_one for a command whose payload lies contiguously in `buf`
    from `byte_offset` (little-endian words): one struct unpack instead of
    a word-by-word walk, for the front end, which decodes every command it
    runs. None when the header is not a valid one or the opcode has field
    constraints: decode_one then decodes it or says precisely what is wrong."""
    packed = _PACKED.get(header)
    if packed is None:
        return None
    opcode, names, unpack_from = packed
    return Command(opcode, dict(zip(names, unpack_from(buf, byte_offset))))


def decode_words(words: Sequence[int], ring: str = "?", base_offset: int = 0) -> list[Command]:
    """Decode a flat word sequence (no wrap) into commands."""
    out: list[Command] = []
    pos = 0
    while pos < len(words):
        def rd(i: int, pos: int = pos) -> int:
            if pos + i >= len(words):
                raise CommandDecodeError(ring, base_offset + pos, words[pos],
                                         "command runs past the end of the submitted words")
            return words[pos + i]
        cmd = decode_one(rd, base_offset + pos, ring)
        out.append(cmd)
        pos += cmd.size_words
    return out


# Descriptor fields a launch may leave out, with the value they then hold.
DESCRIPTOR_DEFAULTS = {"cooperative": 0, "cluster_x": 0, "cluster_y": 0, "cluster_z": 0}


def encode_descriptor(**values: int) -> bytes:
    """The launch descriptor's bytes (little-endian words)."""
    for name, default in DESCRIPTOR_DEFAULTS.items():
        values.setdefault(name, default)
    if len(values) != len(_DESCRIPTOR_NAMES) or not all(n in values for n in _DESCRIPTOR_NAMES):
        raise CommandFormatError(f"launch descriptor needs exactly {list(_DESCRIPTOR_NAMES)}, "
                                 f"got {sorted(values)}")
    ordered = [values[n] for n in _DESCRIPTOR_NAMES]
    for (name, ftype), v in zip(DESCRIPTOR_FORMAT, ordered):
        if v.__class__ is not int and not isinstance(v, int) or v < 0 or v > _MASKS[ftype]:
            raise CommandFormatError(f"descriptor.{name}={v!r} does not fit in {ftype.name}")
    return _DESCRIPTOR_STRUCT.pack(*ordered)


def pack_descriptor(*ordered: int) -> bytes:
    """encode_descriptor for every field given positionally, in
    DESCRIPTOR_FORMAT order: the launch path's form. struct refuses what
    does not fit (negative, too large, not an integer); encode_descriptor
    then names the field."""
    try:
        return _DESCRIPTOR_STRUCT.pack(*ordered)
    except struct.error:
        if len(ordered) != len(_DESCRIPTOR_NAMES):
            raise CommandFormatError(f"launch descriptor needs exactly {list(_DESCRIPTOR_NAMES)}, "
                                     f"got {len(ordered)} values") from None
        return encode_descriptor(**dict(zip(_DESCRIPTOR_NAMES, ordered)))


def pack_descriptor_into(buffer: Any, *ordered: int) -> None:
    """pack_descriptor written straight into `buffer` (a launch block's
    bytes) from offset 0, without making the bytes first."""
    try:
        _DESCRIPTOR_STRUCT.pack_into(buffer, 0, *ordered)
    except struct.error:
        pack_descriptor(*ordered)      # raises the error naming the field
        raise


def decode_descriptor(data: bytes) -> dict[str, int]:
    if len(data) < DESCRIPTOR_BYTES:
        raise ValueError(f"launch descriptor needs {DESCRIPTOR_BYTES} bytes, got {len(data)}")
    return dict(zip(_DESCRIPTOR_NAMES, _DESCRIPTOR_STRUCT.unpack_from(data)))


# Per-opcode tables derived once from FORMATS and CONSTRAINTS: a launch
# makes and encodes several commands, and walking the enum-valued format
# (FieldType.words/.mask are properties) each time cost more than the work.
_MASKS = {U32: WORD_MASK, U64: U64_MASK}
_NAMES = {op: tuple(n for n, _ in fmt) for op, fmt in FORMATS.items()}
_NAME_SETS = {op: frozenset(names) for op, names in _NAMES.items()}
_LAYOUT = {op: tuple((n, _MASKS[t], CONSTRAINTS.get((op, n))) for n, t in fmt) for op, fmt in FORMATS.items()}
_WIDE = {op: tuple((n, t is U64) for n, t in fmt) for op, fmt in FORMATS.items()}
_DECODE = {op: tuple((n, t is U64, CONSTRAINTS.get((op, n))) for n, t in fmt) for op, fmt in FORMATS.items()}
_PAYLOAD = {op: sum(t.value for _, t in fmt) for op, fmt in FORMATS.items()}
_HEADER = {op: (int(op) << 24) | _PAYLOAD[op] for op in FORMATS}
_BY_VALUE = {int(op): op for op in Opcode}
_SIZE_WORDS = {op: 1 + n for op, n in _PAYLOAD.items()}
_CONSTRAINED = frozenset(op for op, _ in CONSTRAINTS)
_ENCODERS = {op: _encoder(op) for op in FORMATS}


def _struct_of(fmt) -> struct.Struct:
    """The fields' bytes as one struct: a U64 is two little-endian words,
    low first, the same bytes as a little-endian Q."""
    return struct.Struct("<" + "".join("I" if t is U32 else "Q" for _, t in fmt))


_PAYLOAD_STRUCTS = {op: _struct_of(fmt) for op, fmt in FORMATS.items()}
# decode_packed's table: a valid header word of an opcode without field
# constraints -> (opcode, field names, its payload's unpack_from)
_PACKED = {_HEADER[op]: (op, _NAMES[op], _PAYLOAD_STRUCTS[op].unpack_from) for op in FORMATS
           if op not in _CONSTRAINED}
_DESCRIPTOR_NAMES = tuple(n for n, _ in DESCRIPTOR_FORMAT)
_DESCRIPTOR_STRUCT = _struct_of(DESCRIPTOR_FORMAT)
# descriptor_fields(buf, offset=0): the descriptor at `offset` of `buf` as a
# tuple in DESCRIPTOR_FORMAT order, the front end's form (no dict, no copy of
# the bytes, no Python frame); struct.error when fewer than DESCRIPTOR_BYTES
# bytes are there
descriptor_fields = _DESCRIPTOR_STRUCT.unpack_from
