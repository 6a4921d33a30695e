"""runtime/api/_kinds.py: the plain-value shortcuts of Dim3Kind (a 3-tuple
of ints) and KernelParamsKind (ints and floats) give exactly what the
general checks give: the same values, or the same refusal."""
import numpy as np
from hypothesis import given, settings, strategies as st

from gpudbg.runtime.api._kinds import Bad, Dim3Kind, KernelParamsKind

DIM = Dim3Kind()
PARAMS = KernelParamsKind(optional=False)

dims = st.one_of(st.integers(-2, 2**32 + 1), st.booleans(), st.integers(0, 9).map(np.int64),
                 st.floats(0, 4))


def _outcome(check, value):
    try:
        out = check(value)
    except Bad as bad:
        return ("refused", bad.code)
    return ("ok", out, [type(v) for v in out])


@settings(max_examples=400, deadline=None)
@given(st.tuples(dims, dims, dims))
def test_a_dim3_tuple_is_checked_as_its_list_is(t):
    fast, general = _outcome(DIM.check, t), _outcome(DIM.check, list(t))   # a list takes the general path
    assert fast[0] == general[0]
    if fast[0] == "ok":
        assert tuple(fast[1]) == tuple(general[1]) and fast[2] == general[2] == [int, int, int]
    else:
        assert fast[1] == general[1]


scalars = st.one_of(st.integers(-2**70, 2**70), st.floats(), st.booleans(), st.none(), st.text(max_size=2),
                    st.integers(0, 9).map(np.int32), st.just(np.str_("x")))


@settings(max_examples=400, deadline=None)
@given(st.lists(scalars, max_size=5))
def test_kernel_arguments_are_refused_exactly_when_one_is_not_a_scalar(items):
    bad = any(isinstance(v, (bool, type(None), str)) or
              (isinstance(v, np.generic) and v.dtype.kind not in "iufb") for v in items)
    out = _outcome(PARAMS.check, items)
    assert (out[0] == "refused") == bad
    if not bad:
        assert out[1] == items and out[1] is not items
