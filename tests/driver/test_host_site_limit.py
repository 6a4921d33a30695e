"""driver/host_site.py stops walking once it has the `limit` innermost user
frames: exactly the frames a walk of the whole stack keeps, on a stack
deeper than the limit and on one shallower."""
from gpudbg.driver import host_site


def _nest(depth, limit):
    if depth:
        return _nest(depth - 1, limit)
    return host_site.python_frames(limit), host_site.python_frames(64)   # one line: the same innermost site


def test_the_innermost_frames_of_a_deep_stack():
    for limit in (1, 3, 8):
        got, whole = _nest(20, limit)
        assert len(got) == limit
        assert got == whole[-limit:]
        assert got[-1] != got[0] or limit == 1      # the base case's line, then the recursion's


def test_a_limit_above_the_stack_keeps_every_user_frame():
    got, whole = _nest(2, 40)
    assert got == whole
    assert [f.rsplit(" in ", 1)[1] for f in got][-4:] == [
        "test_a_limit_above_the_stack_keeps_every_user_frame", "_nest", "_nest", "_nest"]
