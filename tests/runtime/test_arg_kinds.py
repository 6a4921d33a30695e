"""The mc* argument kinds' plain-int fast paths (runtime/api/_kinds.py)
accept and refuse exactly what the general checks do."""
import enum

import numpy as np
import pytest
from hypothesis import given, strategies as st

from gpudbg.runtime.api._kinds import Bad, Dim3Kind, IntKind
from gpudbg.runtime.errors import mcError_t as E

SIZE = IntKind(0, 2**64 - 1, "an int >= 0")
DIM = IntKind(0, 2**32 - 1, "a dimension (an int >= 0)", E.mcErrorInvalidConfiguration)
SIGNED = IntKind(-2**31, 2**31 - 1, "an int")


class Color(enum.IntEnum):
    RED = 1


def _outcome(kind, value):
    try:
        out = kind.check(value)
    except Bad as bad:
        return ("bad", bad.code, bad.need)
    return ("ok", out, type(out))


@given(st.sampled_from([SIZE, DIM, SIGNED]), st.integers(-2**70, 2**70))
def test_a_plain_int_is_checked_as_a_numpy_int_of_the_same_value(kind, v):
    # numpy ints take the general path: both must agree on the value and the verdict
    plain = _outcome(kind, v)
    if -2**63 <= v < 2**63:
        assert _outcome(kind, np.int64(v))[:2] == plain[:2]
    if plain[0] == "ok":
        assert plain[1] == v and plain[2] is int
    else:
        assert plain[1] == kind.code and ("at most" in plain[2] or "at least" in plain[2] or ">=" in plain[2])


def test_bools_none_floats_and_enums_keep_their_own_answers():
    assert _outcome(SIZE, True)[0] == "bad"
    assert _outcome(SIZE, None)[0] == "bad"
    assert _outcome(IntKind(0, 10, "an int", optional=True), None) == ("ok", None, type(None))
    assert _outcome(SIZE, 1.0)[0] == "bad"
    assert _outcome(SIZE, Color.RED) == ("ok", Color.RED, Color)


@given(st.integers(-2**40, 2**40))
def test_a_dim3_from_a_plain_int(v):
    d = Dim3Kind()
    if 0 <= v < 2**32:
        assert d.check(v) == (v, 1, 1) == d.check((v,)) == d.check(np.int64(v))
    else:
        with pytest.raises(Bad) as e:
            d.check(v)
        assert e.value.code == E.mcErrorInvalidConfiguration
    with pytest.raises(Bad):
        d.check(True)


class _ListOf(list):
    """A list subclass: takes the general path, which must agree with the plain one."""


@given(st.lists(st.one_of(st.integers(-5, 5), st.floats(allow_nan=False), st.booleans(), st.text(max_size=2),
                          st.none()), max_size=5), st.booleans(), st.integers(0, 4))
def test_a_plain_list_or_tuple_is_checked_as_the_general_path_checks_it(items, keep, max_len):
    from gpudbg.runtime.api._kinds import KernelParamsKind, SequenceKind
    for kind in (SequenceKind("a sequence", max_len=max_len, elements=SIGNED, keep=keep),
                 SequenceKind("a sequence", max_len=max_len, keep=keep), KernelParamsKind(False)):
        general = _outcome(kind, _ListOf(items))
        for plain in (list(items), tuple(items)):
            got = _outcome(kind, plain)
            assert got[0] == general[0] and (got[1:] == general[1:] if got[0] == "bad" else
                                            list(got[1]) == list(general[1]))
            if got[0] == "ok" and keep and kind.elements is None and not isinstance(kind, KernelParamsKind):
                assert got[1] is plain            # kept: the caller's own object
