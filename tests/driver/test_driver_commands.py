import pytest
from hypothesis import given, settings, strategies as st

from gpudbg.driver import commands as C


def field_values(opcode):
    fields = {}
    for name, ftype in C.FORMATS[opcode]:
        if (opcode, name) in C.CONSTRAINTS:
            fields[name] = st.sampled_from([1, 2, 4])
        else:
            fields[name] = st.integers(0, ftype.mask)
    return st.fixed_dictionaries(fields)


commands = st.sampled_from(list(C.Opcode)).flatmap(
    lambda op: field_values(op).map(lambda f: C.make(op, **f)))


@settings(max_examples=60, deadline=None)
@given(st.lists(commands, max_size=8))
def test_encode_decode_round_trip(cmds):
    words = C.encode_all(cmds)
    assert all(0 <= w <= C.WORD_MASK for w in words)
    assert C.decode_words(words, "r") == cmds
    assert len(words) == sum(c.size_words for c in cmds)


@settings(max_examples=40, deadline=None)
@given(st.fixed_dictionaries({n: st.integers(0, t.mask) for n, t in C.DESCRIPTOR_FORMAT}))
def test_descriptor_round_trip(values):
    data = C.encode_descriptor(**values)
    assert len(data) == C.DESCRIPTOR_BYTES
    assert C.decode_descriptor(data) == values


_FIELD_VALUES = [st.integers(0, t.mask) for _n, t in C.DESCRIPTOR_FORMAT]


@settings(max_examples=40, deadline=None)
@given(st.tuples(*_FIELD_VALUES))
def test_positional_descriptor_is_the_keyword_one(values):
    assert C.pack_descriptor(*values) == C.encode_descriptor(**dict(zip(C._DESCRIPTOR_NAMES, values)))


@settings(max_examples=40, deadline=None)
@given(st.integers(0, len(C.DESCRIPTOR_FORMAT) - 1),
       st.one_of(st.integers(max_value=-1), st.integers(min_value=1 << 64), st.just(1.5)))
def test_positional_descriptor_names_the_field_that_does_not_fit(i, bad):
    values = [1] * len(C.DESCRIPTOR_FORMAT)
    values[i] = bad
    name, ftype = C.DESCRIPTOR_FORMAT[i]
    with pytest.raises(C.CommandFormatError, match=f"descriptor.{name}=.* does not fit in {ftype.name}"):
        C.pack_descriptor(*values)
    with pytest.raises(C.CommandFormatError, match="exactly"):
        C.pack_descriptor(*values[:-1])


def test_opcodes_hash_as_their_numbers():
    # tables keyed by opcode are looked up without Enum's Python-level hash
    assert all(hash(op) == hash(int(op)) for op in C.Opcode)
    assert {C.Opcode.LAUNCH: "x"}[1] == "x"


def test_header_layout():
    words = C.encode(C.make(C.Opcode.SEM_RELEASE, address=0x1_0000_0002, value=7))
    assert words == [0x04000004, 2, 1, 7, 0]


def test_unknown_opcode_names_ring_offset_and_word():
    with pytest.raises(C.CommandDecodeError) as e:
        C.decode_words([0x7F000000], "ctx1.s2", base_offset=40)
    assert (e.value.ring, e.value.offset, e.value.word) == ("ctx1.s2", 40, 0x7F000000)
    assert "ring ctx1.s2" in str(e.value) and "offset 40" in str(e.value) and "0x7f000000" in str(e.value)


def test_wrong_payload_count_and_bad_field_are_decode_errors():
    with pytest.raises(C.CommandDecodeError, match="carries 2 payload words, header says 3"):
        C.decode_words([0x01000003, 0, 0, 0])
    bad = C.encode(C.make(C.Opcode.MEMSET, dst=16, value=0, element_size=4, count=1))
    bad[4] = 3
    with pytest.raises(C.CommandDecodeError, match="element_size=3 must be 1, 2 or 4"):
        C.decode_words(bad)
    with pytest.raises(C.CommandDecodeError, match="runs past the end"):
        C.decode_words([0x02000006, 1, 2])


def test_make_rejects_bad_fields():
    with pytest.raises(C.CommandFormatError, match="missing"):
        C.make(C.Opcode.COPY, src=1, dst=2)
    with pytest.raises(C.CommandFormatError, match="no field"):
        C.make(C.Opcode.NOP, x=1)
    with pytest.raises(C.CommandFormatError, match="does not fit in U32"):
        C.make(C.Opcode.HOST_NOTIFY, token=1 << 32)
    with pytest.raises(C.CommandFormatError, match="must be 1, 2 or 4"):
        C.make(C.Opcode.MEMSET, dst=0, value=0, element_size=8, count=1)
    with pytest.raises(C.CommandFormatError, match="exactly"):
        C.encode_descriptor(code_address=1)
    with pytest.raises(AttributeError):
        C.make(C.Opcode.NOP).size
