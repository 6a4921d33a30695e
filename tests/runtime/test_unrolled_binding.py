"""runtime/api/_args.py: the unrolled every-argument-by-position binder
(Plan.fast, what each launch goes through, with the kinds' common cases
written inline: Kind.inline) accepts exactly what Plan.bind accepts, with
the same normalized values; a refusal falls back to bind for
the message naming the argument, and the body runs once, never again after
it raised."""
from hypothesis import given, settings, strategies as st

from gpudbg.runtime import mc
from gpudbg.runtime.api._args import REBIND, Count, Dim3, KernelParams, Plan, Size, mcFunction_t, mcStream_t
from gpudbg.runtime.api._base import _api, last_message
from gpudbg.runtime.errors import McError

E = mc.mcError_t


def _target(grid: Dim3, args: KernelParams, shared: Size, stream: mcStream_t, f: mcFunction_t,
            n: Count) -> tuple:
    return grid, args, shared, stream, f, n


PLAN = Plan(_target)

values = st.one_of(st.integers(-3, 2**33), st.none(), st.booleans(), st.floats(allow_nan=False),
                   st.text(max_size=3), st.lists(st.integers(-2, 2**32 + 1), max_size=4),
                   st.tuples(st.integers(0, 5), st.integers(0, 5)))


@settings(max_examples=300, deadline=None)
@given(st.tuples(values, values, values, values, values, values))
def test_the_unrolled_binder_agrees_with_bind(args):
    fast = PLAN.fast(lambda *v: v, args)
    try:
        bound = tuple(PLAN.bind(args, {}))
    except McError:
        assert fast is REBIND
    else:
        assert fast == bound and [type(v) for v in fast] == [type(v) for v in bound]


def test_a_refused_argument_is_named_and_the_body_never_runs():
    calls = []

    @_api(0)
    def mcProbe(n: Size, grid: Dim3) -> None:
        calls.append((n, grid))

    assert mcProbe(-1, 1) == (E.mcErrorInvalidValue,)
    assert "n must be an int >= 0, got -1" in last_message()
    assert mcProbe(4, "x") == (E.mcErrorInvalidValue,)
    assert calls == []
    assert mcProbe(4, (2, 3)) == (E.mcSuccess,)
    assert calls == [(4, (2, 3, 1))]


def test_a_body_that_raises_runs_once():
    calls = []

    @_api(1)
    def mcBoom(n: Size) -> int:
        calls.append(n)
        raise McError(E.mcErrorInvalidValue, "mcBoom: refused by the body")

    assert mcBoom(3) == (E.mcErrorInvalidValue, None)
    assert calls == [3]
