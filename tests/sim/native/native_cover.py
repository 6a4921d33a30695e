"""Which instructions of a native run really ran compiled: the memory
tests assert that the form under test is inside a compiled segment or
region, so a lowering that silently refuses it cannot pass by comparing
the interpreter with itself."""
from __future__ import annotations

from contextlib import contextmanager


def native_texts(result) -> list[str]:
    """Instruction texts covered by the program's compiled segments and regions."""
    prog = result.module.program
    covered: set[int] = set()
    for c in prog.code:
        for attr in ("native", "region"):
            seg = getattr(c, attr, None)
            if seg is not None and hasattr(seg, "start") and hasattr(seg, "end"):
                covered.update(range(seg.start, seg.end))
    return [prog.code[pc].inst.text for pc in sorted(covered)]


def assert_native(result, *fragments: str) -> None:
    """Every fragment appears in some natively covered instruction's text."""
    texts = native_texts(result)
    for f in fragments:
        assert any(f in t for t in texts), f"{f!r} did not run natively; native: {texts}"


@contextmanager
def native_calls():
    """Records (first pc, end pc, succeeded) of every compiled segment or
    region call made inside the block."""
    from gpudbg.sim.native import engine
    calls: list[tuple[int, int, bool]] = []
    original = engine.NativeSegment.run

    def run(self, X, idx):
        ok = original(self, X, idx)
        calls.append((self.start, self.end, ok))
        return ok
    engine.NativeSegment.run = run
    try:
        yield calls
    finally:
        engine.NativeSegment.run = original


def assert_ran(calls, result, *fragments: str) -> None:
    """Each fragment's instruction ran inside a compiled call that
    succeeded (its checks passed: no hand-back to the interpreter)."""
    prog = result.module.program
    done = {pc for s, e, ok in calls if ok for pc in range(s, e)}
    texts = [prog.code[pc].inst.text for pc in sorted(done)]
    for f in fragments:
        assert any(f in t for t in texts), f"{f!r} never completed natively; completed: {texts}"
