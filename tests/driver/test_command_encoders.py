"""driver/commands.py: the per-opcode encoders generated from FORMATS give
the words the format defines (header, then each field masked to its words,
a U64 low word first) for any int values, out-of-range ones included."""
from hypothesis import given, settings, strategies as st

from gpudbg.driver import commands as C


def _reference(op, fields):
    words = [(int(op) << 24) | sum(t.value for _, t in C.FORMATS[op])]
    for name, t in C.FORMATS[op]:
        v = fields[name]
        words.append(v & 0xFFFFFFFF)
        if t is C.U64:
            words.append((v >> 32) & 0xFFFFFFFF)
    return words


@st.composite
def commands(draw):
    op = draw(st.sampled_from(sorted(C.FORMATS, key=int)))
    fields = {n: draw(st.integers(-2**70, 2**70)) for n, _ in C.FORMATS[op]}
    return op, fields


@settings(max_examples=500, deadline=None)
@given(commands())
def test_generated_encoders_match_the_format(cmd):
    op, fields = cmd
    assert C.encode(C.Command(op, fields)) == _reference(op, fields)


def test_every_opcode_has_an_encoder_of_its_size():
    for op, fmt in C.FORMATS.items():
        fields = {n: 0 for n, _ in fmt}
        assert len(C.encode(C.Command(op, fields))) == C.Command(op, fields).size_words


def test_launch_commands_are_shared_per_address_and_checked():
    import pytest
    a = C.launch(0x1000)
    assert C.launch(0x1000) is a and a == C.make(C.Opcode.LAUNCH, descriptor=0x1000)
    assert C.launch(0x2000).descriptor == 0x2000
    for bad in (-1, 1 << 64, 1.0, [1]):
        with pytest.raises(C.CommandFormatError):
            C.launch(bad)
